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

#[cfg(test)]
mod tests {
    use super::*;
    use hostbench_core::clock::Clock;
    use hostbench_core::params::Params;
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

    /// Conformance: every workload runs a few events with small parameters and reports them.
    #[test]
    fn every_workload_runs() {
        let small: &[(&str, &str, &str)] = &[
            ("cpu", "max_prime", "100"),
            ("threads", "yields", "10"),
            ("mutex", "locks", "100"),
            ("mutex", "loops", "10"),
            ("null.loop", "latency", "1us"),
            ("stream", "array_size", "100000"),
            ("fileio", "test_mode", "seqwr"),
            ("fileio", "num", "4"),
            ("fileio", "total_size", "1M"),
            ("smallfiles", "files", "40"),
            ("iozone", "throughput", "on"),
            ("iozone", "file_size", "64K"),
            ("db.insert_race", "rows", "1000"),
        ];
        for w in WORKLOADS {
            let mut ov: Vec<(String, String)> = small
                .iter()
                .filter(|(id, _, _)| *id == w.id())
                .map(|(_, k, v)| (k.to_string(), v.to_string()))
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
                if w.params().iter().any(|p| p.name == "table_size") {
                    ov.push(("table_size".into(), "200".into()));
                }
            }
            let params = Params::resolve(w.id(), w.params(), &ov).unwrap();
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
