//! `misura serve`: the server of the throughput, UDP, request/response and
//! connect/request/response tests (docs/control-protocol.md), for many
//! clients at once.
//!
//! One thread per connection, and the number of connections is capped:
//! a connection that has not yet said what it is (pending) holds a thread
//! only until the handshake timeout, and when the cap is reached the oldest
//! pending connection is closed to make room (a flood of idle connections
//! pushes out its own members, not the next legitimate client, who speaks
//! within one round trip). The accept loop never blocks on a peer.

pub mod accept;
pub mod conn;
mod control;
mod data;
mod figures;
mod hub;
pub mod limits;
mod pacer;
pub mod request;
pub mod state;
pub mod test;
mod udp;

use crate::error::{Result, ThroughputError};
use limits::Limits;
use misura_measure::auth::StampKey;
use misura_report::serve::{summarise, ServeConfig, ServeReport};
use misura_report::LoopTuning;
use state::Shared;
use std::net::{IpAddr, SocketAddr, TcpListener};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn bind(at: &Listen) -> Result<TcpListener> {
    use socket2::{Domain, Protocol, Socket, Type};
    let addrs: Vec<SocketAddr> = match at.ip {
        Some(ip) => vec![SocketAddr::new(ip, at.port)],
        // Dual-stack where IPv6 exists, else IPv4 only.
        None => vec![
            SocketAddr::new("::".parse().unwrap(), at.port),
            SocketAddr::new("0.0.0.0".parse().unwrap(), at.port),
        ],
    };
    let mut last = None;
    for a in addrs {
        let attempt = (|| -> std::io::Result<TcpListener> {
            let s = Socket::new(Domain::for_address(a), Type::STREAM, Some(Protocol::TCP))?;
            s.set_reuse_address(true)?;
            if a.is_ipv6() && at.ip.is_none() {
                s.set_only_v6(false)?;
            }
            s.bind(&a.into())?;
            s.listen(1024)?;
            // Linux honours SO_RCVTIMEO in accept(): the loop wakes to see
            // the stop flag without polling.
            s.set_read_timeout(Some(Duration::from_millis(50)))?;
            Ok(s.into())
        })();
        match attempt {
            Ok(l) => return Ok(l),
            Err(e) => last = Some((a, e)),
        }
    }
    let (a, e) = last.unwrap();
    Err(ThroughputError::Listen {
        addr: a,
        port: at.port,
        source: e,
    })
}

/// The configuration the report records.
fn config(at: &Listen, l: &Limits, local: SocketAddr, authenticated: bool) -> ServeConfig {
    ServeConfig {
        listen: local.ip().to_string(),
        port: local.port(),
        netns: at.netns.clone(),
        max_tests: l.max_tests,
        max_duration_ns: l.max_duration.as_nanos() as i64,
        max_rate_bps: l.max_rate_bps,
        max_streams: l.max_streams,
        handshake_timeout_ns: l.handshake_timeout.as_nanos() as i64,
        idle_timeout_ns: l.idle_timeout.as_nanos() as i64,
        max_per_source: l.max_per_source,
        max_connections: l.max_connections,
        authenticated,
        auth_window_ns: l.auth_window.as_nanos() as i64,
        busy_poll_ns: l.busy_poll.as_nanos() as i64,
    }
}

/// Where the server listens, and what its report says of where it ran.
#[derive(Clone, Debug)]
pub struct Listen {
    /// `None`: every address, IPv6 and IPv4 where IPv6 exists.
    pub ip: Option<IpAddr>,
    pub port: u16,
    pub netns: Option<String>,
    /// No line per test, no start line.
    pub quiet: bool,
    /// `--iperf3 [PORT]`: also answer iperf3 clients on this port.
    pub iperf3: Option<u16>,
}

/// Serve within `limits` until a signal sets `stop`, then the report.
pub fn serve(
    at: &Listen,
    limits: Limits,
    key: Option<StampKey>,
    stop: &AtomicUsize,
) -> Result<ServeReport> {
    let listener = bind(at)?;
    let local = listener.local_addr()?;
    let started_at = misura_cli::meta::now_rfc3339();
    let config = config(at, &limits, local, key.is_some());
    let shared = Arc::new(Shared::new(limits, key, at.quiet));
    if !at.quiet {
        log::info!(
            "misura serve: listening on {local} (max {} tests, {} s, {} streams; {}; {})",
            config.max_tests,
            config.max_duration_ns / 1_000_000_000,
            config.max_streams,
            if config.authenticated {
                "requests must be signed"
            } else {
                "no authentication"
            },
            if !shared.limits.busy_poll.is_zero() {
                format!(
                    "TCP readers poll {:?} before sleeping",
                    shared.limits.busy_poll
                )
            } else {
                "TCP readers sleep at once".to_string()
            }
        );
    }
    let iperf3 = match at.iperf3 {
        Some(port) => {
            let l = bind(&Listen { port, ..at.clone() })?;
            if !at.quiet {
                log::info!(
                    "misura serve: answering iperf3 clients on {}",
                    l.local_addr()?
                );
            }
            let flag = Arc::new(std::sync::atomic::AtomicBool::new(false));
            Some((
                crate::iperf3::server::start(l, shared.clone(), flag.clone()),
                flag,
            ))
        }
        None => None,
    };
    serve_until_stopped(&listener, &shared, at.quiet, stop);
    drop(listener);
    if let Some((h, flag)) = iperf3 {
        flag.store(true, Ordering::Relaxed);
        let _ = h.join();
    }

    // Stop: running tests end now (their peers see the connection close),
    // their threads record what was measured; wait briefly for that.
    shared.shutting_down.store(true, Ordering::Relaxed);
    let running = shared.stop_all_tests();
    let t = Instant::now();
    while shared.active_tests() > 0 && t.elapsed() < Duration::from_millis(1500) {
        std::thread::sleep(Duration::from_millis(10));
    }

    let tests = shared.results.lock().unwrap().clone();
    let (clients, by_msg_size, aggregate, bytes) = summarise(&tests);
    let report = ServeReport {
        meta: misura_cli::meta::meta("misura.serve", started_at),
        host: misura_run::host::fingerprint(LoopTuning {
            netns: at.netns.clone(),
            ..LoopTuning::default()
        }),
        config,
        tests,
        clients,
        by_msg_size,
        aggregate_throughput_bps: aggregate,
        aggregate_bytes_received: bytes,
        counters: shared.counters_snapshot(),
        complete: running == 0,
    };
    Ok(report)
}

/// Accept connections until a signal comes.
fn serve_until_stopped(
    listener: &TcpListener,
    shared: &Arc<Shared>,
    quiet: bool,
    stop: &AtomicUsize,
) {
    while stop.load(Ordering::Relaxed) == 0 {
        match listener.accept() {
            Ok((stream, peer)) => conn::admit(shared, stream, peer),
            Err(e) => accept::accept_failed(&e, quiet, "misura serve"),
        }
    }
}
