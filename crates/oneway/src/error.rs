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
    Request(#[from] RequestError),
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

/// Why a request cannot run on these interfaces and this link, with what
/// was asked; it names no flag (the command line words it).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RequestError {
    #[error("the timeout must be positive")]
    TimeoutNotPositive,
    #[error("the TX and RX ports are both `{port}`: the method needs two ports (use the lab: misura lab up)")]
    OnePort { port: String },
    #[error("at least 1 frame must be sent")]
    NoFrames,
    #[error("payload size {size} is too small for a PTP-wrapped probe: the PTPv2 Sync header and misura's take {min} bytes")]
    PtpPayloadTooSmall { size: usize, min: usize },
    #[error("payload size {size} is below misura's {header}-byte probe header: use at least {header} (46 fills the 64-byte minimum frame)", header = misura_wire::probe::HEADER_LEN)]
    BelowHeader { size: usize },
    #[error("payload size {size} is over the MTU ({mtu} bytes on {tx}/{rx}): use sizes up to {mtu}, or raise the MTU (ip link set {tx} mtu 9000)")]
    OverMtu {
        size: usize,
        mtu: usize,
        tx: String,
        rx: String,
    },
    #[error("calibration needs at least 7 payload sizes for a trustworthy fit, got {got}")]
    TooFewSizes { got: usize },
    #[error("cannot read the link speed of {rx} (the driver does not report it)")]
    NoLinkSpeed { rx: String },
    #[error("a rate of {rate} frames per second: it must be positive")]
    RateNotPositive { rate: f64 },
    #[error("the period must be at least 1 ns")]
    PeriodTooShort,
    /// More than an hour between frames; `period_ns` is between patterns.
    #[error("{:.3e} s between frames is more than the longest allowed (1 hour, {frames_per_period} frame(s) per hour)", *period_ns as f64 / 1e9)]
    PeriodTooLong {
        period_ns: i64,
        frames_per_period: u32,
    },
    #[error("{rate_fps:.0} frames/s offers {:.0} % of the {} Mb/s link, more than it carries: use at most {max_fps:.0} frames/s for these sizes", offered_load * 100.0, link_bps / 1_000_000)]
    OverLink {
        rate_fps: f64,
        offered_load: f64,
        link_bps: u64,
        max_fps: f64,
    },
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
