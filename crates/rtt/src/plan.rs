//! What a session is asked (`PlanInput`, plain values) checked once and
//! resolved into what it needs (`RttPlan`); a refusal is a typed
//! [`SessionPlanError`] that names no flag (the binary's `commands/rtt/args.rs`
//! words it with the flags that were given).

use misura_cli::warnings::Warn;
use misura_measure::auth::StampKey;
use misura_measure::period::PeriodBounds;
/// The plan's times and its period's refusal, for a caller that builds a
/// [`PlanInput`] without depending on `misura-measure`.
pub use misura_measure::period::PeriodError;
use misura_measure::schedule;
use misura_measure::stamp_sender::{
    LayoutError, RequestLayout, SenderConfig, WARMUP_PROBES, WARMUP_WAIT_NS,
};
use misura_measure::time::Period;
pub use misura_measure::time::Span;
use misura_measure::Pattern;
use misura_report::Warning;
use misura_wire::stamp::Mode;

/// The largest UDP payload over IPv4.
const MAX_UDP_PAYLOAD: usize = 65_507;
const DEFAULT_PERIOD: Period = Period::new(100_000_000).unwrap();
const DEFAULT_COUNT: u64 = 100;
/// The shortest summary interval.
pub const MIN_INTERVAL: Span = Span::from_millis(1);

/// How the probe period was asked for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pace {
    /// A period.
    Period(Span),
    /// Probes per second.
    Rate(f64),
    /// Neither: the default period.
    Default,
}

/// What a session is asked, before it is checked.
#[derive(Debug, Clone)]
pub struct PlanInput {
    pub key: Option<StampKey>,
    pub pattern: Pattern,
    pub pace: Pace,
    pub timeout: Span,
    pub threshold: Option<Span>,
    pub duration: Option<Span>,
    pub count: Option<u64>,
    pub interval: Option<Span>,
    /// Request sizes; none: the default for the mode.
    pub request: Vec<usize>,
    pub response: Option<usize>,
    /// Seed of the Poisson pattern.
    pub seed: u64,
}

/// Why a session cannot be planned, with what was asked.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SessionPlanError {
    /// The probe period, asked as a period or a rate, missed its bounds.
    #[error("the probe period: {error}")]
    Period { pace: Pace, error: PeriodError },
    #[error("a rate of {rate} probes per second: it must be positive")]
    RateNotPositive { rate: f64 },
    #[error("the reply timeout must be positive")]
    TimeoutNotPositive,
    #[error("at least 1 probe must be sent")]
    NoProbes,
    #[error("the summary interval: {error}")]
    Interval { error: PeriodError },
    #[error("a response of {response} bytes is smaller than the request ({request} bytes): STAMP reflectors answer with the request's full length")]
    ResponseSmaller { response: usize, request: usize },
    #[error("{error}")]
    Layout { error: LayoutError, mode: Mode },
    #[error("a UDP payload cannot exceed 65 507 bytes")]
    PayloadTooLarge,
}

impl Default for PlanInput {
    /// Nothing asked: the defaults (100 probes every 100 ms, 1 s timeout,
    /// the mode's request size, seed 1).
    fn default() -> PlanInput {
        PlanInput {
            key: None,
            pattern: Pattern::Periodic,
            pace: Pace::Default,
            timeout: Span::from_secs(1),
            threshold: None,
            duration: None,
            count: None,
            interval: None,
            request: Vec::new(),
            response: None,
            seed: 1,
        }
    }
}

pub struct RttPlan {
    pub key: Option<StampKey>,
    pub pattern: Pattern,
    pub period: Period,
    pub timeout: Span,
    pub threshold: Option<Span>,
    pub duration: Option<Span>,
    pub count: Option<u64>,
    pub interval: Option<Span>,
    /// Request sizes, after `--response` padding.
    pub sizes: Vec<usize>,
    pub layouts: Vec<RequestLayout>,
    pub seed: u64,
    /// What the request changed on the user's behalf.
    pub warnings: Vec<Warning>,
}

impl RttPlan {
    pub fn new(a: PlanInput) -> Result<RttPlan, SessionPlanError> {
        use SessionPlanError as E;
        let mode = if a.key.is_some() {
            Mode::Authenticated
        } else {
            Mode::Unauthenticated
        };
        let period = match a.pace {
            Pace::Period(p) => p,
            // An `as` cast saturates: a rate near 0 is a period too long.
            Pace::Rate(r) if r > 0.0 && r.is_finite() => Span::from_ns((1e9 / r).round() as i64),
            Pace::Rate(rate) => return Err(E::RateNotPositive { rate }),
            Pace::Default => DEFAULT_PERIOD.span(),
        };
        let period = Period::within(period, schedule::BOUNDS).map_err(|error| E::Period {
            pace: a.pace,
            error,
        })?;
        if !a.timeout.is_positive() {
            return Err(E::TimeoutNotPositive);
        }
        let count = match (a.count, a.duration) {
            (Some(0), _) => return Err(E::NoProbes),
            (Some(n), _) => Some(n),
            (None, Some(_)) => None,
            (None, None) => Some(DEFAULT_COUNT),
        };
        let bounds = PeriodBounds {
            min: MIN_INTERVAL,
            max: Span::MAX,
        };
        let interval = a
            .interval
            .map(|i| Period::within(i, bounds).map(|p| p.span()))
            .transpose()
            .map_err(|error| E::Interval { error })?;
        let (sizes, warnings) = request_sizes(&a.request, a.response, mode)?;
        let layouts = sizes
            .iter()
            .map(|&s| RequestLayout::new(s, mode).map_err(|error| E::Layout { error, mode }))
            .collect::<Result<Vec<_>, _>>()?;
        if sizes.iter().any(|&s| s > MAX_UDP_PAYLOAD) {
            return Err(E::PayloadTooLarge);
        }
        Ok(RttPlan {
            key: a.key,
            pattern: a.pattern,
            period,
            timeout: a.timeout,
            threshold: a.threshold,
            duration: a.duration,
            count,
            interval,
            sizes,
            layouts,
            seed: a.seed,
            warnings,
        })
    }

    /// The session: `ssid` for this run, and whether the socket reports
    /// kernel TX stamps (then probes wait for them).
    pub fn sender_config(&self, ssid: u16, tx_stamps: bool) -> SenderConfig {
        SenderConfig {
            key: self.key.clone(),
            ssid,
            layouts: self.layouts.clone(),
            pattern: self.pattern,
            period: self.period,
            seed: self.seed,
            count: self.count,
            duration: self.duration,
            timeout: self.timeout,
            warmup_probes: WARMUP_PROBES,
            // A path that is already loaded (a queue in the way) answers
            // later than 200 ms: the warm-up waits as long as a probe may.
            warmup_wait: Span::from_ns(WARMUP_WAIT_NS.max(self.timeout.as_ns())),
            expect_tx_stamp: tx_stamps,
        }
    }

    /// How long the run is planned to send, when it is bounded.
    pub fn planned_s(&self) -> Option<f64> {
        let planned = self
            .duration
            .map(Span::as_secs_f64)
            .into_iter()
            .chain(
                self.count
                    .map(|n| n as f64 * self.period.as_ns() as f64 / 1e9),
            )
            .fold(f64::INFINITY, f64::min);
        planned.is_finite().then_some(planned)
    }
}

/// The request sizes (default: room for Follow-Up Telemetry and Timestamp
/// Information), padded up to the response's.
fn request_sizes(
    request: &[usize],
    response: Option<usize>,
    mode: Mode,
) -> Result<(Vec<usize>, Vec<Warning>), SessionPlanError> {
    let mut warnings = Vec::new();
    let mut sizes: Vec<usize> = if request.is_empty() {
        vec![RequestLayout::default_size(mode)]
    } else {
        request.to_vec()
    };
    if let Some(resp) = response {
        for s in sizes.iter_mut() {
            if resp > *s {
                warnings.push(Warn::RequestPadded { from: *s, to: resp }.into());
                *s = resp;
            } else if resp < *s {
                return Err(SessionPlanError::ResponseSmaller {
                    response: resp,
                    request: *s,
                });
            }
        }
    }
    Ok((sizes, warnings))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asked() -> PlanInput {
        PlanInput::default()
    }

    fn refusal(f: impl FnOnce(&mut PlanInput)) -> SessionPlanError {
        let mut a = asked();
        f(&mut a);
        RttPlan::new(a).err().expect("refused")
    }

    #[test]
    fn the_defaults_plan_100_probes_every_100_ms() {
        let p = RttPlan::new(asked()).unwrap();
        assert_eq!((p.count, p.period.as_ns()), (Some(100), 100_000_000));
        assert_eq!(p.planned_s(), Some(10.0));
        assert_eq!(
            p.sizes,
            vec![RequestLayout::default_size(Mode::Unauthenticated)]
        );
    }

    #[test]
    fn each_refusal_is_typed_and_names_no_flag() {
        let cases = [
            refusal(|a| a.pace = Pace::Period(Span::ZERO)),
            refusal(|a| a.pace = Pace::Rate(0.0)),
            refusal(|a| a.pace = Pace::Rate(1e-6)),
            refusal(|a| a.timeout = Span::ZERO),
            refusal(|a| a.count = Some(0)),
            refusal(|a| a.interval = Some(Span::from_ns(10_000))),
            refusal(|a| (a.request, a.response) = (vec![100], Some(60))),
            refusal(|a| a.request = vec![10]),
            refusal(|a| a.request = vec![70_000]),
        ];
        assert!(matches!(
            cases[0],
            SessionPlanError::Period {
                pace: Pace::Period(Span::ZERO),
                ..
            }
        ));
        assert_eq!(cases[1], SessionPlanError::RateNotPositive { rate: 0.0 });
        assert!(matches!(
            cases[2],
            SessionPlanError::Period {
                error: PeriodError::TooLong { .. },
                ..
            }
        ));
        assert_eq!(cases[3], SessionPlanError::TimeoutNotPositive);
        assert_eq!(cases[4], SessionPlanError::NoProbes);
        assert!(matches!(cases[5], SessionPlanError::Interval { .. }));
        assert_eq!(
            cases[6],
            SessionPlanError::ResponseSmaller {
                response: 60,
                request: 100
            }
        );
        assert!(matches!(cases[7], SessionPlanError::Layout { .. }));
        assert_eq!(cases[8], SessionPlanError::PayloadTooLarge);
        for e in &cases {
            assert!(!e.to_string().contains("--"), "{e}");
        }
    }

    #[test]
    fn a_larger_response_pads_the_request_and_says_so() {
        let mut a = asked();
        (a.request, a.response) = (vec![44], Some(64));
        let p = RttPlan::new(a).unwrap();
        assert_eq!((p.sizes.clone(), p.warnings.len()), (vec![64], 1));
    }
}
