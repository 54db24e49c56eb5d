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
    fn map_message_keeps_the_kind() {
        let e = WorkloadError::environment("refused").map_message(|m| format!("job 'a': {m}"));
        assert_eq!(e.kind, ErrorKind::Environment);
        assert_eq!(e.message, "job 'a': refused");
    }
}
