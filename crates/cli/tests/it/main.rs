//! The integration tests of the `hostbench` binary, as one test binary (`cargo test --test it`):
//! one link instead of one per file, as ripgrep does (`autotests = false` in Cargo.toml).
//! Each former test file is a module; run one with a filter, e.g. `cargo test --test it http::`
//! or `cargo test --test it db::sqlite::`. Insta names snapshots by module path
//! (`snapshots/it__cli__sysbench_cpu.snap`, `http/snapshots/it__http__ab__ab_layout.snap`).
//!
//! All modules share one process, so nothing here may assume a process of its own: no
//! `set_var`, no `set_current_dir` (children get `current_dir`/`env`), scratch names unique
//! across modules, and the one store of [`common::process_store`]. A test that needs the
//! machine to itself says so with [`common::alone`].

mod common;

mod cli;
mod compare;
mod db;
mod db_tls;
mod fileio;
mod fio;
mod fio_blktrace;
mod fio_bufs;
mod fio_cli;
mod fio_compare;
mod fio_devsize;
mod fio_draws;
mod fio_e4defrag;
mod fio_engines;
mod fio_errors;
mod fio_exec;
mod fio_fileopts;
mod fio_files;
mod fio_getopt;
mod fio_iolog;
mod fio_lat;
mod fio_layout;
mod fio_logs;
mod fio_logs2;
mod fio_mem;
mod fio_misc;
mod fio_mix;
mod fio_multi;
mod fio_nbd;
mod fio_net;
mod fio_offload;
mod fio_opts;
mod fio_out;
mod fio_prio;
mod fio_rate;
mod fio_review;
mod fio_review2;
mod fio_review3;
mod fio_seq;
mod fio_session;
mod fio_setupfail;
mod fio_sync;
mod fio_syntax;
mod fio_trigger;
mod fio_trim;
mod fio_trimv;
mod fio_verify;
mod fio_zbd;
mod fio_zones;
mod fleet;
mod generate;
mod http;
mod iozone;
mod lua;
mod lua_api_sql;
mod lua_histogram;
mod lua_legacy;
mod lua_modules;
mod lua_sql;
mod lua_thread_run;
mod memlat;
mod memory;
mod nodirect;
mod release;
mod results;
mod safety;
mod schema;
mod secrets;
mod store_input;
mod stream;
mod suite;
mod suite_quick;
mod trend;
