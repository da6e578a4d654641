//! `misura reflect --irtt`: answers `irtt client`. The method (the checks,
//! the plan, the loop, the summary) is `misura_irtt::reflect::serve`'s;
//! this file names the flags when the request is refused, announces the
//! reflector and writes the summary.

use super::args::ReflectArgs;
use crate::shared::exit::Failure;
use crate::shared::output::{Finished, Report};
use anyhow::Result;
use misura_irtt::error::Error;
use misura_irtt::reflect::Ready;
use misura_irtt::report::write_reflect;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

pub fn run(args: &ReflectArgs, port: u16, stop: &Arc<AtomicUsize>) -> Result<Finished> {
    let request = args.irtt_request(port);
    let summary =
        misura_irtt::reflect::serve(&request, stop, &mut |r| announce(args, r)).map_err(refusal)?;
    let listen = summary.listen.clone();
    Ok(Finished::ok(Report::new(
        summary,
        "reflect",
        listen,
        write_reflect,
    )))
}

/// What the request's check refused, in the flags' words.
fn refusal(e: Error) -> anyhow::Error {
    let words = match e {
        Error::StampOptions => "--irtt answers irtt over UDP: it takes no --l2, --key-file or --stateful (irtt's HMAC key is --irtt-hmac KEY)".into(),
        Error::ReflectBounds { most, .. } => {
            format!("--rate-limit must be at least 1 and --max-sources 1 to {most}")
        }
        Error::KeyLength { len, max } => {
            format!("--irtt-hmac: the key has {len} bytes; give 1 to {max}")
        }
        e => return e.into(),
    };
    Failure::Usage(words).into()
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
