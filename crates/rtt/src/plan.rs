//! `misura rtt`'s flags checked and resolved into what the session needs.

use super::args::RttArgs;
use crate::error::Result;
use misura_cli::exit::Failure;
use misura_cli::warnings::Warn;
use misura_measure::auth::StampKey;
use misura_measure::period::PeriodError;
use misura_measure::schedule::{self, unkept};
use misura_measure::stamp_sender::{
    LayoutError, RequestLayout, SenderConfig, WARMUP_PROBES, WARMUP_WAIT_NS,
};
use misura_measure::time::{Period, Span};
use misura_measure::Pattern;
use misura_report::Warning;
use misura_wire::stamp::Mode;

/// The largest UDP payload over IPv4.
const MAX_UDP_PAYLOAD: usize = 65_507;
const DEFAULT_PERIOD: Period = Period::new(100_000_000).unwrap();
const DEFAULT_COUNT: u64 = 100;

pub struct RttPlan {
    pub key: Option<StampKey>,
    pub pattern: Pattern,
    pub period: Period,
    pub timeout_ns: i64,
    pub threshold_ns: Option<i64>,
    pub duration_ns: Option<i64>,
    pub count: Option<u64>,
    pub interval_ns: Option<i64>,
    /// Request sizes, after `--response` padding.
    pub sizes: Vec<usize>,
    pub layouts: Vec<RequestLayout>,
    /// What the flags changed on the user's behalf.
    pub warnings: Vec<Warning>,
}

impl RttArgs {
    /// The flags checked as a run checks them, without measuring: the
    /// agent refuses a target its child would refuse.
    pub fn check(&self) -> Result<(), crate::RttError> {
        RttPlan::from_args(self).map(drop)
    }
}

/// The period's bound missed, as the sentence naming the flag that set it
/// (--period or --rate; exit 5).
fn period_failure(a: &RttArgs, e: PeriodError) -> Failure {
    match (&a.period, e) {
        (Some(p), PeriodError::TooShort { .. }) => p.period_failure("--period", e),
        (Some(_), PeriodError::TooLong { period_ns, .. }) => Failure::Params(format!(
            "--period {:.0} s is longer than the longest allowed, 1 hour; for sparser probes, schedule runs with `misura agent`",
            period_ns as f64 / 1e9
        )),
        (None, PeriodError::TooShort { period_ns, .. }) => Failure::Params(format!(
            "--rate: {}: use --rate 1M or lower",
            unkept(period_ns)
        )),
        (None, PeriodError::TooLong { .. }) => Failure::Params(format!(
            "--rate {} probes/s is below the lowest allowed, one probe per hour (0.000278); for sparser probes, schedule runs with `misura agent`",
            a.rate.unwrap_or_default()
        )),
    }
}

impl RttPlan {
    pub fn from_args(a: &RttArgs) -> Result<RttPlan> {
        let key = misura_cli::keys::read_key(&a.key_file)?;
        let mode = if key.is_some() {
            Mode::Authenticated
        } else {
            Mode::Unauthenticated
        };
        let pattern = a.pattern;
        let period_ns = match (&a.period, a.rate) {
            (Some(p), _) => p.ns,
            // An `as` cast saturates: a rate near 0 is a period too long.
            (None, Some(r)) if r > 0.0 && r.is_finite() => (1e9 / r).round() as i64,
            (None, Some(r)) => {
                return Err(Failure::Params(format!("--rate {r} must be positive")).into())
            }
            (None, None) => DEFAULT_PERIOD.as_ns(),
        };
        let period =
            Period::within(period_ns, schedule::BOUNDS).map_err(|e| period_failure(a, e))?;
        let timeout_ns = a.timeout.ns;
        if timeout_ns <= 0 {
            return Err(Failure::Usage("--timeout must be positive".into()).into());
        }
        let threshold_ns = a.threshold.as_ref().map(|t| t.ns);
        let duration_ns = a.duration.as_ref().map(|d| d.ns);
        let count = match (a.count, duration_ns) {
            (Some(0), _) => return Err(Failure::Usage("--count must be at least 1".into()).into()),
            (Some(n), _) => Some(n),
            (None, Some(_)) => None,
            (None, None) => Some(DEFAULT_COUNT),
        };
        let interval_ns = a
            .interval
            .as_ref()
            .map(|i| i.at_least("--interval", 1_000_000))
            .transpose()?;
        let (sizes, warnings) = request_sizes(a, mode)?;
        let layouts = sizes
            .iter()
            .map(|&s| RequestLayout::new(s, mode).map_err(|e| layout_failure(e, mode)))
            .collect::<Result<Vec<_>, _>>()?;
        if sizes.iter().any(|&s| s > MAX_UDP_PAYLOAD) {
            return Err(Failure::Params("a UDP payload cannot exceed 65 507 bytes".into()).into());
        }
        Ok(RttPlan {
            key,
            pattern,
            period,
            timeout_ns,
            threshold_ns,
            duration_ns,
            count,
            interval_ns,
            sizes,
            layouts,
            warnings,
        })
    }

    /// The session: `ssid` for this run, and whether the socket reports
    /// kernel TX stamps (then probes wait for them).
    pub fn sender_config(&self, a: &RttArgs, ssid: u16, tx_stamps: bool) -> SenderConfig {
        SenderConfig {
            key: self.key.clone(),
            ssid,
            layouts: self.layouts.clone(),
            pattern: self.pattern,
            period: self.period,
            seed: a.seed,
            count: self.count,
            duration: self.duration_ns.map(Span::from_ns),
            timeout: Span::from_ns(self.timeout_ns),
            warmup_probes: WARMUP_PROBES,
            // A path that is already loaded (a queue in the way) answers
            // later than 200 ms: the warm-up waits as long as a probe may.
            warmup_wait: Span::from_ns(WARMUP_WAIT_NS.max(self.timeout_ns)),
            expect_tx_stamp: tx_stamps,
        }
    }

    /// How long the run is planned to send, when it is bounded.
    pub fn planned_s(&self) -> Option<f64> {
        let planned = self
            .duration_ns
            .map(|d| d as f64 / 1e9)
            .into_iter()
            .chain(
                self.count
                    .map(|n| n as f64 * self.period.as_ns() as f64 / 1e9),
            )
            .fold(f64::INFINITY, f64::min);
        planned.is_finite().then_some(planned)
    }
}

/// `--request` sizes (default: room for Follow-Up Telemetry and Timestamp
/// Information), padded up to `--response`.
fn request_sizes(a: &RttArgs, mode: Mode) -> Result<(Vec<usize>, Vec<Warning>)> {
    let mut warnings = Vec::new();
    let mut sizes: Vec<usize> = if a.request.is_empty() {
        vec![RequestLayout::default_size(mode)]
    } else {
        a.request.clone()
    };
    if let Some(resp) = a.response {
        for s in sizes.iter_mut() {
            if resp > *s {
                warnings.push(Warn::RequestPadded { from: *s, to: resp }.into());
                *s = resp;
            } else if resp < *s {
                return Err(Failure::Params(format!(
                    "--response {resp} is smaller than the request ({s} bytes): STAMP reflectors answer with the request's full length; use --request {resp}"
                ))
                .into());
            }
        }
    }
    Ok((sizes, warnings))
}

fn layout_failure(e: LayoutError, mode: Mode) -> Failure {
    match e {
        LayoutError::BelowMinimum { .. } => {
            let base = mode.base_len();
            Failure::Params(format!("{e}: use --request {base} or more"))
        }
        LayoutError::Unfillable { .. } => Failure::Params(e.to_string()),
    }
}
