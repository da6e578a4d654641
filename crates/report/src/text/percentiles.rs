//! The latency table the text forms of `oneway` and `rtt` share: one row per
//! figure measured (a summary's count, min, median, p90, p99, optionally
//! p99.9, max, mean and standard deviation, in µs), the group's label on its
//! first row only, and figures not measured left out.

use crate::model::summary::SummarySnapshot;
use std::io::{self, Write};

/// Nanoseconds as µs with three decimals, `-` for none.
pub(super) fn us(v: Option<i64>) -> String {
    v.map_or("-".into(), |x| format!("{:.3}", x as f64 / 1000.0))
}

/// `us` of a fractional number of nanoseconds.
pub(super) fn usf(v: Option<f64>) -> String {
    v.map_or("-".into(), |x| format!("{:.3}", x / 1000.0))
}

/// The widths of a table's first three columns, and whether it has p99.9.
pub(super) struct Columns {
    pub label: usize,
    pub name: usize,
    pub count: usize,
    pub p999: bool,
}

/// The rows of one group (`label`, e.g. a payload size or `all`): each named
/// figure that holds a sample, in the order given.
pub(super) fn write_rows(
    label: &str,
    rows: &[(&str, Option<&SummarySnapshot>)],
    c: &Columns,
    out: &mut dyn Write,
) -> io::Result<()> {
    let measured = rows
        .iter()
        .filter_map(|&(name, s)| Some((name, s?)))
        .filter(|(_, s)| s.count > 0);
    for (i, (name, s)) in measured.enumerate() {
        let label = if i == 0 { label } else { "" };
        write!(
            out,
            "{label:<lw$} {name:<nw$} {:>cw$} {:>9} {:>9} {:>9} {:>9}",
            s.count,
            us(s.min_ns),
            us(s.median_ns),
            us(s.p90_ns),
            us(s.p99_ns),
            lw = c.label,
            nw = c.name,
            cw = c.count,
        )?;
        if c.p999 {
            write!(out, " {:>9}", us(s.p999_ns))?;
        }
        writeln!(
            out,
            " {:>10} {:>9} {:>9}",
            us(s.max_ns),
            usf(s.mean_ns),
            usf(s.std_dev_ns)
        )?;
    }
    Ok(())
}
