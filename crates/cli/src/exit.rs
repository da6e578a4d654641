//! Exit codes and the binary's failures in their class (`Failure`; the
//! libraries carry typed errors instead, this crate's among them:
//! `TargetError`, `KeyError`, `CannotWrite`, each with its class). Which
//! code an error chain ends with is the binary's (`shared/exit.rs`,
//! `code_for`), as only the binary exits.

/// What went wrong, for the exit code. The message names the fix.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Params(String),
    #[error("{0}")]
    Output(String),
    #[error("{0}")]
    Profile(String),
    /// Needs root or a capability the process lacks (exit 3).
    #[error("{0}")]
    Privilege(String),
}

impl Failure {
    /// The exit code of its class.
    pub fn code(&self) -> i32 {
        match self {
            Failure::Usage(_) => USAGE,
            Failure::Params(_) => PARAMS,
            Failure::Output(_) => OUTPUT,
            Failure::Profile(_) => PROFILE,
            Failure::Privilege(_) => PRIVILEGE,
        }
    }
}

/// An error of this crate's that says its own exit class (a target, a key
/// file, a file that cannot be written, a link rate): libraries carry it
/// typed, the binary's `code_for` asks it its class, and the binary's own
/// code turns it into the [`Failure`] of that class with `?`.
pub trait Classed: std::error::Error {
    /// Its exit code (one of the constants below).
    fn class(&self) -> i32;
}

impl<E: Classed> From<E> for Failure {
    /// The same words in its class's `Failure` (a usage error for a class
    /// with no `Failure` of its own, which none of this crate's errors has).
    fn from(e: E) -> Failure {
        let words = e.to_string();
        match e.class() {
            PARAMS => Failure::Params(words),
            OUTPUT => Failure::Output(words),
            PROFILE => Failure::Profile(words),
            PRIVILEGE => Failure::Privilege(words),
            _ => Failure::Usage(words),
        }
    }
}

pub const OK: i32 = 0;
pub const ERROR: i32 = 1;
pub const USAGE: i32 = 2;
pub const PRIVILEGE: i32 = 3;
pub const INTERFACE: i32 = 4;
pub const PARAMS: i32 = 5;
pub const OUTPUT: i32 = 6;
pub const PROFILE: i32 = 7;
/// rfc2544, y1564: part of the result is the tester's own limit, not the
/// SUT's (after `--tester-retries`); the result says which part.
pub const INCONCLUSIVE: i32 = 8;
/// y1564: the SUT failed a test on its own measurement (a step or the
/// performance test missed its acceptance criteria). The tool worked: this
/// is the device's verdict, not misura's failure (1) nor the tester's limit
/// (8).
pub const FAIL: i32 = 9;
pub const INTERRUPTED_INT: i32 = 130;
pub const INTERRUPTED_TERM: i32 = 143;

/// The stop reason of a run a signal ended (its number).
pub fn signal_reason(signal: impl TryInto<i64>) -> misura_report::StopReason {
    misura_report::StopReason::interrupted(signal)
}

/// Any error, kept whole (its chain, its type for a downcast): what a
/// library carries from a caller's hook or another library's run.
pub type BoxedError = Box<dyn std::error::Error + Send + Sync>;

/// An error and its causes on one line, `: ` between them (what a note or
/// a flow's failure in a result says; anyhow's `{:#}`).
pub fn one_line(e: &(dyn std::error::Error + 'static)) -> String {
    let mut line = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        line.push_str(": ");
        line.push_str(&c.to_string());
        cause = c.source();
    }
    line
}
