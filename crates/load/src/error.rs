//! What can be wrong with a `misura load` plan, in the plan's words (the
//! binary names the flags), and why a run stops before its report, typed:
//! the plan, misura-cli's refused address or key file, a peer that did not answer
//! the check before measuring, the probes' own error.

use misura_cli::keys::KeyError;
use misura_cli::target::TargetError;
use misura_cli::units::DurationArg;
use misura_throughput::error::Refusal;

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
    /// An iperf3 load's UDP rate as written cannot be used (misura-cli's).
    #[error(transparent)]
    UdpRate(#[from] misura_cli::units::RateError),
    /// The transactions' plan refused (the binary names the flags).
    #[error(transparent)]
    Refusal(#[from] Refusal),
    /// More busy threads (`cpu_load`) than the host runs usefully.
    #[error(transparent)]
    CpuLoad(#[from] misura_run::cpuload::TooManyThreads),
}

/// The probes' session refuses their plan: `period` is the probe period
/// load asked for, `error` the session's refusal (the binary names the
/// flags: a period too short and a timeout of none).
#[derive(Debug, Clone, thiserror::Error)]
#[error("{error}")]
pub struct ProbePlanError {
    pub period: DurationArg,
    pub error: misura_rtt::plan::SessionPlanError,
}

/// Why the probes' reflector did not pass the check before measuring.
#[derive(Debug, thiserror::Error)]
pub enum ReflectorWhy {
    /// Their plan refused (as their session would).
    #[error(transparent)]
    Plan(ProbePlanError),
    /// What was met, on one line (ICMP, a key file).
    #[error("{0}")]
    Said(String),
    /// The probes' short session failed: its error whole, printed on one
    /// line.
    #[error("{}", misura_cli::exit::one_line(&**.0))]
    Probe(ProbeError),
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
    /// The server's or the reflector's address that cannot be parsed or
    /// resolved (misura-cli's).
    #[error(transparent)]
    Target(#[from] TargetError),
    /// The probes' key file that cannot be read or is no key
    /// (misura-cli's).
    #[error(transparent)]
    Key(#[from] KeyError),
    /// The load's server did not answer the check before the first phase
    /// (`why`, on one line); `rr`: the transactions need it too.
    #[error("checked before measuring: {why}. Start `misura serve` on {host} (the load's server{}), or give its port as HOST:PORT", if *rr { " and the request/response transactions'" } else { "" })]
    ServerMissing { host: String, rr: bool, why: String },
    /// The probes' reflector did not pass the check before the first phase.
    #[error("checked before measuring: the probes' reflector {reflector}: {why}. Start `misura reflect` there (port 862), or name another reflector")]
    ReflectorMissing {
        reflector: String,
        why: ReflectorWhy,
    },
    /// The probes' session refused their plan (exit 5; a timeout of none, 2).
    #[error(transparent)]
    ProbePlan(#[from] ProbePlanError),
    /// A phase's probes failed.
    #[error(transparent)]
    Probe(ProbeError),
    /// A thread of the run panicked (`what`: which).
    #[error("{what} panicked")]
    Panicked { what: &'static str },
}

/// A flow's or the transactions' error on one line for the report: a
/// refusal of throughput's (its plan, or `misura serve`'s limits and key
/// during the run) in `word`'s sentence, anything else as it says itself.
pub(crate) fn said(e: &(dyn std::error::Error + 'static), word: fn(&Refusal) -> String) -> String {
    use misura_throughput::error::ThroughputError;
    if let Some(r) = e.downcast_ref::<Refusal>() {
        return word(r);
    }
    if let Some(ThroughputError::Refusal(r)) = e.downcast_ref::<ThroughputError>() {
        return word(r);
    }
    misura_cli::exit::one_line(e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use misura_rtt::plan::SessionPlanError;

    #[test]
    fn the_probes_and_peers_refusals_name_no_flag() {
        let plan = |error| ProbePlanError {
            period: "1ns".parse().unwrap(),
            error,
        };
        let errors = [
            LoadError::ProbePlan(plan(SessionPlanError::TimeoutNotPositive)),
            LoadError::ServerMissing {
                host: "h".into(),
                rr: true,
                why: "refused".into(),
            },
            LoadError::ReflectorMissing {
                reflector: "h".into(),
                why: ReflectorWhy::Plan(plan(SessionPlanError::NoProbes)),
            },
            LoadError::Plan(PlanError::CpuLoad(misura_run::cpuload::TooManyThreads {
                threads: 9,
                max: 8,
            })),
        ];
        for e in errors {
            assert!(!e.to_string().contains("--"), "{e}");
            assert!(std::error::Error::source(&e).is_none(), "{e}");
        }
    }

    #[test]
    fn a_refusal_of_a_flow_is_said_in_the_callers_words_anything_else_as_it_is() {
        use misura_throughput::error::ThroughputError;
        let word: fn(&Refusal) -> String = |r| format!("worded: {r}");
        let refused: ProbeError = ThroughputError::from(Refusal::ServerDuration {
            asked_ns: 2_000_000_000,
            limit_ns: 1_000_000_000,
        })
        .into();
        assert!(said(&*refused, word).starts_with("worded: duration 2.0 s is above"));
        let bare: ProbeError = Refusal::ConnectNeedsTcp.into();
        assert!(said(&*bare, word).starts_with("worded: "));
        let other: ProbeError = "the server closed the connection".into();
        assert_eq!(said(&*other, word), "the server closed the connection");
    }
}
