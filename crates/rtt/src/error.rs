//! Why an rtt session or a reflector stops before its result, typed: what
//! the caller needs to tell apart (misura-cli's refused target or
//! per-probe log or key file, a request that cannot run, the session's or the reflector's plan, the
//! host's refusal, a NIC stamp that was required, a
//! reflector that never answered). The binary gives each its exit class
//! and prints the chain as before; this crate names no flag it did not
//! already name.

use crate::plan::SessionPlanError;
use crate::request::RequestError;
use misura_cli::keys::KeyError;
use misura_cli::outfile::CannotWrite;
use misura_cli::target::TargetError;
use misura_run::stamping::HardwareRequired;
use misura_sys::SysError;

/// Why a session (`measure`) or a reflector (`reflect::run`) failed.
#[derive(Debug, thiserror::Error)]
pub enum RttError {
    /// The target that cannot be parsed or resolved (misura-cli's).
    #[error(transparent)]
    Target(#[from] TargetError),
    /// The per-probe log that cannot be created (misura-cli's).
    #[error(transparent)]
    RowLog(#[from] CannotWrite),
    /// The reflector's key file that cannot be read or holds no key
    /// (misura-cli's).
    #[error(transparent)]
    Key(#[from] KeyError),
    /// The reflector's plan cannot run (the binary names the flags).
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// The session's request cannot run as asked (the binary names the
    /// flags).
    #[error(transparent)]
    Request(#[from] RequestError),
    /// The session's plan refused what was asked (the binary names the
    /// flags).
    #[error(transparent)]
    SessionPlan(#[from] SessionPlanError),
    /// The host refused: the interface, the socket, its stamps, the
    /// pinning.
    #[error(transparent)]
    Sys(#[from] SysError),
    /// The NIC's stamps were required and cannot be had.
    #[error(transparent)]
    Hardware(#[from] HardwareRequired),
    /// More busy threads asked for than the host runs usefully (exit 5).
    #[error(transparent)]
    CpuLoad(#[from] misura_run::cpuload::TooManyThreads),
    /// Setting up a socket failed; `what` says which step, on which
    /// address or interface.
    #[error("{what}")]
    Setup {
        what: String,
        #[source]
        source: SysError,
    },
    /// A probe or a request could not be built (a size the plan let
    /// through that the format cannot carry).
    #[error("{what}")]
    Build {
        what: &'static str,
        #[source]
        source: BuildError,
    },
    /// The buffer a raw probe is built in is shorter than its frame.
    #[error("a raw probe frame needs {needs} bytes")]
    ShortFrame { needs: usize },
    /// The reflector never answered the warm-up's probes.
    #[error("no reply from {target}: {why}")]
    NoReply { target: String, why: NoReplyWhy },
}

/// Why the warm-up had no reply: what came back instead, or how long it
/// waited.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NoReplyWhy {
    /// The host answered ICMP port unreachable.
    #[error("the host answered ICMP port unreachable: nothing listens on that UDP port (start `misura reflect` or another STAMP reflector there)")]
    PortUnreachable,
    /// Nothing came back within `wait_ms` to `probes` probes sent to
    /// `target`; the binary names the key file's flag.
    #[error("no reply within {wait_ms:.0} ms to {probes} probes: is a reflector running at {target}, reachable, and using the same mode (authenticated or not)?")]
    Silent {
        wait_ms: f64,
        probes: usize,
        target: String,
    },
}

/// A reflector's plan that cannot run, with what was asked (`reflect`'s).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error("the rate limit must be at least 1 reply per second")]
    NoRate,
    #[error("PTP-wrapped probes are for the raw-probe reflector; STAMP over UDP has no PTP form")]
    PtpOverUdp,
    #[error("the user clock's stamps are for STAMP over UDP; the raw-probe reflector always takes kernel stamps")]
    UserStampsOnL2,
    #[error("at least 1 source must be tracked")]
    NoSources,
    #[error("{asked} sources is over the limit of {max} tracked at once")]
    TooManySources { asked: usize, max: usize },
    #[error("NIC hardware stamps on a wildcard address: no interface is known to stamp")]
    HardwareOnWildcard,
}

/// What refused to build a probe or a request.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error(transparent)]
    Wire(#[from] misura_wire::WireError),
    #[error(transparent)]
    Requests(#[from] misura_measure::stamp_sender::ConfigError),
}

impl RttError {
    /// A set-up step's host error, `what` naming the step.
    pub(crate) fn setup(what: String) -> impl FnOnce(SysError) -> RttError {
        move |source| RttError::Setup { what, source }
    }

    /// A build step's error, `what` naming what was built.
    pub(crate) fn build<E: Into<BuildError>>(what: &'static str) -> impl FnOnce(E) -> RttError {
        move |e| RttError::Build {
            what,
            source: e.into(),
        }
    }
}

pub(crate) type Result<T, E = RttError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_silent_reflector_names_no_flag() {
        let e = RttError::NoReply {
            target: "t".into(),
            why: NoReplyWhy::Silent {
                wait_ms: 1000.0,
                probes: 8,
                target: "t".into(),
            },
        };
        assert_eq!(e.to_string(), "no reply from t: no reply within 1000 ms to 8 probes: is a reflector running at t, reachable, and using the same mode (authenticated or not)?");
        let e = RttError::CpuLoad(misura_run::cpuload::TooManyThreads { threads: 9, max: 8 });
        assert!(!e.to_string().contains("--"), "{e}");
    }
}
