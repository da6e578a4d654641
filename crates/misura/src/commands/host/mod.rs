//! `misura host`: what on this host affects timing precision (`check`), and
//! the safe changes to it, applied and reverted (`tune`). The method (every
//! setting's reading, the plan, the apply and the revert) is
//! `misura-host`'s; here the flags become a plan once, root is checked,
//! what the library refuses becomes a failure with its exit class, and the
//! notes and the report are printed.

pub mod args;
pub use args::{CheckArgs, TuneArgs};

use crate::shared::exit::{self, Failure};
use crate::shared::output::{Finished, Report};
use anyhow::Result;
use clap::Subcommand;
use misura_host::{CheckPlan, Reverted, TuneError, TunePlan};
use misura_report::host::{self as model, TuneReport};
use std::path::Path;

#[derive(Subcommand, Debug)]
pub enum HostCommand {
    /// Check everything that affects timing precision, with the command that changes each.
    #[command(long_about = args::CHECK_LONG_ABOUT)]
    Check(CheckArgs),
    /// Apply (or revert) the safe tuning changes; without --apply only print the plan.
    #[command(long_about = args::TUNE_LONG_ABOUT)]
    Tune(TuneArgs),
}

pub fn check(args: &CheckArgs) -> Result<Finished> {
    let report = misura_host::check(&CheckPlan {
        interfaces: args.interfaces.clone(),
        netns: args.ns.netns.clone(),
    })?;
    let target = args.ns.netns.clone().unwrap_or_else(|| "this host".into());
    Ok(Finished::ok(Report::new(
        report,
        "host-check",
        target,
        model::write_check_text,
    )))
}

fn need_root(what: &str) -> Result<()> {
    if misura_sys::host::is_root() {
        return Ok(());
    }
    Err(Failure::Privilege(format!(
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

/// The library's failure with its exit class: a state file that cannot be
/// written is an output failure; a system error keeps its own class.
fn failure(e: TuneError) -> anyhow::Error {
    match e {
        TuneError::Sys(s) => s.into(),
        e @ (TuneError::CreateDir { .. } | TuneError::WriteState { .. }) => {
            Failure::Output(e.to_string()).into()
        }
        e => e.into(),
    }
}

pub fn tune(args: &TuneArgs) -> Result<Finished> {
    if let Some(f) = &args.revert {
        return revert(args, f);
    }
    if args.apply {
        need_root("misura host tune --apply")?;
    }
    let report = misura_host::tune(&TunePlan {
        interfaces: args.interfaces.clone(),
        netns: args.ns.netns.clone(),
        apply: args.apply,
        state_file: args.state_file.clone(),
    })
    .map_err(failure)?;
    if !args.apply && !args.out.json && args.interfaces.is_empty() {
        eprintln!("(no interface settings planned: give --interface IF for each measured port)");
    }
    Ok(tune_report(report, exit::OK))
}

fn revert(args: &TuneArgs, file: &Path) -> Result<Finished> {
    need_root("misura host tune --revert")?;
    let Reverted { report, failed } =
        misura_host::revert(file, args.ns.netns.clone()).map_err(failure)?;
    if report.entries.is_empty() && !args.out.json {
        eprintln!("(the state file records no changes: nothing to restore)");
    }
    Ok(tune_report(
        report,
        if failed == 0 { exit::OK } else { exit::ERROR },
    ))
}
