//! `misura history`'s listing of the runs kept: a table as wide as the
//! longest command listed, or their JSON. Pure: it writes to the writer it
//! is given and reads nothing (the runs come from `Store::list`).

use crate::RunSummary;
use std::io::{self, Write};
use std::path::Path;

/// The runs as a table, newest first as listed; none: a line saying so,
/// with the store they were looked for in.
pub fn write_table(runs: &[RunSummary], store: &Path, out: &mut dyn Write) -> io::Result<()> {
    // As wide as the longest command listed (clock-interference, 18,
    // overflowed a fixed 12).
    let cw = runs
        .iter()
        .map(|r| r.facts.subcommand.chars().count())
        .chain([7])
        .max()
        .unwrap_or(7);
    writeln!(
        out,
        "{:>6}  {:<27} {:<cw$} {:<24} {:<10} headline",
        "run", "started (UTC)", "command", "target", "host"
    )?;
    for r in runs {
        writeln!(
            out,
            "{:>6}  {:<27} {:<cw$} {:<24} {:<10} {}{}",
            r.id,
            r.facts.started_at,
            r.facts.subcommand,
            column(&r.facts.target, 24),
            column(&r.facts.host, 10),
            r.headline.as_deref().unwrap_or("-"),
            if r.facts.complete { "" } else { "  [partial]" }
        )?;
    }
    if runs.is_empty() {
        writeln!(out, "(no runs match in {})", store.display())?;
    }
    Ok(())
}

/// The runs as a JSON array, one object a run with every fact (whole,
/// where the table cuts them).
pub fn write_json(runs: &[RunSummary], out: &mut dyn Write) -> io::Result<()> {
    let rows: Vec<serde_json::Value> = runs
        .iter()
        .map(|r| {
            serde_json::json!({
                "id": r.id, "started_at": r.facts.started_at, "subcommand": r.facts.subcommand,
                "target": r.facts.target, "sizes": r.facts.sizes, "timestamp_source": r.facts.timestamp_source,
                "host": r.facts.host, "complete": r.facts.complete, "headline": r.headline,
            })
        })
        .collect();
    writeln!(out, "{}", serde_json::to_string_pretty(&rows)?)
}

/// `text` cut to `width` characters (its end replaced by "…") so that a
/// long value (a calibration's ports and namespace) keeps the columns;
/// the JSON has it whole.
fn column(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let mut t: String = text.chars().take(width - 1).collect();
    t.push('…');
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RunFacts;

    fn run(id: i64, subcommand: &str, target: &str, complete: bool) -> RunSummary {
        RunSummary {
            id,
            facts: RunFacts {
                started_at: "2026-11-29T18:09:21.495472Z".into(),
                subcommand: subcommand.into(),
                target: target.into(),
                host: "vm".into(),
                complete,
                ..RunFacts::default()
            },
            headline: Some("network RTT median 1.56 µs".into()),
        }
    }

    fn table(runs: &[RunSummary]) -> String {
        let mut out = Vec::new();
        write_table(runs, Path::new("/s.sqlite"), &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn the_command_column_widens_and_a_long_target_is_cut() {
        let t = table(&[
            run(
                2,
                "clock-interference",
                "a-very-long-target-name-of-thirty",
                false,
            ),
            run(1, "rtt", "127.0.0.1:18863", true),
        ]);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(
            lines[0],
            "   run  started (UTC)               command            target                   host       headline"
        );
        assert!(lines[1].contains(" a-very-long-target-name… vm "), "{t}");
        assert!(lines[1].ends_with("1.56 µs  [partial]"), "{t}");
        assert!(lines[2].ends_with("1.56 µs"), "{t}");
        assert_eq!(lines.len(), 3);
    }

    #[test]
    fn no_runs_says_where_they_were_looked_for() {
        let t = table(&[]);
        assert!(
            t.ends_with("headline\n(no runs match in /s.sqlite)\n"),
            "{t}"
        );
    }

    #[test]
    fn json_keeps_every_fact_whole() {
        let mut out = Vec::new();
        let long = "a-very-long-target-name-of-thirty";
        write_json(&[run(7, "rtt", long, true)], &mut out).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v[0]["id"], 7);
        assert_eq!(v[0]["target"], long);
        assert_eq!(v[0]["complete"], true);
    }
}
