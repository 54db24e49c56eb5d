//! Store tests. The behaviour tests run against SQLite always and against PostgreSQL when
//! `HOSTBENCH_TEST_PG_URL` is set (set but unreachable is a failure; unset prints a skip
//! line). Each PostgreSQL test works in its own schema `hostbench_test_<pid>_<n>_<time>` and
//! drops only the schemas it created.

use super::*;
use crate::migrations::MIGRATIONS;
use crate::time::{Bound, parse_bound};
use std::sync::atomic::{AtomicUsize, Ordering};

const FIXTURE: &str = include_str!("../tests/fixtures/result-v1.json");

fn fixture() -> RunResult {
    serde_json::from_str(FIXTURE).expect("the fixture is a v1 result")
}

/// A result with these fields changed from the fixture.
fn run(id: &str, label: Option<&str>, workload: &str, host: &str, started: &str) -> RunResult {
    let mut r = fixture();
    r.id = id.into();
    r.label = label.map(String::from);
    r.workload.id = workload.into();
    r.host.as_mut().expect("fixture has a host").hostname = host.into();
    r.started_at = started.into();
    r
}

fn ids(v: &[RunSummary]) -> Vec<&str> {
    v.iter().map(|s| s.id.as_str()).collect()
}

// ---------------------------------------------------------------------------------------
// Backend-independent behaviour.

/// Saving, filters, ids, export/import, removal. `fresh` hands out new empty stores.
fn behaves_like_a_store(fresh: &mut dyn FnMut() -> Location) {
    finds_a_fleet_runs_runs(fresh());
    keeps_a_fleet_roster(fresh());
    a_fleet_roster_travels_with_its_runs_and_goes_with_them(fresh(), fresh());
    let loc = fresh();
    let mut s = Store::open(&loc).unwrap();
    assert_eq!(s.schema_version().unwrap(), LATEST_VERSION);
    assert!(s.list(&Filter::default()).unwrap().is_empty());

    let runs = [
        run(
            "aaaa0001000000000000000000000000",
            Some("x86"),
            "cpu",
            "alpha",
            "2026-01-01T10:00:00.000Z",
        ),
        run(
            "aaaa0002000000000000000000000000",
            Some("arm"),
            "cpu",
            "beta",
            "2026-01-02T10:00:00.000Z",
        ),
        run(
            "bbbb0003000000000000000000000000",
            Some("x86"),
            "memory.stream",
            "alpha",
            "2026-01-03T10:00:00.000Z",
        ),
        run(
            "bbbb0004000000000000000000000000",
            None,
            "memory",
            "alpha",
            "2026-01-04T23:59:59.999Z",
        ),
        run(
            "cccc0005000000000000000000000000",
            Some("arm"),
            "null.loop",
            "beta",
            "2026-01-05T00:00:00.000Z",
        ),
    ];
    for r in &runs {
        s.save(r).unwrap();
    }
    // Saving the same run again changes nothing; another run under its id is refused.
    s.save(&runs[0]).unwrap();
    let mut other = runs[0].clone();
    other.label = Some("changed".into());
    assert!(matches!(s.save(&other), Err(StoreError::Conflict(_))));

    let all = s.list(&Filter::default()).unwrap();
    assert_eq!(
        ids(&all),
        [
            "cccc0005000000000000000000000000",
            "bbbb0004000000000000000000000000",
            "bbbb0003000000000000000000000000",
            "aaaa0002000000000000000000000000",
            "aaaa0001000000000000000000000000"
        ],
        "newest first"
    );
    let first = all
        .iter()
        .find(|x| x.id == "aaaa0001000000000000000000000000")
        .unwrap();
    assert_eq!(first.label.as_deref(), Some("x86"));
    assert_eq!(first.hostname.as_deref(), Some("alpha"));
    assert_eq!(first.category, "system");
    assert_eq!(first.stop_reason, "time_limit");
    assert_eq!(first.headline.metric, "events_per_s");
    assert_eq!(first.headline.value, Some(runs[0].metrics.events_per_s));
    assert_eq!(
        first.host_fingerprint.as_deref(),
        Some(host_fingerprint(runs[0].host.as_ref().unwrap()).as_str())
    );

    let q = |s: &mut Store, f: Filter| {
        s.list(&f)
            .unwrap()
            .into_iter()
            .map(|x| x.id)
            .collect::<Vec<_>>()
    };
    let label = |l: &str| Filter {
        label: Some(l.into()),
        ..Filter::default()
    };
    assert_eq!(
        q(&mut s, label("arm")),
        [
            "cccc0005000000000000000000000000",
            "aaaa0002000000000000000000000000"
        ]
    );
    assert_eq!(q(&mut s, label("nope")), Vec::<String>::new());
    let wl = |w: &str| Filter {
        workload: Some(w.into()),
        ..Filter::default()
    };
    assert_eq!(
        q(&mut s, wl("memory")),
        [
            "bbbb0004000000000000000000000000",
            "bbbb0003000000000000000000000000"
        ],
        "family"
    );
    assert_eq!(
        q(&mut s, wl("memory.stream")),
        ["bbbb0003000000000000000000000000"]
    );
    assert_eq!(q(&mut s, wl("null")), ["cccc0005000000000000000000000000"]);
    let host = |h: &str| Filter {
        host: Some(h.into()),
        ..Filter::default()
    };
    assert_eq!(
        q(&mut s, host("beta")),
        [
            "cccc0005000000000000000000000000",
            "aaaa0002000000000000000000000000"
        ]
    );
    let fp = first.host_fingerprint.clone().unwrap();
    assert_eq!(q(&mut s, host(&fp)).len(), 5, "same hardware, any name");
    assert_eq!(q(&mut s, host(&fp[..6])).len(), 5, "fingerprint prefix");
    assert_eq!(q(&mut s, host("ffffffff")).len(), 0);
    let day = |d: &str, b| parse_bound(d, b, 0).unwrap();
    let range = Filter {
        since_ms: Some(day("2026-01-02", Bound::Since)),
        until_ms: Some(day("2026-01-04", Bound::Until)),
        ..Filter::default()
    };
    assert_eq!(
        q(&mut s, range),
        [
            "bbbb0004000000000000000000000000",
            "bbbb0003000000000000000000000000",
            "aaaa0002000000000000000000000000"
        ],
        "--until includes the whole day"
    );
    let limited = Filter {
        limit: Some(2),
        ..Filter::default()
    };
    assert_eq!(
        q(&mut s, limited.clone()),
        [
            "cccc0005000000000000000000000000",
            "bbbb0004000000000000000000000000"
        ]
    );
    let both = Filter {
        label: Some("x86".into()),
        host: Some("alpha".into()),
        workload: Some("cpu".into()),
        ..Filter::default()
    };
    assert_eq!(q(&mut s, both), ["aaaa0001000000000000000000000000"]);
    // load: oldest first, limit keeps the most recent.
    let loaded: Vec<String> = s
        .load(&limited)
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(
        loaded,
        [
            "bbbb0004000000000000000000000000",
            "cccc0005000000000000000000000000"
        ]
    );

    // Ids and prefixes.
    assert_eq!(
        s.resolve_id("cccc").unwrap(),
        "cccc0005000000000000000000000000"
    );
    assert!(matches!(
        s.resolve_id("aaaa"),
        Err(StoreError::AmbiguousId { count: 2, .. })
    ));
    assert!(matches!(
        s.resolve_id("ccc"),
        Err(StoreError::ShortPrefix(_))
    ));
    assert!(matches!(
        s.resolve_id("dddd"),
        Err(StoreError::UnknownRun(_))
    ));
    assert!(matches!(
        s.resolve_id("a%"),
        Err(StoreError::ShortPrefix(_))
    ));
    assert!(matches!(
        s.resolve_id("aaa_"),
        Err(StoreError::UnknownRun(_))
    ));
    let got = s.get("aaaa0002000000000000000000000000").unwrap();
    assert_eq!(got.result().unwrap(), runs[1]);
    assert_eq!(got.json, serde_json::to_string(&runs[1]).unwrap());

    // select: id, label, else nothing.
    assert_eq!(
        s.select("bbbb0003000000000000000000000000").unwrap().len(),
        1
    );
    let arm: Vec<String> = s.select("arm").unwrap().into_iter().map(|r| r.id).collect();
    assert_eq!(
        arm,
        [
            "aaaa0002000000000000000000000000",
            "cccc0005000000000000000000000000"
        ]
    );
    assert!(matches!(s.select("graviton9"), Err(StoreError::NoMatch(_))));
    // A short word that is no id and no label says how long a prefix must be.
    let short = s.select("cc").unwrap_err();
    assert!(matches!(short, StoreError::ShortPrefix(_)), "{short}");
    assert!(
        short.to_string().contains("at least 4 characters"),
        "{short}"
    );

    // Export → import into an empty store → export: identical documents, same ids.
    let doc = export_document(&s.load(&Filter::default()).unwrap());
    let parsed = parse_runs(&doc, "export").unwrap();
    assert_eq!(parsed.len(), 5);
    let loc2 = fresh();
    let mut s2 = Store::open(&loc2).unwrap();
    let rep = s2.import(&parsed).unwrap();
    assert_eq!((rep.added, rep.already_present), (5, 0));
    assert_eq!(export_document(&s2.load(&Filter::default()).unwrap()), doc);
    let again = s2.import(&parsed).unwrap();
    assert_eq!(
        (again.added, again.already_present),
        (0, 5),
        "no duplicates"
    );
    assert_eq!(s2.list(&Filter::default()).unwrap().len(), 5);
    assert_eq!(
        s2.list(&Filter::default()).unwrap(),
        all,
        "same index columns"
    );
    // A file with a changed run under a stored id: reported, the stored run kept.
    let mut changed = runs[4].clone();
    changed.label = Some("tampered".into());
    let one = vec![StoredRun {
        id: changed.id.clone(),
        json: serde_json::to_string(&changed).unwrap(),
    }];
    let rep = s2.import(&one).unwrap();
    assert_eq!(rep.conflicts, ["cccc0005000000000000000000000000"]);
    assert_eq!(
        s2.get("cccc0005000000000000000000000000")
            .unwrap()
            .result()
            .unwrap(),
        runs[4]
    );

    // The same run re-formatted by another program (`jq .`: other spacing, members in
    // another order, 1.0 written 1) is recognised as already stored, not a conflict.
    let mut v: serde_json::Value = serde_json::to_value(&runs[3]).unwrap();
    assert_eq!(v["config"]["warmup_s"], serde_json::json!(0.0));
    v["config"]["warmup_s"] = serde_json::json!(0);
    let mut members = v.as_object().unwrap().clone();
    let workload = members.remove("workload").unwrap();
    let mut reformatted = String::from("{\n  \"workload\": ");
    reformatted.push_str(&serde_json::to_string_pretty(&workload).unwrap());
    for (k, val) in &members {
        reformatted.push_str(&format!(
            ",\n  {}: {val}",
            serde_json::to_string(k).unwrap()
        ));
    }
    reformatted.push_str("\n}");
    assert!(reformatted.contains("\"warmup_s\":0"), "{reformatted}");
    assert!(!reformatted.contains("\"warmup_s\":0.0"), "{reformatted}");
    let again = s2
        .import(&[StoredRun {
            id: runs[3].id.clone(),
            json: reformatted,
        }])
        .unwrap();
    assert_eq!((again.added, again.already_present), (0, 1), "{again:?}");
    assert!(again.conflicts.is_empty());

    // Rewriting a stored run (a new label): index and JSON change together.
    let mut relabelled = runs[3].clone();
    relabelled.label = Some("renamed".into());
    assert_eq!(s2.rewrite(std::slice::from_ref(&relabelled)).unwrap(), 1);
    assert_eq!(s2.get(&runs[3].id).unwrap().result().unwrap(), relabelled);
    let renamed = Filter {
        label: Some("renamed".into()),
        ..Filter::default()
    };
    assert_eq!(ids(&s2.list(&renamed).unwrap()), [runs[3].id.as_str()]);
    let mut stranger = relabelled.clone();
    stranger.id = "ffff0009000000000000000000000000".into();
    assert!(matches!(
        s2.rewrite(&[stranger]),
        Err(StoreError::UnknownRun(_))
    ));
    relabelled.label = runs[3].label.clone();
    s2.rewrite(&[relabelled]).unwrap();

    // JSON text is kept as given (pretty-printed here), byte for byte.
    let pretty = parse_runs(FIXTURE, "fixture").unwrap();
    assert_eq!(s2.import(&pretty).unwrap().added, 1);
    let back = s2.get("0123456789abcdef0123456789abcdef").unwrap();
    assert_eq!(back.json, FIXTURE.trim());
    let doc2 = export_document(std::slice::from_ref(&back));
    assert_eq!(parse_runs(&doc2, "doc2").unwrap(), vec![back]);

    // Removal: unknown ids remove nothing; labels remove exactly their runs.
    assert!(matches!(
        s.remove(&["aaaa0001000000000000000000000000".into(), "zzzz9999".into()]),
        Err(StoreError::UnknownRun(_))
    ));
    assert_eq!(s.list(&Filter::default()).unwrap().len(), 5);
    assert_eq!(
        s.remove(&[
            "aaaa0001000000000000000000000000".into(),
            "aaaa0001000000000000000000000000".into()
        ])
        .unwrap(),
        1
    );
    assert_eq!(s.remove_label("arm").unwrap(), 2);
    assert_eq!(s.remove_label("arm").unwrap(), 0);
    assert_eq!(
        ids(&s.list(&Filter::default()).unwrap()),
        [
            "bbbb0004000000000000000000000000",
            "bbbb0003000000000000000000000000"
        ]
    );
    assert_eq!(
        s2.list(&Filter::default()).unwrap().len(),
        6,
        "other store untouched"
    );
}

/// Several threads, each with its own connection, save at once into one fresh store.
fn concurrent_writers(loc: &Location) {
    const THREADS: usize = 6;
    const EACH: usize = 15;
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let loc = loc.clone();
            std::thread::spawn(move || {
                let mut s = Store::open(&loc).unwrap();
                for i in 0..EACH {
                    let r = run(
                        &format!("t{t:02}-{i:03}"),
                        Some(&format!("thread{t}")),
                        "cpu",
                        "h",
                        "2026-02-01T00:00:00.000Z",
                    );
                    s.save(&r).unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().expect("a writer failed");
    }
    let mut s = Store::open(loc).unwrap();
    let all = s.list(&Filter::default()).unwrap();
    assert_eq!(all.len(), THREADS * EACH, "every save is there");
    for t in 0..THREADS {
        let f = Filter {
            label: Some(format!("thread{t}")),
            ..Filter::default()
        };
        assert_eq!(s.list(&f).unwrap().len(), EACH);
    }
}

// ---------------------------------------------------------------------------------------
// SQLite.

fn on_fleet(id: &str, fleet_run: Option<&str>) -> RunResult {
    let mut r = run(id, None, "cpu", "h", "2026-11-26T01:00:00.000Z");
    r.fleet = fleet_run.map(|f| hostbench_core::result::FleetRef {
        run: f.into(),
        host: "h".into(),
        start_at_unix_ns: None,
        start_late_ns: None,
        clock_offset_ns: None,
        clock_rtt_ns: None,
        parts: Vec::new(),
    });
    r
}

/// `Filter::fleet_run` selects by the indexed column.
fn finds_a_fleet_runs_runs(loc: Location) {
    let mut s = Store::open(&loc).unwrap();
    for (id, f) in [
        ("fa", Some("fr-1")),
        ("fb", Some("fr-2")),
        ("fc", None),
        ("fd", Some("fr-1")),
    ] {
        s.save(&on_fleet(id, f)).unwrap();
    }
    let f = Filter {
        fleet_run: Some("fr-1".into()),
        ..Filter::default()
    };
    let mut got: Vec<String> = s.list(&f).unwrap().into_iter().map(|r| r.id).collect();
    got.sort();
    assert_eq!(got, ["fa", "fd"]);
    // A host is found by its fleet name too (the machine's name is another).
    let mut named = on_fleet("fe", Some("fr-3"));
    if let Some(f) = named.fleet.as_mut() {
        f.host = "root@10.0.0.7:2222".into();
    }
    s.save(&named).unwrap();
    let f = Filter {
        host: Some("root@10.0.0.7:2222".into()),
        ..Filter::default()
    };
    let got: Vec<String> = s.list(&f).unwrap().into_iter().map(|r| r.id).collect();
    assert_eq!(got, ["fe"]);
    let f = Filter {
        host: Some("h".into()),
        ..Filter::default()
    };
    assert_eq!(
        s.list(&f).unwrap().len(),
        5,
        "the machine's name still finds them all"
    );
}

fn keeps_a_fleet_roster(loc: Location) {
    let mut s = Store::open(&loc).unwrap();
    assert!(s.fleet_roster("fr-1").unwrap().is_empty());
    let host = |h: &str, position, status: &str, reason: Option<&str>, runs| FleetHost {
        host: h.into(),
        position,
        status: status.into(),
        reason: reason.map(String::from),
        runs,
    };
    let roster = vec![
        host("zeta", 0, "ok", None, 1),
        host(
            "root@10.0.0.7:2222",
            1,
            "failed",
            Some("unreachable (connect)"),
            0,
        ),
    ];
    s.save_fleet_roster("fr-1", &roster).unwrap();
    s.save_fleet_roster("fr-2", &roster[..1]).unwrap();
    assert_eq!(
        s.fleet_roster("fr-1").unwrap(),
        roster,
        "in the user's order"
    );
    // Recording again replaces.
    s.save_fleet_roster("fr-1", &roster[1..]).unwrap();
    assert_eq!(s.fleet_roster("fr-1").unwrap(), roster[1..]);
    assert_eq!(s.fleet_roster("fr-2").unwrap(), roster[..1]);
}

/// A fleet run's roster is exported with its runs and imported with them (not over a
/// roster the store has), and removed with the last of its runs (by id or by label).
fn a_fleet_roster_travels_with_its_runs_and_goes_with_them(loc: Location, other: Location) {
    let mut s = Store::open(&loc).unwrap();
    let host = |h: &str, position, status: &str, runs| FleetHost {
        host: h.into(),
        position,
        status: status.into(),
        reason: (status != "ok").then(|| "unreachable (connect)".to_string()),
        runs,
    };
    let roster = vec![host("a", 0, "ok", 1), host("b", 1, "failed", 0)];
    s.save(&on_fleet("e1000000000000000000000000000001", Some("fr-1")))
        .unwrap();
    s.save(&on_fleet("e2000000000000000000000000000002", Some("fr-1")))
        .unwrap();
    let mut labelled = on_fleet("e3000000000000000000000000000003", Some("fr-2"));
    labelled.label = Some("gone".into());
    s.save(&labelled).unwrap();
    s.save_fleet_roster("fr-1", &roster).unwrap();
    s.save_fleet_roster("fr-2", &roster[..1]).unwrap();
    s.save_fleet_roster("fr-3", &roster).unwrap();

    let runs = s.load(&Filter::default()).unwrap();
    let rosters = s.rosters_of(&runs).unwrap();
    assert_eq!(
        rosters.iter().map(|r| r.run.as_str()).collect::<Vec<_>>(),
        ["fr-1", "fr-2"],
        "only the exported runs' fleet runs"
    );
    let doc = export_document_with(&runs, &rosters);
    assert!(doc.contains("\"fleet_hosts\""), "{doc}");
    // Read back: the runs and the rosters; a document without rosters has none.
    assert_eq!(parse_runs(&doc, "x").unwrap().len(), 3);
    assert_eq!(parse_rosters(&doc, "x").unwrap(), rosters);
    assert!(
        parse_rosters(&export_document(&runs), "x")
            .unwrap()
            .is_empty()
    );
    assert_eq!(export_document_with(&runs, &[]), export_document(&runs));
    let bad = doc.replace("\"status\":\"failed\"", "\"status\":\"weird\"");
    assert!(parse_rosters(&bad, "x").is_err());

    let mut o = Store::open(&other).unwrap();
    o.save_fleet_roster("fr-2", &roster).unwrap();
    o.import(&parse_runs(&doc, "x").unwrap()).unwrap();
    assert_eq!(o.import_rosters(&rosters).unwrap(), 1);
    assert_eq!(o.fleet_roster("fr-1").unwrap(), roster);
    assert_eq!(o.fleet_roster("fr-2").unwrap(), roster, "its own kept");
    assert_eq!(o.import_rosters(&rosters).unwrap(), 0, "twice adds nothing");

    // Removing one of fr-1's runs keeps its roster; removing the last removes it.
    s.remove(&["e1000000000000000000000000000001".into()])
        .unwrap();
    assert_eq!(s.fleet_roster("fr-1").unwrap(), roster);
    s.remove(&["e2000000000000000000000000000002".into()])
        .unwrap();
    assert!(s.fleet_roster("fr-1").unwrap().is_empty());
    s.remove_label("gone").unwrap();
    assert!(s.fleet_roster("fr-2").unwrap().is_empty());
    // A fleet run none of whose runs was removed keeps its roster.
    assert_eq!(s.fleet_roster("fr-3").unwrap(), roster);
}

#[test]
fn sqlite_a_v1_stores_fleet_runs_are_indexed_by_the_migration() {
    let dir = sqlite_dir();
    let path = dir.path().join("at-v1.db");
    let b = sqlite::Sqlite::open(&path, true, 1).unwrap().unwrap();
    let r = on_fleet("old", Some("fr-9"));
    b.conn()
        .execute(
            "INSERT INTO runs (id, started_at, started_ms, stored_ms, workload, workload_family, \
             category, tool_version, stop_reason, headline_metric, headline_unit, \
             result_schema_version, result_json) VALUES (?1, ?2, 0, 0, 'cpu', 'cpu', 'cpu', \
             'x', 'time_limit', 'events_per_s', 'events/s', 1, ?3)",
            rusqlite::params![r.id, r.started_at, serde_json::to_string(&r).unwrap()],
        )
        .unwrap();
    drop(b);
    let mut s = Store::open(&Location::Sqlite(path.clone())).unwrap();
    s.save(&on_fleet("new", Some("fr-9"))).unwrap();
    let f = Filter {
        fleet_run: Some("fr-9".into()),
        ..Filter::default()
    };
    assert_eq!(s.list(&f).unwrap().len(), 2);
    // fleet.host is filled in too (version 3).
    let f = Filter {
        host: Some("h".into()),
        fleet_run: Some("fr-9".into()),
        ..Filter::default()
    };
    assert_eq!(s.list(&f).unwrap().len(), 2);
    let fleet_host: Option<String> = sqlite::Sqlite::open(&path, false, LATEST_VERSION)
        .unwrap()
        .unwrap()
        .conn()
        .query_row("SELECT fleet_host FROM runs WHERE id = 'old'", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(fleet_host.as_deref(), Some("h"));
}

fn sqlite_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("hostbench-test-store-")
        .tempdir()
        .unwrap()
}

#[test]
fn sqlite_behaves_like_a_store() {
    let dir = sqlite_dir();
    let n = AtomicUsize::new(0);
    behaves_like_a_store(&mut || {
        Location::Sqlite(
            dir.path()
                .join(format!("s{}.db", n.fetch_add(1, Ordering::SeqCst))),
        )
    });
}

#[test]
fn sqlite_concurrent_writers_all_succeed() {
    let dir = sqlite_dir();
    concurrent_writers(&Location::Sqlite(dir.path().join("concurrent.db")));
}

#[test]
fn sqlite_new_store_is_migrated_wal_and_marked() {
    let dir = sqlite_dir();
    let path = dir.path().join("deeper/still/results.db");
    // A store the user named must be in a directory that exists: none is made for it.
    match Store::open(&Location::Sqlite(path.clone())) {
        Err(StoreError::BadLocation(m)) => assert!(m.contains("does not exist"), "{m}"),
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("a store was made in a missing directory"),
    }
    assert!(!dir.path().join("deeper").exists());
    // The default store's directory is made (at the backend's level, where it happens).
    drop(
        sqlite::Sqlite::open(&path, true, LATEST_VERSION)
            .unwrap()
            .unwrap(),
    );
    let mut s = Store::open(&Location::Sqlite(path.clone())).unwrap();
    assert_eq!(s.schema_version().unwrap(), LATEST_VERSION);
    drop(s);
    let b = sqlite::Sqlite::open(&path, false, LATEST_VERSION)
        .unwrap()
        .unwrap();
    let c = b.conn();
    let mode: String = c
        .pragma_query_value(None, "journal_mode", |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    let app: i32 = c
        .pragma_query_value(None, "application_id", |r| r.get(0))
        .unwrap();
    assert_eq!(app, sqlite::APPLICATION_ID);
}

#[test]
fn sqlite_read_only_open_creates_nothing() {
    let dir = sqlite_dir();
    let path = dir.path().join("sub/results.db");
    assert!(
        Store::open_existing(&Location::Sqlite(path.clone()))
            .unwrap()
            .is_none()
    );
    assert!(!path.exists() && !path.parent().unwrap().exists());
}

#[test]
fn sqlite_pre_migration_empty_file_is_migrated() {
    // "Version 0": an empty file is an SQLite database with user_version 0 and no tables,
    // which is what a crash between creating the file and the first migration leaves.
    let dir = sqlite_dir();
    let path = dir.path().join("v0.db");
    std::fs::write(&path, b"").unwrap();
    let mut s = Store::open(&Location::Sqlite(path)).unwrap();
    assert_eq!(s.schema_version().unwrap(), LATEST_VERSION);
    s.save(&fixture()).unwrap();
    assert_eq!(s.list(&Filter::default()).unwrap().len(), 1);
}

#[test]
fn sqlite_every_earlier_version_migrates_to_latest() {
    let dir = sqlite_dir();
    for v in 0..LATEST_VERSION {
        let path = dir.path().join(format!("at-v{v}.db"));
        let b = sqlite::Sqlite::open(&path, true, v).unwrap().unwrap();
        let at: i64 = b
            .conn()
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(at, i64::from(v));
        drop(b);
        let mut s = Store::open(&Location::Sqlite(path)).unwrap();
        assert_eq!(s.schema_version().unwrap(), LATEST_VERSION, "from v{v}");
        s.save(&fixture()).unwrap();
        assert_eq!(s.list(&Filter::default()).unwrap().len(), 1, "from v{v}");
    }
}

#[test]
fn sqlite_store_from_the_future_is_refused_untouched() {
    let dir = sqlite_dir();
    let path = dir.path().join("future.db");
    drop(Store::open(&Location::Sqlite(path.clone())).unwrap());
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.pragma_update(None, "user_version", LATEST_VERSION + 1)
            .unwrap();
    }
    let e = Store::open(&Location::Sqlite(path.clone())).unwrap_err();
    assert!(
        matches!(e, StoreError::TooNew { found, supported, .. } if found == LATEST_VERSION + 1 && supported == LATEST_VERSION),
        "{e}"
    );
    let msg = e.to_string();
    assert!(
        msg.contains("newer") && msg.contains("upgrade hostbench"),
        "{msg}"
    );
    let e = Store::open_existing(&Location::Sqlite(path.clone())).unwrap_err();
    assert!(matches!(e, StoreError::TooNew { .. }));
    let c = rusqlite::Connection::open(&path).unwrap();
    let v: u32 = c
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(v, LATEST_VERSION + 1);
}

#[test]
fn sqlite_foreign_files_are_refused_untouched() {
    let dir = sqlite_dir();
    let other = dir.path().join("other.db");
    {
        let c = rusqlite::Connection::open(&other).unwrap();
        c.execute_batch("CREATE TABLE notes (t TEXT); INSERT INTO notes VALUES ('keep me');")
            .unwrap();
    }
    let e = Store::open(&Location::Sqlite(other.clone())).unwrap_err();
    assert!(matches!(e, StoreError::NotAStore { .. }), "{e}");
    let c = rusqlite::Connection::open(&other).unwrap();
    let (mode, v): (String, i64) = (
        c.pragma_query_value(None, "journal_mode", |r| r.get(0))
            .unwrap(),
        c.pragma_query_value(None, "user_version", |r| r.get(0))
            .unwrap(),
    );
    assert_eq!((mode.as_str(), v), ("delete", 0), "not changed");
    let n: i64 = c
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE name = 'runs'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(n, 0);

    let text = dir.path().join("notes.txt");
    std::fs::write(
        &text,
        "this is not a database, just some text long enough\n".repeat(40),
    )
    .unwrap();
    let before = std::fs::read(&text).unwrap();
    let e = Store::open(&Location::Sqlite(text.clone())).unwrap_err();
    assert!(
        matches!(&e, StoreError::NotAStore { why, .. } if why.contains("not an SQLite database")),
        "{e}"
    );
    assert_eq!(std::fs::read(&text).unwrap(), before);
}

#[test]
fn sqlite_wal_is_folded_back_and_stays_small() {
    // Each run opens the store, saves and exits; the WAL is not checkpointed on close, so
    // saves must fold it back now and then or every open would read an ever longer WAL.
    let dir = sqlite_dir();
    let path = dir.path().join("wal.db");
    let loc = Location::Sqlite(path.clone());
    let wal = sqlite::Sqlite::open(&path, true, LATEST_VERSION)
        .unwrap()
        .unwrap()
        .wal_path()
        .to_path_buf();
    let size = || std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0);
    let (mut shrank, mut largest, mut prev) = (0, 0, size());
    const RUNS: usize = 120;
    for i in 0..RUNS {
        Store::open(&loc)
            .unwrap()
            .save(&run(
                &format!("w{i:04}"),
                None,
                "cpu",
                "h",
                "2026-03-01T00:00:00.000Z",
            ))
            .unwrap();
        let now = size();
        shrank += usize::from(now < prev);
        largest = largest.max(now);
        prev = now;
    }
    assert!(
        shrank >= 1,
        "the WAL was never truncated (largest {largest} B)"
    );
    assert!(
        largest <= 2 * sqlite::WAL_CHECKPOINT_BYTES,
        "the WAL grew to {largest} B"
    );
    let mut s = Store::open(&loc).unwrap();
    assert_eq!(s.list(&Filter::default()).unwrap().len(), RUNS);
}

#[test]
fn unparsable_start_time_is_refused() {
    let dir = sqlite_dir();
    let mut s = Store::open(&Location::Sqlite(dir.path().join("x.db"))).unwrap();
    let mut r = fixture();
    r.started_at = "yesterday".into();
    let e = s.save(&r).unwrap_err();
    assert!(e.to_string().contains("RFC 3339"), "{e}");
    assert!(s.list(&Filter::default()).unwrap().is_empty());
}

// ---------------------------------------------------------------------------------------
// PostgreSQL.

/// Schemas created by one test; dropped (only those) at the end, pass or fail.
struct PgScratch {
    url: String,
    schemas: Vec<String>,
}

static PG_SEQ: AtomicUsize = AtomicUsize::new(0);

impl PgScratch {
    /// `None` (with a skip line) when `HOSTBENCH_TEST_PG_URL` is unset; panics when it is
    /// set but the server cannot be reached.
    fn new(test: &str) -> Option<PgScratch> {
        let url = match std::env::var("HOSTBENCH_TEST_PG_URL") {
            Ok(u) if !u.trim().is_empty() => u,
            _ => {
                eprintln!("skipped {test}: HOSTBENCH_TEST_PG_URL is not set");
                return None;
            }
        };
        if let Err(e) = postgres::Client::connect(&url, postgres::NoTls) {
            panic!(
                "HOSTBENCH_TEST_PG_URL={} is set but the server cannot be reached: {}",
                hostbench_core::secret::mask(&url),
                chain(&e)
            );
        }
        Some(PgScratch {
            url,
            schemas: Vec::new(),
        })
    }

    fn schema_name(&mut self) -> String {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let name = format!(
            "hostbench_test_{}_{}_{nanos}",
            std::process::id(),
            PG_SEQ.fetch_add(1, Ordering::SeqCst)
        );
        self.schemas.push(name.clone());
        name
    }

    fn location(&mut self) -> Location {
        let name = self.schema_name();
        let sep = if self.url.contains('?') { '&' } else { '?' };
        Location::parse(&format!("{}{sep}schema={name}", self.url)).unwrap()
    }

    fn client(&self) -> postgres::Client {
        postgres::Client::connect(&self.url, postgres::NoTls).unwrap()
    }
}

impl Drop for PgScratch {
    fn drop(&mut self) {
        if let Ok(mut c) = postgres::Client::connect(&self.url, postgres::NoTls) {
            for s in &self.schemas {
                let _ = c.batch_execute(&format!("DROP SCHEMA IF EXISTS \"{s}\" CASCADE"));
            }
        }
    }
}

#[test]
fn postgres_behaves_like_a_store() {
    let Some(mut pg) = PgScratch::new("postgres_behaves_like_a_store") else {
        return;
    };
    behaves_like_a_store(&mut || pg.location());
}

#[test]
fn postgres_concurrent_writers_all_succeed() {
    let Some(mut pg) = PgScratch::new("postgres_concurrent_writers_all_succeed") else {
        return;
    };
    // Also races the schema creation and first migration: every thread opens a fresh schema.
    concurrent_writers(&pg.location());
}

#[test]
fn postgres_migrations_versions_and_the_future() {
    let Some(mut pg) = PgScratch::new("postgres_migrations_versions_and_the_future") else {
        return;
    };
    // Nothing there: read-only open creates nothing.
    let loc = pg.location();
    let Location::Postgres { url, schema } = &loc else {
        unreachable!()
    };
    assert!(Store::open_existing(&loc).unwrap().is_none());
    let mut c = pg.client();
    let exists = |c: &mut postgres::Client, s: &str| {
        c.query_opt("SELECT 1 FROM pg_namespace WHERE nspname = $1", &[&s])
            .unwrap()
            .is_some()
    };
    assert!(!exists(&mut c, schema));

    // Each earlier version, then the latest.
    for v in 0..LATEST_VERSION {
        let l = pg.location();
        let Location::Postgres { url, schema } = &l else {
            unreachable!()
        };
        drop(pg::Pg::open(url, schema, true, v).unwrap());
        let mut s = Store::open(&l).unwrap();
        assert_eq!(s.schema_version().unwrap(), LATEST_VERSION, "from v{v}");
        s.save(&fixture()).unwrap();
    }
    let mut s = Store::open(&loc).unwrap();
    assert_eq!(s.schema_version().unwrap(), LATEST_VERSION);
    let rows: Vec<i32> = c
        .query(
            &format!("SELECT version FROM \"{schema}\".schema_migrations ORDER BY version"),
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    let want: Vec<i32> = MIGRATIONS.iter().map(|m| m.version as i32).collect();
    assert_eq!(rows, want);
    drop(s);

    // From the future.
    c.execute(
        &format!(
            "INSERT INTO \"{schema}\".schema_migrations (version, name) VALUES ($1, 'future')"
        ),
        &[&(LATEST_VERSION as i32 + 1)],
    )
    .unwrap();
    let e = Store::open(&loc).unwrap_err();
    assert!(matches!(e, StoreError::TooNew { .. }), "{e}");
    assert!(e.to_string().contains("upgrade hostbench"), "{e}");
    let e = pg::Pg::open(url, schema, true, LATEST_VERSION)
        .err()
        .unwrap();
    assert!(matches!(e, StoreError::TooNew { .. }));

    // The password never shows in messages.
    let bad = Location::parse("postgres://u:hunter2@127.0.0.1:1/none").unwrap();
    let e = Store::open(&bad).unwrap_err().to_string();
    assert!(
        e.contains("cannot connect") && !e.contains("hunter2"),
        "{e}"
    );
    let _ = pg.client();
}
