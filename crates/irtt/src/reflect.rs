//! `misura reflect --irtt`'s method: what is asked as plain values
//! ([`ReflectRequest`]) and [`serve`], which checks it into the plan (its
//! bounds checked once, in [`ReflectPlan::new`]) and runs the
//! kernel-stamped socket, [`crate::server`]'s loop around
//! [`crate::reflector`], and the [`ReflectSummary`]. What is announced
//! before the loop goes back to the caller as a [`Ready`].

use crate::error::Error;
use crate::reflector::{Config, Reflector};
use crate::report::ReflectSummary;
use misura_measure::time::Span;
use misura_sys::clock::monotonic;
use misura_sys::udp::UdpTsSocket;
use misura_wire::irtt::MAX_KEY_LEN;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Where the send stamps in the replies come from.
const SEND_STAMPS: &str = "user clock (CLOCK_REALTIME / CLOCK_MONOTONIC) read just before the reply is built, as irtt's server";

/// An irtt reflector run, its bounds checked.
#[derive(Debug, Clone)]
pub struct ReflectPlan {
    addr: SocketAddr,
    key: Option<Vec<u8>>,
    max_sessions: usize,
    rate_limit: u64,
    duration: Option<Span>,
}

impl ReflectPlan {
    /// A reflector on `addr`, with irtt's HMAC `key`, at most
    /// `max_sessions` (1 to `most`) sessions, each answered at most
    /// `rate_limit` (≥ 1) times a second, for `duration` or until stopped.
    pub fn new(
        addr: SocketAddr,
        key: Option<Vec<u8>>,
        max_sessions: usize,
        rate_limit: u64,
        duration: Option<Span>,
        most: usize,
    ) -> Result<ReflectPlan, Error> {
        if rate_limit == 0 || max_sessions == 0 || max_sessions > most {
            return Err(Error::ReflectBounds {
                rate_limit,
                max_sessions,
                most,
            });
        }
        if let Some(k) = &key {
            if k.is_empty() || k.len() > MAX_KEY_LEN {
                return Err(Error::KeyLength {
                    len: k.len(),
                    max: MAX_KEY_LEN,
                });
            }
        }
        Ok(ReflectPlan {
            addr,
            key,
            max_sessions,
            rate_limit,
            duration,
        })
    }
}

/// An irtt reflector as asked, before it is checked.
#[derive(Debug, Clone)]
pub struct ReflectRequest {
    /// The address and UDP port listened on.
    pub ip: IpAddr,
    pub port: u16,
    /// irtt's HMAC-MD5 key, as `irtt client --hmac=KEY` gives it.
    pub key: Option<Vec<u8>>,
    pub max_sessions: usize,
    /// Replies per second allowed per session.
    pub rate_limit: u64,
    pub duration: Option<Span>,
    /// STAMP's options were asked too (raw probes, a STAMP key file,
    /// stateful mode): refused, [`Error::StampOptions`].
    pub stamp_options: bool,
}

impl ReflectRequest {
    /// The request checked: no STAMP option, then the plan's bounds (at
    /// most as many sessions as the STAMP reflector tracks sources).
    pub fn plan(&self) -> Result<ReflectPlan, Error> {
        if self.stamp_options {
            return Err(Error::StampOptions);
        }
        ReflectPlan::new(
            SocketAddr::new(self.ip, self.port),
            self.key.clone(),
            self.max_sessions,
            self.rate_limit,
            self.duration,
            misura_rtt::reflect::MAX_SOURCES,
        )
    }
}

/// `misura reflect --irtt`'s method: the request's plan, then [`run`].
pub fn serve(
    request: &ReflectRequest,
    stop: &AtomicUsize,
    ready: &mut dyn FnMut(&Ready<'_>),
) -> Result<ReflectSummary, Error> {
    run(&request.plan()?, stop, ready)
}

/// What the reflector is about to serve, before its loop starts.
pub struct Ready<'a> {
    pub listen: &'a str,
    /// "authenticated (HMAC-MD5)" or "unauthenticated".
    pub mode: &'static str,
    /// Where the receive stamps come from, in words.
    pub receive_stamps: &'static str,
    pub config: &'a Config,
}

/// Answers `irtt client` until `stop` is set (to a signal's number) or the
/// plan's duration has passed; `ready` hears of it once the socket is open.
pub fn run(
    plan: &ReflectPlan,
    stop: &AtomicUsize,
    ready: &mut dyn FnMut(&Ready<'_>),
) -> Result<ReflectSummary, Error> {
    let started_at = misura_cli::meta::now_rfc3339();
    let addr = plan.addr;
    let sock = UdpTsSocket::bind(addr).map_err(|source| Error::Listen { addr, source })?;
    let granted = sock
        .enable_stamps(false)
        .map_err(|source| Error::Stamps { addr, source })?;
    let listen = sock.local_addr().to_string();
    let mode = if plan.key.is_some() {
        "authenticated (HMAC-MD5)"
    } else {
        "unauthenticated"
    };
    let receive_stamps = if granted.software_rx {
        "kernel software RX stamp (wall: CLOCK_REALTIME; monotonic: the same instant on CLOCK_MONOTONIC since the reflector started)"
    } else {
        "user clock read after the receive (the kernel gave no RX stamps)"
    };
    let cfg = Config::new(plan.key.clone(), plan.max_sessions, plan.rate_limit);
    ready(&Ready {
        listen: &listen,
        mode,
        receive_stamps,
        config: &cfg,
    });
    let mut r = Reflector::new(cfg);
    let started = monotonic();
    let deadline = plan.duration.map(|d| started.saturating_add(d));
    let should_stop =
        || stop.load(Ordering::Relaxed) != 0 || deadline.is_some_and(|d| monotonic() >= d);
    let served = crate::server::run(&sock, &mut r, &should_stop);
    // A reflector runs until it is stopped: a signal is its normal end.
    let stop_reason = match stop.load(Ordering::Relaxed) {
        0 => misura_report::StopReason::Finished,
        s => misura_cli::exit::signal_reason(s),
    };
    Ok(ReflectSummary {
        meta: misura_cli::meta::meta("misura.irtt-reflect", started_at),
        complete: true,
        stop_reason,
        listen,
        mode: mode.into(),
        receive_stamps: receive_stamps.into(),
        send_stamps: SEND_STAMPS.into(),
        max_sessions: plan.max_sessions,
        rate_limit_per_s: plan.rate_limit,
        duration_s: (monotonic() - started).as_secs_f64(),
        counters: *r.counters(),
        io: served.io,
        sessions_open: r.sessions(),
        turnaround_kernel: served.turnaround.snapshot_if_any(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamp_options_are_refused_before_the_bounds() {
        let r = ReflectRequest {
            ip: IpAddr::from([127, 0, 0, 1]),
            port: 2112,
            key: None,
            max_sessions: 0,
            rate_limit: 10,
            duration: None,
            stamp_options: true,
        };
        assert!(matches!(r.plan(), Err(Error::StampOptions)));
        let r = ReflectRequest {
            stamp_options: false,
            ..r
        };
        assert!(
            matches!(r.plan(), Err(Error::ReflectBounds { most, .. }) if most == misura_rtt::reflect::MAX_SOURCES)
        );
        let r = ReflectRequest {
            max_sessions: 4096,
            key: Some(Vec::new()),
            ..r
        };
        assert!(matches!(r.plan(), Err(Error::KeyLength { len: 0, .. })));
    }
}
