//! `--revert FILE`: restore the values an earlier `--apply` recorded, last
//! change first.

use super::args::{need_root, tune_report, TuneArgs};
use super::settings::{current, set_and_check};
use crate::shared::exit;
use anyhow::{Context, Result};
use misura_report::host::{self as model, Change, PlanEntry, TuneReport, TuneState};
use std::path::Path;

fn read_state(file: &Path) -> Result<TuneState> {
    let text = crate::shared::files::read_string_bounded(file, crate::shared::files::CONFIG_MAX)
        .with_context(|| format!("cannot read the tune state file {}", file.display()))?;
    let state: TuneState = serde_json::from_str(&text)
        .with_context(|| format!("{} is not a misura host tune state file", file.display()))?;
    model::check_state(&state).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
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

pub(super) fn revert(args: &TuneArgs, file: &Path) -> Result<crate::shared::output::Finished> {
    need_root("misura host tune --revert")?;
    let state = read_state(file)?;
    let netns = args.ns.netns.clone().or_else(|| state.netns.clone());
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
        meta: crate::shared::meta::meta(model::TUNE_FORMAT, crate::shared::meta::now_rfc3339()),
        action: "revert".into(),
        netns,
        interfaces,
        entries,
        state_file: Some(file.display().to_string()),
    };
    if state.changes.is_empty() && !args.out.json {
        eprintln!("(the state file records no changes: nothing to restore)");
    }
    Ok(tune_report(
        report,
        if failed == 0 { exit::OK } else { exit::ERROR },
    ))
}
