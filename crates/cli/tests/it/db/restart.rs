//! A database server restarted mid-run (`HOSTBENCH_TEST_DB_RESTART`): OLTP runs and an
//! insert-race into temporary tables count one reconnect per lost connection, go on after
//! the server is back and end at their time limit with exit 0. A server still away at the
//! time limit ends the run on time; one that never comes back fails the run after
//! `--db-reconnect-timeout`. No password is printed.
//!
//! The shared servers on 5432/3306 are never touched (other tests use them): each test
//! starts a private PostgreSQL (initdb + pg_ctl as user postgres) or MariaDB
//! (mariadb-install-db + mariadbd) in a temporary directory named `hostbench-test-*` on a
//! free loopback port, with a password, and a guard stops it and removes the directory
//! however the test ends. Needs root (PostgreSQL runs as postgres through runuser) and the
//! server binaries; `.ci/run` sets the variable when it has them. Set = must pass, unset =
//! a printed skip.

use super::*;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};

/// The password of the private servers; it must never appear in hostbench's output.
const PW: &str = "Rst4rtPw9x";

fn enabled() -> bool {
    match std::env::var("HOSTBENCH_TEST_DB_RESTART") {
        Ok(v) if !v.is_empty() && v != "0" => true,
        _ => {
            eprintln!(
                "skipped: HOSTBENCH_TEST_DB_RESTART is not set (see .ci/run: needs root, \
                 PostgreSQL's initdb/pg_ctl and mariadbd)"
            );
            false
        }
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
        .port()
}

fn private_dir(kind: &str) -> PathBuf {
    tempfile::Builder::new()
        .prefix(&format!("hostbench-test-{kind}-"))
        .tempdir_in(std::env::temp_dir())
        .expect("a temporary directory for the private server")
        .keep()
}

/// Runs `cmd` to completion; panics with its output when it fails.
fn must(cmd: &mut StdCommand, what: &str) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    let so = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{what} failed: {}\n{so}",
        String::from_utf8_lossy(&out.stderr)
    );
    so
}

fn wait_for(what: &str, limit: Duration, mut ready: impl FnMut() -> bool) {
    let t = Instant::now();
    while !ready() {
        assert!(t.elapsed() < limit, "{what}: not after {limit:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A hostbench run in the background, killed if the test fails before it ends.
struct Running(Option<Child>);

impl Running {
    fn start(a: &[String]) -> Running {
        Running(Some(spawn_piped(hb_std().args(a))))
    }

    /// Waits until `connected` says the run's connections are there; fails with the run's
    /// output if it ends first.
    fn connected(&mut self, mut connected: impl FnMut() -> bool) {
        let t = Instant::now();
        while !connected() {
            let c = self.0.as_mut().expect("running");
            if c.try_wait().unwrap().is_some() {
                let (code, so, se) = Running(self.0.take()).finish();
                panic!("the run ended (exit {code}) before it connected: {se}\n{so}");
            }
            assert!(
                t.elapsed() < Duration::from_secs(30),
                "the run never connected"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits for the run: (exit code, stdout, stderr), checked for panics and the password.
    fn finish(mut self) -> (i32, String, String) {
        let out = self
            .0
            .take()
            .expect("not finished yet")
            .wait_with_output()
            .unwrap();
        let so = String::from_utf8_lossy(&out.stdout).into_owned();
        let se = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(!se.contains("panicked"), "{se}");
        assert!(
            !so.contains(PW) && !se.contains(PW),
            "the password was printed:\n{se}\n{so}"
        );
        (out.status.code().unwrap_or(-1), so, se)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(mut c) = self.0.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// The JSON result of a run that must have survived the restart: exit 0 at its time limit,
/// one reconnect per thread (each thread's connection was lost once), transactions before
/// the server went away, none in some interval while it was away, and some after the
/// interval that counted the reconnects.
fn survived(run: Running, threads: u64, time_s: f64, what: &str) -> Value {
    let (code, so, se) = run.finish();
    assert_eq!(code, 0, "{what}: {se}\n{so}");
    let r: Value = serde_json::from_str(&so).unwrap_or_else(|e| panic!("{what}: {e}\n{so}"));
    assert_valid(&r, what);
    assert_eq!(r["outcome"]["stop_reason"], "time_limit", "{what}: {r}");
    let d = r["metrics"]["duration_s"].as_f64().unwrap();
    // On time: past the limit by at most the longest transaction (the one in flight at the
    // limit finishes, as in sysbench; on a loaded machine one can take a second) plus 0.5 s.
    let longest = r["latency"]["max_ns"].as_f64().unwrap_or(0.0) / 1e9;
    assert!(
        d >= time_s - 0.1 && d < time_s + longest + 0.5,
        "{what}: ran {d} s (longest transaction {longest} s)"
    );
    assert_eq!(
        counter(&r, "reconnects"),
        threads,
        "{what}: one reconnect per lost connection: {}",
        r["metrics"]["counters"]
    );
    assert!(counter(&r, "errors") >= threads, "{what}: {r}");
    let iv = r["intervals"].as_array().expect("interval samples");
    let events: Vec<u64> = iv.iter().map(|i| i["events"].as_u64().unwrap()).collect();
    let back = iv
        .iter()
        .position(|i| i["counters_per_s"]["reconnects"].as_f64().unwrap_or(0.0) > 0.0)
        .unwrap_or_else(|| panic!("{what}: no interval counted the reconnects: {events:?}"));
    let idle = events[..back]
        .iter()
        .rposition(|&e| e == 0)
        .unwrap_or_else(|| {
            panic!("{what}: no interval without transactions before the reconnects: {events:?}")
        });
    assert!(
        events[..idle].iter().sum::<u64>() > 0,
        "{what}: no transactions before the restart: {events:?}"
    );
    assert!(
        events[back + 1..].iter().sum::<u64>() > 0,
        "{what}: no transactions after the restart: {events:?}"
    );
    r
}

/// insert-race into temporary tables (a reconnect must create them again before it can
/// prepare the INSERT), capped at `time` seconds, as JSON.
fn race(url: &str, time: &str) -> Vec<String> {
    args(&[
        "insert-race",
        &format!("--db-url={url}"),
        "--sessions=2",
        "--rows=100000000",
        "--table-mode=temp",
        "--commit=batch:50",
        &format!("--time={time}"),
        "--format=json",
    ])
}

/// The JSON result of an insert-race that must have survived the restart: exit 0 at its
/// time limit, one reconnect per session.
fn race_survived(run: Running, what: &str) {
    let (code, so, se) = run.finish();
    assert_eq!(code, 0, "{what}: {se}\n{so}");
    let r: Value = serde_json::from_str(&so).unwrap_or_else(|e| panic!("{what}: {e}\n{so}"));
    assert_valid(&r, what);
    assert_eq!(r["outcome"]["stop_reason"], "time_limit", "{what}: {r}");
    assert_eq!(
        counter(&r, "reconnects"),
        2,
        "{what}: {}",
        r["metrics"]["counters"]
    );
    assert!(counter(&r, "errors") >= 2, "{what}: {r}");
}

fn oltp(test: &str, url: &str, prefix: &str, extra: &[&str]) -> Vec<String> {
    let mut a = args(&[
        test,
        &format!("--db-url={url}"),
        &format!("--table-prefix={prefix}"),
        "--table-size=500",
    ]);
    a.extend(args(extra));
    a
}

/// `oltp(...)` run for `time` seconds with two threads and half-second intervals, as JSON.
fn timed(test: &str, url: &str, prefix: &str, time: &str, extra: &[&str]) -> Vec<String> {
    let mut a = oltp(
        test,
        url,
        prefix,
        &[
            &format!("--time={time}"),
            "--threads=2",
            "--report-interval=0.5",
            "--format=json",
        ],
    );
    a.extend(args(extra));
    a.push("run".into());
    a
}

// ---------------------------------------------------------------------------------------
// PostgreSQL

/// A private PostgreSQL cluster, stopped and removed on drop.
struct PrivatePg {
    bin: PathBuf,
    dir: PathBuf,
    port: u16,
}

fn pg_bin() -> PathBuf {
    let mut v: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .expect("HOSTBENCH_TEST_DB_RESTART is set but /usr/lib/postgresql is missing")
        .flatten()
        .filter_map(|e| {
            let n = e.file_name().to_string_lossy().parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").exists().then_some((n, bin))
        })
        .collect();
    v.sort();
    v.pop()
        .expect("no /usr/lib/postgresql/<version>/bin/initdb")
        .1
}

fn as_postgres(prog: &Path, dir: &Path) -> StdCommand {
    let mut c = StdCommand::new("runuser");
    c.args(["-u", "postgres", "--"]).arg(prog).current_dir(dir);
    c
}

impl PrivatePg {
    fn start() -> PrivatePg {
        let bin = pg_bin();
        let dir = private_dir("pgrestart");
        let pg = PrivatePg {
            bin,
            dir,
            port: free_port(),
        };
        must(
            StdCommand::new("chown")
                .arg("postgres:postgres")
                .arg(&pg.dir),
            "chown the private cluster's directory",
        );
        let pwfile = pg.dir.join("pw");
        std::fs::write(&pwfile, PW).unwrap();
        must(
            StdCommand::new("chown")
                .arg("postgres:postgres")
                .arg(&pwfile),
            "chown the password file",
        );
        must(
            as_postgres(&pg.bin.join("initdb"), &pg.dir)
                .arg("-D")
                .arg(pg.dir.join("data"))
                .args(["-U", "postgres", "-A", "scram-sha-256", "--no-sync", "-E"])
                .args(["UTF8", "--pwfile"])
                .arg(&pwfile),
            "initdb",
        );
        pg.ctl(&["start", "-w", "-t", "30"]);
        pg
    }

    /// pg_ctl with this cluster's directory, log, port and socket directory.
    fn ctl(&self, a: &[&str]) {
        let opts = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c shared_buffers=16MB \
             -c max_connections=40",
            self.port,
            self.dir.display()
        );
        must(
            as_postgres(&self.bin.join("pg_ctl"), &self.dir)
                .arg("-D")
                .arg(self.dir.join("data"))
                .arg("-l")
                .arg(self.dir.join("log"))
                .args(["-o", &opts, "-s"])
                .args(a),
            &format!("pg_ctl {a:?} (log: {})", self.dir.join("log").display()),
        );
    }

    fn url(&self) -> String {
        format!("postgres://postgres:{PW}@127.0.0.1:{}/postgres", self.port)
    }

    /// Connections of hostbench runs.
    fn runs_connected(&self) -> usize {
        let out = StdCommand::new(self.bin.join("psql"))
            .arg(format!(
                "postgres://postgres@127.0.0.1:{}/postgres",
                self.port
            ))
            .args(["-XAtq", "-c"])
            .arg("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'hostbench'")
            .env("PGPASSWORD", PW)
            .output()
            .expect("psql");
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .unwrap_or(0)
    }
}

impl Drop for PrivatePg {
    fn drop(&mut self) {
        let _ = as_postgres(&self.bin.join("pg_ctl"), &self.dir)
            .arg("-D")
            .arg(self.dir.join("data"))
            .args(["-m", "immediate", "-s", "stop"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[test]
fn pgsql_server_restart_mid_run_reconnects_and_goes_on() {
    if !enabled() {
        return;
    }
    let pg = PrivatePg::start();
    let url = pg.url();
    ok(&oltp("oltp_read_write", &url, "hbrw", &["prepare"]));
    ok(&oltp("oltp_point_select", &url, "hbps", &["prepare"]));

    // A read-write and a read-only run while the server stops (fast shutdown: every
    // backend gets 57P01), stays away for 1.5 s (refused connections, then "the database
    // system is starting up") and starts again.
    let mut rw = Running::start(&timed("oltp_read_write", &url, "hbrw", "7", &[]));
    // hostbench's own client (the default, logging in with SCRAM-SHA-256) and the postgres
    // crate's.
    let mut ps = Running::start(&timed(
        "oltp_point_select",
        &url,
        "hbps",
        "7",
        &["--pgsql-client=crate"],
    ));
    let mut ins = Running::start(&race(&url, "7"));
    rw.connected(|| pg.runs_connected() >= 2);
    ps.connected(|| pg.runs_connected() >= 4);
    ins.connected(|| pg.runs_connected() >= 6);
    std::thread::sleep(Duration::from_secs(1));
    pg.ctl(&["-m", "fast", "-w", "stop"]);
    std::thread::sleep(Duration::from_millis(1500));
    pg.ctl(&["-w", "-t", "30", "start"]);
    survived(rw, 2, 7.0, "oltp_read_write across a PostgreSQL restart");
    survived(ps, 2, 7.0, "oltp_point_select across a PostgreSQL restart");
    race_survived(ins, "insert-race across a PostgreSQL restart");

    // Still away at the time limit: the run ends on time (exit 0), the lost connections are
    // errors and there is no reconnect.
    let mut run = Running::start(&timed("oltp_point_select", &url, "hbps", "3", &[]));
    run.connected(|| pg.runs_connected() >= 2);
    std::thread::sleep(Duration::from_millis(500));
    pg.ctl(&["-m", "fast", "-w", "stop"]);
    let (code, so, se) = run.finish();
    assert_eq!(code, 0, "{se}\n{so}");
    let r: Value = serde_json::from_str(&so).unwrap();
    assert_eq!(r["outcome"]["stop_reason"], "time_limit", "{r}");
    let d = r["metrics"]["duration_s"].as_f64().unwrap();
    assert!(
        d < 4.0,
        "the run waited for the server past its time limit: {d} s"
    );
    assert_eq!(counter(&r, "reconnects"), 0, "{r}");
    assert_eq!(counter(&r, "errors"), 2, "{r}");

    // Never back: the run fails once --db-reconnect-timeout has passed, naming the server
    // with its password hidden.
    pg.ctl(&["-w", "-t", "30", "start"]);
    let mut run = Running::start(&timed(
        "oltp_point_select",
        &url,
        "hbps",
        "60",
        &["--db-reconnect-timeout=2"],
    ));
    run.connected(|| pg.runs_connected() >= 2);
    let down = Instant::now();
    pg.ctl(&["-m", "fast", "-w", "stop"]);
    let (code, so, se) = run.finish();
    let waited = down.elapsed();
    assert_eq!(code, 1, "{se}\n{so}");
    assert!(
        waited >= Duration::from_millis(1900) && waited < Duration::from_secs(8),
        "gave up after {waited:?}"
    );
    assert!(se.contains("could not reconnect within 2 s"), "{se}");
    assert!(se.contains("Connection refused"), "{se}");
    assert!(se.contains("postgres://postgres:***@127.0.0.1:"), "{se}");
}

// ---------------------------------------------------------------------------------------
// MariaDB

/// A private MariaDB server (run as root, data in a temporary directory), killed and
/// removed on drop. Runs connect as `hbt` with a password; root has none (admin).
struct PrivateMy {
    dir: PathBuf,
    port: u16,
    server: Option<Child>,
}

impl PrivateMy {
    fn start() -> PrivateMy {
        let dir = private_dir("myrestart");
        let mut my = PrivateMy {
            dir,
            port: free_port(),
            server: None,
        };
        let log = std::fs::File::create(my.dir.join("install.log")).unwrap();
        let st = StdCommand::new("mariadb-install-db")
            .arg("--no-defaults")
            .arg(format!("--datadir={}", my.dir.join("data").display()))
            .args([
                "--auth-root-authentication-method=normal",
                "--skip-test-db",
                "--user=root",
            ])
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .status()
            .expect("mariadb-install-db");
        assert!(
            st.success(),
            "mariadb-install-db failed: see {}",
            my.dir.join("install.log").display()
        );
        my.launch();
        my.sql(&format!(
            "CREATE DATABASE test; CREATE USER hbt@'%' IDENTIFIED BY '{PW}'; \
             GRANT ALL ON *.* TO hbt@'%'"
        ));
        my
    }

    fn launch(&mut self) {
        let d = &self.dir;
        // Debian keeps it in /usr/sbin, which may not be on the test's PATH.
        let bin = ["/usr/sbin/mariadbd", "/usr/bin/mariadbd"]
            .into_iter()
            .find(|p| Path::new(p).exists())
            .unwrap_or("mariadbd");
        let child = StdCommand::new(bin)
            .arg("--no-defaults")
            .arg(format!("--datadir={}", d.join("data").display()))
            .arg(format!("--socket={}", d.join("sock").display()))
            .arg(format!("--pid-file={}", d.join("pid").display()))
            .arg(format!("--log-error={}", d.join("err.log").display()))
            .arg(format!("--port={}", self.port))
            .args([
                "--bind-address=127.0.0.1",
                "--user=root",
                "--skip-log-bin",
                "--innodb-buffer-pool-size=16M",
                "--innodb-buffer-pool-dump-at-shutdown=0",
                "--innodb-buffer-pool-load-at-startup=0",
                "--max-connections=50",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("mariadbd");
        self.server = Some(child);
        wait_for(
            &format!("mariadbd up (log: {})", d.join("err.log").display()),
            Duration::from_secs(30),
            || self.try_sql("SELECT 1").is_some(),
        );
    }

    fn try_sql(&self, sql: &str) -> Option<String> {
        let out = StdCommand::new("mysql")
            .arg("--no-defaults")
            .args([
                "-h",
                "127.0.0.1",
                "-P",
                &self.port.to_string(),
                "-u",
                "root",
            ])
            .args(["-N", "-B", "-e", sql])
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }

    fn sql(&self, sql: &str) -> String {
        self.try_sql(sql)
            .unwrap_or_else(|| panic!("mysql -e {sql:?} failed"))
    }

    /// Stops the server the way an init system does (SIGTERM: a normal shutdown that closes
    /// every connection) and waits for it to exit.
    fn stop(&mut self) {
        let mut c = self.server.take().expect("the server is running");
        // SAFETY: signalling our own child.
        unsafe { libc::kill(c.id() as i32, libc::SIGTERM) };
        c.wait().unwrap();
    }

    fn url(&self) -> String {
        format!("mysql://hbt:{PW}@127.0.0.1:{}/test", self.port)
    }

    fn runs_connected(&self) -> usize {
        self.try_sql("SELECT count(*) FROM information_schema.processlist WHERE user = 'hbt'")
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0)
    }
}

impl Drop for PrivateMy {
    fn drop(&mut self) {
        if let Some(mut c) = self.server.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[test]
fn mysql_server_restart_mid_run_reconnects_and_goes_on() {
    if !enabled() {
        return;
    }
    let mut my = PrivateMy::start();
    let url = my.url();
    ok(&oltp("oltp_read_write", &url, "hbrw", &["prepare"]));
    ok(&oltp("oltp_read_only", &url, "hbro", &["prepare"]));

    // Both clients at once: the lean one (the default) on a read-write run, the crate one
    // on a read-only run, while the server shuts down (every connection is closed), stays
    // away for a second (refused connections) and starts again.
    let mut rw = Running::start(&timed("oltp_read_write", &url, "hbrw", "8", &[]));
    let mut ro = Running::start(&timed(
        "oltp_read_only",
        &url,
        "hbro",
        "8",
        &["--mysql-client=crate"],
    ));
    let mut ins = Running::start(&race(&url, "8"));
    rw.connected(|| my.runs_connected() >= 2);
    ro.connected(|| my.runs_connected() >= 4);
    ins.connected(|| my.runs_connected() >= 6);
    std::thread::sleep(Duration::from_secs(1));
    my.stop();
    std::thread::sleep(Duration::from_secs(1));
    my.launch();
    survived(
        rw,
        2,
        8.0,
        "oltp_read_write (lean client) across a MariaDB restart",
    );
    survived(
        ro,
        2,
        8.0,
        "oltp_read_only (crate client) across a MariaDB restart",
    );
    race_survived(ins, "insert-race (lean client) across a MariaDB restart");

    // Never back: the run fails once --db-reconnect-timeout has passed.
    for client in ["lean", "crate"] {
        if my.server.is_none() {
            my.launch();
        }
        let mut run = Running::start(&timed(
            "oltp_read_only",
            &url,
            "hbro",
            "60",
            &[
                "--db-reconnect-timeout=2",
                &format!("--mysql-client={client}"),
            ],
        ));
        run.connected(|| my.runs_connected() >= 2);
        let down = Instant::now();
        my.stop();
        let (code, so, se) = run.finish();
        let waited = down.elapsed();
        assert_eq!(code, 1, "{client}: {se}\n{so}");
        assert!(
            waited >= Duration::from_millis(1900) && waited < Duration::from_secs(8),
            "{client}: gave up after {waited:?}"
        );
        assert!(
            se.contains("could not reconnect within 2 s"),
            "{client}: {se}"
        );
        assert!(se.contains("mysql://hbt:***@127.0.0.1:"), "{client}: {se}");
    }
}
