//! `misura host`: what on this host affects timing precision (`check`), and
//! the safe changes to it, applied and reverted (`tune`).
//!
//! Every setting is read on its own: an unreadable file or a driver without
//! the feature becomes that setting's state ("unreadable: permission
//! denied", "not supported by driver veth"), never a failure of the command.

pub mod check;
pub mod tune;

use anyhow::Result;
use clap::Subcommand;
use misura_sys::hostinfo::{self, Reading};
use misura_sys::SysError;

#[derive(Subcommand, Debug)]
pub enum HostCommand {
    /// Check everything that affects timing precision, with the command that changes each.
    #[command(long_about = check::CHECK_LONG_ABOUT)]
    Check(check::CheckArgs),
    /// Apply (or revert) the safe tuning changes; without --apply only print the plan.
    #[command(long_about = tune::TUNE_LONG_ABOUT)]
    Tune(tune::TuneArgs),
}

/// The state of a reading that has no value.
fn missing(r: &Reading) -> String {
    match r {
        Reading::Value(v) => v.clone(),
        Reading::Absent => "absent".into(),
        Reading::Unreadable(why) => format!("unreadable: {why}"),
    }
}

/// The state of a failed ethtool read, in words.
fn sys_state(e: &SysError) -> String {
    match e {
        SysError::Unsupported { why, .. } => why.clone(),
        SysError::NeedCapability { .. } => "unreadable: permission denied".into(),
        other => format!("unreadable: {other}"),
    }
}

/// The interfaces to look at: those named, after checking that they exist,
/// or every interface of the namespace but lo.
fn resolve_interfaces(named: &[String]) -> Result<Vec<String>> {
    if named.is_empty() {
        let mut all: Vec<String> = hostinfo::interface_names()
            .into_iter()
            .filter(|n| n != "lo")
            .collect();
        all.sort();
        return Ok(all);
    }
    let mut out: Vec<String> = Vec::new();
    for n in named {
        misura_sys::iface::interface_index(n)?;
        if !out.contains(n) {
            out.push(n.clone());
        }
    }
    Ok(out)
}
