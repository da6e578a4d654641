//! `misura reflect`: the STAMP Session-Reflector (UDP) and the raw-probe
//! reflector. The method (the loops, the clocks, the result) is
//! `misura_rtt::reflect`'s, and `--irtt`'s is `misura_irtt::serve`'s; here
//! the flags become a plan once, what the library refuses becomes a
//! sentence that names the flags, and the reflector is announced and its
//! summary printed.

pub mod args;
pub use args::ReflectArgs;
mod irtt;

use crate::shared::exit::Failure;
use crate::shared::output::{Finished, Report};
use anyhow::Result;
use misura_measure::auth::StampKey;
use misura_report::reflect::write_summary;
use misura_rtt::reflect::{Listen, PlanError, Ready, ReflectPlan, MAX_SOURCES};
use misura_rtt::RttError;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

/// The note when the NIC's stamps are not used on a wildcard address.
const WILDCARD_NOTE: &str =
    "listening on a wildcard address: give --interface IF for the NIC's stamps (software stamps)";

/// The key file's key, with the sentence to fix it when it cannot be read.
fn key(args: &ReflectArgs) -> Result<Option<StampKey>> {
    let Some(path) = &args.key_file else {
        return Ok(None);
    };
    let bytes = crate::shared::files::read_bounded(path, crate::shared::files::KEY_FILE_MAX)
        .map_err(|e| {
            Failure::Usage(format!(
                "cannot read the key file {}: {e}; create one with `openssl rand -hex 32 > {}`",
                path.display(),
                path.display()
            ))
        })?;
    Ok(Some(StampKey::from_file_contents(&bytes).map_err(|e| {
        Failure::Usage(format!("key file {}: {e}", path.display()))
    })?))
}

/// The flags, resolved once into the reflector's plan.
fn plan(args: &ReflectArgs) -> Result<ReflectPlan> {
    let plan = ReflectPlan {
        listen: match &args.l2 {
            Some(interface) => Listen::L2 {
                interface: interface.clone(),
                ethertype: args.ethertype.value,
            },
            None => Listen::Udp {
                ip: args.ip(),
                port: args.port(),
            },
        },
        frame_format: args.frame_format.into(),
        key: key(args)?,
        stateful: args.stateful,
        rate_limit: args.rate_limit,
        max_sources: args.max_sources,
        duration: args.duration.as_ref().map(|d| d.std()),
        cpu: args.cpu,
        busy_poll: args.busy_poll,
        timestamps: args.timestamps.into(),
        interface: args.interface.clone(),
        netns: args.ns.netns.clone(),
    };
    plan.check().map_err(flag_sentence)?;
    Ok(plan)
}

/// What the plan's check refused, in the flags' words.
fn flag_sentence(e: PlanError) -> Failure {
    match e {
        PlanError::NoRate => {
            Failure::Usage("--rate-limit must be at least 1 reply per second".into())
        }
        PlanError::PtpOverUdp => Failure::Usage(
            "--frame-format ptp is for the raw-probe reflector (--l2 IF); STAMP over UDP has no PTP form".into(),
        ),
        PlanError::UserStampsOnL2 => Failure::Usage(
            "--timestamps user is for STAMP over UDP; the raw-probe reflector (--l2) always takes kernel stamps".into(),
        ),
        PlanError::NoSources => Failure::Usage("--max-sources must be at least 1".into()),
        PlanError::TooManySources { asked, max } => Failure::Params(format!(
            "--max-sources {asked} is over the limit of {max} sources tracked at once: use at most {max}"
        )),
        PlanError::HardwareOnWildcard => Failure::Usage(
            "--timestamps hardware on a wildcard address: name the interface whose NIC stamps (--interface IF) or listen on its address (--listen ADDR)".into(),
        ),
    }
}

pub fn run(args: &ReflectArgs, stop: &Arc<AtomicUsize>) -> Result<Finished> {
    if let Some(port) = args.irtt {
        return irtt::run(args, port, MAX_SOURCES, stop);
    }
    let plan = plan(args)?;
    let mut summary =
        misura_rtt::reflect::run(&plan, stop, &mut |r| announce(args, r)).map_err(|e| match e {
            RttError::Plan(p) => anyhow::Error::from(flag_sentence(p)),
            e => e.into(),
        })?;
    if summary.interface.is_none() && summary.hardware_note.is_some() {
        summary.hardware_note = Some(WILDCARD_NOTE.into());
    }
    let target = summary.listen.clone();
    Ok(Finished::ok(Report::new(
        summary,
        "reflect",
        target,
        write_summary,
    )))
}

fn announce(args: &ReflectArgs, r: &Ready<'_>) {
    if args.out.quiet {
        return;
    }
    let clock = &r.clocks.system;
    let (rx, tx) = misura_rtt::reflect::source_names(r.granted);
    let hw = r.hardware;
    let note = match (&hw.interface, &hw.note) {
        (None, Some(_)) => Some(WILDCARD_NOTE),
        (_, n) => n.as_deref(),
    };
    if let Some(n) = note {
        eprintln!("misura reflect: NIC hardware stamps not used: {n}");
    }
    if let Some(n) = &r.clocks.nic {
        eprintln!(
            "misura reflect: NIC stamps on {} ({}): PHC − CLOCK_REALTIME {}; replies to NIC-stamped requests in PTPv2 format, {}, error estimate {} µs",
            n.device,
            hw.interface.as_deref().unwrap_or("?"),
            n.offset.map_or_else(
                || format!("unknown ({})", n.error.as_deref().unwrap_or("not read")),
                |(o, u)| format!("{:.3} µs ± {:.3} µs", o / 1e3, u / 1e3)
            ),
            if n.state.synchronized { "PTP-synchronised" } else { "free-running" },
            n.state.uncertainty_ns / 1000
        );
    }
    let sync = if clock.synchronized {
        format!(
            "synchronised (kernel NTP state, max error {} µs)",
            clock.uncertainty_ns / 1000
        )
    } else {
        "not known to be synchronised (free-running)".to_string()
    };
    if let Some(s) = r.slice {
        match s.granted_ns {
            Some(ns) => eprintln!(
                "misura reflect: scheduler slice {} µs (a request's wake-up preempts what runs on this CPU)",
                ns / 1000
            ),
            None => eprintln!(
                "misura reflect: note: the kernel kept its default scheduler slice ({} µs asked; custom slices need Linux 6.12): on a shared CPU a request may wait for what runs there",
                s.asked_ns / 1000
            ),
        }
    }
    eprintln!(
        "misura reflect: {} on {}, {}, {}; RX stamps: {rx}, TX stamps: {tx}; clock {sync}; \
         rate limit {}/s per source, at most {} sources",
        r.what,
        r.listen,
        r.mode,
        if r.stateful { "stateful" } else { "stateless" },
        args.rate_limit,
        args.max_sources
    );
}
