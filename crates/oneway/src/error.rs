//! Why a one-way run gives no result, typed: the per-frame log that cannot
//! be created (misura-cli's error), the per-frame loop refused, the
//! calibration profile that cannot be made or used (with the path and what
//! went wrong; the binary names the flags), the host's errors (bare, or with the step
//! that met them), the NIC stamps that `--timestamps hardware` requires,
//! the frame engine's error in engine mode, a frame that cannot be built.

use misura_cli::outfile::CannotWrite;
use misura_engine::EngineError;
use misura_measure::time::Span;
use misura_run::cpuload::TooManyThreads;
use misura_run::stamping::HardwareRequired;
use misura_sys::SysError;
use misura_wire::WireError;
use std::path::PathBuf;

/// Why `misura oneway` (or `calibrate`, or RFC 2544's latency trial) failed.
#[derive(Debug, thiserror::Error)]
pub enum OnewayError {
    /// The per-frame log that cannot be created (misura-cli's).
    #[error(transparent)]
    RowLog(#[from] CannotWrite),
    /// The per-frame loop refused (exit 5, or 2 for a flag it cannot take).
    #[error(transparent)]
    Loop(#[from] LoopError),
    /// The calibration profile cannot be written (exit 6) or used (exit 7).
    #[error(transparent)]
    Profile(#[from] ProfileError),
    #[error(transparent)]
    Sys(#[from] SysError),
    #[error(transparent)]
    Hardware(#[from] HardwareRequired),
    /// More busy threads asked (`cpu_load`) than the host can run.
    #[error(transparent)]
    CpuLoad(TooManyThreads),
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
    /// More than an hour between frames; `period` is between patterns.
    #[error("{:.3e} s between frames is more than the longest allowed (1 hour, {frames_per_period} frame(s) per hour)", period.as_secs_f64())]
    PeriodTooLong {
        period: Span,
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

/// Why the per-frame loop cannot run the request; it names no flag (the
/// binary words it).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LoopError {
    /// A rate above what the loop sustains (`max_fps`); `forced`: the loop
    /// was asked for, else the command always uses it (calibration, demo).
    #[error("{rate_fps:.0} frames/s is more than the per-frame loop sustains ({}; it measured 0.48 M frames/s send + receive on the lab's veth, scripts/bench-oneway.sh): use the frame engine (for rates up to line rate) or a rate below {max_fps:.0}", loop_why(*forced))]
    TooFast {
        rate_fps: f64,
        max_fps: f64,
        forced: bool,
    },
    /// A latency sample every N frames asked of the per-frame loop.
    #[error("a latency sample every N frames needs the frame engine, not the per-frame loop")]
    LatencyEvery,
}

/// Why the loop was used: asked for, or the command's only path.
fn loop_why(forced: bool) -> &'static str {
    if forced {
        "the loop was asked for"
    } else {
        "calibration and the demo always use the loop"
    }
}

/// Why a calibration profile cannot be written (exit 6) or used (exit 7),
/// with its path and the error met; it names no flag (the binary words it).
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    #[error("cannot create {} for the calibration profile: {error}", dir.display())]
    CreateDir { dir: PathBuf, error: std::io::Error },
    #[error("cannot write the calibration profile {}: {error}", path.display())]
    NotWritable {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("cannot write {}: {error}", path.display())]
    Save {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("cannot read calibration profile {}: {error}; run `misura calibrate` first", path.display())]
    Unreadable {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{} is not JSON: {error}", path.display())]
    NotJson {
        path: PathBuf,
        error: serde_json::Error,
    },
    #[error("{} is not a misura calibration profile", path.display())]
    NotProfile { path: PathBuf },
    #[error("{} has format version {version}, newer than this misura understands ({max}): upgrade misura", path.display())]
    Newer {
        path: PathBuf,
        version: u64,
        max: u32,
    },
    #[error("{} is damaged: {error}", path.display())]
    Damaged {
        path: PathBuf,
        error: serde_json::Error,
    },
    #[error("{}: {error}; this is no tester's calibration: run `misura calibrate` again", path.display())]
    OutOfBounds {
        path: PathBuf,
        error: misura_measure::calibration::OutOfBounds,
    },
    /// Made on another set-up; `calibrate` is the command line that
    /// calibrates this one.
    #[error("calibration profile {} was made on another set-up: {}. Calibrate this set-up ({calibrate}), or accept the mismatch to use it anyway", path.display(), mismatches.join("; "))]
    Mismatch {
        path: PathBuf,
        mismatches: Vec<String>,
        calibrate: String,
    },
}

impl ProfileError {
    /// Whether the profile cannot be written (an output problem, exit 6),
    /// not used (a profile problem, exit 7).
    pub fn is_output(&self) -> bool {
        matches!(
            self,
            ProfileError::CreateDir { .. }
                | ProfileError::NotWritable { .. }
                | ProfileError::Save { .. }
        )
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_loop_and_profile_refusals_name_no_flag() {
        let io = || std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        let json = || serde_json::from_str::<serde_json::Value>("{").unwrap_err();
        let path = PathBuf::from("/x/p.json");
        let errors: Vec<OnewayError> = vec![
            LoopError::TooFast {
                rate_fps: 2e6,
                max_fps: 1e6,
                forced: true,
            }
            .into(),
            LoopError::TooFast {
                rate_fps: 2e6,
                max_fps: 1e6,
                forced: false,
            }
            .into(),
            LoopError::LatencyEvery.into(),
            ProfileError::CreateDir {
                dir: "/x".into(),
                error: io(),
            }
            .into(),
            ProfileError::NotWritable {
                path: path.clone(),
                error: io(),
            }
            .into(),
            ProfileError::Save {
                path: path.clone(),
                error: io(),
            }
            .into(),
            ProfileError::Unreadable {
                path: path.clone(),
                error: io(),
            }
            .into(),
            ProfileError::NotJson {
                path: path.clone(),
                error: json(),
            }
            .into(),
            ProfileError::NotProfile { path: path.clone() }.into(),
            ProfileError::Newer {
                path: path.clone(),
                version: 9,
                max: 2,
            }
            .into(),
            ProfileError::Damaged {
                path: path.clone(),
                error: json(),
            }
            .into(),
            ProfileError::Mismatch {
                path: path.clone(),
                mismatches: vec!["another host".into()],
                calibrate: "misura calibrate".into(),
            }
            .into(),
        ];
        for e in errors {
            let text = e.to_string();
            assert!(!text.contains("--"), "{text}");
            // Its cause is in its sentence, not a second line.
            assert!(std::error::Error::source(&e).is_none(), "{text}");
        }
        let e = LoopError::TooFast {
            rate_fps: 2e6,
            max_fps: 1e6,
            forced: true,
        };
        assert!(e.to_string().starts_with("2000000 frames/s is more"), "{e}");
    }
}
