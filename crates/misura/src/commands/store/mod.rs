//! Reading the results store back: `misura history`, `misura show`,
//! `misura compare`.

pub mod args;

use crate::shared::exit::Failure;
use crate::shared::store::{open_for_reading, store_failure};
use anyhow::Result;
pub use args::{CompareArgs, HistoryArgs, ShowArgs};
use misura_cli::report_page::{write_whole, ReportError};
use misura_report::compare_rows::{self, Stored};
use misura_store::{history, Filter};
use serde_json::Value;
use std::io::Write;

/// `misura history`.
pub fn history(a: &HistoryArgs) -> Result<i32> {
    let s = open_for_reading()?;
    let runs = s
        .list(&Filter {
            subcommand: a.subcommand.clone(),
            target: a.target.clone(),
            since: a.since.clone(),
            until: a.until.clone(),
            limit: Some(a.limit),
        })
        .map_err(store_failure)?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if a.json {
        history::write_json(&runs, &mut out)?;
    } else {
        history::write_table(&runs, s.path(), &mut out)?;
    }
    Ok(crate::shared::exit::OK)
}

/// Render a stored result as it was printed then: a result from a newer
/// misura, or one that does not read back, is a profile error (7).
fn render(v: &Value, out: &mut dyn Write) -> Result<()> {
    use misura_report::stored::StoredError;
    misura_report::stored::render(v, out).map_err(|e| match e {
        e @ (StoredError::Newer { .. } | StoredError::Unreadable { .. }) => {
            Failure::Profile(e.to_string()).into()
        }
        // The writer's own error, so that a closed pipe ends quietly.
        StoredError::Io(io) => io.into(),
        e => e.into(),
    })
}

/// `misura show RUN`.
pub fn show(a: &ShowArgs) -> Result<i32> {
    let s = open_for_reading()?;
    let (_, v) = s.get(a.run).map_err(store_failure)?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if a.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
    } else {
        render(&v, &mut out)?;
    }
    Ok(crate::shared::exit::OK)
}

/// `misura compare RUN RUN…`.
pub fn compare(a: &CompareArgs) -> Result<i32> {
    if a.runs.len() < 2 {
        return Err(Failure::Usage(
            "compare needs at least two run ids (see misura history)".into(),
        )
        .into());
    }
    let s = open_for_reading()?;
    let mut stored = Vec::new();
    for &id in &a.runs {
        let (f, v) = s.get(id).map_err(store_failure)?;
        stored.push((id, f, v));
    }
    if let Some(path) = &a.html {
        let runs: Vec<misura_report::compare::Run> = stored
            .iter()
            .map(|(id, _, v)| misura_report::compare::Run { id: *id, value: v })
            .collect();
        let mut page = Vec::new();
        misura_report::compare::write_compare_html(&runs, &mut page)?;
        let to_file =
            write_whole(path, &page, &mut std::io::stdout().lock()).map_err(|e| match e {
                // Its own, so that a closed pipe ends quietly.
                ReportError::Io(io) => anyhow::Error::from(io),
                e => e.into(),
            })?;
        if !to_file {
            return Ok(crate::shared::exit::OK);
        }
        eprintln!("wrote {} ({} bytes)", path.display(), page.len());
    }
    let runs: Vec<Stored> = stored
        .iter()
        .map(|(id, f, v)| Stored {
            id: *id,
            subcommand: &f.subcommand,
            target: &f.target,
            value: v,
        })
        .collect();
    let rows = compare_rows::rows(&runs);
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if a.json {
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&compare_rows::rows_json(&rows))?
        )?;
    } else {
        compare_rows::write_table(&rows, &mut out)?;
    }
    Ok(crate::shared::exit::OK)
}
