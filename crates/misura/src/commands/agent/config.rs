//! The agent's configuration file (TOML): parsed strictly (unknown keys are
//! errors), then validated against what a measurement can do, each error
//! naming the line it comes from.

use crate::shared::units::DurationArg;
use serde::Deserialize;
use std::collections::HashSet;
use std::path::Path;
use toml::Spanned;

/// Most concurrent measurements when the file does not say.
const DEFAULT_PARALLEL: usize = 2;

/// `misura oneway` sends this many unmeasured frames first (its `--warmup` default).
const ONEWAY_WARMUP: u64 = 64;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    agent: Option<RawAgent>,
    #[serde(default)]
    target: Vec<RawTarget>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAgent {
    parallel: Option<Spanned<i64>>,
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
    // both
    netns: Option<String>,
    count: Option<Spanned<i64>>,
    period: Option<Spanned<String>>,
    timeout: Option<Spanned<String>>,
    sizes: Option<Spanned<Vec<i64>>>,
}

/// What a target measures.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TargetKind {
    /// STAMP round trips to a reflector at `address` (HOST:PORT).
    Rtt { address: String },
    /// One-way latency between two local ports.
    Oneway { tx: String, rx: String },
}

impl TargetKind {
    pub fn label(&self) -> &'static str {
        match self {
            TargetKind::Rtt { .. } => "rtt",
            TargetKind::Oneway { .. } => "oneway",
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
}

impl Target {
    /// How long one measurement takes at most when all goes well: the
    /// schedule plus the wait for the last reply.
    pub fn run_ns(&self) -> i64 {
        let frames = match self.kind {
            TargetKind::Rtt { .. } => self.count,
            TargetKind::Oneway { .. } => self.count + ONEWAY_WARMUP,
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
    pub targets: Vec<Target>,
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

/// Read and validate `path`.
pub fn load(path: &Path) -> Result<Config, ConfigError> {
    let text = crate::shared::files::read_string_bounded(path, crate::shared::files::CONFIG_MAX)
        .map_err(|e| {
            ConfigError(format!(
                "{}: cannot read the configuration: {e}",
                path.display()
            ))
        })?;
    parse(&text, &path.display().to_string())
}

/// The text being parsed and where it came from, to name the line of an error.
struct Origin<'a> {
    text: &'a str,
    name: &'a str,
}

impl Origin<'_> {
    fn err(&self, span: std::ops::Range<usize>, msg: String) -> ConfigError {
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
            other => Err(self.err(
                t.kind.span(),
                format!("target `{name}`: unknown kind \"{other}\" (use \"rtt\" or \"oneway\")"),
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
            None => 100_000_000,
            Some(p) => self.duration(&name, "timeout", p)?,
        };
        let sizes = self.sizes(&name, &t.sizes)?;
        let target = Target {
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

/// Parse and validate `text`; `origin` names it in messages.
pub fn parse(text: &str, origin: &str) -> Result<Config, ConfigError> {
    let raw: RawFile = toml::from_str(text).map_err(|e| {
        let line = e.span().map(|s| line_of(text, s.start));
        let msg = e.message().trim().to_string();
        match line {
            Some(l) => ConfigError(format!("{origin}:{l}: {msg}")),
            None => ConfigError(format!("{origin}: {msg}")),
        }
    })?;
    let o = Origin { text, name: origin };
    let parallel = match raw.agent.and_then(|a| a.parallel) {
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
    if raw.target.is_empty() {
        return Err(ConfigError(format!(
            "{origin}: no [[target]]: add at least one, see examples/agent.toml"
        )));
    }
    let mut names = HashSet::new();
    let mut targets = Vec::new();
    for t in raw.target {
        let name = o.name(&t.name)?;
        if !names.insert(name.clone()) {
            return Err(o.err(
                t.name.span(),
                format!("target name `{name}` is used twice: names must be unique"),
            ));
        }
        targets.push(o.target(name, t)?);
    }
    Ok(Config { parallel, targets })
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
}
