//! The one list of workloads. Help, `hostbench list`, the docs tables and the conformance
//! test all come from it; adding a workload is a new file plus one line here.

use hostbench_core::workload::Workload;

/// Every workload, in listing order.
pub static WORKLOADS: &[&dyn Workload] = &[
    &crate::cpu::Cpu,
    &crate::memory::sysbench_memory::Memory,
    &crate::memory::stream::Stream,
    &crate::memory::memlat::Memlat,
    &crate::disk::fileio::FileIo,
    &crate::disk::smallfiles::SmallFiles,
    &crate::disk::iozone::Iozone,
    &crate::sys::threads::Threads,
    &crate::sys::mutex::MutexTest,
    &crate::sys::null::Null,
    &crate::sys::null::NullLoop,
    &crate::disk::fio::Fio,
    &crate::db::oltp::READ_WRITE,
    &crate::db::oltp::READ_ONLY,
    &crate::db::oltp::WRITE_ONLY,
    &crate::db::oltp::POINT_SELECT,
    &crate::db::oltp::INSERT,
    &crate::db::oltp::UPDATE_INDEX,
    &crate::db::oltp::UPDATE_NON_INDEX,
    &crate::db::oltp::DELETE,
    &crate::db::oltp::BULK_INSERT,
    &crate::db::oltp::SELECT_RANDOM_POINTS,
    &crate::db::oltp::SELECT_RANDOM_RANGES,
    &crate::db::insert_race::InsertRace,
    &crate::http::HttpLoad,
    #[cfg(feature = "lua")]
    &crate::lua::LuaScript,
];

/// The workload with registry id `id`.
pub fn find(id: &str) -> Option<&'static dyn Workload> {
    WORKLOADS.iter().copied().find(|w| w.id() == id)
}

/// The workload that answers to sysbench test name `name`.
pub fn by_sysbench_test(name: &str) -> Option<&'static dyn Workload> {
    WORKLOADS
        .iter()
        .copied()
        .find(|w| w.sysbench_test() == Some(name))
}

/// The workload that command word `word` runs (`stream`, `insert-race`, `ab`).
pub fn by_command(word: &str) -> Option<&'static dyn Workload> {
    WORKLOADS
        .iter()
        .copied()
        .find(|w| w.commands().contains(&word))
}

#[cfg(test)]
mod tests {
    use super::*;
    use hostbench_core::clock::Clock;
    use hostbench_core::plan::Plan;
    use hostbench_core::rand::Distribution;
    use hostbench_core::runner::{Silent, run};
    use hostbench_core::workload::SetupCtx;
    use std::collections::HashSet;

    #[test]
    fn ids_are_unique_and_params_documented() {
        let mut seen = HashSet::new();
        for w in WORKLOADS {
            assert!(seen.insert(w.id()), "duplicate id {}", w.id());
            assert!(!w.summary().is_empty());
            let mut names = HashSet::new();
            for p in w.params() {
                assert!(
                    names.insert(p.name),
                    "{}: duplicate param {}",
                    w.id(),
                    p.name
                );
                assert!(!p.help.is_empty(), "{}.{} has no help", w.id(), p.name);
                p.parse(p.default)
                    .unwrap_or_else(|e| panic!("{}.{}: {e}", w.id(), p.name));
            }
        }
    }

    /// A command word or sysbench test name names one workload: no two claim the same word.
    #[test]
    fn command_words_and_sysbench_tests_name_one_workload() {
        let mut seen = HashSet::new();
        for w in WORKLOADS {
            for word in w.commands().iter().copied().chain(w.sysbench_test()) {
                assert!(seen.insert(word), "{}: '{word}' is claimed twice", w.id());
            }
        }
        // The commands with grammars of their own that `hostbench list` once left out.
        for (word, id) in [
            ("stream", "stream"),
            ("memlat", "memlat"),
            ("smallfiles", "smallfiles"),
            ("iozone", "iozone"),
            ("fio", "disk.fio"),
            ("insert-race", "db.insert_race"),
            ("ab", "http.load"),
            ("httperf", "http.load"),
        ] {
            assert_eq!(by_command(word).map(|w| w.id()), Some(id), "{word}");
        }
    }

    /// Small parameters are parameters of their workload, with values that parse.
    #[test]
    fn small_params_resolve() {
        for w in WORKLOADS {
            let ov: Vec<(String, String)> = w
                .small_params()
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            w.resolve(&ov)
                .unwrap_or_else(|e| panic!("{}: small parameters: {e}", w.id()));
        }
    }

    /// The driver saved with a database run is the one its `db_url` names, whichever front-end
    /// resolved the parameters: the workload derives it ([`Workload::derive_params`]).
    #[test]
    fn database_workloads_record_the_driver_their_url_names() {
        let mut db = 0;
        for w in WORKLOADS
            .iter()
            .filter(|w| w.params().iter().any(|p| p.name == "db_url"))
        {
            db += 1;
            for (url, driver) in [
                ("postgres://u@h/d", "pgsql"),
                ("mysql://u@h/d", "mysql"),
                ("sqlite:x.db", "sqlite"),
            ] {
                let ov = [
                    ("db_driver".to_string(), "mysql".to_string()),
                    ("db_url".to_string(), url.to_string()),
                ];
                let p = w.resolve(&ov).unwrap();
                assert_eq!(p.text("db_driver"), driver, "{} with {url}", w.id());
            }
        }
        let category = WORKLOADS
            .iter()
            .filter(|w| w.category() == hostbench_core::workload::Category::Db)
            .count();
        assert_eq!(db, category, "every database workload takes db_url");
    }

    /// Conformance: every workload runs a few events with the small parameters it declares
    /// ([`Workload::small_params`]) and reports them.
    #[test]
    fn every_workload_runs() {
        for w in WORKLOADS {
            let mut ov: Vec<(String, String)> = w
                .small_params()
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            // Disk and database workloads write only into a directory of this test.
            let scratch = std::env::temp_dir().join(format!(
                "hostbench-conformance-{}-{}",
                w.id(),
                std::process::id()
            ));
            if w.category() == hostbench_core::workload::Category::Disk {
                std::fs::create_dir_all(&scratch).unwrap();
                ov.push(("dir".into(), scratch.display().to_string()));
            }
            if w.category() == hostbench_core::workload::Category::Db {
                std::fs::create_dir_all(&scratch).unwrap();
                // Database workloads run on an SQLite file of their own, prepared first.
                let db = scratch.join(format!("{}.db", w.id()));
                ov.push(("db_url".into(), format!("sqlite:{}", db.display())));
            }
            let params = w.resolve(&ov).unwrap();
            if w.category() == hostbench_core::workload::Category::Db {
                let ctx = SetupCtx {
                    params: &params,
                    threads: 2,
                    dist: Distribution::Uniform,
                    seed: 1,
                    host: None,
                };
                let log = hostbench_core::workload::CollectLog::default();
                let done = w
                    .stage(hostbench_core::workload::Stage::Prepare, &ctx, &log)
                    .unwrap_or_else(|e| panic!("{}: prepare: {e}", w.id()));
                assert_ne!(
                    done,
                    hostbench_core::workload::StageDone::Interrupted,
                    "{}",
                    w.id()
                );
            }
            let mut plan = Plan::new(w.id(), params.clone());
            plan.threads = 2;
            plan.time_s = 0.0;
            plan.events = 50;
            plan.seed = 1;
            plan.rand = Distribution::Uniform;
            let inst = w
                .setup(&SetupCtx {
                    params: &params,
                    threads: 2,
                    dist: plan.rand,
                    seed: 1,
                    host: None,
                })
                .unwrap();
            let m = run(&plan, inst.as_ref(), Clock::detect(), &Silent).unwrap();
            assert!(m.error.is_none(), "{}: {:?}", w.id(), m.error);
            let expect = if w.id() == "mutex" { 2 } else { 50 };
            assert_eq!(m.counters.events, expect, "{}", w.id());
            assert_eq!(m.latency.count, expect, "{}", w.id());
            drop(inst);
            if scratch.exists() {
                let ctx = SetupCtx {
                    params: &params,
                    threads: 2,
                    dist: plan.rand,
                    seed: 1,
                    host: None,
                };
                let log = hostbench_core::workload::CollectLog::default();
                w.stage(hostbench_core::workload::Stage::Cleanup, &ctx, &log)
                    .unwrap();
                if w.category() == hostbench_core::workload::Category::Db {
                    // insert-race leaves its table by design (no prepare/cleanup).
                    let _ = std::fs::remove_dir_all(&scratch);
                } else {
                    std::fs::remove_dir(&scratch)
                        .unwrap_or_else(|e| panic!("{}: cleanup left files: {e}", w.id()));
                }
            }
        }
    }
}
