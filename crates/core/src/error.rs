//! What went wrong in a workload, and whose move it is to fix it ([`WorkloadError`]).
//!
//! Every workload error has a kind, so the front-end can answer with the right exit code
//! without reading the message: [`ErrorKind::Usage`] (the options are wrong: the user fixes
//! the command line), [`ErrorKind::Environment`] (the machine, the server or the filesystem
//! refuses: a refused connection, a permission, no space, a missing kernel feature) and
//! [`ErrorKind::Failed`] (the work itself failed while running: an I/O error, a wrong
//! result). The message is printed exactly as given: the kind never shows in it.

/// Whose move it is when a workload fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The options are wrong: fix the command line (a bad value, a conflict, a missing file
    /// that the command line names).
    Usage,
    /// The machine, the server or the filesystem refuses: a refused connection, missing
    /// permissions, no space, a kernel feature or a table that is not there.
    Environment,
    /// The work failed while running: an I/O error in the middle of a phase, a wrong result.
    Failed,
}

impl ErrorKind {
    /// Whose move an OS error is: the machine's ([`Environment`](Self::Environment)) when
    /// it says so by itself (no space, a quota, no permission, a read-only filesystem, no
    /// memory, too many open files), else the work's ([`Failed`](Self::Failed): an I/O error
    /// of the device, a file that vanished mid-phase).
    pub fn of_io(e: &std::io::Error) -> ErrorKind {
        const ENOSPC: i32 = 28;
        const EDQUOT: i32 = 122;
        const EACCES: i32 = 13;
        const EPERM: i32 = 1;
        const EROFS: i32 = 30;
        const ENOMEM: i32 = 12;
        const EMFILE: i32 = 24;
        const ENFILE: i32 = 23;
        match e.raw_os_error() {
            Some(ENOSPC | EDQUOT | EACCES | EPERM | EROFS | ENOMEM | EMFILE | ENFILE) => {
                ErrorKind::Environment
            }
            _ if e.kind() == std::io::ErrorKind::OutOfMemory => ErrorKind::Environment,
            _ => ErrorKind::Failed,
        }
    }

    /// The process exit code for a run that stops on an error of this kind: 2 for
    /// [`Usage`](Self::Usage) and [`Environment`](Self::Environment) (nothing was measured:
    /// a setup error), 1 for [`Failed`](Self::Failed) (it ran and failed, as a worker's
    /// error during the run does).
    pub fn exit_code(self) -> u8 {
        match self {
            ErrorKind::Usage | ErrorKind::Environment => 2,
            ErrorKind::Failed => 1,
        }
    }
}

/// A workload failed to set up or to run; the message says what and how to fix it, the
/// kind says whose move it is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct WorkloadError {
    /// Whose move it is.
    pub kind: ErrorKind,
    /// What went wrong, where, and how to fix it (printed as is).
    pub message: String,
}

impl WorkloadError {
    /// An error of `kind`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> WorkloadError {
        WorkloadError {
            kind,
            message: message.into(),
        }
    }

    /// The options are wrong ([`ErrorKind::Usage`]).
    pub fn usage(message: impl Into<String>) -> WorkloadError {
        WorkloadError::new(ErrorKind::Usage, message)
    }

    /// The machine, the server or the filesystem refuses ([`ErrorKind::Environment`]).
    pub fn environment(message: impl Into<String>) -> WorkloadError {
        WorkloadError::new(ErrorKind::Environment, message)
    }

    /// The work failed while running ([`ErrorKind::Failed`]).
    pub fn failed(message: impl Into<String>) -> WorkloadError {
        WorkloadError::new(ErrorKind::Failed, message)
    }

    /// An OS error while doing `message`'s work, of the kind [`ErrorKind::of_io`] gives it
    /// (`message` says what and where; the OS reason is appended after `: `).
    pub fn io(message: impl std::fmt::Display, e: &std::io::Error) -> WorkloadError {
        WorkloadError::new(ErrorKind::of_io(e), format!("{message}: {e}"))
    }

    /// The same error with its message rewritten by `f` (a prefix naming the job, a hint
    /// appended); the kind stays.
    pub fn map_message(self, f: impl FnOnce(String) -> String) -> WorkloadError {
        WorkloadError {
            kind: self.kind,
            message: f(self.message),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_prints_as_given_whatever_the_kind() {
        for e in [
            WorkloadError::usage("--x=3: bad"),
            WorkloadError::environment("--x=3: bad"),
            WorkloadError::failed("--x=3: bad"),
        ] {
            assert_eq!(e.to_string(), "--x=3: bad");
        }
    }

    #[test]
    fn usage_and_environment_are_setup_errors_failed_is_a_failed_run() {
        assert_eq!(WorkloadError::usage("u").kind.exit_code(), 2);
        assert_eq!(WorkloadError::environment("e").kind.exit_code(), 2);
        assert_eq!(WorkloadError::failed("f").kind.exit_code(), 1);
    }

    #[test]
    fn os_errors_that_name_the_machine_are_environment() {
        use std::io::Error;
        for errno in [28, 122, 13, 1, 30, 12, 24, 23] {
            let e = WorkloadError::io("cannot write /x", &Error::from_raw_os_error(errno));
            assert_eq!(e.kind, ErrorKind::Environment, "errno {errno}: {e}");
            assert!(e.message.starts_with("cannot write /x: "), "{e}");
        }
        for errno in [5, 2, 9] {
            let e = Error::from_raw_os_error(errno);
            assert_eq!(ErrorKind::of_io(&e), ErrorKind::Failed, "errno {errno}");
        }
        let oom = Error::from(std::io::ErrorKind::OutOfMemory);
        assert_eq!(ErrorKind::of_io(&oom), ErrorKind::Environment);
    }

    #[test]
    fn map_message_keeps_the_kind() {
        let e = WorkloadError::environment("refused").map_message(|m| format!("job 'a': {m}"));
        assert_eq!(e.kind, ErrorKind::Environment);
        assert_eq!(e.message, "job 'a': refused");
    }
}
