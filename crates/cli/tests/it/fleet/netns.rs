//! Hosts for the fleet tests: one network namespace per host, joined to the test's own
//! namespace by a veth pair, each running Debian's sshd on its own address with a host key
//! and a client key made at test time. The client side is a private `ssh_config` and
//! `known_hosts` in the test's temporary directory (never `~/.ssh`).
//!
//! Everything is removed when the [`Hosts`] value drops, a failing test included: every
//! process left in each namespace is killed, then the namespace (and with it its end of the
//! veth pair) is deleted. Namespaces are named `hbt-fleet-<pid>-<n>`, so a later run removes
//! those of a test process that was killed before it could clean up.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// Prefix of every namespace these tests create.
const NS_PREFIX: &str = "hbt-fleet-";

/// Hosts numbered per process, so tests running side by side get their own addresses.
static NEXT: AtomicU32 = AtomicU32::new(0);

/// Why hosts cannot be made on this machine, when they cannot (not root, no `ip`, no
/// sshd, namespaces refused); `None` when they can.
pub fn unavailable() -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("network namespaces need root".into());
    }
    for tool in ["/usr/sbin/sshd", "/usr/bin/ssh", "/usr/bin/ssh-keygen"] {
        if !Path::new(tool).exists() {
            return Some(format!(
                "{tool} is not installed (openssh-server, openssh-client)"
            ));
        }
    }
    let probe = format!("{NS_PREFIX}{}-probe", std::process::id());
    match Command::new("ip").args(["netns", "add", &probe]).output() {
        Ok(o) if o.status.success() => {
            let _ = Command::new("ip").args(["netns", "del", &probe]).output();
            None
        }
        Ok(o) => Some(format!(
            "`ip netns add` refused: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        )),
        Err(e) => Some(format!("`ip` (iproute2) cannot run: {e}")),
    }
}

/// Prints that the calling test was skipped and why, and returns true, when hosts cannot
/// be made here.
pub fn skip(test: &str) -> bool {
    match unavailable() {
        Some(why) => {
            eprintln!("SKIPPED fleet::{test}: {why}");
            true
        }
        None => false,
    }
}

/// One host: a namespace with sshd listening on `addr:22`.
pub struct Host {
    /// The namespace.
    pub ns: String,
    /// The host's address (inside its namespace).
    pub addr: String,
    /// The host's own cache directory (`XDG_CACHE_HOME` of its ssh sessions).
    pub cache: PathBuf,
    /// The host's working directory for its sshd's files.
    pub dir: PathBuf,
    sshd: Option<Child>,
    /// A CPU-limited cgroup the host's sshd was moved into ([`Hosts::slow_down`]).
    cgroup: Option<PathBuf>,
}

/// A set of hosts and the client configuration that reaches them.
pub struct Hosts {
    /// The hosts, in order.
    pub hosts: Vec<Host>,
    /// `ssh -F` file: identity, known_hosts, user root; nothing else.
    pub ssh_config: PathBuf,
    /// The temporary directory holding keys, configs and the hosts' caches.
    pub dir: tempfile::TempDir,
    /// Namespaces made by [`Hosts::add_server_namespace`].
    servers: Vec<String>,
}

fn ip(args: &[&str]) {
    let o = Command::new("ip").args(args).output().expect("ip runs");
    assert!(
        o.status.success(),
        "ip {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

fn keygen(path: &Path) {
    let o = Command::new("ssh-keygen")
        .args([
            "-q",
            "-t",
            "ed25519",
            "-N",
            "",
            "-C",
            "hostbench-test",
            "-f",
        ])
        .arg(path)
        .stdin(Stdio::null())
        .output()
        .expect("ssh-keygen runs");
    assert!(
        o.status.success(),
        "ssh-keygen: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Kills every process in namespace `ns`, then deletes it.
fn remove_namespace(ns: &str) {
    for _ in 0..50 {
        let pids = Command::new("ip")
            .args(["netns", "pids", ns])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default();
        let pids: Vec<i32> = pids
            .split_whitespace()
            .filter_map(|p| p.parse().ok())
            .collect();
        if pids.is_empty() {
            break;
        }
        for p in pids {
            // SAFETY: killing a process of a namespace this test process made.
            unsafe { libc::kill(p, libc::SIGKILL) };
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = Command::new("ip").args(["netns", "del", ns]).output();
}

/// Removes the namespaces of earlier test processes that no longer run (killed before their
/// cleanup ran).
fn remove_stale() {
    let list = Command::new("ip")
        .args(["netns", "list"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    for line in list.lines() {
        let Some(name) = line.split_whitespace().next() else {
            continue;
        };
        let Some(rest) = name.strip_prefix(NS_PREFIX) else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            remove_namespace(name);
        }
    }
}

impl Hosts {
    /// Makes `n` hosts and waits until each answers over ssh. Panics (after removing what
    /// it made) when one cannot be made.
    pub fn start(n: usize) -> Hosts {
        Hosts::start_with(n, false)
    }

    /// [`Hosts::start`], every host's sessions sharing one cache directory when
    /// `shared_cache` (so a binary copied once is found by all: for the scale measurement).
    pub fn start_with(n: usize, shared_cache: bool) -> Hosts {
        remove_stale();
        // sshd's privilege separation directory (Debian's package makes it at boot).
        std::fs::create_dir_all("/run/sshd").expect("/run/sshd");
        let dir = tempfile::Builder::new()
            .prefix("hostbench-test-fleet-")
            .tempdir()
            .expect("temporary directory");
        let client_key = dir.path().join("id_ed25519");
        keygen(&client_key);
        let authorized = dir.path().join("authorized_keys");
        std::fs::copy(client_key.with_extension("pub"), &authorized).expect("authorized_keys");
        let host_key = dir.path().join("host_ed25519");
        keygen(&host_key);
        let host_pub = std::fs::read_to_string(host_key.with_extension("pub")).expect("host key");
        let known_hosts = dir.path().join("known_hosts");
        let ssh_config = dir.path().join("ssh_config");
        std::fs::write(
            &ssh_config,
            format!(
                "Host *\n  User root\n  IdentityFile {}\n  IdentitiesOnly yes\n  \
                 UserKnownHostsFile {}\n  GlobalKnownHostsFile /dev/null\n  \
                 StrictHostKeyChecking yes\n  ConnectTimeout 5\n",
                client_key.display(),
                known_hosts.display()
            ),
        )
        .expect("ssh_config");
        let mut hosts = Hosts {
            hosts: Vec::new(),
            ssh_config,
            dir,
            servers: Vec::new(),
        };
        let pid = std::process::id();
        let mut known = String::new();
        for _ in 0..n {
            let k = NEXT.fetch_add(1, Ordering::SeqCst);
            assert!(k < 250, "too many test hosts in one process");
            let ns = format!("{NS_PREFIX}{pid}-{k}");
            // Interface names are at most 15 bytes.
            let outside = format!("hbf{}o{k}", pid % 100_000);
            let inside = format!("hbf{}i{k}", pid % 100_000);
            let net = format!("10.{}.{k}", 192 + pid % 32);
            let addr = format!("{net}.2");
            let hdir = hosts.dir.path().join(format!("host{k}"));
            let cache = if shared_cache {
                hosts.dir.path().join("shared-cache")
            } else {
                hdir.join("cache")
            };
            std::fs::create_dir_all(&hdir).expect("host directory");
            std::fs::create_dir_all(&cache).expect("host cache");
            ip(&["netns", "add", &ns]);
            hosts.hosts.push(Host {
                ns: ns.clone(),
                addr: addr.clone(),
                cache: cache.clone(),
                dir: hdir.clone(),
                sshd: None,
                cgroup: None,
            });
            ip(&[
                "link", "add", &outside, "type", "veth", "peer", "name", &inside,
            ]);
            ip(&["link", "set", &inside, "netns", &ns]);
            ip(&["addr", "add", &format!("{net}.1/24"), "dev", &outside]);
            ip(&["link", "set", &outside, "up"]);
            ip(&[
                "-n",
                &ns,
                "addr",
                "add",
                &format!("{addr}/24"),
                "dev",
                &inside,
            ]);
            ip(&["-n", &ns, "link", "set", &inside, "up"]);
            ip(&["-n", &ns, "link", "set", "lo", "up"]);
            let config = hdir.join("sshd_config");
            std::fs::write(
                &config,
                format!(
                    "Port 22\nListenAddress {addr}\nHostKey {}\nAuthorizedKeysFile {}\n\
                     PidFile {}\nUsePAM no\nPermitRootLogin prohibit-password\n\
                     PasswordAuthentication no\nKbdInteractiveAuthentication no\n\
                     StrictModes no\nSetEnv XDG_CACHE_HOME={}\nMaxSessions 100\n\
                     MaxStartups 100\n",
                    host_key.display(),
                    authorized.display(),
                    hdir.join("sshd.pid").display(),
                    cache.display()
                ),
            )
            .expect("sshd_config");
            let log = std::fs::File::create(hdir.join("sshd.log")).expect("sshd log");
            let child = Command::new("ip")
                .args(["netns", "exec", &ns, "/usr/sbin/sshd", "-D", "-e", "-f"])
                .arg(&config)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(log)
                .spawn()
                .expect("sshd starts");
            hosts.hosts.last_mut().expect("pushed").sshd = Some(child);
            known.push_str(&format!("{addr} {host_pub}"));
        }
        std::fs::write(hosts.dir.path().join("known_hosts"), known).expect("known_hosts");
        for h in &hosts.hosts {
            hosts.wait_ready(h);
        }
        hosts
    }

    /// `ssh -F CONFIG` for these hosts.
    pub fn ssh(&self) -> Command {
        let mut c = Command::new("ssh");
        c.arg("-F")
            .arg(&self.ssh_config)
            .args(["-o", "BatchMode=yes"]);
        c
    }

    fn wait_ready(&self, h: &Host) {
        let t0 = Instant::now();
        loop {
            let o = self
                .ssh()
                .args([h.addr.as_str(), "echo", "ready"])
                .stdin(Stdio::null())
                .output()
                .expect("ssh runs");
            if o.status.success() && String::from_utf8_lossy(&o.stdout).trim() == "ready" {
                return;
            }
            if t0.elapsed() > Duration::from_secs(15) {
                let log = std::fs::read_to_string(h.dir.join("sshd.log")).unwrap_or_default();
                panic!(
                    "host {} never answered over ssh: {}\nsshd log:\n{log}",
                    h.addr,
                    String::from_utf8_lossy(&o.stderr)
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The hosts' addresses as a comma list.
    #[allow(dead_code)] // used by the fleet tests that follow
    pub fn list(&self) -> String {
        self.hosts
            .iter()
            .map(|h| h.addr.as_str())
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Processes running in host `i`'s namespace (sshd included).
    pub fn pids(&self, i: usize) -> Vec<i32> {
        let o = Command::new("ip")
            .args(["netns", "pids", &self.hosts[i].ns])
            .output()
            .expect("ip runs");
        String::from_utf8_lossy(&o.stdout)
            .split_whitespace()
            .filter_map(|p| p.parse().ok())
            .collect()
    }
}

impl Hosts {
    /// Limits host `i` to `percent` of one CPU: its sshd goes into a cgroup with that CPU
    /// quota (cgroup v2 `cpu.max`, or v1's CFS quota), which every session it starts
    /// inherits. `Err` says why it cannot be done here.
    pub fn slow_down(&mut self, i: usize, percent: u32) -> Result<(), String> {
        let pid = self.hosts[i]
            .sshd
            .as_ref()
            .map(|c| c.id())
            .ok_or("no sshd")?;
        let name = self.hosts[i].ns.clone();
        let v2 = Path::new("/sys/fs/cgroup/cgroup.controllers").exists();
        let (dir, files): (PathBuf, Vec<(&str, String)>) = if v2 {
            let root = Path::new("/sys/fs/cgroup");
            // The cpu controller must be on for the root's children.
            let _ = std::fs::write(root.join("cgroup.subtree_control"), "+cpu");
            (
                root.join(&name),
                vec![("cpu.max", format!("{} 100000", percent * 1000))],
            )
        } else if Path::new("/sys/fs/cgroup/cpu/cpu.cfs_quota_us").exists() {
            (
                Path::new("/sys/fs/cgroup/cpu").join(&name),
                vec![
                    ("cpu.cfs_period_us", "100000".into()),
                    ("cpu.cfs_quota_us", (percent * 1000).to_string()),
                ],
            )
        } else {
            return Err("no cgroup CPU controller (v2 cpu.max or v1 cpu.cfs_quota_us)".into());
        };
        std::fs::create_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        self.hosts[i].cgroup = Some(dir.clone());
        for (f, v) in files {
            std::fs::write(dir.join(f), v).map_err(|e| format!("{f}: {e}"))?;
        }
        std::fs::write(dir.join("cgroup.procs"), pid.to_string())
            .map_err(|e| format!("cgroup.procs: {e}"))?;
        Ok(())
    }
}

impl Hosts {
    /// One more namespace, joined to every host by a bridge inside it (no routing through
    /// this machine's namespace): for a server the hosts load together. Its address is
    /// `10.X.250.1`; host k's on the bridge `10.X.250.(10 + k)`. Returns the namespace and
    /// the address. Whatever runs in it is killed when `self` is dropped.
    pub fn add_server_namespace(&mut self) -> (String, String) {
        let pid = std::process::id();
        let k = NEXT.fetch_add(1, Ordering::SeqCst);
        let ns = format!("{NS_PREFIX}{pid}-{k}");
        let net = format!("10.{}.250", 192 + pid % 32);
        ip(&["netns", "add", &ns]);
        self.servers.push(ns.clone());
        ip(&["-n", &ns, "link", "add", "hbbr", "type", "bridge"]);
        ip(&[
            "-n",
            &ns,
            "addr",
            "add",
            &format!("{net}.1/24"),
            "dev",
            "hbbr",
        ]);
        ip(&["-n", &ns, "link", "set", "hbbr", "up"]);
        ip(&["-n", &ns, "link", "set", "lo", "up"]);
        for (i, h) in self.hosts.iter().enumerate() {
            let port = format!("hbp{i}");
            ip(&[
                "link", "add", "hbload", "netns", &h.ns, "type", "veth", "peer", "name", &port,
                "netns", &ns,
            ]);
            ip(&["-n", &ns, "link", "set", &port, "master", "hbbr"]);
            ip(&["-n", &ns, "link", "set", &port, "up"]);
            ip(&[
                "-n",
                &h.ns,
                "addr",
                "add",
                &format!("{net}.{}/24", 10 + i),
                "dev",
                "hbload",
            ]);
            ip(&["-n", &h.ns, "link", "set", "hbload", "up"]);
        }
        (ns, format!("{net}.1"))
    }
}

impl Drop for Hosts {
    fn drop(&mut self) {
        for ns in std::mem::take(&mut self.servers) {
            remove_namespace(&ns);
        }
        for h in &mut self.hosts {
            if let Some(mut c) = h.sshd.take() {
                let _ = c.kill();
                let _ = c.wait();
            }
            remove_namespace(&h.ns);
            if let Some(cg) = h.cgroup.take() {
                // Empty once the namespace's processes are gone.
                for _ in 0..50 {
                    if std::fs::remove_dir(&cg).is_ok() || !cg.exists() {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
        }
    }
}
