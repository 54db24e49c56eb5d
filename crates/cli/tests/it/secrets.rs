//! No secret is ever stored or printed: a run given a password in every way a user can give
//! one (`--*-password` options, URL user info, `?password=`, a `--config-file` line, a
//! `--results-db` URL, a mistyped option, a password written after a space), then every
//! output of it (stdout and stderr of the run in text and JSON, `results list|show|export`,
//! an export file, an HTML report, `compare`, the store's own files) is searched for it.
//! The same for HTTP credentials: ab's `-A`/`-P`/`-C`/`-H`, httperf's `--add-header` and
//! `hostbench http -H` with `Authorization`, `Proxy-Authorization` and `Cookie` lines.

use crate::common::*;
use std::path::Path;
use std::time::Duration;

/// The password every case uses; it must appear in no output.
const SECRET: &str = "Hunter2Zq9";

fn temp() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("hostbench-test-secrets-")
        .tempdir()
        .unwrap()
}

/// Runs hostbench with its store at `db`; returns (exit code, stdout + stderr).
fn all_output(db: &Path, args: &[&str]) -> (Option<i32>, String) {
    let out = hb_with_store(db)
        .args(args)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!text.contains("panicked"), "{args:?}: {text}");
    (out.status.code(), text)
}

fn assert_clean(what: &str, text: &str) {
    assert!(!text.contains(SECRET), "{what} shows the password:\n{text}");
}

/// Every byte of every file under `dir` (the store, its WAL, export and report files).
fn assert_files_clean(dir: &Path) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_file() {
            let bytes = std::fs::read(&p).unwrap();
            let found = bytes.windows(SECRET.len()).any(|w| w == SECRET.as_bytes());
            assert!(!found, "{} holds the password", p.display());
        }
    }
}

#[test]
fn a_password_given_every_way_is_never_printed_or_stored() {
    let d = temp();
    // What hostbench writes goes under `out` (searched at the end); the inputs holding the
    // password stay outside it.
    let out = d.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let db = out.join("results.db");
    let sqlite = format!("--db-url=sqlite:{}", out.join("sb.db").display());
    let pg = format!("--pgsql-password={SECRET}");
    let my = format!("--mysql-password={SECRET}");
    let cfg = d.path().join("sb.cfg");
    std::fs::write(&cfg, format!("pgsql-password = \"{SECRET}\"\n")).unwrap();
    let cfg_opt = format!("--config-file={}", cfg.display());
    let base = |cmd: &str, extra: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = vec![
            "oltp_point_select".into(),
            sqlite.clone(),
            "--table-size=50".into(),
            pg.clone(),
            my.clone(),
            cfg_opt.clone(),
        ];
        v.extend(extra.iter().map(|s| s.to_string()));
        v.push(cmd.into());
        v
    };
    let run = |args: Vec<String>| {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, text) = all_output(&db, &a);
        assert_eq!(code, Some(0), "{a:?}: {text}");
        assert_clean(&format!("{a:?}"), &text);
    };
    run(base("prepare", &[]));
    for extra in [
        &["--events=20", "--time=0", "--label=secrets"][..],
        &[
            "--events=20",
            "--time=0",
            "--label=secrets",
            "--format=json",
        ],
        &[
            "--events=20",
            "--time=0",
            "--label=secrets",
            "--verbosity=5",
        ],
    ] {
        run(base("run", extra));
    }
    // The native grammar, with the password in the URL's user info and its query.
    let (code, text) = all_output(
        &db,
        &[
            "run",
            "db.oltp_point_select",
            "-s",
            &format!("pgsql_password={SECRET}"),
            "-s",
            &format!(
                "db_url=sqlite:{}?password={SECRET}",
                out.join("sb.db").display()
            ),
            "-n",
            "20",
            "--time",
            "0",
            "--label",
            "secrets",
        ],
    );
    assert_clean("native run", &text);
    let _ = code;

    // Everything that reads the stored runs back.
    let export = out.join("export.json");
    let html = out.join("report.html");
    for args in [
        vec!["results", "list"],
        vec!["results", "list", "--format", "json"],
        vec!["results", "export"],
        vec!["results", "export", "-o", export.to_str().unwrap()],
        vec!["report", "secrets", "-o", html.to_str().unwrap()],
        vec!["report", "secrets", "-o", "-"],
        vec!["compare", "secrets", "secrets"],
        vec!["compare", "secrets", "secrets", "--format", "json"],
    ] {
        let (_, text) = all_output(&db, &args);
        assert_clean(&format!("{args:?}"), &text);
    }
    let (_, list) = all_output(&db, &["results", "list", "--format", "json"]);
    let runs: serde_json::Value = serde_json::from_str(&list).unwrap();
    for r in runs.as_array().unwrap() {
        let id = r["id"].as_str().unwrap();
        for f in ["text", "json"] {
            let (_, text) = all_output(&db, &["results", "show", id, "--format", f]);
            assert_clean("results show", &text);
        }
    }

    // Errors and warnings.
    let bad_cfg = d.path().join("bad.cfg");
    std::fs::write(&bad_cfg, format!("mysql-password {SECRET}\n")).unwrap();
    let bad_cfg_opt = format!("--config-file={}", bad_cfg.display());
    let typo = format!("--pgsql-pasword={SECRET}");
    let pg_store = format!("postgres://u:{SECRET}@127.0.0.1:1/x?password={SECRET}");
    let pg_store_opt = format!("--results-db={pg_store}");
    let native_typo = format!("--pasword={SECRET}");
    let bad_url = format!("--db-url=postgres://u:{SECRET}@127.0.0.1:1/x");
    for args in [
        vec!["oltp_point_select", typo.as_str(), "run"],
        vec!["oltp_point_select", "--pgsql-password", SECRET, "run"],
        vec!["oltp_point_select", bad_cfg_opt.as_str(), "run"],
        vec!["results", "list", "--results-db", pg_store.as_str()],
        vec!["run", "null", "-n", "10", native_typo.as_str()],
        vec![
            "oltp_point_select",
            bad_url.as_str(),
            "--events=1",
            "--time=0",
            "run",
        ],
    ] {
        let (code, text) = all_output(&db, &args);
        assert_ne!(code, Some(0), "{args:?} should fail or warn: {text}");
        assert_clean(&format!("{args:?}"), &text);
        assert!(text.contains("***") || text.contains("error"), "{text}");
    }
    // A run whose store cannot be reached still runs; the warning hides the password.
    let (_, text) = all_output(
        &db,
        &["cpu", "--events=10", "--time=0", &pg_store_opt, "run"],
    );
    assert!(text.contains("not saved"), "{text}");
    assert!(text.contains("***"), "{text}");

    run(base("cleanup", &[]));
    assert!(db.exists() && export.exists() && html.exists());
    assert_files_clean(&out);
}

/// `bob:SECRET` as ab's `-A`/`-P` send it (Basic credentials): hidden too.
const SECRET_B64: &str = "Ym9iOkh1bnRlcjJacTk=";

/// A server answering every request `200 ok` and closing; it keeps every request head it
/// read, to check that the real credentials went over the wire.
fn recording_server() -> (String, std::sync::Arc<std::sync::Mutex<String>>) {
    recording_server_with(b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok".to_vec())
}

/// [`recording_server`] answering every request with `response`.
fn recording_server_with(response: Vec<u8>) -> (String, std::sync::Arc<std::sync::Mutex<String>>) {
    use std::io::{Read, Write};
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let keep = seen.clone();
    std::thread::spawn(move || {
        for mut c in l.incoming().flatten() {
            let mut buf = Vec::new();
            let mut b = [0u8; 4096];
            while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                match c.read(&mut b) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => buf.extend_from_slice(&b[..n]),
                }
            }
            if let Ok(mut s) = keep.lock()
                && s.len() < 1 << 20
            {
                s.push_str(&String::from_utf8_lossy(&buf));
            }
            let _ = c.write_all(&response);
        }
    });
    (format!("127.0.0.1:{port}"), seen)
}

#[test]
fn http_credentials_are_never_printed_or_stored() {
    let d = temp();
    let out = d.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let db = out.join("results.db");
    let (addr, seen) = recording_server();
    let url = format!("http://{addr}/");
    let port = addr.rsplit(':').next().unwrap().to_string();
    let bob = format!("bob:{SECRET}");
    let bearer = format!("Authorization: Bearer {SECRET}");
    let proxy = format!("Proxy-Authorization: Basic {SECRET}");
    let cookie = format!("Cookie: sid={SECRET}; theme=dark");
    let ab_cookie = format!("sid={SECRET}");
    let bundled = format!("-kA{bob}");
    let add_header = format!("--add-header=Authorization: Basic {SECRET}\\nCookie: s={SECRET}\\n");
    let clean = |what: &str, text: &str| {
        assert_clean(what, text);
        assert!(
            !text.contains(SECRET_B64),
            "{what} shows the credentials:\n{text}"
        );
    };
    let run = |args: &[&str]| {
        let (code, text) = all_output(&db, args);
        assert_eq!(code, Some(0), "{args:?}: {text}");
        clean(&format!("{args:?}"), &text);
        text
    };
    // ab: -A, -P, -C and -H, in both getopt forms; its layout, -v 4 (the request and every
    // response printed), JSON and HTML.
    for extra in [&[][..], &["-v", "4"], &["--format=json"], &["-w"]] {
        let mut a = vec![
            "ab",
            "-n",
            "3",
            "-A",
            &bob,
            "-P",
            &bob,
            "-C",
            &ab_cookie,
            "-H",
            &bearer,
            "-H",
            &proxy,
            "-H",
            &cookie,
            "--label=secrets",
        ];
        a.extend_from_slice(extra);
        a.push(&url);
        let text = run(&a);
        if extra == ["-v", "4"] {
            assert!(text.contains("Authorization: Bearer ***"), "{text}");
            assert!(text.contains("Cookie: sid=***; theme=***"), "{text}");
        }
    }
    run(&["ab", "-n", "2", &bundled, "--label=secrets", &url]);
    // httperf's --add-header, and the native command's -H.
    run(&[
        "httperf",
        "--server=127.0.0.1",
        &format!("--port={port}"),
        "--num-conns=3",
        &add_header,
        "--label=secrets",
    ]);
    run(&[
        "http",
        &url,
        "-n",
        "3",
        "-c",
        "1",
        "-H",
        &bearer,
        "-H",
        &cookie,
        "--label=secrets",
    ]);
    run(&[
        "http",
        &url,
        "-n",
        "3",
        "-c",
        "1",
        "-H",
        &proxy,
        "--label=secrets",
        "--format=json",
    ]);
    // The server got the real values.
    let wire = seen.lock().unwrap().clone();
    for want in [
        format!("Authorization: Basic {SECRET_B64}"),
        format!("Proxy-Authorization: Basic {SECRET_B64}"),
        format!("Authorization: Bearer {SECRET}"),
        format!("Cookie: sid={SECRET}"),
        format!("Authorization: Basic {SECRET}"),
        format!("Cookie: s={SECRET}"),
    ] {
        assert!(
            wire.contains(&want),
            "the server never got '{want}':\n{wire}"
        );
    }
    // Errors: a -A without a colon (maybe the password alone) is not echoed.
    let (code, text) = all_output(&db, &["ab", "-A", SECRET, &url]);
    assert_eq!(code, Some(2), "{text}");
    clean("ab -A without a colon", &text);
    // A header without its colon: none of it is echoed (it may be the credential alone);
    // the error says which -H it is.
    let no_colon = format!("Authorization Bearer {SECRET}");
    let (code, text) = all_output(&db, &["http", &url, "-n", "1", "-H", &no_colon]);
    assert_eq!(code, Some(2), "{text}");
    clean("-H without a colon", &text);
    assert!(
        text.contains("-H #1") && text.contains("Name: value"),
        "{text}"
    );

    // Everything that reads the stored runs back.
    let export = out.join("export.json");
    let html = out.join("report.html");
    for args in [
        vec!["results", "list"],
        vec!["results", "list", "--format", "json"],
        vec!["results", "export"],
        vec!["results", "export", "-o", export.to_str().unwrap()],
        vec!["report", "secrets", "-o", html.to_str().unwrap()],
        vec!["report", "secrets", "-o", "-"],
        vec!["compare", "secrets", "secrets"],
        vec!["compare", "secrets", "secrets", "--format", "json"],
    ] {
        let (_, text) = all_output(&db, &args);
        clean(&format!("{args:?}"), &text);
    }
    let (_, list) = all_output(&db, &["results", "list", "--format", "json"]);
    let runs: serde_json::Value = serde_json::from_str(&list).unwrap();
    assert!(runs.as_array().unwrap().len() >= 8, "{list}");
    for r in runs.as_array().unwrap() {
        let id = r["id"].as_str().unwrap();
        for f in ["text", "json"] {
            let (_, text) = all_output(&db, &["results", "show", id, "--format", f]);
            clean("results show", &text);
        }
    }
    assert!(export.exists() && html.exists());
    assert_files_clean(&out);
    for e in std::fs::read_dir(&out).unwrap() {
        let bytes = std::fs::read(e.unwrap().path()).unwrap();
        let b64 = SECRET_B64.as_bytes();
        assert!(!bytes.windows(b64.len()).any(|w| w == b64));
    }
}

/// A recording server (answering with a `Set-Cookie` line whose value is the secret) and
/// a store, for the gaps a review found.
struct Gaps {
    dir: tempfile::TempDir,
    addr: String,
    seen: std::sync::Arc<std::sync::Mutex<String>>,
}

/// `Set-Cookie` attributes that stay as they are.
const EXPIRES: &str = "Expires=Wed, 21 Oct 2015 07:28:00 GMT";

impl Gaps {
    fn new() -> Gaps {
        let dir = temp();
        std::fs::create_dir(dir.path().join("out")).unwrap();
        let (addr, seen) = recording_server_with(
            format!(
                "HTTP/1.0 200 OK\r\nSet-Cookie: sid={SECRET}; Path=/; {EXPIRES}; HttpOnly\r\n\
                 Content-Length: 2\r\n\r\nok"
            )
            .into_bytes(),
        );
        Gaps { dir, addr, seen }
    }

    fn out(&self) -> std::path::PathBuf {
        self.dir.path().join("out")
    }

    fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    fn port(&self) -> String {
        self.addr.rsplit(':').next().unwrap().to_string()
    }

    /// A run that succeeds and prints no secret; its output.
    fn run(&self, args: &[&str]) -> String {
        let (code, text) = all_output(&self.out().join("results.db"), args);
        assert_eq!(code, Some(0), "{args:?}: {text}");
        assert_clean(&format!("{args:?}"), &text);
        text
    }

    /// A command refused with exit 2, its error naming `what` and echoing no secret.
    fn refused(&self, args: &[&str], what: &str) {
        let (code, text) = all_output(&self.out().join("results.db"), args);
        assert_eq!(code, Some(2), "{args:?} must be refused: {text}");
        assert_clean(&format!("{args:?}"), &text);
        assert!(
            text.contains(what),
            "{args:?}: the error must say '{what}':\n{text}"
        );
    }

    /// The server got each of `want`.
    fn wire_has(&self, want: &[String]) {
        let wire = self.seen.lock().unwrap().clone();
        for w in want {
            assert!(wire.contains(w), "the server never got '{w}':\n{wire}");
        }
    }

    /// Everything that reads the stored runs back shows no secret, nor does any file.
    fn store_clean(&self, runs: usize) {
        let db = self.out().join("results.db");
        for args in [
            vec!["results", "list"],
            vec!["results", "list", "--format", "json"],
            vec!["results", "export"],
        ] {
            let (_, text) = all_output(&db, &args);
            assert_clean(&format!("{args:?}"), &text);
        }
        let (_, list) = all_output(&db, &["results", "list", "--format", "json"]);
        let stored: serde_json::Value = serde_json::from_str(&list).unwrap();
        assert_eq!(stored.as_array().unwrap().len(), runs, "{list}");
        for r in stored.as_array().unwrap() {
            let id = r["id"].as_str().unwrap();
            for f in ["text", "json"] {
                let (_, text) = all_output(&db, &["results", "show", id, "--format", f]);
                assert_clean("results show", &text);
            }
        }
        assert_files_clean(&self.out());
    }
}

/// A quoted credential after the scheme (`Bearer "TOKEN"`), and a quoted value alone.
#[test]
fn a_quoted_credential_is_masked() {
    let g = Gaps::new();
    let url = g.url();
    let quoted = format!("Authorization: Bearer \"{SECRET}\"");
    let quoted_alone = format!("Authorization: \"{SECRET}\"");
    g.run(&[
        "http",
        &url,
        "-n",
        "2",
        "-c",
        "1",
        "-H",
        &quoted,
        "-H",
        &quoted_alone,
    ]);
    let text = g.run(&["ab", "-n", "1", "-v", "2", "-H", &quoted, &url]);
    assert!(text.contains("Authorization: Bearer ***"), "{text}");
    g.wire_has(&[quoted, quoted_alone]);
    g.store_clean(2);
}

/// A blank before a header's colon is refused (RFC 9112 5.1: a server must reject it), in
/// every grammar, without echoing the header.
#[test]
fn a_blank_before_the_colon_is_refused() {
    let g = Gaps::new();
    let url = g.url();
    let spaced = format!("Authorization : Basic {SECRET}");
    g.refused(
        &["http", &url, "-n", "1", "-H", "Accept: */*", "-H", &spaced],
        "-H #2",
    );
    g.refused(&["ab", "-n", "1", "-H", &spaced, &url], "-H #1");
    g.refused(&["ab", "-n", "1", &format!("-H{spaced}"), &url], "-H #1");
    g.refused(
        &[
            "httperf",
            "--server=127.0.0.1",
            &format!("--port={}", g.port()),
            "--num-conns=1",
            &format!("--add-header=X-A: 1\\n{spaced}\\n"),
        ],
        "--add-header #1",
    );
    g.refused(
        &[
            "run",
            "http.load",
            "-s",
            &format!("url={url}"),
            "-s",
            &format!("headers={spaced}"),
            "-n",
            "1",
        ],
        "headers parameter's line 1",
    );
    g.store_clean(0);
}

/// The value of one of hostbench's own long options in ab's grammar is skipped when the
/// saved command line is redacted, whatever it looks like (`--label -x`).
#[test]
fn ab_long_option_values_do_not_hide_a_credential() {
    let g = Gaps::new();
    let url = g.url();
    let bob = format!("bob:{SECRET}");
    g.run(&["ab", "-n", "1", "--label", "-x", "-A", &bob, &url]);
    g.run(&["ab", "-n", "1", "--label", "-C", "-P", &bob, &url]);
    g.run(&[
        "ab", "-n", "1", "--format", "ab", "--label", "-e", "-A", &bob, &url,
    ]);
    g.store_clean(3);
}

/// A header without a colon is not echoed (it may be the credential alone); the error
/// names the option by position and says what is expected.
#[test]
fn a_header_without_a_colon_is_not_echoed() {
    let g = Gaps::new();
    let url = g.url();
    g.refused(&["http", &url, "-n", "1", "-H", SECRET], "-H #1");
    g.refused(
        &["http", &url, "-n", "1", "-H", "Accept: */*", "-H", SECRET],
        "-H #2",
    );
    g.refused(&["ab", "-n", "1", "-H", SECRET, &url], "-H #1");
    g.refused(
        &[
            "httperf",
            "--server=127.0.0.1",
            &format!("--port={}", g.port()),
            "--num-conns=1",
            &format!("--add-header={SECRET}"),
        ],
        "--add-header #1",
    );
    g.store_clean(0);
}

/// API-key and token headers, and credential query parameters, are masked everywhere.
#[test]
fn api_keys_and_tokens_are_masked() {
    let g = Gaps::new();
    let url = g.url();
    let api_key = format!("X-Api-Key: {SECRET}");
    let auth_token = format!("X-Auth-Token: {SECRET}");
    let access_token = format!("X-Access-Token: {SECRET}");
    let plain_key = format!("Api-Key: {SECRET}");
    let query = format!("{url}q?access_token={SECRET}&api_key={SECRET}&apikey={SECRET}&page=2");
    let query2 = format!("{url}q?token={SECRET}&auth={SECRET}&key={SECRET}&sig={SECRET}");
    let text = g.run(&[
        "ab",
        "-n",
        "2",
        "-v",
        "4",
        "-H",
        &api_key,
        "-H",
        &auth_token,
        &query,
    ]);
    assert!(text.contains("X-Api-Key: ***"), "{text}");
    assert!(text.contains("apikey=***&page=2"), "{text}");
    g.run(&["ab", "-n", "1", "-H", &plain_key, &query2]);
    g.run(&[
        "http",
        &query,
        "-n",
        "2",
        "-c",
        "1",
        "-H",
        &access_token,
        "-H",
        &plain_key,
    ]);
    g.run(&[
        "httperf",
        "--server=127.0.0.1",
        &format!("--port={}", g.port()),
        &format!("--uri=/q?access_token={SECRET}"),
        "--num-conns=2",
        &format!("--add-header=X-Api-Key: {SECRET}\\nX-Auth-Token: {SECRET}\\n"),
    ]);
    g.wire_has(&[
        api_key,
        auth_token,
        access_token,
        plain_key,
        format!("access_token={SECRET}&api_key={SECRET}"),
        format!("token={SECRET}&auth={SECRET}&key={SECRET}&sig={SECRET}"),
    ]);
    let (_, list) = all_output(&g.out().join("results.db"), &["results", "list"]);
    assert!(list.contains("access_token=***"), "{list}");
    g.store_clean(4);
}

/// What is not a credential stays: a `Set-Cookie` line's attributes (its value is masked),
/// a URL path with `cookie:` in it, the help's example header.
#[test]
fn what_is_not_a_credential_is_not_masked() {
    let g = Gaps::new();
    let url = g.url();
    let text = g.run(&[
        "ab",
        "-n",
        "1",
        "-v",
        "2",
        &format!("{url}static/cookie:abc/x"),
    ]);
    assert!(
        text.contains(&format!("Set-Cookie: sid=***; Path=/; {EXPIRES}; HttpOnly")),
        "{text}"
    );
    assert!(text.contains("/static/cookie:abc/x"), "{text}");
    let (_, list) = all_output(&g.out().join("results.db"), &["results", "list"]);
    assert!(list.contains("/static/cookie:abc/x"), "{list}");
    let help = g.run(&["http", "--help"]);
    assert!(help.contains("Proxy-Authorization: Basic ..."), "{help}");
    g.store_clean(1);
}
