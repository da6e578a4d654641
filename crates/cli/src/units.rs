//! Parsing of durations, sizes, rates and shares as people write them, and
//! the typed flag values built on them: clap parses a flag once into one of
//! these (an error names the flag and how to write it, exit 2), and the
//! commands only ever see numbers. Each keeps the text the user wrote, which
//! is what results record as the configuration.

use crate::exit::{Class, Classed, Failure};
use misura_measure::period::{PeriodBounds, PeriodError};
use misura_measure::time::{Period, Span};

/// The leading number of `t` and the unit after it; `s` (what the user
/// wrote) and `what` ("a duration: write e.g. …") name a bad number.
fn number_and_unit<'a>(t: &'a str, s: &str, what: &str) -> Result<(f64, &'a str), Failure> {
    leading_number(t).ok_or_else(|| Failure::Usage(format!("`{s}` is not {what}")))
}

/// The leading number of `t` and the unit after it, if it starts with one.
fn leading_number(t: &str) -> Option<(f64, &str)> {
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    Some((num.parse().ok()?, unit))
}

/// "500us", "1.5ms", "30s", "5m", "24h", "100ns", "250µs" → nanoseconds.
/// A number needs its unit: `5` could be 5 s or 5 ms, and was once read as
/// 5 s while its writer meant a 5 ms period (issue 36). Zero alone is zero.
pub fn duration_ns(s: &str) -> Result<i64, Failure> {
    let t = s.trim();
    let (v, unit) = number_and_unit(t, s, "a duration: write e.g. 500us, 1ms, 30s, 5m or 24h")?;
    let scale = match unit.trim() {
        "" if v == 0.0 => 1.0,
        "" => {
            return Err(Failure::Usage(format!(
                "`{s}` has no time unit: write `{t}ms` for {t} milliseconds or `{t}s` for {t} seconds (units: ns, us, ms, s, m, h)"
            )))
        }
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "m" | "min" => 60e9,
        "h" => 3600e9,
        other => {
            return Err(Failure::Usage(format!(
                "`{s}`: unknown time unit `{other}` (use ns, us, ms, s, m or h)"
            )))
        }
    };
    let ns = v * scale;
    if !ns.is_finite() || !(0.0..=1e18).contains(&ns) {
        return Err(Failure::Usage(format!("`{s}` is out of range")));
    }
    Ok(ns.round() as i64)
}

/// Why a link rate as written cannot be used, with what was given: not
/// written as a rate (a usage error, exit 2) or out of range (exit 5).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RateError {
    #[error("`{given}` is not a link rate: write e.g. 100M, 1G, 10G")]
    NotARate { given: String },
    #[error("`{given}`: unknown rate unit `{unit}` (use k, M, G)")]
    UnknownUnit { given: String, unit: String },
    #[error("link rate `{given}` is outside 1 Mb/s … 1.6 Tb/s")]
    OutOfRange { given: String },
}

impl Classed for RateError {
    /// A usage error, or a parameter out of range.
    fn class(&self) -> Option<Class> {
        Some(match self {
            RateError::NotARate { .. } | RateError::UnknownUnit { .. } => Class::Usage,
            RateError::OutOfRange { .. } => Class::Params,
        })
    }
}

/// "100M", "1G", "10G", "2.5G", "100Mb/s", "1000000000" → bit/s.
pub fn rate_bps(s: &str) -> Result<u64, Failure> {
    Ok(link_rate(s)?)
}

/// A link rate as written → bit/s, 1 Mb/s to 1.6 Tb/s; its refusal typed.
pub fn link_rate(s: &str) -> Result<u64, RateError> {
    let t = s
        .trim()
        .trim_end_matches("b/s")
        .trim_end_matches("bps")
        .trim_end_matches("bit/s");
    let (v, unit) = leading_number(t).ok_or_else(|| RateError::NotARate { given: s.into() })?;
    let scale = match unit.trim() {
        "" => 1.0,
        "k" | "K" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        other => {
            return Err(RateError::UnknownUnit {
                given: s.into(),
                unit: other.into(),
            })
        }
    };
    let bps = v * scale;
    if !(1e6..=1.6e12).contains(&bps) {
        return Err(RateError::OutOfRange { given: s.into() });
    }
    Ok(bps.round() as u64)
}

/// "10%" or "0.1" → 0.1.
pub fn share(s: &str) -> Result<f64, Failure> {
    let t = s.trim();
    let v = if let Some(p) = t.strip_suffix('%') {
        p.trim().parse::<f64>().map(|x| x / 100.0)
    } else {
        t.parse::<f64>()
    }
    .map_err(|_| Failure::Usage(format!("`{s}` is not a load: write e.g. 10% or 0.1")))?;
    if !(v > 0.0 && v <= 1.0) {
        return Err(Failure::Params(format!(
            "load `{s}` must be above 0 and at most 100 % of the link capacity"
        )));
    }
    Ok(v)
}

/// "0x88B5", "88b5", "0x6006", "6006" → ethertype (hexadecimal).
pub fn ethertype(s: &str) -> Result<u16, Failure> {
    let t = s.trim();
    // Ethertypes are written in hexadecimal, with or without 0x ("6006" is
    // the paper's 0x6006).
    let h = t
        .strip_prefix("0x")
        .or_else(|| t.strip_prefix("0X"))
        .unwrap_or(t);
    let v = u16::from_str_radix(h, 16).ok();
    match v {
        Some(e) if e >= 0x0600 => Ok(e),
        _ => Err(Failure::Usage(format!(
            "`{s}` is not an ethertype: give a value ≥ 0x0600, e.g. 0x88B5 (default) or 0x6006"
        ))),
    }
}

/// A byte size: "1000", "64K", "1M" (powers of 1024), "1.5k".
pub fn bytes(s: &str) -> Result<u64, Failure> {
    let t = s.trim();
    let (v, unit) = number_and_unit(t, s, "a size in bytes: write e.g. 1400, 64K or 1M")?;
    let scale = match unit
        .trim()
        .trim_end_matches(['B', 'b'])
        .trim_end_matches('i')
    {
        "" => 1.0,
        "k" | "K" => 1024.0,
        "m" | "M" => 1024.0 * 1024.0,
        "g" | "G" => 1024.0 * 1024.0 * 1024.0,
        other => {
            return Err(Failure::Usage(format!(
                "`{s}`: unknown size unit `{other}` (use K, M or G)"
            )))
        }
    };
    let b = v * scale;
    if !(b.is_finite() && (0.0..1e15).contains(&b)) {
        return Err(Failure::Usage(format!("`{s}` is out of range")));
    }
    Ok(b.round() as u64)
}

/// Declares a flag value type: parsed by `$parse` from the text, which it keeps.
macro_rules! flag_value {
    ($(#[$doc:meta])* $name:ident, $field:ident: $t:ty, $parse:path) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq)]
        pub struct $name {
            pub $field: $t,
            text: String,
        }

        impl std::str::FromStr for $name {
            type Err = Failure;
            fn from_str(s: &str) -> Result<Self, Failure> {
                Ok($name {
                    $field: $parse(s)?,
                    text: s.trim().to_string(),
                })
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.text)
            }
        }
    };
}

flag_value!(
    /// A duration flag ("500us", "1.5ms", "30s"), in nanoseconds.
    DurationArg, ns: i64, duration_ns
);
flag_value!(
    /// A size flag ("1400", "64K", "1M"; powers of 1024), in bytes.
    ByteSize, bytes: u64, bytes
);
flag_value!(
    /// A link rate flag ("100M", "10G"), in bit/s, 1 Mb/s to 1.6 Tb/s.
    LinkRate, bps: u64, rate_bps
);
flag_value!(
    /// A share of the link ("10%", "0.1"), above 0 and at most 1.
    Load, share: f64, share
);
flag_value!(
    /// An ethertype flag in hexadecimal ("0x88B5", "6006"), at least 0x0600.
    Ethertype, value: u16, ethertype
);

impl DurationArg {
    /// The duration, refusing zero and anything under `min` with a
    /// message naming the flag.
    pub fn at_least(&self, flag: &str, min: Span) -> Result<Span, Failure> {
        self.period(flag, min).map(Period::span)
    }

    /// The duration as a [`Period`] of at least `min` (and at least
    /// 1 ns), through the one check, [`Period::within`]; refused with a
    /// message naming the flag (exit 5).
    pub fn period(&self, flag: &str, min: Span) -> Result<Period, Failure> {
        let bounds = PeriodBounds {
            min,
            max: Span::MAX,
        };
        Period::within(self.span(), bounds).map_err(|e| self.period_failure(flag, e))
    }

    /// A period's bound this duration missed, as the sentence naming
    /// `flag` (exit 5).
    pub fn period_failure(&self, flag: &str, e: PeriodError) -> Failure {
        let (what, bound) = match e {
            PeriodError::TooShort { min, .. } => ("short: it must be at least", min),
            PeriodError::TooLong { max, .. } => ("long: it must be at most", max),
        };
        Failure::Params(format!(
            "{flag} {self} is too {what} {}",
            misura_report::clock::human_ns(bound.as_ns() as f64)
        ))
    }

    /// A whole number of milliseconds, written as `{ms}ms` (what parsing
    /// that text gives).
    pub fn whole_ms(ms: i64) -> DurationArg {
        DurationArg {
            ns: ms.saturating_mul(1_000_000),
            text: format!("{ms}ms"),
        }
    }

    /// The duration as a [`Span`] (zero allowed).
    pub fn span(&self) -> Span {
        Span::from_ns(self.ns)
    }

    pub fn std(&self) -> std::time::Duration {
        std::time::Duration::from_nanos(self.ns.max(0) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(duration_ns("500us").unwrap(), 500_000);
        assert_eq!(duration_ns("1.5ms").unwrap(), 1_500_000);
        assert_eq!(duration_ns("24h").unwrap(), 86_400_000_000_000);
        assert_eq!(duration_ns("0").unwrap(), 0);
        let e = duration_ns("5").unwrap_err();
        assert!(matches!(e, Failure::Usage(_)));
        assert_eq!(
            e.to_string(),
            "`5` has no time unit: write `5ms` for 5 milliseconds or `5s` for 5 seconds (units: ns, us, ms, s, m, h)"
        );
        assert!(duration_ns("1.5").is_err());
        assert!(duration_ns("fast").is_err());
        assert!(duration_ns("3 weeks").is_err());
    }

    #[test]
    fn rates_shares_ethertypes() {
        assert_eq!(rate_bps("100M").unwrap(), 100_000_000);
        assert_eq!(rate_bps("2.5G").unwrap(), 2_500_000_000);
        assert_eq!(rate_bps("10Gb/s").unwrap(), 10_000_000_000);
        assert!(rate_bps("10").is_err());
        // The words and the class each refusal had as a `Failure`.
        for (given, words, class) in [
            (
                "fast",
                "`fast` is not a link rate: write e.g. 100M, 1G, 10G",
                Class::Usage,
            ),
            (
                "10X",
                "`10X`: unknown rate unit `X` (use k, M, G)",
                Class::Usage,
            ),
            (
                "1k",
                "link rate `1k` is outside 1 Mb/s … 1.6 Tb/s",
                Class::Params,
            ),
        ] {
            let e = link_rate(given).unwrap_err();
            assert_eq!((e.to_string().as_str(), e.class()), (words, Some(class)));
            let f = rate_bps(given).unwrap_err();
            assert_eq!((f.to_string().as_str(), f.class()), (words, class));
        }
        assert_eq!(share("10%").unwrap(), 0.1);
        assert_eq!(share("0.5").unwrap(), 0.5);
        assert!(share("150%").is_err());
        assert_eq!(ethertype("0x88B5").unwrap(), 0x88b5);
        assert_eq!(ethertype("6006").unwrap(), 0x6006);
        assert_eq!(ethertype("0x6006").unwrap(), 0x6006);
        assert!(ethertype("0x0800x").is_err());
    }

    #[test]
    fn sizes() {
        assert_eq!(bytes("1400").unwrap(), 1400);
        assert_eq!(bytes("64K").unwrap(), 65536);
        assert_eq!(bytes("1M").unwrap(), 1 << 20);
        assert_eq!(bytes("128KiB").unwrap(), 131072);
        assert!(bytes("lots").is_err());
    }

    #[test]
    fn flag_values_keep_their_text() {
        let d: DurationArg = "1.5ms".parse().unwrap();
        assert_eq!((d.ns, d.to_string()), (1_500_000, "1.5ms".to_string()));
        assert_eq!(d.at_least("--period", Span::from_ns(1)).unwrap(), d.span());
        assert_eq!(
            d.period("--period", Span::from_ns(1_000)).unwrap().as_ns(),
            1_500_000
        );
        assert_eq!(d.span(), Span::from_ns(1_500_000));
        let e = d
            .period("--period", Span::from_ns(2_000_000))
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "--period 1.5ms is too short: it must be at least 2.00 ms"
        );
        let z: DurationArg = "0s".parse().unwrap();
        assert!(matches!(
            z.at_least("--timeout", Span::ZERO),
            Err(Failure::Params(_))
        ));
        assert!(matches!(
            z.period("--period", Span::ZERO),
            Err(Failure::Params(_))
        ));
        let long = PeriodError::TooLong {
            period: d.span(),
            max: Span::from_ns(1_000_000),
        };
        assert_eq!(
            d.period_failure("--period", long).to_string(),
            "--period 1.5ms is too long: it must be at most 1.00 ms"
        );
        let ms: DurationArg = "250ms".parse().unwrap();
        assert_eq!(DurationArg::whole_ms(250), ms);
        let b: ByteSize = "64K".parse().unwrap();
        assert_eq!((b.bytes, b.to_string()), (65536, "64K".to_string()));
        assert!("fast".parse::<DurationArg>().is_err());
        let e: Ethertype = "6006".parse().unwrap();
        assert_eq!(e.value, 0x6006);
        assert_eq!("10G".parse::<LinkRate>().unwrap().bps, 10_000_000_000);
        assert_eq!("10%".parse::<Load>().unwrap().share, 0.1);
    }
}

impl DurationArg {
    /// "`flag` VALUE is too short", with the minimum as people write it
    /// (exit 5): a plan's refusal of this duration, in the flag's words.
    pub fn too_short(&self, flag: &str, min: Span) -> Failure {
        Failure::Params(format!(
            "{flag} {self} is too short: at least {}",
            misura_report::clock::human_ns(min.as_ns() as f64)
        ))
    }
}

#[cfg(test)]
mod minimum_tests {
    use super::*;

    #[test]
    fn a_minimum_names_the_flag_and_shows_the_limit() {
        let d: DurationArg = "500us".parse().unwrap();
        let e = d.too_short("--duration", Span::from_ns(1_000_000));
        assert!(matches!(e, Failure::Params(_)));
        assert_eq!(
            e.to_string(),
            "--duration 500us is too short: at least 1.00 ms"
        );
    }
}

/// `--listen ADDR[:PORT]` of `serve` and `reflect`, written as the agent's
/// `--listen ADDR:PORT`: `198.18.0.2`, `198.18.0.2:862`, `::`, `[::1]:862`,
/// or `:5999` (every address, that port). Their older `--port N` stays as a
/// hidden alias; a port given here wins over it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListenAddr {
    /// The address, `None` for `:PORT` (every address).
    pub ip: Option<std::net::IpAddr>,
    pub port: Option<u16>,
}

impl std::str::FromStr for ListenAddr {
    type Err = String;
    fn from_str(s: &str) -> Result<ListenAddr, String> {
        let t = s.trim();
        let bad = || {
            format!(
                "`{s}` is not ADDR or ADDR:PORT: write e.g. 0.0.0.0, 198.18.0.2:862, [::1]:862 \
                 or :5999"
            )
        };
        let port = |p: &str| p.parse::<u16>().ok().filter(|&p| p > 0).ok_or_else(bad);
        let ip = |a: &str| a.parse::<std::net::IpAddr>().map_err(|_| bad());
        if let Some(p) = t.strip_prefix(':').filter(|p| !p.contains(':')) {
            return Ok(ListenAddr {
                ip: None,
                port: Some(port(p)?),
            });
        }
        if let Some(rest) = t.strip_prefix('[') {
            let (a, after) = rest.split_once(']').ok_or_else(bad)?;
            let port = match after {
                "" => None,
                p => Some(port(p.strip_prefix(':').ok_or_else(bad)?)?),
            };
            return Ok(ListenAddr {
                ip: Some(ip(a)?),
                port,
            });
        }
        match t.matches(':').count() {
            1 => {
                let (a, p) = t.split_once(':').ok_or_else(bad)?;
                Ok(ListenAddr {
                    ip: Some(ip(a)?),
                    port: Some(port(p)?),
                })
            }
            _ => Ok(ListenAddr {
                ip: Some(ip(t)?),
                port: None,
            }),
        }
    }
}

#[cfg(test)]
mod listen_tests {
    use super::ListenAddr;

    #[test]
    fn listen_takes_an_address_with_or_without_its_port() {
        let l = |s: &str| s.parse::<ListenAddr>();
        let at = |ip: Option<&str>, port| ListenAddr {
            ip: ip.map(|i| i.parse().unwrap()),
            port,
        };
        assert_eq!(l("198.18.0.2"), Ok(at(Some("198.18.0.2"), None)));
        assert_eq!(l("198.18.0.2:862"), Ok(at(Some("198.18.0.2"), Some(862))));
        assert_eq!(l("::"), Ok(at(Some("::"), None)));
        assert_eq!(l("[::1]"), Ok(at(Some("::1"), None)));
        assert_eq!(l("[::1]:862"), Ok(at(Some("::1"), Some(862))));
        assert_eq!(l(":5999"), Ok(at(None, Some(5999))));
        for bad in ["localhost", "1.2.3.4:0", "1.2.3.4:70000", "[::1]862", ""] {
            let e = l(bad).unwrap_err();
            assert!(e.contains("is not ADDR or ADDR:PORT"), "{bad}: {e}");
        }
    }
}
