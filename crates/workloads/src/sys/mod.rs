//! System workloads: the scheduler (`threads`), lock contention (`mutex`), and the harness
//! itself (`null`, `null.loop`).

pub mod mutex;
pub mod null;
pub mod threads;
