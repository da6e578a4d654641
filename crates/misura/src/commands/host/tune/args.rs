//! Flags of `misura host tune`, and how its runs end: the root check and
//! the report every mode (plan, apply, revert) returns.

use crate::shared::exit;
use crate::shared::output::{Finished, Report};
use anyhow::Result;
use misura_report::host::{self as model, TuneReport};
use std::path::PathBuf;

#[derive(clap::Args, Debug, Clone)]
pub struct TuneArgs {
    /// A measured interface to tune (repeatable); without one only host-wide settings are planned.
    #[arg(long = "interface", short = 'i', value_name = "IF")]
    pub interfaces: Vec<String>,
    /// Apply the plan (without it, only print it). Needs root.
    #[arg(long, conflicts_with = "revert")]
    pub apply: bool,
    /// Where --apply writes the old values (default: DATA_DIR/misura/host-tune-TIME.json).
    #[arg(long, value_name = "FILE", requires = "apply")]
    pub state_file: Option<PathBuf>,
    /// Restore the values recorded in FILE by an earlier --apply. Needs root.
    #[arg(long, value_name = "FILE")]
    pub revert: Option<PathBuf>,
    #[command(flatten)]
    pub out: crate::shared::output::OutputArgs,
    #[command(flatten)]
    pub ns: crate::shared::netns::NetnsArgs,
}

pub fn need_root(what: &str) -> Result<()> {
    if misura_sys::host::is_root() {
        return Ok(());
    }
    Err(exit::Failure::Privilege(format!(
        "{what} needs root: it writes /sys files and ethtool settings (CAP_NET_ADMIN and more); run it with sudo"
    ))
    .into())
}

pub fn tune_report(r: TuneReport, code: i32) -> Finished {
    let target = r.netns.clone().unwrap_or_else(|| "this host".into());
    Finished::with_code(
        Report::new(r, "host-tune", target, model::write_tune_text),
        code,
    )
}
