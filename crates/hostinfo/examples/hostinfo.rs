//! Prints this machine's fingerprint and timer report:
//! `cargo run --release -p hostbench-hostinfo --example hostinfo`.

fn main() {
    println!("{:#?}", hostbench_hostinfo::collect());
    println!(
        "{:#?}",
        hostbench_hostinfo::probe_timers(&hostbench_core::clock::Clock::detect())
    );
}
