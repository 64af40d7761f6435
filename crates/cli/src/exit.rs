//! The two ways a command fails: bad input (exit code 2) and a failure while
//! running (exit code 1), each with a message on stderr.

use std::process::ExitCode;

/// Exit code 2 with a message: bad input.
pub(crate) fn usage(msg: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {msg}");
    ExitCode::from(2)
}

/// Exit code 1 with a message: a failure while running.
pub(crate) fn failure(msg: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {msg}");
    ExitCode::from(1)
}
