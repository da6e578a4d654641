//! Reverting: restore the values an earlier apply recorded, last change
//! first.

use super::error::TuneError;
use super::settings::{current, set_and_check};
use misura_report::host::{self as model, Change, PlanEntry, TuneReport, TuneState};
use std::path::Path;

fn read_state(file: &Path) -> Result<TuneState, TuneError> {
    let text = misura_cli::files::read_string_bounded(file, misura_cli::files::CONFIG_MAX)
        .map_err(|source| TuneError::ReadState {
            path: file.to_path_buf(),
            source,
        })?;
    let state: TuneState = serde_json::from_str(&text).map_err(|source| TuneError::NotState {
        path: file.to_path_buf(),
        source,
    })?;
    model::check_state(&state).map_err(|reason| TuneError::BadState {
        path: file.to_path_buf(),
        reason,
    })?;
    Ok(state)
}

/// Restore one change; the entry shows the value it really had before.
fn restore(c: &Change) -> PlanEntry {
    let iface = c.interface.as_deref();
    let before = current(c.kind, iface, &c.key);
    let result = set_and_check(c.kind, iface, &c.key, &c.old);
    let mut shown = c.clone();
    if let Ok(b) = before {
        // Show what it really was, also if someone changed it since.
        shown.new = b;
    }
    match result {
        Ok(()) => PlanEntry::Change {
            change: shown,
            outcome: "restored".into(),
        },
        Err(reason) => PlanEntry::Skipped {
            scope: c.interface.clone().unwrap_or_else(|| "host".into()),
            item: c.key.clone(),
            reason: format!(
                "not restored to {}: {reason} (by hand: {})",
                c.old, c.revert_command
            ),
        },
    }
}

/// A revert's report, and how many changes could not be restored (each a
/// `Skipped` entry saying why). A state file that records no changes
/// gives a report without entries.
#[derive(Debug)]
pub struct Reverted {
    pub report: TuneReport,
    pub failed: usize,
}

/// Restore every change recorded in `file`, in the namespace `netns` or,
/// without one, the namespace the state file names (entered here; root is
/// the caller's to check).
pub fn revert(file: &Path, netns: Option<String>) -> Result<Reverted, TuneError> {
    let state = read_state(file)?;
    let netns = netns.or_else(|| state.netns.clone());
    if let Some(ns) = &netns {
        misura_sys::netns::enter(ns)?;
    }
    let entries: Vec<PlanEntry> = state.changes.iter().rev().map(restore).collect();
    let failed = entries
        .iter()
        .filter(|e| matches!(e, PlanEntry::Skipped { .. }))
        .count();
    let mut interfaces: Vec<String> = state
        .changes
        .iter()
        .filter_map(|c| c.interface.clone())
        .collect();
    interfaces.dedup();
    let report = TuneReport {
        meta: misura_cli::meta::meta(model::TUNE_FORMAT, misura_cli::meta::now_rfc3339()),
        action: "revert".into(),
        netns,
        interfaces,
        entries,
        state_file: Some(file.display().to_string()),
    };
    Ok(Reverted { report, failed })
}
