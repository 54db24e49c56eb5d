//! Rows as text (`Conn::query_rows`, `Conn::exec_rows`, what sysbench's Lua API reads) and
//! the bind types the Lua API sends (`Arg::Big`, `Arg::Double`, `Arg::Null`), on all five
//! clients: SQLite, and the lean and crate clients of PostgreSQL
//! (`HOSTBENCH_TEST_PG_URL`) and MariaDB/MySQL (`HOSTBENCH_TEST_MYSQL_URL`); unset = a
//! printed skip, set = must pass.

#![cfg(all(feature = "sqlite", feature = "postgres", feature = "mysql"))]

use hostbench_workloads::db::driver::{Arg, Driver, Res, Rows, Target};

fn targets() -> Vec<(String, Target)> {
    let path = std::env::temp_dir().join(format!("hostbench-rows-{}.db", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let mut t = vec![(
        "sqlite".to_string(),
        Target::Sqlite {
            path: path.display().to_string(),
        },
    )];
    for var in ["HOSTBENCH_TEST_PG_URL", "HOSTBENCH_TEST_MYSQL_URL"] {
        let Ok(url) = std::env::var(var) else {
            eprintln!("skipped: {var} is not set (see .ci/run)");
            continue;
        };
        for lean in [true, false] {
            let mut tg = Target::from_url(&url).unwrap();
            match &mut tg {
                Target::Pgsql { lean: l, .. } | Target::Mysql { lean: l, .. } => *l = lean,
                Target::Sqlite { .. } => {}
            }
            let kind = if lean { "lean" } else { "crate" };
            t.push((format!("{} {kind}", tg.driver().name()), tg));
        }
    }
    t
}

fn texts(r: &Rows) -> Vec<Vec<Option<String>>> {
    (0..r.len())
        .map(|i| {
            r.row(i)
                .unwrap()
                .map(|v| v.map(|b| String::from_utf8_lossy(b).into_owned()))
                .collect()
        })
        .collect()
}

fn s(v: &str) -> Option<String> {
    Some(v.to_string())
}

#[test]
fn rows_come_back_as_text_with_null_as_none_on_every_client() {
    for (name, tg) in targets() {
        let mut c = tg
            .connect_with(true)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let tbl = format!("hbt_rows_{}", name.replace(' ', "_"));
        c.query(&format!("DROP TABLE IF EXISTS {tbl}")).unwrap();
        c.query(&format!(
            "CREATE TABLE {tbl} (id BIGINT, c VARCHAR(20), n INTEGER, d DOUBLE PRECISION)"
        ))
        .unwrap();
        let ins = c
            .prepare(&format!(
                "INSERT INTO {tbl} (id, c, n, d) VALUES (?, ?, ?, ?)"
            ))
            .unwrap();
        let args = [
            Arg::Big(5_000_000_000),
            Arg::Text("five"),
            Arg::Big(-3),
            Arg::Double(2.5),
        ];
        assert_eq!(c.exec(ins, &args).unwrap(), Res::Affected(1), "{name}");
        let args = [Arg::Big(7), Arg::Null, Arg::Int(4), Arg::Null];
        assert_eq!(c.exec(ins, &args).unwrap(), Res::Affected(1), "{name}");

        let mut r = Rows::default();
        let q = format!("SELECT id, c, n, d FROM {tbl} ORDER BY id");
        assert_eq!(c.query_rows(&q, &mut r).unwrap(), Res::Rows(2), "{name}");
        assert_eq!(r.fields, 4, "{name}");
        assert_eq!(
            texts(&r),
            [
                vec![s("7"), None, s("4"), None],
                vec![s("5000000000"), s("five"), s("-3"), s("2.5")],
            ],
            "{name}"
        );
        // A statement without a result set leaves no rows; an empty result set has fields.
        let u = format!("UPDATE {tbl} SET n = 9 WHERE id = 7");
        assert_eq!(
            c.query_rows(&u, &mut r).unwrap(),
            Res::Affected(1),
            "{name}"
        );
        assert_eq!((r.fields, r.len()), (0, 0), "{name}");
        let e = format!("SELECT c FROM {tbl} WHERE id < 0");
        assert_eq!(c.query_rows(&e, &mut r).unwrap(), Res::Rows(0), "{name}");
        assert_eq!((r.fields, r.len()), (1, 0), "{name}");

        let sel = c
            .prepare(&format!("SELECT c, n FROM {tbl} WHERE id = ?"))
            .unwrap();
        let got = c
            .exec_rows(sel, &[Arg::Big(5_000_000_000)], &mut r)
            .unwrap();
        assert_eq!(got, Res::Rows(1), "{name}");
        if tg.driver() == Driver::Mysql {
            // Binary-protocol rows are counted, not read (sysbench's MySQL driver too).
            assert_eq!(r.fields, 0, "{name}");
        } else {
            assert_eq!(texts(&r), [vec![s("five"), s("-3")]], "{name}");
        }
        // The plain path still reads and drops the rows.
        assert_eq!(c.exec(sel, &[Arg::Big(7)]).unwrap(), Res::Rows(1), "{name}");
        c.query(&format!("DROP TABLE {tbl}")).unwrap();
        if let Target::Sqlite { path } = &tg {
            drop(c);
            for ext in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{path}{ext}"));
            }
        }
    }
}
