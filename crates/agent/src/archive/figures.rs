//! The headline figures of a result, as the sinks store them beside the full
//! JSON: when it started (integer ns since the Unix epoch, parsed from the
//! result's `started_at`), probe counts, the main latency figure's median
//! and 99th percentile, and the throughput of throughput runs. Pure: reads
//! the JSON only.

use serde_json::Value;

/// One result's headline, every field taken from the result itself.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Figures {
    pub started_ns: u64,
    pub complete: bool,
    pub timestamp_source: String,
    pub sent: u64,
    pub received: u64,
    pub lost: u64,
    /// Which latency `median_ns`/`p99_ns` are of ("network_rtt", "mul", …).
    pub figure: String,
    pub median_ns: Option<i64>,
    pub p99_ns: Option<i64>,
    pub throughput_bps: Option<f64>,
    pub transactions_per_s: Option<f64>,
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
/// `days_from_civil`).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `2026-11-24T14:32:55.985660Z` (UTC, as every misura result writes it)
/// in ns since the epoch; `None` for anything else.
pub fn rfc3339_utc_ns(s: &str) -> Option<u64> {
    let b = s.as_bytes();
    if b.len() < 20
        || b[4] != b'-'
        || b[7] != b'-'
        || b[10] != b'T'
        || b[13] != b':'
        || b[16] != b':'
        || !s.ends_with('Z')
    {
        return None;
    }
    let num = |r: std::ops::Range<usize>| s.get(r)?.parse::<i64>().ok();
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    let frac = &s[19..s.len() - 1];
    let frac_ns = match frac.strip_prefix('.') {
        None if frac.is_empty() => 0,
        Some(f) if !f.is_empty() && f.len() <= 9 && f.bytes().all(|c| c.is_ascii_digit()) => {
            f.parse::<i64>().ok()? * 10i64.pow(9 - f.len() as u32)
        }
        _ => return None,
    };
    let secs = days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + sec;
    u64::try_from(secs.checked_mul(1_000_000_000)?.checked_add(frac_ns)?).ok()
}

fn u(v: &Value, p: &str) -> Option<u64> {
    v.pointer(p).and_then(Value::as_u64)
}

/// The headline of `result` (any misura result; absent figures stay `None`).
pub fn of(result: &Value) -> Figures {
    let mut f = Figures {
        started_ns: result
            .get("started_at")
            .and_then(Value::as_str)
            .and_then(rfc3339_utc_ns)
            .unwrap_or(0),
        complete: result
            .get("complete")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        timestamp_source: result
            .pointer("/timestamps/client_rx")
            .or_else(|| result.pointer("/timestamps/sources_used/0"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        sent: u(result, "/totals/sent").unwrap_or(0),
        received: u(result, "/totals/received").unwrap_or(0),
        lost: u(result, "/totals/lost").unwrap_or(0),
        throughput_bps: result.get("throughput_bps").and_then(Value::as_f64),
        transactions_per_s: result.get("transactions_per_s").and_then(Value::as_f64),
        ..Default::default()
    };
    for figure in ["network_rtt", "mul", "kernel", "user_rtt"] {
        if let Some(m) = result.pointer(&format!("/overall/{figure}")) {
            if let Some(med) = m.get("median_ns").and_then(Value::as_i64) {
                f.figure = figure.into();
                f.median_ns = Some(med);
                f.p99_ns = m.get("p99_ns").and_then(Value::as_i64);
                break;
            }
        }
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn started_at_in_ns() {
        assert_eq!(rfc3339_utc_ns("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(
            rfc3339_utc_ns("2026-11-24T14:32:55.985660Z"),
            Some(1_795_530_775_985_660_000)
        );
        assert_eq!(
            rfc3339_utc_ns("2000-02-29T23:59:59.123456789Z"),
            Some(951_868_799_123_456_789)
        );
        for bad in [
            "2026-11-24 14:32:55Z",
            "2026-13-01T00:00:00Z",
            "2026-11-24T14:32:55+01:00",
            "",
            "2026-11-24T14:32:55.Z",
        ] {
            assert_eq!(rfc3339_utc_ns(bad), None, "{bad}");
        }
    }

    #[test]
    fn headline_of_an_rtt_result() {
        let v = serde_json::json!({
            "started_at": "2026-11-24T14:32:55Z", "complete": true,
            "timestamps": {"client_rx": "kernel software"},
            "totals": {"sent": 20, "received": 19, "lost": 1},
            "overall": {"network_rtt": {"median_ns": 1500, "p99_ns": 9000}}
        });
        let f = of(&v);
        assert_eq!((f.sent, f.received, f.lost), (20, 19, 1));
        assert_eq!(
            (f.figure.as_str(), f.median_ns, f.p99_ns),
            ("network_rtt", Some(1500), Some(9000))
        );
        assert_eq!(f.timestamp_source, "kernel software");
        assert_eq!(f.started_ns, 1_795_530_775_000_000_000);
        let t = of(&serde_json::json!({"throughput_bps": 9.4e9}));
        assert_eq!((t.throughput_bps, t.median_ns), (Some(9.4e9), None));
    }
}
