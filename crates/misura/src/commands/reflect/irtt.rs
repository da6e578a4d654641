//! `misura reflect --irtt`: answers `irtt client`. The method (decisions,
//! loop, summary) is `misura_irtt::reflect`'s; this file turns the flags
//! into its plan, names the flags when the plan is refused, announces the
//! reflector and writes the summary.

use super::args::ReflectArgs;
use crate::shared::exit::Failure;
use crate::shared::output::{Finished, Report};
use anyhow::Result;
use misura_irtt::error::Error;
use misura_irtt::reflect::{Ready, ReflectPlan};
use misura_irtt::report::write_reflect;
use std::net::SocketAddr;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

/// `max_sources`: reflect's bound on --max-sources.
pub fn run(
    args: &ReflectArgs,
    port: u16,
    max_sources: usize,
    stop: &Arc<AtomicUsize>,
) -> Result<Finished> {
    if args.l2.is_some() || args.key_file.is_some() || args.stateful {
        return Err(Failure::Usage(
            "--irtt answers irtt over UDP: it takes no --l2, --key-file or --stateful (irtt's HMAC key is --irtt-hmac KEY)".into(),
        )
        .into());
    }
    let plan = ReflectPlan::new(
        SocketAddr::new(args.ip(), port),
        args.irtt_hmac.as_ref().map(|k| k.as_bytes().to_vec()),
        args.max_sources,
        args.rate_limit,
        args.duration.as_ref().map(|d| d.span()),
        max_sources,
    )
    .map_err(|e| match e {
        Error::ReflectBounds { most, .. } => Failure::Usage(format!(
            "--rate-limit must be at least 1 and --max-sources 1 to {most}"
        )),
        Error::KeyLength { len, max } => Failure::Usage(format!(
            "--irtt-hmac: the key has {len} bytes; give 1 to {max}"
        )),
        e => Failure::Usage(e.to_string()),
    })?;
    let summary = misura_irtt::reflect::run(&plan, stop, &mut |r| announce(args, r))?;
    let listen = summary.listen.clone();
    Ok(Finished::ok(Report::new(
        summary,
        "reflect",
        listen,
        write_reflect,
    )))
}

fn announce(args: &ReflectArgs, r: &Ready<'_>) {
    if args.out.quiet {
        return;
    }
    let cfg = r.config;
    eprintln!(
        "misura reflect: irtt on {}, {}; rate limit {}/s per session, at most {} sessions ({} per address); opens at most {}/s per address and {}/s in all; receive stamps: {}",
        r.listen, r.mode, args.rate_limit, args.max_sources, cfg.sessions_per_source, cfg.opens_per_source_per_s, cfg.opens_per_s, r.receive_stamps
    );
}
