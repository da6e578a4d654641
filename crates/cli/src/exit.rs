//! Exit codes and the binary's failures in their class (`Failure`; the
//! libraries carry typed errors instead, this crate's among them:
//! `TargetError`, `KeyError`, `CannotWrite`, `RateError`, each with its
//! [`Class`], as each library's error enum has in its own crate: [`Classed`]).
//! Which code a class and an error chain end with is the binary's
//! (`shared/exit.rs`, `code_for`), as only the binary exits.

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
    /// Its class.
    pub fn class(&self) -> Class {
        match self {
            Failure::Usage(_) => Class::Usage,
            Failure::Params(_) => Class::Params,
            Failure::Output(_) => Class::Output,
            Failure::Profile(_) => Class::Profile,
            Failure::Privilege(_) => Class::Privilege,
        }
    }
}

/// An exit class: what kind of failure an error is. The binary maps each
/// to its exit code (`shared/exit.rs`); the constants below are those
/// codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// Anything else: the network, the peer, the host (exit 1).
    Error,
    /// A usage slip: a flag's value that cannot be taken (exit 2).
    Usage,
    /// Needs root or a capability the process lacks (exit 3).
    Privilege,
    /// An interface or namespace missing or down (exit 4).
    Interface,
    /// A parameter out of its bounds, or one this host cannot run (exit 5).
    Params,
    /// An output that cannot be written (exit 6).
    Output,
    /// A calibration profile that cannot be used (exit 7).
    Profile,
}

/// A typed error that says its own exit class: this crate's (a target, a
/// key file, a file that cannot be written, a link rate) and each
/// library's error enum. Libraries carry them typed, the binary's
/// `code_for` asks each error of a chain its class, and the binary's own
/// code turns one into the [`Failure`] of its class with `?`.
pub trait Classed: std::error::Error {
    /// Its exit class; none for an error whose class is that of what it
    /// carries ([`Classed::carried`]) or of its source, or that has none.
    fn class(&self) -> Option<Class>;

    /// The error it carries transparently (its message, its sources): an
    /// error without a class of its own has that one's, which the chain
    /// walk does not see (a transparent variant's source is the inner
    /// error's source) and a library may not know (the host's, a boxed
    /// one).
    fn carried(&self) -> Option<&(dyn std::error::Error + 'static)> {
        None
    }
}

impl<E: Classed> From<E> for Failure {
    /// The same words in its class's `Failure` (a usage error for a class
    /// with no `Failure` of its own, which none of this crate's errors has).
    fn from(e: E) -> Failure {
        let words = e.to_string();
        match e.class() {
            Some(Class::Params) => Failure::Params(words),
            Some(Class::Output) => Failure::Output(words),
            Some(Class::Profile) => Failure::Profile(words),
            Some(Class::Privilege) => Failure::Privilege(words),
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

/// Why a run ended, from the signal that stopped it (0: none, it finished).
pub fn stop_reason(signal: usize) -> misura_report::StopReason {
    match signal {
        0 => misura_report::StopReason::Finished,
        s => signal_reason(s),
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use misura_report::StopReason;

    #[test]
    fn no_signal_is_a_finished_run_and_a_signal_names_itself() {
        assert_eq!(stop_reason(0), StopReason::Finished);
        assert_eq!(stop_reason(15), signal_reason(15));
        assert!(stop_reason(2).is_interrupted());
    }
}
