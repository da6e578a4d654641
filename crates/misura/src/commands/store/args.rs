//! Flags of `misura history`, `show` and `compare`.

use clap::Args;

/// Flags of `misura history`.
#[derive(Args, Debug, Clone)]
pub struct HistoryArgs {
    /// Only runs of this subcommand (oneway, calibrate, rtt, exchange, …).
    #[arg(long)]
    pub subcommand: Option<String>,
    /// Only runs whose target contains this text.
    #[arg(long)]
    pub target: Option<String>,
    /// Only runs started at or after this time (RFC 3339 prefix, e.g. 2026-11-22).
    #[arg(long, value_parser = time_prefix)]
    pub since: Option<String>,
    /// Only runs started at or before this time (RFC 3339 prefix).
    #[arg(long, value_parser = time_prefix)]
    pub until: Option<String>,
    /// At most this many runs, newest first.
    #[arg(long, default_value_t = 50)]
    pub limit: u32,
    #[arg(long)]
    pub json: bool,
}

/// Flags of `misura show`.
#[derive(Args, Debug, Clone)]
pub struct ShowArgs {
    /// Run id (see misura history).
    pub run: i64,
    #[arg(long)]
    pub json: bool,
}

/// Flags of `misura compare`.
#[derive(Args, Debug, Clone)]
pub struct CompareArgs {
    /// Run ids; the first is the baseline.
    #[arg(required = true, num_args = 2..)]
    pub runs: Vec<i64>,
    #[arg(long)]
    pub json: bool,
    /// Also write a page with the runs' latency distributions on the same
    /// axes (percentile distribution and CDF, every size pooled) and the
    /// change of median and p99 against the first run with their 95 %
    /// confidence intervals ("-" for standard output). rtt, oneway,
    /// calibrate, rr, exchange, load and clock timer runs have
    /// distributions; other runs are listed. Example:
    /// misura compare 12 15 --html cmp.html
    #[arg(long, value_name = "OUT.html")]
    pub html: Option<std::path::PathBuf>,
}

/// `--since`/`--until`: a prefix of an RFC 3339 UTC time, as the store
/// keeps them (`2026`, `2026-11`, `2026-11-22`, `2026-11-22T08:30`, …).
pub fn time_prefix(v: &str) -> Result<String, String> {
    const FULL: &str = "0000-00-00T00:00:00";
    let ok = !v.is_empty()
        && v.len() <= 35
        && v.chars().zip(FULL.chars()).all(|(c, f)| {
            if f == '0' {
                c.is_ascii_digit()
            } else {
                c == f || (f == 'T' && c == ' ')
            }
        })
        && (v.len() <= FULL.len()
            || v[FULL.len()..]
                .chars()
                .all(|c| c.is_ascii_digit() || ".Z+-:".contains(c)))
        && [4, 7, 10, 13, 16, 19].contains(&v.len().min(19));
    if ok {
        Ok(v.replace(' ', "T"))
    } else {
        Err(format!(
            "`{v}` is not a UTC time prefix: use e.g. 2026-11-22 or 2026-11-22T08:30 (RFC 3339, as `misura history` shows)"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::time_prefix;

    #[test]
    fn time_prefixes_are_checked() {
        for ok in [
            "2026",
            "2026-11",
            "2026-11-22",
            "2026-11-22T08",
            "2026-11-22T08:30",
            "2026-11-22 08:30:05",
            "2026-11-22T08:30:05.123Z",
        ] {
            assert!(time_prefix(ok).is_ok(), "{ok}");
        }
        for bad in [
            "garbage",
            "",
            "26-11-22",
            "2026-1",
            "2026-11-22X",
            "2026/11/22",
            "2026-11-22T8",
        ] {
            assert!(time_prefix(bad).is_err(), "{bad}");
        }
    }
}
