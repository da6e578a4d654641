//! `misura host tune`: the safe changes that make timing more precise —
//! planned from what the host has now, applied with the old values kept in
//! a state file, and reverted from that file.

mod apply;
mod plan;
mod revert;
mod settings;

use anyhow::Result;
use misura_report::host::{self as model, TuneReport};
use std::path::PathBuf;

use crate::shared::exit;
use crate::shared::output::{Finished, Report};

pub const TUNE_LONG_ABOUT: &str = "\
The safe changes that make timing more precise, with the exact commands and the
current → new values: CPU governor `performance`, idle states deeper than 10 µs
disabled, and on the measured interfaces EEE off, interrupt coalescing
rx-usecs 0 / rx-frames 1 / adaptive off, GRO/LRO/GSO/TSO off.

Without --apply only the plan is printed. --apply (root) applies it and writes
the old values to a state file (default under the user's data directory,
printed); --revert FILE restores exactly those values. What this machine
cannot change is reported as skipped, with the reason.

Examples:
    misura host tune --interface enp1s0 --interface enp2s0
    sudo misura host tune --interface enp1s0 --interface enp2s0 --apply
    sudo misura host tune --revert ~/.local/share/misura/host-tune-20250101T120000Z.json
    misura host tune --netns misura-tester --interface p1 --interface p2";

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

fn need_root(what: &str) -> Result<()> {
    if misura_sys::host::is_root() {
        return Ok(());
    }
    Err(exit::Failure::Privilege(format!(
        "{what} needs root: it writes /sys files and ethtool settings (CAP_NET_ADMIN and more); run it with sudo"
    ))
    .into())
}

fn tune_report(r: TuneReport, code: i32) -> Finished {
    let target = r.netns.clone().unwrap_or_else(|| "this host".into());
    Finished::with_code(
        Report::new(r, "host-tune", target, model::write_tune_text),
        code,
    )
}

pub fn tune(args: &TuneArgs) -> Result<Finished> {
    if let Some(f) = &args.revert {
        return revert::revert(args, f);
    }
    if args.apply {
        need_root("misura host tune --apply")?;
    }
    let started_at = crate::shared::meta::now_rfc3339();
    // Only the interfaces named are tuned: none by default.
    let interfaces = if args.interfaces.is_empty() {
        Vec::new()
    } else {
        super::readings::resolve_interfaces(&args.interfaces)?
    };
    let facts = misura_sys::host::host_facts();
    let mut entries = plan::plan(
        &interfaces,
        args.ns.netns.as_deref(),
        facts.virtualized == Some(true),
    );
    let mut report = TuneReport {
        meta: crate::shared::meta::meta(model::TUNE_FORMAT, started_at.clone()),
        action: "plan".into(),
        netns: args.ns.netns.clone(),
        interfaces,
        entries: Vec::new(),
        state_file: None,
    };
    if !args.apply {
        report.entries = entries;
        if !args.out.json && args.interfaces.is_empty() {
            eprintln!(
                "(no interface settings planned: give --interface IF for each measured port)"
            );
        }
        return Ok(tune_report(report, exit::OK));
    }
    let path = args
        .state_file
        .clone()
        .unwrap_or_else(|| apply::default_state_file(&started_at));
    apply::apply(&mut entries, &path, args.ns.netns.clone(), started_at)?;
    report.action = "apply".into();
    report.entries = entries;
    report.state_file = Some(path.display().to_string());
    Ok(tune_report(report, exit::OK))
}
