//! Why the frame engine could not open or run a trial, typed: a core count
//! the host refuses (with the count and the bound; the binary words it with
//! the flag, exit 5), the host's own
//! errors, a frame that cannot be built, the NIC stamps that cannot be had
//! (which the caller only notes), and the latency stream's error, which is
//! the caller's (its hook's) and travels whole.

use misura_cli::exit::BoxedError;
use misura_sys::SysError;

/// What the latency stream's hook ([`crate::LatencyHook`]) fails with.
pub type HookError = BoxedError;

/// Why the frame engine failed.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// A core count the host cannot run (exit 5).
    #[error(transparent)]
    Cores(#[from] CoresError),
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
    /// A frame (`frame` bytes, FCS included) too small for misura's
    /// header inside a PTP Sync message (`min` bytes and more).
    #[error("a {frame}-byte frame cannot carry misura's header inside a PTP Sync message: PTP-wrapped frames are {min} bytes or more (FCS included); use larger frames or misura's own frame format")]
    PtpFrameTooSmall { frame: usize, min: usize },
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

/// A core count the engine or this host cannot give, with the count asked
/// for and the bound; it names no flag (the binary words it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CoresError {
    /// Outside 1 to `max`.
    #[error(
        "cores {cores}: use 1 to {max} (each core drives one transmit path and one receive ring)"
    )]
    OutOfRange { cores: usize, max: usize },
    /// More than the host's online CPUs.
    #[error("cores {cores}: this host has {online} CPUs online; use at most {online}")]
    OverOnline { cores: usize, online: usize },
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
            "the {c:?} path of the frame engine could not be opened (auto picks the best path that opens)"
        )
        .to_lowercase(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_refusals_name_no_flag() {
        let errors = [
            EngineError::from(CoresError::OutOfRange { cores: 99, max: 64 }),
            EngineError::from(CoresError::OverOnline {
                cores: 9,
                online: 2,
            }),
            EngineError::NoPath {
                forced: Some(crate::EngineChoice::Xdp),
                last: Box::new(EngineError::NoPathTried),
            },
            EngineError::PtpFrameTooSmall { frame: 70, min: 88 },
        ];
        for e in errors {
            assert!(!e.to_string().contains("--"), "{e}");
        }
        let e = CoresError::OutOfRange { cores: 99, max: 64 };
        assert!(e.to_string().starts_with("cores 99: use 1 to 64"), "{e}");
    }
}
