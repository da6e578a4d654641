//! What can be wrong with a `misura load` plan, in the plan's words (the
//! binary names the flags), and why a run stops before its report, typed:
//! the plan, a refused check in its exit class, a peer that did not answer
//! the check before measuring, the probes' own error.

use misura_cli::exit::Failure;
use misura_cli::units::DurationArg;

/// A plan that cannot run, with what was wrong.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error("the loaded phase lasts 2 s to 1 h, not {duration}")]
    LoadedPhase { duration: DurationArg },
    #[error("an idle phase lasts 1 s to 10 min, not {idle}")]
    IdlePhase { idle: DurationArg },
    #[error("{up} streams up, {down} down: at most {max} each way")]
    Streams { up: u32, down: u32, max: u32 },
    #[error("no load: no TCP stream and no UDP rate either way")]
    NoLoad,
    #[error("a probe every {period} leaves fewer than 10 probes in an idle phase of {idle}")]
    FewIdleProbes {
        period: DurationArg,
        idle: DurationArg,
    },
    #[error("the load's server {url} is not iperf3://HOST[:PORT]")]
    ServerUrl { url: String },
    #[error("an iperf3 load with no stream either way")]
    Iperf3NoLoad,
    /// A direction's test refused by its command's own parser.
    #[error("the {direction} load: {error}")]
    Flow {
        direction: &'static str,
        error: String,
    },
    /// The transactions' test refused by `misura rr`'s parser.
    #[error("the transactions: {error}")]
    Transactions { error: String },
    /// A check of another crate, already in its words.
    #[error(transparent)]
    Checked(#[from] Failure),
    /// The transactions' plan refused (the binary names the flags).
    #[error(transparent)]
    Refusal(#[from] misura_throughput::error::Refusal),
}

/// Why a phase's probes failed: the probe's own error (the caller's probe
/// gives it, and may class it by its own type).
pub type ProbeError = misura_cli::exit::BoxedError;

/// Why [`crate::measure`] gave no report.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The plan cannot run (the binary names the flags).
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// A check of another crate refused, already in its words and class.
    #[error(transparent)]
    Refused(#[from] Failure),
    /// A peer did not answer the check before the first phase; `why` names
    /// it and what to start there.
    #[error("checked before measuring: {why}")]
    PeerMissing { why: String },
    /// A phase's probes failed.
    #[error(transparent)]
    Probe(ProbeError),
    /// A thread of the run panicked (`what`: which).
    #[error("{what} panicked")]
    Panicked { what: &'static str },
}
