//! Why the frame engine could not open or run a trial, typed: a core count
//! the host refuses (already in its words and exit class), the host's own
//! errors, a frame that cannot be built, the NIC stamps that cannot be had
//! (which the caller only notes), and the latency stream's error, which is
//! the caller's (its hook's) and travels whole.

use misura_cli::exit::{BoxedError, Failure};
use misura_sys::SysError;

/// What the latency stream's hook ([`crate::LatencyHook`]) fails with.
pub type HookError = BoxedError;

/// Why the frame engine failed.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// A parameter the host cannot run (exit 5), in its words.
    #[error(transparent)]
    Refused(#[from] Failure),
    /// A socket, ring or interface call failed.
    #[error(transparent)]
    Sys(#[from] SysError),
    /// No transmit path opened: `forced` names the one asked for (none:
    /// every path was tried); `last` is the last path's error.
    #[error("{}", no_path(forced))]
    NoPath {
        forced: Option<crate::EngineChoice>,
        #[source]
        last: Box<EngineError>,
    },
    /// No path was there to try.
    #[error("no transmit path")]
    NoPathTried,
    /// A flow that cannot be sent as asked (no frame size, a frame too
    /// small for its envelope).
    #[error("{why}")]
    Flow { why: String },
    /// A flow's rate the schedule refuses.
    #[error("flow {flow}: {why}")]
    Rate {
        flow: usize,
        why: misura_measure::load::LoadError,
    },
    #[error("building a load frame")]
    Frame(#[source] misura_wire::WireError),
    /// Why the RX port gives no NIC stamps (the caller keeps kernel stamps).
    #[error("{why}")]
    NoHardwareRx { why: String },
    /// A step of setting up the RX port's NIC stamps failed.
    #[error("{what}")]
    HardwareRx {
        what: String,
        #[source]
        source: BoxedError,
    },
    /// The latency stream failed (its hook's error, whole).
    #[error(transparent)]
    Latency(HookError),
    #[error("a frame-engine core panicked")]
    Panicked,
}

impl EngineError {
    /// `what` (a step of setting up the RX port's NIC stamps) failed.
    pub(crate) fn hardware_rx(what: String, e: impl Into<BoxedError>) -> EngineError {
        EngineError::HardwareRx {
            what,
            source: e.into(),
        }
    }
}

fn no_path(forced: &Option<crate::EngineChoice>) -> String {
    match forced {
        None => "no transmit path of the frame engine could be opened".into(),
        Some(c) => format!(
            "--engine {c:?} could not be opened (try --engine auto, which picks the best path that opens)"
        )
        .to_lowercase(),
    }
}
