//! `--apply`: make each planned change and keep the old value in the state
//! file, written again after every change so an interruption loses nothing.

use super::error::TuneError;
use super::settings::{current, set_and_check};
use misura_report::host::{self as model, PlanEntry, TuneState};
use std::path::{Path, PathBuf};

pub(super) fn default_state_file(started_at: &str) -> PathBuf {
    let base = dirs::data_dir().unwrap_or_else(|| PathBuf::from("."));
    let stamp: String = started_at
        .chars()
        .take(19)
        .filter(|c| c.is_ascii_digit() || *c == 'T')
        .collect();
    base.join("misura").join(format!("host-tune-{stamp}Z.json"))
}

fn write_state(path: &Path, state: &TuneState) -> Result<(), TuneError> {
    let mut buf = Vec::new();
    misura_report::write_json(state, &mut buf)
        .and_then(|()| misura_cli::outfile::replace(path, |w| w.write_all(&buf)))
        .map_err(|error| TuneError::WriteState {
            path: path.to_path_buf(),
            error,
        })
}

/// Apply every `Change` of `entries`, marking it applied or turning it into
/// a `Skipped` with the driver's refusal. The state file at `path` records
/// each value that moved.
pub(super) fn apply(
    entries: &mut [PlanEntry],
    path: &Path,
    netns: Option<String>,
    started_at: String,
) -> Result<(), TuneError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|error| TuneError::CreateDir {
            dir: dir.to_path_buf(),
            error,
        })?;
    }
    let mut state = TuneState {
        meta: misura_cli::meta::meta(model::STATE_FORMAT, started_at),
        netns,
        changes: Vec::new(),
    };
    // Written before the first change, so an unwritable path changes nothing.
    write_state(path, &state)?;
    for e in entries.iter_mut() {
        let PlanEntry::Change { change, outcome } = e else {
            continue;
        };
        let c = change.clone();
        let iface = c.interface.as_deref();
        match set_and_check(c.kind, iface, &c.key, &c.new) {
            Ok(()) => {
                *outcome = "applied".into();
                state.changes.push(c);
                write_state(path, &state)?;
            }
            Err(reason) => {
                // What the driver refuses is reported, not fatal; a partial
                // change (value moved but not to the target) is still recorded.
                if current(c.kind, iface, &c.key).is_ok_and(|now| now != c.old) {
                    state.changes.push(c.clone());
                    write_state(path, &state)?;
                }
                *e = PlanEntry::Skipped {
                    scope: c.interface.clone().unwrap_or_else(|| "host".into()),
                    item: c.key.clone(),
                    reason: format!("refused: {reason}"),
                };
            }
        }
    }
    Ok(())
}
