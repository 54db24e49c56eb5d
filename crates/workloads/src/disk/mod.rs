//! Disk workloads: sysbench fileio, the fio-class queue-depth engine, iozone, small files.
//! Files live only in the directory the user gave; cleanup removes only what hostbench made.

pub mod diskstat;
pub mod fileio;
pub mod files;
pub mod fio;
pub mod iozone;
pub mod smallfiles;
