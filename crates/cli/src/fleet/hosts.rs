//! The hosts of a fleet: a comma list (`web1,root@10.0.0.7:2222`), `@FILE` (one host a line,
//! `#` comments), or an Ansible INI inventory and group (`-i inventory.ini:compute`, with
//! `[group:children]`, `ansible_host`, `ansible_port` and `ansible_user`).

use anyhow::{Context, Result, bail};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Largest host file or inventory read.
const FILE_MAX: u64 = 16 << 20;
/// Most hosts in one fleet.
pub const HOSTS_MAX: usize = 10_000;

/// One host and how ssh reaches it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The host as the user named it: recorded with its results.
    pub name: String,
    /// `ssh -l`, when given.
    pub user: Option<String>,
    /// What ssh connects to (a name `~/.ssh/config` may map, or an address).
    pub host: String,
    /// `ssh -p`, when given.
    pub port: Option<u16>,
    /// Its place in the fleet (0, 1, ...): names its master connection's socket.
    pub slot: usize,
}

fn bad_word(w: &str) -> bool {
    w.is_empty() || w.starts_with('-') || w.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// Parses `[user@]host[:port]` (IPv6 as `[addr]:port`); `name` is what results record.
pub fn parse_target(spec: &str, name: &str, origin: &str) -> Result<Target> {
    let fail = |why: &str| {
        anyhow::anyhow!(
            "{origin}: host {spec:?} {why}; write [user@]host[:port], e.g. root@10.0.0.7:2222"
        )
    };
    let (user, rest) = match spec.rsplit_once('@') {
        Some((u, r)) => (Some(u.to_string()), r),
        None => (None, spec),
    };
    let (host, port) = if let Some(r) = rest.strip_prefix('[') {
        let (h, tail) = r.split_once(']').ok_or_else(|| fail("has no closing ]"))?;
        match tail {
            "" => (h.to_string(), None),
            t => (
                h.to_string(),
                Some(t.strip_prefix(':').ok_or_else(|| fail("is malformed"))?),
            ),
        }
    } else if rest.matches(':').count() == 1 {
        let (h, p) = rest.split_once(':').expect("one colon");
        (h.to_string(), Some(p))
    } else {
        (rest.to_string(), None)
    };
    let port = match port {
        Some(p) => Some(
            p.parse::<u16>()
                .ok()
                .filter(|&p| p > 0)
                .ok_or_else(|| fail("has a port that is not 1-65535"))?,
        ),
        None => None,
    };
    if bad_word(&host) || user.as_deref().is_some_and(bad_word) {
        return Err(fail("is empty, starts with '-' or holds spaces"));
    }
    Ok(Target {
        name: name.to_string(),
        user,
        host,
        port,
        slot: 0,
    })
}

fn read_small(path: &Path, what: &str) -> Result<String> {
    let meta = std::fs::metadata(path)
        .with_context(|| format!("{what} {}: cannot read it", path.display()))?;
    if !meta.is_file() {
        bail!("{what} {} is not a regular file", path.display());
    }
    if meta.len() > FILE_MAX {
        bail!(
            "{what} {} is larger than {} MiB",
            path.display(),
            FILE_MAX >> 20
        );
    }
    std::fs::read_to_string(path)
        .with_context(|| format!("{what} {}: cannot read it as text", path.display()))
}

/// HOSTS as typed: a comma list or `@FILE`.
pub fn from_arg(arg: &str) -> Result<Vec<Target>> {
    let mut out = Vec::new();
    if let Some(file) = arg.strip_prefix('@') {
        let text = read_small(Path::new(file), "host file")?;
        for (i, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let origin = format!("{file}:{}", i + 1);
            out.push(parse_target(line, line, &origin)?);
        }
        if out.is_empty() {
            bail!("host file {file} names no host (one a line, [user@]host[:port], # comments)");
        }
    } else {
        for w in arg.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            out.push(parse_target(w, w, "HOSTS")?);
        }
        if out.is_empty() {
            bail!(
                "HOSTS names no host: give a comma list (web1,web2), @FILE or -i INVENTORY:GROUP"
            );
        }
    }
    check(out)
}

pub(super) fn check(mut hosts: Vec<Target>) -> Result<Vec<Target>> {
    for (i, h) in hosts.iter_mut().enumerate() {
        h.slot = i;
    }
    if hosts.len() > HOSTS_MAX {
        bail!(
            "{} hosts: at most {HOSTS_MAX} in one fleet run",
            hosts.len()
        );
    }
    for h in &hosts {
        if !super::gate::is_name(&h.name) {
            bail!(
                "host {:?} is not a name its results can record: letters, digits and . _ - @ : \
                 [ ] % + only (user@host:port, [IPv6]:port); rename it in the list or inventory",
                h.name
            );
        }
    }
    let mut seen = BTreeSet::new();
    for h in &hosts {
        if !seen.insert(&h.name) {
            bail!(
                "host {} is named twice: each host runs once per fleet run",
                h.name
            );
        }
    }
    Ok(hosts)
}

/// A host's variables in an inventory.
type Vars = BTreeMap<String, String>;

/// `-i INVENTORY:GROUP`: the hosts of GROUP (and of its `:children` groups) in an Ansible
/// INI inventory; `all` is every host.
pub fn from_inventory(spec: &str) -> Result<Vec<Target>> {
    let Some((file, group)) = spec
        .rsplit_once(':')
        .filter(|(f, g)| !f.is_empty() && !g.is_empty())
    else {
        bail!("-i {spec:?}: write INVENTORY:GROUP, e.g. -i inventory.ini:compute");
    };
    let text = read_small(Path::new(file), "inventory")?;
    // group -> hosts (name, vars) in order; group -> children.
    let mut groups: BTreeMap<String, Vec<(String, Vars)>> = BTreeMap::new();
    let mut children: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    #[derive(PartialEq)]
    enum Section {
        Hosts(String),
        Children(String),
        Other,
    }
    let mut section = Section::Hosts("ungrouped".into());
    for (i, raw) in text.lines().enumerate() {
        let origin = format!("{file}:{}", i + 1);
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(h) = line.strip_prefix('[') {
            let h = h
                .strip_suffix(']')
                .ok_or_else(|| anyhow::anyhow!("{origin}: a section header needs its closing ]"))?;
            section = match h.split_once(':') {
                None => Section::Hosts(h.to_string()),
                Some((g, "children")) => Section::Children(g.to_string()),
                Some(_) => Section::Other,
            };
            if let Section::Hosts(g) = &section {
                groups.entry(g.clone()).or_default();
            }
            continue;
        }
        match &section {
            Section::Hosts(g) => {
                let mut words = line.split_whitespace();
                let name = words.next().unwrap_or_default().to_string();
                if name.contains('[') {
                    bail!(
                        "{origin}: host ranges ({name}) are not supported; list each host on its own line"
                    );
                }
                let mut vars = BTreeMap::new();
                for w in words {
                    let (k, v) = w.split_once('=').ok_or_else(|| {
                        anyhow::anyhow!("{origin}: {w:?} is not a key=value host variable")
                    })?;
                    vars.insert(k.to_string(), v.trim_matches(['"', '\'']).to_string());
                }
                if !order.contains(&name) {
                    order.push(name.clone());
                }
                groups.entry(g.clone()).or_default().push((name, vars));
            }
            Section::Children(g) => children
                .entry(g.clone())
                .or_default()
                .push(line.to_string()),
            Section::Other => {}
        }
    }
    // Variables a host was given in any group.
    let mut vars_of: BTreeMap<&str, BTreeMap<String, String>> = BTreeMap::new();
    for hosts in groups.values() {
        for (n, v) in hosts {
            vars_of.entry(n).or_default().extend(v.clone());
        }
    }
    let mut wanted: BTreeSet<String> = BTreeSet::new();
    if group == "all" {
        wanted.extend(order.iter().cloned());
    } else {
        if !groups.contains_key(group) && !children.contains_key(group) {
            let known: Vec<&str> = groups
                .keys()
                .chain(children.keys())
                .map(String::as_str)
                .filter(|g| *g != "ungrouped")
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            bail!(
                "inventory {file} has no group {group:?}; its groups: {}",
                if known.is_empty() {
                    "none".into()
                } else {
                    known.join(", ")
                }
            );
        }
        let mut stack = vec![group.to_string()];
        let mut visited = BTreeSet::new();
        while let Some(g) = stack.pop() {
            if !visited.insert(g.clone()) {
                continue;
            }
            for (n, _) in groups.get(&g).into_iter().flatten() {
                wanted.insert(n.clone());
            }
            stack.extend(children.get(&g).into_iter().flatten().cloned());
        }
    }
    let mut out = Vec::new();
    for name in order.iter().filter(|n| wanted.contains(*n)) {
        let vars = vars_of.get(name.as_str()).cloned().unwrap_or_default();
        let get = |k: &str, legacy: &str| vars.get(k).or_else(|| vars.get(legacy)).cloned();
        let origin = format!("inventory {file}, host {name}");
        let mut t = parse_target(
            &get("ansible_host", "ansible_ssh_host").unwrap_or_else(|| name.clone()),
            name,
            &origin,
        )?;
        if let Some(p) = get("ansible_port", "ansible_ssh_port") {
            t.port = Some(p.parse().ok().filter(|&p: &u16| p > 0).ok_or_else(|| {
                anyhow::anyhow!("{origin}: ansible_port={p:?} is not a port (1-65535)")
            })?);
        }
        if let Some(u) = get("ansible_user", "ansible_ssh_user") {
            if bad_word(&u) {
                bail!("{origin}: ansible_user={u:?} is not a user name");
            }
            t.user = Some(u);
        }
        out.push(t);
    }
    if out.is_empty() {
        bail!("inventory {file}: group {group} has no hosts");
    }
    check(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_read_user_host_and_port() {
        let t = parse_target("root@10.0.0.7:2222", "n", "x").unwrap();
        assert_eq!(
            (t.user.as_deref(), t.host.as_str(), t.port),
            (Some("root"), "10.0.0.7", Some(2222))
        );
        let t = parse_target("[fe80::1]:22", "n", "x").unwrap();
        assert_eq!((t.host.as_str(), t.port), ("fe80::1", Some(22)));
        let t = parse_target("fe80::1", "n", "x").unwrap();
        assert_eq!((t.host.as_str(), t.port), ("fe80::1", None));
        for bad in ["-oProxyCommand=x", "a b", "h:0", "h:99999", "@h", "[::1"] {
            assert!(parse_target(bad, bad, "x").is_err(), "{bad}");
        }
    }

    #[test]
    fn a_host_whose_name_is_not_a_name_is_refused() {
        let e = from_arg("web1,a/b;c").unwrap_err().to_string();
        assert!(e.contains("host \"a/b;c\" is not a name"), "{e}");
        assert!(from_arg("root@[fe80::1%eth0]:22,web1").is_ok());
    }

    #[test]
    fn a_comma_list_refuses_a_host_named_twice() {
        assert_eq!(from_arg("a, b,c").unwrap().len(), 3);
        let e = from_arg("a,b,a").unwrap_err().to_string();
        assert!(e.contains("named twice"), "{e}");
        assert!(from_arg(",").is_err());
    }

    #[test]
    fn an_inventory_group_takes_its_children_and_host_variables() {
        let dir = std::env::temp_dir().join(format!("hostbench-unit-inv-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("inv.ini");
        std::fs::write(
            &f,
            "# fleet\nlonely\n[web]\nweb1 ansible_host=10.0.0.1\nweb2 ansible_port=2222 ansible_user=bob\n\
             [db]\ndb1\n[all_nodes:children]\nweb\ndb\n[web:vars]\nx=1\n",
        )
        .unwrap();
        let spec = |g: &str| format!("{}:{g}", f.display());
        let web = from_inventory(&spec("web")).unwrap();
        assert_eq!(web.len(), 2);
        assert_eq!(
            (web[0].name.as_str(), web[0].host.as_str()),
            ("web1", "10.0.0.1")
        );
        assert_eq!(
            (web[1].port, web[1].user.as_deref()),
            (Some(2222), Some("bob"))
        );
        let names: Vec<String> = from_inventory(&spec("all_nodes"))
            .unwrap()
            .into_iter()
            .map(|t| t.name)
            .collect();
        assert_eq!(names, ["web1", "web2", "db1"]);
        assert_eq!(from_inventory(&spec("all")).unwrap().len(), 4);
        let e = from_inventory(&spec("nope")).unwrap_err().to_string();
        assert!(e.contains("no group \"nope\"") && e.contains("web"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
