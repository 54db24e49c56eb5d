//! Disk workloads: sysbench fileio, the fio-class queue-depth engine, iozone, small files.
//! Files live only in the directory the user gave; cleanup removes only what hostbench made.

pub mod diskstat;
pub mod fileio;
pub mod files;
pub mod fio;
pub mod iozone;
pub mod smallfiles;

use hostbench_core::params::Params;
use hostbench_core::recorder::Counter;
use hostbench_core::workload::WorkloadError;

/// Checks that a disk workload's parameters name no file or directory outside the current
/// directory (a suite entry's scratch directory): no absolute path and no `..` in `dir`,
/// iozone's `files`, or a fio job's `directory`, `filename`, and the names its
/// `filename_format` gives. Other workloads pass.
pub fn confine_to_current_dir(id: &str, params: &Params) -> Result<(), WorkloadError> {
    let inside = |p: &str, what: &str| files::stays_inside(p, false, what);
    match id {
        "fileio" | "smallfiles" => inside(params.text("dir"), "parameter `dir`"),
        "iozone" => {
            inside(params.text("dir"), "parameter `dir`")?;
            for f in params
                .text("files")
                .split(',')
                .filter(|f| !f.trim().is_empty())
            {
                inside(f.trim(), "parameter `files`:")?;
            }
            Ok(())
        }
        "disk.fio" => {
            inside(params.text("dir"), "parameter `dir`")?;
            for j in fio::jobs_of(params)? {
                let at = format!("job '{}': ", j.name);
                inside(&j.directory, &format!("{at}directory"))?;
                for f in j.filenames() {
                    inside(f, &format!("{at}filename"))?;
                }
                if j.filename.is_none() && j.filename_format.is_some() {
                    for c in 0..j.numjobs {
                        for k in 0..j.nfiles() {
                            inside(
                                &j.generated_name_k(c, k),
                                &format!("{at}filename_format gives"),
                            )?;
                        }
                    }
                }
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// The counters every disk workload reports: read and write calls, fsyncs and other file
/// operations, and the bytes moved each way.
pub(crate) const IO_COUNTERS: &[Counter] = &[
    Counter::Reads,
    Counter::Writes,
    Counter::Other,
    Counter::BytesRead,
    Counter::BytesWritten,
];
