//! The `[[target]]` tables of a configuration or fleet template: what
//! each target measures, checked against what one measurement can do, and
//! which agents a template's targets select.

use super::origin::{ConfigError, Origin};
use misura_cli::units::DurationArg;
use misura_measure::time::Span;
use serde::Deserialize;
use std::collections::{BTreeMap, HashSet};
use toml::Spanned;

/// Most targets in one file (local or template; a template's targets
/// may select different agents).
pub const MAX_TARGETS: usize = 10_000;

/// Most targets one agent runs (its local file's and the template's that
/// select it): the largest fleet an agent supports. Every target adds
/// about 7 KB of histograms to each /metrics scrape (72.8 MB for 10 000
/// targets, 0.5 s to render); at 500 a scrape stays at about 3.6 MB.
pub const MAX_AGENT_TARGETS: usize = 500;

/// The refusal of more than [`MAX_AGENT_TARGETS`] for one agent.
pub fn too_many_for_one_agent(origin: &str, n: usize) -> Option<ConfigError> {
    (n > MAX_AGENT_TARGETS).then(|| {
        ConfigError(format!(
            "{origin}: {n} targets for this agent: at most {MAX_AGENT_TARGETS} per agent (each adds about 7 KB to every /metrics scrape); spread them over more agents"
        ))
    })
}

/// `misura oneway` sends this many unmeasured frames first (its `--warmup` default).
const ONEWAY_WARMUP: u64 = 64;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTarget {
    name: Spanned<String>,
    kind: Spanned<String>,
    interval: Spanned<String>,
    // rtt
    address: Option<Spanned<String>>,
    // oneway
    tx: Option<String>,
    rx: Option<String>,
    // tcp, udp, rr
    duration: Option<Spanned<String>>,
    background: Option<bool>,
    rate: Option<Spanned<String>>,
    // all
    netns: Option<String>,
    count: Option<Spanned<i64>>,
    period: Option<Spanned<String>>,
    timeout: Option<Spanned<String>>,
    sizes: Option<Spanned<Vec<i64>>>,
    // which agents run it (fleet templates; none: every agent)
    agents: Option<Vec<String>>,
    labels: Option<BTreeMap<String, String>>,
}

/// What a target measures.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TargetKind {
    /// STAMP round trips to a reflector at `address` (HOST:PORT).
    Rtt { address: String },
    /// One-way latency between two local ports.
    Oneway { tx: String, rx: String },
    /// `misura tcp|udp|rr` against `misura serve` at `address` for
    /// `duration`.
    Throughput {
        test: &'static str,
        address: String,
        duration: Span,
        /// `udp`'s sending rate ("100M"), checked.
        rate: Option<String>,
    },
}

impl TargetKind {
    pub fn label(&self) -> &'static str {
        match self {
            TargetKind::Rtt { .. } => "rtt",
            TargetKind::Oneway { .. } => "oneway",
            TargetKind::Throughput { test, .. } => test,
        }
    }
}

/// One validated target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    pub name: String,
    pub kind: TargetKind,
    pub netns: Option<String>,
    pub interval: Span,
    pub count: u64,
    pub period: Span,
    pub timeout: Span,
    pub sizes: Vec<usize>,
    /// Nothing else runs beside it (throughput targets unless
    /// `background = true`); latency targets run together.
    pub exclusive: bool,
}

impl Target {
    /// How long one measurement takes at most when all goes well: the
    /// schedule plus the wait for the last reply.
    pub fn run_ns(&self) -> i64 {
        let frames = match self.kind {
            TargetKind::Rtt { .. } => self.count,
            TargetKind::Oneway { .. } => self.count + ONEWAY_WARMUP,
            // The test, then the time the server needs to report.
            TargetKind::Throughput { duration, .. } => {
                return duration.as_ns().saturating_add(self.timeout.as_ns())
            }
        };
        (frames as i64)
            .saturating_mul(self.period.as_ns())
            .saturating_add(self.timeout.as_ns())
    }

    /// The arguments of the `misura` child that measures this target once.
    pub fn child_args(&self) -> Vec<String> {
        let mut a: Vec<String> = match &self.kind {
            TargetKind::Rtt { address } => vec!["rtt".into(), address.clone()],
            TargetKind::Oneway { tx, rx } => vec![
                "oneway".into(),
                "--tx".into(),
                tx.clone(),
                "--rx".into(),
                rx.clone(),
            ],
            TargetKind::Throughput {
                test,
                address,
                duration,
                rate,
            } => {
                let mut a = vec![
                    test.to_string(),
                    address.clone(),
                    "--duration".into(),
                    format!("{}ns", duration.as_ns()),
                ];
                if let Some(r) = rate {
                    a.extend(["--rate".into(), r.clone()]);
                }
                if let Some(ns) = &self.netns {
                    a.extend(["--netns".into(), ns.clone()]);
                }
                a.extend(["--json".into(), "--no-store".into(), "-q".into()]);
                return a;
            }
        };
        if let Some(ns) = &self.netns {
            a.extend(["--netns".into(), ns.clone()]);
        }
        a.extend([
            "--count".into(),
            self.count.to_string(),
            "--period".into(),
            format!("{}ns", self.period.as_ns()),
            "--timeout".into(),
            format!("{}ns", self.timeout.as_ns()),
        ]);
        if !self.sizes.is_empty() {
            let list = self
                .sizes
                .iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>()
                .join(",");
            a.extend([
                if matches!(self.kind, TargetKind::Rtt { .. }) {
                    "--request"
                } else {
                    "--sizes"
                }
                .into(),
                list,
            ]);
        }
        a.extend(["--json".into(), "--no-store".into(), "-q".into()]);
        a
    }
}

impl Origin<'_> {
    /// A target's name: it labels the metric series, so it is kept short
    /// and plain.
    fn name(&self, name: &Spanned<String>) -> Result<String, ConfigError> {
        let n = name.get_ref();
        let ok = !n.is_empty()
            && n.len() <= 64
            && n.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.:".contains(c));
        if !ok {
            return Err(self.err(
                name.span(),
                format!("target name `{n}`: use 1 to 64 letters, digits, `-`, `_`, `.` or `:`"),
            ));
        }
        Ok(n.clone())
    }

    /// What the target measures, with the keys its kind needs and no others.
    fn kind(&self, name: &str, t: &mut RawTarget) -> Result<TargetKind, ConfigError> {
        match t.kind.get_ref().as_str() {
            "rtt" => {
                let Some(a) = t.address.take() else {
                    return Err(self.err(
                        t.kind.span(),
                        format!("target `{name}`: kind \"rtt\" needs address = \"HOST:PORT\""),
                    ));
                };
                if t.tx.is_some() || t.rx.is_some() {
                    return Err(self.err(
                        a.span(),
                        format!("target `{name}`: tx/rx belong to kind \"oneway\", not \"rtt\""),
                    ));
                }
                Ok(TargetKind::Rtt {
                    address: a.into_inner(),
                })
            }
            "oneway" => {
                if let Some(a) = &t.address {
                    return Err(self.err(
                        a.span(),
                        format!("target `{name}`: address belongs to kind \"rtt\", not \"oneway\""),
                    ));
                }
                match (t.tx.take(), t.rx.take()) {
                    (Some(tx), Some(rx)) => Ok(TargetKind::Oneway { tx, rx }),
                    _ => Err(self.err(t.kind.span(), format!("target `{name}`: kind \"oneway\" needs tx = \"PORT\" and rx = \"PORT\""))),
                }
            }
            test @ ("tcp" | "udp" | "rr") => {
                let test: &'static str = match test {
                    "tcp" => "tcp",
                    "udp" => "udp",
                    _ => "rr",
                };
                let Some(a) = t.address.take() else {
                    return Err(self.err(
                        t.kind.span(),
                        format!("target `{name}`: kind \"{test}\" needs address = \"HOST:PORT\" of a `misura serve`"),
                    ));
                };
                let duration_ns = match &t.duration {
                    None => 5_000_000_000,
                    Some(d) => {
                        let v = self.duration(name, "duration", d)?;
                        if !(1_000_000..=3_600_000_000_000).contains(&v) {
                            return Err(self.err(d.span(), format!("target `{name}`: duration must be 1 ms to 1 h")));
                        }
                        v
                    }
                };
                let rate = match (test, t.rate.take()) {
                    ("udp", None) => {
                        return Err(self.err(
                            t.kind.span(),
                            format!("target `{name}`: kind \"udp\" needs rate = \"RATE\" (e.g. \"100M\" bit/s)"),
                        ))
                    }
                    ("udp", Some(r)) => {
                        r.get_ref()
                            .parse::<misura_cli::units::LinkRate>()
                            .map_err(|e| self.err(r.span(), format!("target `{name}`: rate: {e}")))?;
                        Some(r.into_inner())
                    }
                    (_, Some(r)) => {
                        return Err(self.err(
                            r.span(),
                            format!("target `{name}`: rate belongs to kind \"udp\""),
                        ))
                    }
                    (_, None) => None,
                };
                Ok(TargetKind::Throughput {
                    test,
                    address: a.into_inner(),
                    duration: Span::from_ns(duration_ns),
                    rate,
                })
            }
            other => Err(self.err(
                t.kind.span(),
                format!("target `{name}`: unknown kind \"{other}\" (use \"rtt\", \"oneway\", \"tcp\", \"udp\" or \"rr\")"),
            )),
        }
    }

    /// A duration written as the flags take it ("10s", "500ms"), in ns.
    fn duration(&self, name: &str, what: &str, s: &Spanned<String>) -> Result<i64, ConfigError> {
        s.get_ref()
            .parse::<DurationArg>()
            .map(|d| d.ns)
            .map_err(|e| self.err(s.span(), format!("target `{name}`: {what}: {e}")))
    }

    /// A positive duration; `None` when the key is absent.
    fn period(&self, name: &str, p: &Option<Spanned<String>>) -> Result<Option<i64>, ConfigError> {
        let Some(p) = p else { return Ok(None) };
        let v = self.duration(name, "period", p)?;
        if v <= 0 {
            return Err(self.err(
                p.span(),
                format!("target `{name}`: period must be positive"),
            ));
        }
        Ok(Some(v))
    }

    fn count(&self, name: &str, c: &Option<Spanned<i64>>) -> Result<u64, ConfigError> {
        match c {
            None => Ok(10),
            Some(c) if (1..=10_000_000).contains(c.get_ref()) => Ok(*c.get_ref() as u64),
            Some(c) => Err(self.err(
                c.span(),
                format!(
                    "target `{name}`: count = {} is impossible: use 1 to 10000000",
                    c.get_ref()
                ),
            )),
        }
    }

    fn sizes(&self, name: &str, s: &Option<Spanned<Vec<i64>>>) -> Result<Vec<usize>, ConfigError> {
        let Some(s) = s else { return Ok(Vec::new()) };
        if s.get_ref().iter().any(|&v| !(1..=65_535).contains(&v)) {
            return Err(self.err(
                s.span(),
                format!("target `{name}`: sizes must be 1 to 65535 bytes"),
            ));
        }
        Ok(s.get_ref().iter().map(|&v| v as usize).collect())
    }

    /// One target, checked: its kind, durations, count and sizes, and that
    /// one measurement fits in its interval.
    fn target(&self, name: String, mut t: RawTarget) -> Result<Target, ConfigError> {
        let kind = self.kind(&name, &mut t)?;
        let interval_ns = self.duration(&name, "interval", &t.interval)?;
        if interval_ns <= 0 {
            return Err(self.err(t.interval.span(), format!("target `{name}`: interval \"{}\" is impossible: it must be longer than one measurement", t.interval.get_ref())));
        }
        let count = self.count(&name, &t.count)?;
        let period_ns = self.period(&name, &t.period)?.unwrap_or(10_000_000);
        let timeout_ns = match &t.timeout {
            // The defaults of `misura rtt` and `misura oneway`.
            None if matches!(kind, TargetKind::Rtt { .. }) => 1_000_000_000,
            // Room for the server's report after the test.
            None if matches!(kind, TargetKind::Throughput { .. }) => 5_000_000_000,
            None => 100_000_000,
            Some(p) => self.duration(&name, "timeout", p)?,
        };
        let sizes = self.sizes(&name, &t.sizes)?;
        let throughput = matches!(kind, TargetKind::Throughput { .. });
        if !throughput && (t.duration.is_some() || t.background.is_some() || t.rate.is_some()) {
            return Err(self.err(
                t.kind.span(),
                format!("target `{name}`: duration, background and rate belong to kinds \"tcp\", \"udp\" and \"rr\""),
            ));
        }
        if throughput && (t.count.is_some() || t.period.is_some() || t.sizes.is_some()) {
            return Err(self.err(
                t.kind.span(),
                format!("target `{name}`: count, period and sizes belong to kinds \"rtt\" and \"oneway\"; a throughput test takes duration"),
            ));
        }
        let target = Target {
            exclusive: throughput && !t.background.unwrap_or(false),
            name,
            kind,
            netns: t.netns,
            interval: Span::from_ns(interval_ns),
            count,
            period: Span::from_ns(period_ns),
            timeout: Span::from_ns(timeout_ns),
            sizes,
        };
        if target.run_ns() > interval_ns {
            return Err(self.err(
                t.interval.span(),
                format!(
                    "target `{}`: interval \"{}\" is shorter than one measurement ({count} probes × {} ms period + {} ms timeout = {:.3} s): lengthen the interval or send fewer probes",
                    target.name,
                    t.interval.get_ref(),
                    period_ns as f64 / 1e6,
                    timeout_ns as f64 / 1e6,
                    target.run_ns() as f64 / 1e9
                ),
            ));
        }
        if let Err(e) = as_its_command(&target) {
            return Err(self.err(
                t.kind.span(),
                format!(
                    "target `{}`: `misura {}` would refuse it: {e}",
                    target.name,
                    target.kind.label()
                ),
            ));
        }
        Ok(target)
    }
}

/// The target as its command takes it: an rtt target's count, period,
/// timeout and sizes through `misura rtt`'s own plan (the session's
/// checks, in this file's keys), and every other schedule's period and
/// timeout within what a schedule keeps; so a target its child would
/// refuse is refused when the file is read, not by a failing child every
/// interval.
fn as_its_command(t: &Target) -> Result<(), String> {
    if let TargetKind::Rtt { .. } = t.kind {
        return rtt_plan(t);
    }
    if !matches!(t.kind, TargetKind::Throughput { .. }) {
        misura_measure::schedule::check_period(t.period)?;
        if t.timeout.as_ns() <= 0 {
            return Err("timeout must be positive".into());
        }
    }
    Ok(())
}

/// An rtt target's fields as its child's plan (`misura rtt`'s defaults
/// for the rest), checked; a refusal in the keys that set it.
fn rtt_plan(t: &Target) -> Result<(), String> {
    use misura_rtt::plan::{Pace, PeriodError, PlanInput, RttPlan, SessionPlanError as E};
    let input = PlanInput {
        pace: Pace::Period(t.period),
        count: Some(t.count),
        timeout: t.timeout,
        request: t.sizes.clone(),
        ..PlanInput::default()
    };
    let human = |s: Span| misura_report::clock::human_ns(s.as_ns() as f64);
    RttPlan::new(input).map(drop).map_err(|e| match e {
        E::Period {
            error: PeriodError::TooShort { period, min },
            ..
        } => format!(
            "period {}ns is too short: it must be at least {}",
            period.as_ns(),
            human(min)
        ),
        E::Period {
            error: PeriodError::TooLong { period, .. },
            ..
        } => format!(
            "period {:.0} s is longer than the longest allowed, 1 hour",
            period.as_ns() as f64 / 1e9
        ),
        E::TimeoutNotPositive => "timeout must be positive".into(),
        E::NoProbes => "count must be at least 1".into(),
        E::Layout {
            error: error @ misura_measure::stamp_sender::LayoutError::BelowMinimum { .. },
            mode,
        } => format!("sizes: {error}: use sizes of {} or more", mode.base_len()),
        E::Layout { error, .. } => format!("sizes: {error}"),
        E::PayloadTooLarge => format!("sizes: {e}"),
        e => e.to_string(),
    })
}

/// Whether a target's selectors (`agents`, `labels`) pick this agent: no
/// selector picks every agent; `agents` lists names; every `labels` pair
/// must be the agent's.
fn selected(t: &RawTarget, name: &str, labels: &BTreeMap<String, String>) -> bool {
    let by_name = t
        .agents
        .as_ref()
        .is_none_or(|a| a.iter().any(|n| n == name));
    let by_labels = t
        .labels
        .as_ref()
        .is_none_or(|want| want.iter().all(|(k, v)| labels.get(k) == Some(v)));
    by_name && by_labels
}

impl Origin<'_> {
    /// The targets of a file that select this agent, checked; names unique
    /// within the file.
    pub(super) fn targets(
        &self,
        raw: Vec<RawTarget>,
        agent: &str,
        labels: &BTreeMap<String, String>,
    ) -> Result<Vec<Target>, ConfigError> {
        if raw.len() > MAX_TARGETS {
            return Err(ConfigError(format!(
                "{}: {} targets: at most {MAX_TARGETS} per file",
                self.name,
                raw.len()
            )));
        }
        let mut names = HashSet::new();
        let mut targets = Vec::new();
        for t in raw {
            let name = self.name(&t.name)?;
            if !names.insert(name.clone()) {
                return Err(self.err(
                    t.name.span(),
                    format!("target name `{name}` is used twice: names must be unique"),
                ));
            }
            let pick = selected(&t, agent, labels);
            // Checked even when not picked: a template is refused whole.
            let target = self.target(name, t)?;
            if pick {
                targets.push(target);
            }
        }
        if let Some(e) = too_many_for_one_agent(self.name, targets.len()) {
            return Err(e);
        }
        Ok(targets)
    }
}
