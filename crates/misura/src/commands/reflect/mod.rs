//! `misura reflect`: the STAMP Session-Reflector (UDP) and the raw-probe
//! reflector. The method (the key file, the plan, the loops, the clocks,
//! the result) is `misura_rtt::reflect::serve`'s, and `--irtt`'s is
//! `misura_irtt::reflect::serve`'s; here the flags become a request, what
//! the library refuses becomes a sentence that names the flags, and the
//! reflector is announced and its summary printed.

pub mod args;
pub use args::ReflectArgs;
mod irtt;

use crate::shared::exit::Failure;
use crate::shared::output::{Finished, Report};
use anyhow::Result;
use misura_cli::keys::KeyError;
use misura_report::reflect::write_summary;
use misura_rtt::reflect::{PlanError, Ready, Served};
use misura_rtt::RttError;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

/// The note when the NIC's stamps are not used on a wildcard address.
const WILDCARD_NOTE: &str =
    "listening on a wildcard address: give --interface IF for the NIC's stamps (software stamps)";

/// What the reflector refused, in the flags' words.
fn refusal(e: RttError) -> anyhow::Error {
    match e {
        RttError::Plan(p) => flag_sentence(p).into(),
        RttError::Key(KeyError::Read { path, error }) => Failure::Usage(format!(
            "cannot read the key file {}: {error}; create one with `openssl rand -hex 32 > {}`",
            path.display(),
            path.display()
        ))
        .into(),
        RttError::Key(k) => Failure::from(k).into(),
        e => e.into(),
    }
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
        return irtt::run(args, port, stop);
    }
    let Served {
        mut summary,
        wildcard,
    } = misura_rtt::reflect::serve(&args.request(), stop, &mut |r| announce(args, r))
        .map_err(refusal)?;
    if wildcard {
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
    let note = if r.wildcard() {
        Some(WILDCARD_NOTE)
    } else {
        hw.note.as_deref()
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
