//! `misura reflect --irtt`: answers `irtt client`. The decisions are
//! `misura_irtt::reflector`'s and the loop is `misura_irtt::server`'s;
//! this file checks the flags, opens the socket and writes the summary.

use super::args::ReflectArgs;
use crate::shared::exit::Failure;
use crate::shared::output::{Finished, Report};
use anyhow::{Context, Result};
use misura_irtt::reflector::{Config, Reflector};
use misura_irtt::report::{write_reflect, ReflectSummary};
use misura_sys::udp::UdpTsSocket;
use misura_wire::irtt::MAX_KEY_LEN;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

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
    if args.rate_limit == 0 || args.max_sources == 0 || args.max_sources > max_sources {
        return Err(Failure::Usage(format!(
            "--rate-limit must be at least 1 and --max-sources 1 to {}",
            max_sources
        ))
        .into());
    }
    let key = args.irtt_hmac.as_ref().map(|k| k.as_bytes().to_vec());
    if let Some(k) = &key {
        if k.is_empty() || k.len() > MAX_KEY_LEN {
            return Err(Failure::Usage(format!(
                "--irtt-hmac: the key has {} bytes; give 1 to {MAX_KEY_LEN}",
                k.len()
            ))
            .into());
        }
    }
    let started_at = misura_run::meta::now_rfc3339();
    let addr = SocketAddr::new(args.ip(), port);
    let sock = UdpTsSocket::bind(addr).with_context(|| format!("listening on UDP {addr}"))?;
    let granted = sock
        .enable_stamps(false)
        .with_context(|| format!("enabling kernel stamps on UDP {addr}"))?;
    let listen = sock.local_addr().to_string();
    let mode = if key.is_some() {
        "authenticated (HMAC-MD5)"
    } else {
        "unauthenticated"
    };
    let receive_stamps = if granted.software_rx {
        "kernel software RX stamp (wall: CLOCK_REALTIME; monotonic: the same instant on CLOCK_MONOTONIC since the reflector started)"
    } else {
        "user clock read after the receive (the kernel gave no RX stamps)"
    };
    let cfg = Config::new(key, args.max_sources, args.rate_limit);
    let send_stamps = "user clock (CLOCK_REALTIME / CLOCK_MONOTONIC) read just before the reply is built, as irtt's server";
    if !args.out.quiet {
        eprintln!(
            "misura reflect: irtt on {listen}, {mode}; rate limit {}/s per session, at most {} sessions ({} per address); opens at most {}/s per address and {}/s in all; receive stamps: {receive_stamps}",
            args.rate_limit, args.max_sources, cfg.sessions_per_source, cfg.opens_per_source_per_s, cfg.opens_per_s
        );
    }
    let mut r = Reflector::new(cfg);
    let deadline = args.duration.as_ref().map(|d| Instant::now() + d.std());
    let started = Instant::now();
    let should_stop =
        || stop.load(Ordering::Relaxed) != 0 || deadline.is_some_and(|d| Instant::now() >= d);
    let served = misura_irtt::server::run(&sock, &mut r, &should_stop);
    let (_, stop_reason) = crate::shared::output::completion(stop);
    let summary = ReflectSummary {
        meta: misura_run::meta::meta("misura.irtt-reflect", started_at),
        complete: true,
        stop_reason,
        listen: listen.clone(),
        mode: mode.into(),
        receive_stamps: receive_stamps.into(),
        send_stamps: send_stamps.into(),
        max_sessions: args.max_sources,
        rate_limit_per_s: args.rate_limit,
        duration_s: started.elapsed().as_secs_f64(),
        counters: *r.counters(),
        io: served.io,
        sessions_open: r.sessions(),
        turnaround_kernel: (served.turnaround.count() > 0).then(|| served.turnaround.snapshot()),
    };
    Ok(Finished::ok(Report::new(
        summary,
        "reflect",
        listen,
        write_reflect,
    )))
}
