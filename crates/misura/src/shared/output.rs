//! Printing and exporting a finished run's report, and the completion state
//! a run records when a signal stopped it.

use crate::shared::exit::Failure;
use anyhow::Result;
use misura_report::{write_json, HostFingerprint, LoopTuning};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Opens the `--export-json` file before measuring, so a bad path fails at once.
pub(crate) fn open_export(p: &Option<PathBuf>) -> Result<Option<(PathBuf, File)>> {
    Ok(match p {
        Some(p) => Some((
            p.clone(),
            File::create(p)
                .map_err(|e| Failure::Output(format!("cannot write {}: {e}", p.display())))?,
        )),
        None => None,
    })
}

/// Writes the report to stdout (JSON or text) and to the export file.
pub(crate) fn emit<T: serde::Serialize>(
    report: &T,
    json: bool,
    text: fn(&T, &mut dyn Write) -> std::io::Result<()>,
    export: Option<(PathBuf, File)>,
) -> Result<()> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if json {
        write_json(report, &mut out)?;
    } else {
        text(report, &mut out)?;
    }
    out.flush()?;
    if let Some((p, f)) = export {
        let mut w = BufWriter::new(f);
        write_json(report, &mut w)
            .and_then(|_| w.flush())
            .map_err(|e| Failure::Output(format!("{}: {e}", p.display())))?;
    }
    crate::shared::store::keep_auto("this host", report, json);
    Ok(())
}

/// (complete, stop_reason) from the stop flag.
pub(crate) fn completion(stop: &AtomicUsize) -> (bool, String) {
    match stop.load(Ordering::Relaxed) {
        0 => (true, "finished".into()),
        s => (false, format!("interrupted by signal {s}; partial results")),
    }
}

/// A duration flag in ns, at least `min_ns`.
pub(crate) fn duration_flag(flag: &str, v: &str, min_ns: i64) -> Result<i64> {
    let ns = crate::shared::units::duration_ns(v)?;
    if ns < min_ns {
        return Err(Failure::Params(format!(
            "{flag} {v} is too short: at least {}",
            misura_report::clock::human_ns(min_ns as f64)
        ))
        .into());
    }
    Ok(ns)
}

/// The host fingerprint and its warnings, without the pinning and memory
/// warnings when the command does not pin or lock.
pub(crate) fn host_and_warnings(
    tuning: LoopTuning,
    loop_matters: bool,
) -> (HostFingerprint, Vec<String>) {
    let host = crate::shared::host::fingerprint(tuning);
    let warnings = crate::shared::host::warnings(&host)
        .into_iter()
        .filter(|w| loop_matters || !(w.contains("not pinned") || w.contains("memory not locked")))
        .collect();
    (host, warnings)
}
