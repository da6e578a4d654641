//! The agent's configuration file (TOML): parsed strictly (unknown keys are
//! errors), then validated against what a measurement can do, each error
//! naming the line it comes from.

use crate::shared::units::DurationArg;
use serde::Deserialize;
use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use toml::Spanned;

/// Most concurrent measurements when the file does not say.
const DEFAULT_PARALLEL: usize = 2;

/// Most targets in one file (local or template).
pub const MAX_TARGETS: usize = 10_000;

/// `misura oneway` sends this many unmeasured frames first (its `--warmup` default).
const ONEWAY_WARMUP: u64 = 64;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    agent: Option<RawAgent>,
    #[serde(default)]
    target: Vec<RawTarget>,
    #[serde(default)]
    sink: Vec<super::sinks::RawSink>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAgent {
    parallel: Option<Spanned<i64>>,
    name: Option<Spanned<String>>,
    labels: Option<Spanned<BTreeMap<String, String>>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTarget {
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
    /// `duration_ns`.
    Throughput {
        test: &'static str,
        address: String,
        duration_ns: i64,
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
    pub interval_ns: i64,
    pub count: u64,
    pub period_ns: i64,
    pub timeout_ns: i64,
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
            TargetKind::Throughput { duration_ns, .. } => {
                return duration_ns.saturating_add(self.timeout_ns)
            }
        };
        (frames as i64)
            .saturating_mul(self.period_ns)
            .saturating_add(self.timeout_ns)
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
                duration_ns,
                rate,
            } => {
                let mut a = vec![
                    test.to_string(),
                    address.clone(),
                    "--duration".into(),
                    format!("{duration_ns}ns"),
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
            format!("{}ns", self.period_ns),
            "--timeout".into(),
            format!("{}ns", self.timeout_ns),
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

/// A validated configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    pub parallel: usize,
    /// `[agent] name`: labels every archived result (default: the host name).
    pub name: String,
    /// `[agent] labels`: matched by a fleet template's entries, and carried
    /// on remote-written series.
    pub labels: BTreeMap<String, String>,
    pub targets: Vec<Target>,
    pub sinks: Vec<super::sinks::Sink>,
}

/// A configuration error, already phrased for the user ("FILE:LINE: …").
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())]
        .bytes()
        .filter(|&b| b == b'\n')
        .count()
        + 1
}

/// Read and validate `path`; `need_targets` is false when a fleet template
/// brings them.
pub fn load_with(path: &Path, need_targets: bool) -> Result<Config, ConfigError> {
    let text = crate::shared::files::read_string_bounded(path, crate::shared::files::CONFIG_MAX)
        .map_err(|e| {
            ConfigError(format!(
                "{}: cannot read the configuration: {e}",
                path.display()
            ))
        })?;
    parse_local(&text, &path.display().to_string(), need_targets)
}

/// The text being parsed and where it came from, to name the line of an error.
pub(super) struct Origin<'a> {
    text: &'a str,
    name: &'a str,
}

impl Origin<'_> {
    pub(super) fn err(&self, span: std::ops::Range<usize>, msg: String) -> ConfigError {
        ConfigError(format!(
            "{}:{}: {msg}",
            self.name,
            line_of(self.text, span.start)
        ))
    }

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
                            .parse::<crate::shared::units::LinkRate>()
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
                    duration_ns,
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
            interval_ns,
            count,
            period_ns,
            timeout_ns,
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
        Ok(target)
    }
}

fn toml_of(text: &str, origin: &str) -> Result<RawFile, ConfigError> {
    toml::from_str(text).map_err(|e| {
        let line = e.span().map(|s| line_of(text, s.start));
        let msg = e.message().trim().to_string();
        match line {
            Some(l) => ConfigError(format!("{origin}:{l}: {msg}")),
            None => ConfigError(format!("{origin}: {msg}")),
        }
    })
}

/// The host's name, the agent's name when `[agent] name` is not given.
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| plain_name(s))
        .unwrap_or_else(|| "misura-agent".into())
}

fn plain_name(n: &str) -> bool {
    !n.is_empty()
        && n.len() <= 64
        && n.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.:".contains(c))
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
    fn targets(
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
        Ok(targets)
    }
}

/// Parse and validate a local configuration; `origin` names it in messages.
#[cfg(test)]
pub fn parse(text: &str, origin: &str) -> Result<Config, ConfigError> {
    parse_local(text, origin, true)
}

/// As [`parse`]; `need_targets` is false when a fleet template brings them.
pub fn parse_local(text: &str, origin: &str, need_targets: bool) -> Result<Config, ConfigError> {
    let raw = toml_of(text, origin)?;
    let o = Origin { text, name: origin };
    let (parallel, name, labels) = match raw.agent {
        None => (None, None, None),
        Some(a) => (a.parallel, a.name, a.labels),
    };
    let parallel = match parallel {
        None => DEFAULT_PARALLEL,
        Some(p) if (1..=64).contains(p.get_ref()) => *p.get_ref() as usize,
        Some(p) => {
            return Err(o.err(
                p.span(),
                format!(
                    "parallel = {} is impossible: use 1 to 64 concurrent measurements",
                    p.get_ref()
                ),
            ))
        }
    };
    let name = match name {
        None => host_name(),
        Some(n) if plain_name(n.get_ref()) => n.into_inner(),
        Some(n) => {
            return Err(o.err(
                n.span(),
                format!(
                    "agent name `{}`: use 1 to 64 letters, digits, `-`, `_`, `.` or `:`",
                    n.get_ref()
                ),
            ))
        }
    };
    let labels = match labels {
        None => BTreeMap::new(),
        Some(l) => {
            let bad = l.get_ref().len() > 16
                || l.get_ref().iter().any(|(k, v)| {
                    !plain_name(k)
                        || k.contains(':')
                        || k.contains('.')
                        || k.contains('-')
                        || v.len() > 128
                        || v.chars().any(char::is_control)
                });
            if bad {
                return Err(o.err(
                    l.span(),
                    "labels: at most 16, names of letters, digits and `_`, values up to 128 characters".into(),
                ));
            }
            l.into_inner()
        }
    };
    if raw.target.is_empty() && need_targets {
        return Err(ConfigError(format!(
            "{origin}: no [[target]]: add at least one, see examples/agent.toml"
        )));
    }
    let targets = o.targets(raw.target, &name, &labels)?;
    let mut sink_names = HashSet::new();
    let mut sinks = Vec::new();
    for s in raw.sink {
        let sink = o.sink(s)?;
        if !sink_names.insert(sink.name.clone()) {
            return Err(ConfigError(format!(
                "{origin}: sink name `{}` is used twice: give each [[sink]] its own name = \"…\"",
                sink.name
            )));
        }
        sinks.push(sink);
    }
    Ok(Config {
        parallel,
        name,
        labels,
        targets,
        sinks,
    })
}

/// A fleet template: `[[target]]` tables only (the agent's own settings and
/// sinks stay in its local file); returns the targets that select this
/// agent.
pub fn parse_template(
    text: &str,
    origin: &str,
    agent: &str,
    labels: &BTreeMap<String, String>,
) -> Result<Vec<Target>, ConfigError> {
    let raw = toml_of(text, origin)?;
    if raw.agent.is_some() || !raw.sink.is_empty() {
        return Err(ConfigError(format!(
            "{origin}: a fleet template holds [[target]] tables only: [agent] and [[sink]] belong in each agent's --config file"
        )));
    }
    let o = Origin { text, name: origin };
    o.targets(raw.target, agent, labels)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
[agent]
parallel = 3

[[target]]
name = "r2"
kind = "rtt"
address = "198.18.0.2:8620"
interval = "10s"
count = 20
period = "10ms"
timeout = "500ms"
sizes = [64, 512]

[[target]]
name = "pair"
kind = "oneway"
netns = "misura-tester"
tx = "p1"
rx = "p2"
interval = "1m"
"#;

    #[test]
    fn parses_both_kinds() {
        let c = parse(GOOD, "a.toml").unwrap();
        assert_eq!(c.parallel, 3);
        assert_eq!(c.targets.len(), 2);
        assert_eq!(
            c.targets[0].kind,
            TargetKind::Rtt {
                address: "198.18.0.2:8620".into()
            }
        );
        assert_eq!(c.targets[0].run_ns(), 20 * 10_000_000 + 500_000_000);
        let a = c.targets[0].child_args().join(" ");
        assert_eq!(a, "rtt 198.18.0.2:8620 --count 20 --period 10000000ns --timeout 500000000ns --request 64,512 --json --no-store -q");
        let a = c.targets[1].child_args().join(" ");
        assert!(
            a.starts_with("oneway --tx p1 --rx p2 --netns misura-tester --count 10"),
            "{a}"
        );
    }

    #[test]
    fn unknown_key_names_its_line() {
        let text = GOOD.replace("timeout = \"500ms\"", "timout = \"500ms\"");
        let e = parse(&text, "a.toml").unwrap_err().to_string();
        assert!(e.starts_with("a.toml:12:"), "{e}");
        assert!(e.contains("timout"), "{e}");
    }

    #[test]
    fn impossible_intervals_are_refused_with_their_line() {
        let e = parse(&GOOD.replace("\"10s\"", "\"0s\""), "a.toml")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("a.toml:9:") && e.contains("impossible"),
            "{e}"
        );
        let e = parse(&GOOD.replace("\"10s\"", "\"600ms\""), "a.toml")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("a.toml:9:") && e.contains("shorter than one measurement"),
            "{e}"
        );
    }

    #[test]
    fn other_mistakes() {
        for (from, to, want) in [
            ("kind = \"rtt\"", "kind = \"ping\"", "unknown kind"),
            ("name = \"pair\"", "name = \"r2\"", "used twice"),
            ("address = \"198.18.0.2:8620\"\n", "", "needs address"),
            ("parallel = 3", "parallel = 0", "parallel"),
            ("count = 20", "count = 0", "count"),
            ("interval = \"1m\"", "interval = \"soon\"", "not a duration"),
        ] {
            let e = parse(&GOOD.replace(from, to), "a.toml")
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "{from} -> {to}: {e}");
        }
        assert!(parse("", "a.toml")
            .unwrap_err()
            .to_string()
            .contains("no [[target]]"));
    }

    #[test]
    fn throughput_targets_and_their_class() {
        let text = r#"
[[target]]
name = "bulk"
kind = "tcp"
address = "198.18.0.2:5201"
interval = "1m"
duration = "10s"

[[target]]
name = "paced"
kind = "udp"
address = "198.18.0.2:5201"
interval = "1m"
rate = "100M"
background = true
"#;
        let c = parse(text, "a.toml").unwrap();
        assert!(c.targets[0].exclusive && !c.targets[1].exclusive);
        assert_eq!(
            c.targets[0].child_args().join(" "),
            "tcp 198.18.0.2:5201 --duration 10000000000ns --json --no-store -q"
        );
        assert!(c.targets[1].child_args().join(" ").contains("--rate 100M"));
        assert_eq!(c.targets[0].run_ns(), 15_000_000_000);
        for (from, to, want) in [
            ("rate = \"100M\"\n", "", "needs rate"),
            ("rate = \"100M\"", "rate = \"fast\"", "rate"),
            ("duration = \"10s\"", "duration = \"2h\"", "1 ms to 1 h"),
            (
                "duration = \"10s\"",
                "count = 5",
                "count, period and sizes belong",
            ),
        ] {
            let e = parse(&text.replace(from, to), "a.toml")
                .unwrap_err()
                .to_string();
            assert!(
                e.contains(want) && e.starts_with("a.toml:"),
                "{from} -> {to}: {e}"
            );
        }
        let e = parse(&GOOD.replace("count = 20", "duration = \"1s\""), "a.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("belong to kinds \"tcp\""), "{e}");
    }
}
