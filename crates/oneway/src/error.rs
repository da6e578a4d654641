//! Why a one-way run gives no result, typed: a parameter refused (already
//! in its words and exit class), the host's errors (bare, or with the step
//! that met them), the NIC stamps that `--timestamps hardware` requires,
//! the frame engine's error in engine mode, a frame that cannot be built.

use misura_cli::exit::Failure;
use misura_engine::EngineError;
use misura_run::stamping::HardwareRequired;
use misura_sys::SysError;
use misura_wire::WireError;

/// Why `misura oneway` (or `calibrate`, or RFC 2544's latency trial) failed.
#[derive(Debug, thiserror::Error)]
pub enum OnewayError {
    /// A parameter refused, in its words and exit class.
    #[error(transparent)]
    Refused(#[from] Failure),
    #[error(transparent)]
    Sys(#[from] SysError),
    #[error(transparent)]
    Hardware(#[from] HardwareRequired),
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// The request cannot run on these interfaces and this link.
    #[error(transparent)]
    Request(#[from] crate::plan::RequestError),
    /// The measurement's session refuses the plan.
    #[error(transparent)]
    Plan(#[from] misura_measure::oneway_session::PlanError),
    /// A step of opening or driving the ports failed (`what` names it).
    #[error("{what}")]
    Step {
        what: &'static str,
        #[source]
        source: SysError,
    },
    #[error("{what}")]
    Frame {
        what: &'static str,
        #[source]
        source: WireError,
    },
    #[error("starting the analysis thread")]
    Thread(#[source] std::io::Error),
    #[error("the analysis thread panicked")]
    AnalysisPanicked,
}

pub(crate) type Result<T, E = OnewayError> = std::result::Result<T, E>;

impl OnewayError {
    /// `what` was being done when the host said no.
    pub(crate) fn step(what: &'static str) -> impl FnOnce(SysError) -> OnewayError {
        move |source| OnewayError::Step { what, source }
    }

    /// `what` could not be built.
    pub(crate) fn frame(what: &'static str) -> impl FnOnce(WireError) -> OnewayError {
        move |source| OnewayError::Frame { what, source }
    }
}
