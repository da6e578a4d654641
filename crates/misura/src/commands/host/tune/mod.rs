//! `misura host tune`: the safe changes that make timing more precise —
//! planned from what the host has now, applied with the old values kept in
//! a state file, and reverted from that file.

mod apply;
pub mod args;
mod plan;
mod revert;
mod settings;

pub use args::TuneArgs;
use args::{need_root, tune_report};

use anyhow::Result;
use misura_report::host::{self as model, TuneReport};

use crate::shared::exit;
use crate::shared::output::Finished;

pub const TUNE_LONG_ABOUT: &str = "\
The safe changes that make timing more precise, with the exact commands and the
current → new values: CPU governor `performance`, idle states deeper than 10 µs
disabled, guest halt polling back at the kernel's 200 µs on a KVM guest whose
haltpoll idle driver has it off, and on the measured interfaces EEE off,
interrupt coalescing rx-usecs 0 / rx-frames 1 / adaptive off, GRO/LRO/GSO/TSO
off, and the NIC's hardware timestamping on (TX on, RX filter all, as
hwstamp_ctl -t 1 -r 1) where the driver has a PTP clock.

Without --apply only the plan is printed. --apply (root) applies it and writes
the old values to a state file (default under the user's data directory,
printed); --revert FILE restores exactly those values. What this machine
cannot change is reported as skipped, with the reason.

Examples:
    misura host tune --interface enp1s0 --interface enp2s0
    sudo misura host tune --interface enp1s0 --interface enp2s0 --apply
    sudo misura host tune --revert ~/.local/share/misura/host-tune-20250101T120000Z.json
    misura host tune --netns misura-tester --interface p1 --interface p2";

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
