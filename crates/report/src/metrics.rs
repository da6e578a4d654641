//! OpenMetrics text exposition (the format Prometheus scrapes), as a pure
//! writer over plain data: no sockets, no clocks.
//!
//! Format: OpenMetrics 1.0 text, <https://github.com/prometheus/OpenMetrics/blob/main/specification/OpenMetrics.md>.
//! A family is introduced by `# TYPE`, `# UNIT` (when the name ends in the
//! unit) and `# HELP`; counters expose `NAME_total`, histograms cumulative
//! `NAME_bucket{le=…}` ending at `+Inf`, then `NAME_count` and `NAME_sum`;
//! the exposition ends with `# EOF`.

use std::fmt::Write as _;
use std::io::{self, Write};

/// The content type of [`write_openmetrics`]' output.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// What a family measures and how its samples are named.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetricType {
    Counter,
    Gauge,
    Histogram,
}

impl MetricType {
    fn name(self) -> &'static str {
        match self {
            MetricType::Counter => "counter",
            MetricType::Gauge => "gauge",
            MetricType::Histogram => "histogram",
        }
    }
}

/// One sample's value; it must match the family's [`MetricType`].
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// Monotonic total (never negative, never decreasing while the process lives).
    Counter(f64),
    Gauge(f64),
    /// `buckets` are (upper bound, cumulative count) in increasing bound
    /// order, without `+Inf`: the writer adds it with `count`.
    Histogram {
        buckets: Vec<(f64, u64)>,
        count: u64,
        sum: f64,
    },
}

/// One labelled series of a family.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    pub labels: Vec<(String, String)>,
    pub value: Value,
}

/// A metric family: its name without `_total`, its type, unit, help text
/// and series.
#[derive(Clone, Debug, PartialEq)]
pub struct Family {
    pub name: String,
    pub kind: MetricType,
    /// E.g. "seconds"; written as `# UNIT` only when `name` ends with it,
    /// as OpenMetrics requires.
    pub unit: Option<String>,
    pub help: String,
    pub series: Vec<Series>,
}

impl Family {
    pub fn new(name: &str, kind: MetricType, unit: Option<&str>, help: &str) -> Family {
        Family {
            name: name.into(),
            kind,
            unit: unit.map(String::from),
            help: help.into(),
            series: Vec::new(),
        }
    }

    /// Add a series; labels are given as (name, value) pairs.
    pub fn push(&mut self, labels: &[(&str, &str)], value: Value) {
        let labels = labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        self.series.push(Series { labels, value });
    }
}

/// Why an exposition could not be written.
#[derive(Debug, thiserror::Error)]
pub enum MetricsError {
    #[error("`{0}` is not a valid metric or label name")]
    BadName(String),
    #[error("series of family `{family}` has a value that does not match its type {kind:?}")]
    TypeMismatch { family: String, kind: MetricType },
    #[error("histogram `{0}`: bucket bounds must increase and cumulative counts must not decrease or exceed the count")]
    BadHistogram(String),
    #[error(transparent)]
    Io(#[from] io::Error),
}

fn valid_name(s: &str, metric: bool) -> bool {
    let mut chars = s.chars();
    let first_ok = |c: char| c.is_ascii_alphabetic() || c == '_' || (metric && c == ':');
    match chars.next() {
        Some(c) if first_ok(c) => {}
        _ => return false,
    }
    chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || (metric && c == ':'))
}

/// OpenMetrics escapes `\`, `"` and newline in label values and help text.
fn escape(s: &str, out: &mut String) {
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
}

/// A number as OpenMetrics spells it.
pub fn format_number(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v == f64::INFINITY {
        "+Inf".into()
    } else if v == f64::NEG_INFINITY {
        "-Inf".into()
    } else if v == v.trunc() && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        // Shortest representation that round-trips.
        format!("{v:?}")
    }
}

fn labels(base: &[(String, String)], extra: Option<(&str, &str)>, out: &mut String) {
    if base.is_empty() && extra.is_none() {
        return;
    }
    out.push('{');
    let mut first = true;
    for (k, v) in base
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .chain(extra)
    {
        if !first {
            out.push(',');
        }
        first = false;
        out.push_str(k);
        out.push_str("=\"");
        escape(v, out);
        out.push('"');
    }
    out.push('}');
}

/// Write `families` as one OpenMetrics exposition, `# EOF` included.
/// Checks names, types and histogram shape first, so a bad family never
/// leaves half an exposition behind.
pub fn write_openmetrics(families: &[Family], out: &mut dyn Write) -> Result<(), MetricsError> {
    let mut text = String::new();
    for f in families {
        if !valid_name(&f.name, true) {
            return Err(MetricsError::BadName(f.name.clone()));
        }
        let _ = writeln!(text, "# TYPE {} {}", f.name, f.kind.name());
        if let Some(u) = &f.unit {
            if f.name.ends_with(&format!("_{u}")) {
                let _ = writeln!(text, "# UNIT {} {u}", f.name);
            }
        }
        text.push_str("# HELP ");
        text.push_str(&f.name);
        text.push(' ');
        escape(&f.help, &mut text);
        text.push('\n');
        for s in &f.series {
            for (k, _) in &s.labels {
                if !valid_name(k, false) || k == "le" {
                    return Err(MetricsError::BadName(k.clone()));
                }
            }
            match (&s.value, f.kind) {
                (Value::Counter(v), MetricType::Counter) => {
                    text.push_str(&f.name);
                    text.push_str("_total");
                    labels(&s.labels, None, &mut text);
                    let _ = writeln!(text, " {}", format_number(*v));
                }
                (Value::Gauge(v), MetricType::Gauge) => {
                    text.push_str(&f.name);
                    labels(&s.labels, None, &mut text);
                    let _ = writeln!(text, " {}", format_number(*v));
                }
                (
                    Value::Histogram {
                        buckets,
                        count,
                        sum,
                    },
                    MetricType::Histogram,
                ) => {
                    let mut prev: Option<(f64, u64)> = None;
                    for &(le, c) in buckets {
                        let ok = le.is_finite()
                            && c <= *count
                            && prev.is_none_or(|(pl, pc)| le > pl && c >= pc);
                        if !ok {
                            return Err(MetricsError::BadHistogram(f.name.clone()));
                        }
                        prev = Some((le, c));
                        text.push_str(&f.name);
                        text.push_str("_bucket");
                        labels(&s.labels, Some(("le", &format_number(le))), &mut text);
                        let _ = writeln!(text, " {c}");
                    }
                    text.push_str(&f.name);
                    text.push_str("_bucket");
                    labels(&s.labels, Some(("le", "+Inf")), &mut text);
                    let _ = writeln!(text, " {count}");
                    text.push_str(&f.name);
                    text.push_str("_count");
                    labels(&s.labels, None, &mut text);
                    let _ = writeln!(text, " {count}");
                    text.push_str(&f.name);
                    text.push_str("_sum");
                    labels(&s.labels, None, &mut text);
                    let _ = writeln!(text, " {}", format_number(*sum));
                }
                _ => {
                    return Err(MetricsError::TypeMismatch {
                        family: f.name.clone(),
                        kind: f.kind,
                    })
                }
            }
        }
    }
    text.push_str("# EOF\n");
    out.write_all(text.as_bytes())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(f: &[Family]) -> String {
        let mut v = Vec::new();
        write_openmetrics(f, &mut v).unwrap();
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn counter_gauge_histogram_snapshot() {
        let mut c = Family::new(
            "misura_probes_lost",
            MetricType::Counter,
            None,
            "Probes lost.",
        );
        c.push(&[("target", "r\"1\\\n")], Value::Counter(3.0));
        let mut g = Family::new(
            "misura_delay_variation_seconds",
            MetricType::Gauge,
            Some("seconds"),
            "Jitter.\nTwo lines",
        );
        g.push(&[("target", "a")], Value::Gauge(0.0000125));
        let mut h = Family::new(
            "misura_rtt_network_seconds",
            MetricType::Histogram,
            Some("seconds"),
            "RTT.",
        );
        h.push(
            &[("target", "a")],
            Value::Histogram {
                buckets: vec![(1e-5, 1), (0.1, 4)],
                count: 5,
                sum: 2.5,
            },
        );
        let text = render(&[c, g, h]);
        let expected = "\
# TYPE misura_probes_lost counter
# HELP misura_probes_lost Probes lost.
misura_probes_lost_total{target=\"r\\\"1\\\\\\n\"} 3
# TYPE misura_delay_variation_seconds gauge
# UNIT misura_delay_variation_seconds seconds
# HELP misura_delay_variation_seconds Jitter.\\nTwo lines
misura_delay_variation_seconds{target=\"a\"} 1.25e-5
# TYPE misura_rtt_network_seconds histogram
# UNIT misura_rtt_network_seconds seconds
# HELP misura_rtt_network_seconds RTT.
misura_rtt_network_seconds_bucket{target=\"a\",le=\"1e-5\"} 1
misura_rtt_network_seconds_bucket{target=\"a\",le=\"0.1\"} 4
misura_rtt_network_seconds_bucket{target=\"a\",le=\"+Inf\"} 5
misura_rtt_network_seconds_count{target=\"a\"} 5
misura_rtt_network_seconds_sum{target=\"a\"} 2.5
# EOF
";
        assert_eq!(text, expected);
    }

    #[test]
    fn empty_exposition_is_just_eof() {
        assert_eq!(render(&[]), "# EOF\n");
    }

    #[test]
    fn refuses_bad_names_types_and_histograms() {
        let mut out = Vec::new();
        let f = Family::new("9bad", MetricType::Gauge, None, "");
        assert!(matches!(
            write_openmetrics(&[f], &mut out),
            Err(MetricsError::BadName(_))
        ));
        let mut f = Family::new("ok", MetricType::Gauge, None, "");
        f.push(&[], Value::Counter(1.0));
        assert!(matches!(
            write_openmetrics(&[f], &mut out),
            Err(MetricsError::TypeMismatch { .. })
        ));
        let mut f = Family::new("h", MetricType::Histogram, None, "");
        f.push(
            &[],
            Value::Histogram {
                buckets: vec![(1.0, 3), (2.0, 2)],
                count: 3,
                sum: 0.0,
            },
        );
        assert!(matches!(
            write_openmetrics(&[f], &mut out),
            Err(MetricsError::BadHistogram(_))
        ));
        let mut f = Family::new("g", MetricType::Gauge, None, "");
        f.push(&[("le", "x")], Value::Gauge(1.0));
        assert!(matches!(
            write_openmetrics(&[f], &mut out),
            Err(MetricsError::BadName(_))
        ));
        assert!(out.is_empty(), "nothing written on error");
    }

    #[test]
    fn numbers() {
        assert_eq!(format_number(f64::INFINITY), "+Inf");
        assert_eq!(format_number(f64::NAN), "NaN");
        assert_eq!(format_number(1e9), "1000000000");
        assert_eq!(format_number(1.5), "1.5");
    }
}
