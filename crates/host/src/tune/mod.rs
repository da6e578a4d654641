//! `misura host tune`: the safe changes that make timing more precise —
//! planned from what the host has now, applied with the old values kept in
//! a state file, and reverted from that file.

mod apply;
mod error;
mod plan;
mod revert;
mod settings;

pub use error::TuneError;
pub use revert::{revert, Reverted};

use misura_report::host::{self as model, TuneReport};
use std::path::PathBuf;

/// The tune the flags ask for (root is the caller's to check before
/// `apply`).
#[derive(Debug, Clone, Default)]
pub struct TunePlan {
    /// The measured interfaces to tune (each must exist); empty: only the
    /// host-wide settings.
    pub interfaces: Vec<String>,
    /// The namespace the tune runs in (already entered).
    pub netns: Option<String>,
    /// Apply the plan rather than only return it.
    pub apply: bool,
    /// Where the apply writes the old values (`None`: under the user's data
    /// directory, named for the start time).
    pub state_file: Option<PathBuf>,
}

/// The plan, or with `apply` the plan applied (each change marked applied
/// or turned into a skip with the driver's refusal) and the state file
/// that records the old values.
pub fn tune(p: &TunePlan) -> Result<TuneReport, TuneError> {
    let started_at = misura_cli::meta::now_rfc3339();
    // Only the interfaces named are tuned: none by default.
    let interfaces = if p.interfaces.is_empty() {
        Vec::new()
    } else {
        crate::readings::resolve_interfaces(&p.interfaces)?
    };
    let facts = misura_sys::host::host_facts();
    let mut entries = plan::plan(
        &interfaces,
        p.netns.as_deref(),
        facts.virtualized == Some(true),
    );
    let mut report = TuneReport {
        meta: misura_cli::meta::meta(model::TUNE_FORMAT, started_at.clone()),
        action: "plan".into(),
        netns: p.netns.clone(),
        interfaces,
        entries: Vec::new(),
        state_file: None,
    };
    if !p.apply {
        report.entries = entries;
        return Ok(report);
    }
    let path = p
        .state_file
        .clone()
        .unwrap_or_else(|| apply::default_state_file(&started_at));
    apply::apply(&mut entries, &path, p.netns.clone(), started_at)?;
    report.action = "apply".into();
    report.entries = entries;
    report.state_file = Some(path.display().to_string());
    Ok(report)
}
