//! Run metadata every result carries: format name and version, the tool, when
//! it started (RFC 3339 UTC) and the command line.

use misura_report::{Meta, FORMAT_VERSION};

pub fn now_rfc3339() -> String {
    let ns = misura_sys::clock::realtime_ns();
    rfc3339(ns)
}

/// RFC 3339 UTC from Unix nanoseconds (civil-from-days, Howard Hinnant).
pub fn rfc3339(ns: i64) -> String {
    let secs = ns.div_euclid(1_000_000_000);
    let frac = ns.rem_euclid(1_000_000_000) / 1000;
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{frac:06}Z",
        sod / 3600,
        sod % 3600 / 60,
        sod % 60
    )
}

pub fn meta(format: &str, started_at: String) -> Meta {
    Meta {
        format: format.to_string(),
        format_version: FORMAT_VERSION,
        tool: "misura".into(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        started_at,
        // args_os: a path argument need not be UTF-8 (issue 13, finding 6).
        command: std::env::args_os()
            .map(|a| a.to_string_lossy().into_owned())
            .collect(),
    }
}
