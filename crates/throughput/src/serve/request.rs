//! A client's test request, checked against the limits before anything is
//! allocated for it.

use super::limits::*;
use crate::proto::{self, Fields};
use misura_wire::control::Message;
use std::time::Duration;

/// A test's parameters, checked.
#[derive(Clone, Debug)]
pub struct Spec {
    pub kind: String,
    pub direction: String,
    pub streams: u64,
    pub duration: Duration,
    pub msg_size: u64,
    pub sndbuf: u64,
    pub rcvbuf: u64,
    pub nodelay: bool,
    pub rate_bps: u64,
    pub df: bool,
    /// udp reverse: every datagram at its own time (`--pacing spin`).
    pub pacing_spin: bool,
    pub request_size: u64,
    pub response_size: u64,
    pub burst: u64,
    pub client_name: Option<String>,
}

impl Spec {
    pub fn is_udp(&self) -> bool {
        matches!(self.kind.as_str(), "udp" | "rr-udp" | "setup")
    }
    pub fn server_sends(&self) -> bool {
        self.direction != "forward"
    }
    pub fn server_receives(&self) -> bool {
        self.direction != "reverse"
    }
}

fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0} s")
    } else {
        format!("{s:.3} s")
    }
}

/// Read and check a request's parameters against the limits.
pub fn parse_request(m: &Message, l: &Limits) -> Result<Spec, String> {
    let spec = read_spec(m, l)?;
    check_limits(&spec, l)?;
    check_sizes(&spec)?;
    if spec.burst == 0 || spec.burst > 1024 {
        return Err(format!("burst {} outside 1 … 1024", spec.burst));
    }
    if spec.kind == "crr" && spec.burst.max(spec.streams) > l.max_streams as u64 {
        return Err(format!(
            "{} connections in flight above the limit of {}",
            spec.burst, l.max_streams
        ));
    }
    Ok(spec)
}

/// The request's fields, the defaults filled in; an unknown kind or
/// direction is refused.
fn read_spec(m: &Message, l: &Limits) -> Result<Spec, String> {
    let kind = m
        .need_str(proto::F_KIND, "kind")
        .map_err(|e| e.to_string())?
        .to_string();
    if !matches!(
        kind.as_str(),
        "tcp" | "udp" | "rr-tcp" | "rr-udp" | "crr" | "setup"
    ) {
        return Err(format!(
            "unknown test kind `{kind}` (this server runs tcp, udp, rr-tcp, rr-udp, crr, setup)"
        ));
    }
    let direction = m.str(proto::F_DIRECTION).unwrap_or("forward").to_string();
    if !matches!(direction.as_str(), "forward" | "reverse" | "bidir") {
        return Err(format!(
            "unknown direction `{direction}` (forward, reverse or bidir)"
        ));
    }
    let u = |id, default| m.opt_u64(id).unwrap_or(default);
    let udp = matches!(kind.as_str(), "udp" | "rr-udp" | "setup");
    let duration_ns = u(
        proto::F_DURATION_NS,
        (l.max_duration.as_nanos() as u64).min(10_000_000_000),
    );
    Ok(Spec {
        direction,
        streams: u(proto::F_STREAMS, 1),
        duration: Duration::from_nanos(duration_ns),
        msg_size: u(
            proto::F_MSG_SIZE,
            if kind == "udp" { 1472 } else { 128 * 1024 },
        ),
        sndbuf: u(proto::F_SNDBUF, 0),
        rcvbuf: u(proto::F_RCVBUF, 0),
        nodelay: m.opt_bool(proto::F_NODELAY).unwrap_or(false),
        rate_bps: u(proto::F_RATE_BPS, 0),
        df: m.opt_bool(proto::F_DF).unwrap_or(false),
        pacing_spin: m.str(proto::F_PACING_MODE) == Some("spin"),
        request_size: u(proto::F_REQUEST_SIZE, if udp { 16 } else { 1 }),
        response_size: u(proto::F_RESPONSE_SIZE, if udp { 16 } else { 1 }),
        burst: u(proto::F_BURST, 1),
        client_name: m
            .str(proto::F_CLIENT_NAME)
            .map(|s| s.chars().filter(|c| !c.is_control()).take(64).collect()),
        kind,
    })
}

/// The limits of this server: streams, duration, rate, socket buffers.
fn check_limits(spec: &Spec, l: &Limits) -> Result<(), String> {
    if spec.streams == 0 || spec.streams > l.max_streams as u64 {
        return Err(format!(
            "{} streams outside 1 … {} (limit of this server)",
            spec.streams, l.max_streams
        ));
    }
    if spec.duration.is_zero() {
        return Err("duration 0: ask for a test of some length".into());
    }
    if spec.duration > l.max_duration {
        return Err(format!(
            "duration {} above the limit of {}",
            secs(spec.duration),
            secs(l.max_duration)
        ));
    }
    if spec.rate_bps > l.max_rate_bps {
        return Err(format!(
            "rate {} above the limit of {}",
            misura_report::serve::human_bps(spec.rate_bps as f64),
            misura_report::serve::human_bps(l.max_rate_bps as f64)
        ));
    }
    if spec.sndbuf > MAX_SOCKET_BUFFER || spec.rcvbuf > MAX_SOCKET_BUFFER {
        return Err(format!("socket buffer above {} bytes", MAX_SOCKET_BUFFER));
    }
    Ok(())
}

/// Message, datagram, request and response sizes for the test's kind.
fn check_sizes(spec: &Spec) -> Result<(), String> {
    match spec.kind.as_str() {
        "tcp" if !(1..=MAX_MSG_SIZE).contains(&spec.msg_size) => Err(format!(
            "message size {} outside 1 … {MAX_MSG_SIZE} bytes",
            spec.msg_size
        )),
        "udp" if !(24..=MAX_DATAGRAM).contains(&spec.msg_size) => Err(format!(
            "datagram size {} outside 24 … {MAX_DATAGRAM} bytes",
            spec.msg_size
        )),
        "rr-tcp" | "crr" => request_response(spec, 1, MAX_MSG_SIZE),
        "rr-udp" | "setup" => {
            // Under 16 bytes a datagram has no room for the test id and
            // transaction number: allowed for rr-udp with one in flight.
            let rr = spec.kind == "rr-udp";
            request_response(spec, if rr { 1 } else { 16 }, MAX_DATAGRAM)?;
            if rr && spec.request_size.min(spec.response_size) < 16 && spec.burst > 1 {
                return Err(
                    "datagrams under 16 bytes carry no transaction number: only burst 1".into(),
                );
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

fn request_response(spec: &Spec, min: u64, max: u64) -> Result<(), String> {
    for (what, v) in [
        ("request", spec.request_size),
        ("response", spec.response_size),
    ] {
        if !(min..=max).contains(&v) {
            return Err(format!("{what} size {v} outside {min} … {max} bytes"));
        }
    }
    Ok(())
}
