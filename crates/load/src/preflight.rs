//! Before the first phase, `misura load` checks that both peers answer: the
//! server that carries the load (`misura serve`: its HELLO, within the
//! client's connect timeout) and the reflector the probes go to (a short
//! `misura rtt` session: its warm-up fails within a second when nothing
//! replies). Without this, a missing server showed only after all three
//! phases, as `up 0.00 Mbit/s` and an RPM of the idle path.

use crate::error::{LoadError, ReflectorWhy};
use crate::plan::LoadPlan;
use misura_cli::exit::one_line;
use misura_cli::exit::BoxedError;
use misura_rtt::plan::Span;
use misura_throughput::client::{Control, DEFAULT_PORT};
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::time::Duration;

/// The reflector check's session: its warm-up and a few probes.
const REFLECTOR_CHECK_NS: i64 = 300_000_000;
/// How long each of the check's warm-up probes waits for its reply (the
/// path is idle yet): eight of them bound the check to 8 s.
const CHECK_TIMEOUT: Span = Span::from_secs(1);
/// How long to wait for the host's ICMP "port unreachable".
const ICMP_WAIT: Duration = Duration::from_millis(300);

/// Fails at once when the reflector's host answers a datagram with ICMP
/// port unreachable (nothing listens on that UDP port); a reply, or
/// silence, passes on to the probes' own check.
fn udp_refused(reflector: &str) -> Result<(), BoxedError> {
    let addr = misura_cli::target::resolve(reflector, 862)?;
    let bind: SocketAddr = if addr.is_ipv6() {
        "[::]:0".parse()?
    } else {
        "0.0.0.0:0".parse()?
    };
    let s = UdpSocket::bind(bind)?;
    s.connect(addr)?;
    s.set_read_timeout(Some(ICMP_WAIT))?;
    // An unauthenticated STAMP request of sequence number 0: a reflector
    // answers it (or, authenticated, drops it), a closed port refuses it.
    s.send(&[0u8; 44])?;
    let mut buf = [0u8; 2048];
    match s.recv(&mut buf) {
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => Err(format!(
            "{addr} answered ICMP port unreachable: nothing listens on that UDP port"
        )
        .into()),
        _ => Ok(()),
    }
}

/// Checks the server (unless the load needs none) and the reflector; the
/// error names the address and what to start there.
pub fn check_peers(
    a: &LoadPlan,
    probe: crate::Probe,
    stop: &Arc<AtomicUsize>,
) -> Result<(), LoadError> {
    let host = crate::phases::host_only(&a.host);
    let addr = misura_cli::target::resolve(&a.host, DEFAULT_PORT)?;
    // An iperf3 load needs misura serve only for --rr.
    let serve = a.server.is_none() || a.rr;
    if serve {
        Control::connect(addr).map_err(|e| LoadError::ServerMissing {
            host: host.clone(),
            rr: a.rr,
            why: one_line(&e),
        })?;
    }
    let reflector = a.reflector.clone().unwrap_or_else(|| host.clone());
    let missing = |why| LoadError::ReflectorMissing {
        reflector: reflector.clone(),
        why,
    };
    // An irtt reflector (irtt://HOST) is checked by the short session below.
    if let Some(Err(e)) = (!reflector.starts_with("irtt://")).then(|| udp_refused(&reflector)) {
        return Err(missing(ReflectorWhy::Said(e.to_string())));
    }
    let timeout = a.timeout.span().min(CHECK_TIMEOUT);
    // A refused key file or plan is the probes' own refusal, as their
    // session would give it.
    let args = crate::phases::rtt_request(a, REFLECTOR_CHECK_NS, None, timeout).map_err(|e| {
        missing(match e {
            LoadError::ProbePlan(p) => ReflectorWhy::Plan(p),
            e => ReflectorWhy::Said(one_line(&e)),
        })
    })?;
    probe(&args, stop).map_err(|e| missing(ReflectorWhy::Probe(e)))?;
    Ok(())
}
