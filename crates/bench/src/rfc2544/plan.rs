//! What an RFC 2544 run is asked to do, resolved from its request against
//! the ports ([`Plan`]), and what its trials share while it runs.

use misura_engine::{open::Engine, EngineArgs, EngineChoice, EngineRequest, FrameFormat};
use misura_measure::time::Span;
use misura_measure::wire_time::LinkModel;
use misura_oneway::Calibration;
use misura_wire::MacAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Which of the four tests run.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Tests {
    /// §26.1: NDR and PDR.
    pub throughput: bool,
    /// §26.2: latency of tagged frames at the throughput rate.
    pub latency: bool,
    /// §26.3: frame loss rate.
    pub loss: bool,
    /// §26.4: back-to-back.
    pub b2b: bool,
}

/// The trials' lengths and the searches' bounds, as asked.
#[derive(Clone, Debug, PartialEq)]
pub struct Trials {
    /// A full trial (the search's confirmation trials, the loss steps).
    pub trial: Span,
    /// The search's short trials.
    pub short: Span,
    /// The search's relative resolution.
    pub resolution: f64,
    /// The loss ratio PDR allows.
    pub pdr: f64,
    pub max_trials: u32,
    /// The latency trial at each size's throughput.
    pub latency_trial: Span,
    pub b2b_trials: u32,
    /// The longest burst tried, as time at the line rate.
    pub b2b_max_burst: Span,
}

/// A whole RFC 2544 run, resolved: every number checked, every port known.
pub struct Plan {
    pub tx: String,
    pub rx: String,
    pub netns: Option<String>,
    pub tests: Tests,
    pub link: LinkModel,
    /// The trials' lengths and the searches' bounds.
    pub trials: Trials,
    /// Runs of a trial the tester spoiled.
    pub tester_retries: u32,
    /// The engine's ports, transmit path and frame format.
    pub engine: EngineRequest,
    pub engine_choice: EngineChoice,
    pub engine_args: EngineArgs,
    pub frame_format: FrameFormat,
    /// Where the engine's cores run (`--cpu`), and each core's CPU.
    pub cpu: Option<usize>,
    pub cpus: Vec<usize>,
    pub dst: MacAddr,
    pub src: MacAddr,
    pub calibration: Option<Calibration>,
}

/// What every trial of a run shares.
pub(crate) struct Ctx<'a> {
    pub plan: &'a Plan,
    pub engine: Option<Engine>,
    pub stop: &'a Arc<AtomicUsize>,
    pub progress: &'a dyn crate::Progress,
    /// "size 1/3:", for the progress line.
    pub size_no: String,
}

impl Ctx<'_> {
    pub(crate) fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed) != 0
    }
}
