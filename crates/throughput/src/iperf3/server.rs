//! misura as an iperf3 server (`misura serve --iperf3 [PORT]`): answers
//! `iperf3 -c` on iperf3's own protocol, one test at a time as iperf3 does
//! (the UDP streams of two tests could not be told apart on the shared
//! port), within serve's limits: streams, duration, rate, the handshake
//! timeout for every control message and the idle timeout while data
//! flows. Its tests go into serve's report like misura's own.

use super::control::Ctrl;
use super::data::{self, Sock, StreamOutcome, StreamSpec};
use super::server_end::{exchange, record};
use crate::error::{Iperf3PeerError, Result};
use crate::serve::state::Shared;
use misura_cli::exit::one_line;
use misura_wire::iperf3::{self as wire, errno, Cookie, Params, Protocol, Results, State};
use socket2::{Domain, Socket, Type};
use std::io::Write;
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The test running now: its cookie, and where its data connections go.
struct Current {
    cookie: Cookie,
    data: Sender<(TcpStream, Slot)>,
    /// Data connections the test takes (its streams; 0 until the
    /// parameters are known) and those it has been given: one beyond is
    /// closed at once, so the cookie opens no more than the test's streams.
    expected: usize,
    arrived: usize,
}

/// One socket held against `--max-connections`: released when the socket
/// is (a data connection's slot travels with it to the end of its test).
struct Slot(Arc<AtomicUsize>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Start answering iperf3 clients on `listener` until `stop`.
pub fn start(listener: TcpListener, shared: Arc<Shared>, stop: Arc<AtomicBool>) -> JoinHandle<()> {
    std::thread::Builder::new()
        .name("iperf3-serve".into())
        .spawn(move || accept_loop(listener, shared, stop))
        .expect("spawning the iperf3 server thread")
}

fn accept_loop(listener: TcpListener, shared: Arc<Shared>, stop: Arc<AtomicBool>) {
    let _ = listener.set_nonblocking(false);
    let current: Arc<Mutex<Option<Current>>> = Arc::new(Mutex::new(None));
    let local = listener.local_addr().ok();
    // Connections held at once (a thread each), at most --max-connections.
    let held = Arc::new(AtomicUsize::new(0));
    while !stop.load(Ordering::Relaxed) {
        let (s, peer) = match listener.accept() {
            Ok(x) => x,
            Err(e) => {
                crate::serve::accept::accept_failed(&e, shared.quiet, "misura serve (iperf3)");
                continue;
            }
        };
        if held.load(Ordering::Relaxed) >= shared.limits.max_connections {
            shared.count(|c| c.connections_refused_full += 1);
            continue; // dropped: closed at once
        }
        shared.count(|c| c.connections_accepted += 1);
        held.fetch_add(1, Ordering::Relaxed);
        let slot = Slot(held.clone());
        let (shared, current, stop) = (shared.clone(), current.clone(), stop.clone());
        let local = local.unwrap_or(peer);
        let _ = std::thread::Builder::new()
            .name("iperf3-conn".into())
            .spawn(move || {
                let r = connection(s, slot, peer, local, &shared, &current, &stop);
                if let Err(e) = r {
                    if !shared.quiet {
                        log::warn!("misura serve (iperf3): {peer}: {}", one_line(&e));
                    }
                }
            });
    }
}

/// A new connection: its cookie says whether it is a data connection of the
/// running test or a new client.
fn connection(
    s: TcpStream,
    slot: Slot,
    peer: SocketAddr,
    local: SocketAddr,
    shared: &Arc<Shared>,
    current: &Arc<Mutex<Option<Current>>>,
    stop: &AtomicBool,
) -> Result<()> {
    let mut c = Ctrl::new(s)?;
    let mut b = [0u8; wire::COOKIE_LEN];
    let hs = shared.limits.handshake_timeout;
    c.step = hs;
    c.s.set_write_timeout(Some(hs))?;
    if let Err(e) = c.read_exact_by(&mut b, Instant::now() + hs, "the cookie") {
        shared.count(|x| x.handshake_timeouts += 1);
        return Err(e);
    }
    let cookie = match Cookie::parse(&b) {
        Ok(k) => k,
        Err(e) => {
            shared.count(|x| x.malformed += 1);
            return Err(Iperf3PeerError::Cookie(e).into());
        }
    };
    let rx = {
        let mut cur = current.lock().unwrap();
        match cur.as_mut() {
            Some(t) if t.cookie == cookie => {
                if t.arrived >= t.expected {
                    shared.count(|x| x.connections_refused_full += 1);
                    return Err(Iperf3PeerError::ExtraStream {
                        expected: t.expected,
                    }
                    .into());
                }
                t.arrived += 1;
                let _ = t.data.send((c.s, slot));
                return Ok(());
            }
            Some(_) => {
                // Busy, as iperf3 answers: ACCESS_DENIED.
                shared.refused("busy: an iperf3 test is running");
                let _ = c.write_state(State::AccessDenied);
                return Ok(());
            }
            None => {
                let (tx, rx) = channel();
                *cur = Some(Current {
                    cookie,
                    data: tx,
                    expected: 0,
                    arrived: 0,
                });
                rx
            }
        }
    };
    let r = test(&mut c, peer, local, shared, &rx, current, stop);
    *current.lock().unwrap() = None;
    r
}

/// Refuse the test as iperf3 would: SERVER_ERROR, its error number, errno 0.
fn refuse(c: &mut Ctrl, shared: &Shared, code: i32, why: String) -> Result<()> {
    shared.refused(&why);
    c.write_state(State::ServerError)?;
    let mut b = [0u8; 8];
    b[..4].copy_from_slice(&code.to_be_bytes());
    c.s.write_all(&b)?;
    Err(Iperf3PeerError::Refused { why }.into())
}

/// The parameters checked against serve's limits: the refusal's iperf3
/// error number and text, if any.
fn check(p: &Params, shared: &Shared) -> Option<(i32, String)> {
    let l = &shared.limits;
    let (send, recv) = p.senders();
    let rate = p
        .bandwidth
        .unwrap_or(0)
        .saturating_mul((send + recv) as u64);
    match () {
        _ if p.protocol == Protocol::Sctp => {
            Some((errno::PROTOCOL, "iperf3 over SCTP is not served".into()))
        }
        _ if p.authtoken => Some((
            errno::AUTH_TEST,
            "iperf3 authentication (--username) is not served".into(),
        )),
        _ if p.len == Some(0) => Some((
            errno::BLOCK_SIZE,
            "a block size (-l) of 0 bytes: give at least 1".into(),
        )),
        _ if p.num > 0 || p.blockcount > 0 || p.time == 0 => Some((
            errno::UNIMPLEMENTED,
            "iperf3 -n/-k (a byte or block count) is not served: use -t".into(),
        )),
        _ if (send + recv) as usize > l.max_streams => Some((
            errno::NUM_STREAMS,
            format!(
                "{} streams is above the server's stream limit of {}",
                send + recv,
                l.max_streams
            ),
        )),
        _ if Duration::from_secs(p.time) > l.max_duration => Some((
            errno::DURATION,
            format!(
                "{} s is above the server's duration limit of {} s",
                p.time,
                l.max_duration.as_secs()
            ),
        )),
        _ if rate > l.max_rate_bps => Some((
            errno::TOTAL_RATE,
            format!(
                "{rate} bit/s is above the server's rate limit of {} bit/s",
                l.max_rate_bps
            ),
        )),
        _ => None,
    }
}

/// One iperf3 test, from PARAM_EXCHANGE to IPERF_DONE.
fn test(
    c: &mut Ctrl,
    peer: SocketAddr,
    local: SocketAddr,
    shared: &Arc<Shared>,
    rx: &Receiver<(TcpStream, Slot)>,
    current: &Mutex<Option<Current>>,
    stop: &AtomicBool,
) -> Result<()> {
    let hs = shared.limits.handshake_timeout;
    c.write_state(State::ParamExchange)?;
    let body = match c.read_json("the parameter message") {
        Ok(b) => b,
        Err(e) => {
            let stalled = format!("{e}").contains("stalled");
            shared.count(|x| {
                if stalled {
                    x.handshake_timeouts += 1
                } else {
                    x.malformed += 1
                }
            });
            return Err(e);
        }
    };
    let p = match Params::parse(&body) {
        Ok(p) => p,
        Err(e) => {
            shared.count(|x| x.malformed += 1);
            return refuse(c, shared, errno::UNIMPLEMENTED, e.to_string());
        }
    };
    if let Some((code, why)) = check(&p, shared) {
        return refuse(c, shared, code, why);
    }
    shared.count(|x| x.tests_accepted += 1);
    let udp = p.protocol == Protocol::Udp;
    let (send, recv) = p.senders();
    let n = (send + recv) as usize;
    let udp_sock = if udp { Some(udp_socket(local)?) } else { None };
    if !udp {
        if let Some(t) = current.lock().unwrap().as_mut() {
            t.expected = n;
        }
    }
    c.write_state(State::CreateStreams)?;
    // The client's senders connect first (the server receives on them).
    let deadline = Instant::now() + hs;
    let mut socks = Vec::new();
    // The data connections' slots, held until the test ends.
    let mut slots = Vec::new();
    for k in 0..n {
        let server_sends = k >= send as usize;
        let sock = match &udp_sock {
            Some(u) => Sock::Udp(udp_accept(u, local, peer, deadline)?),
            None => {
                let (t, slot) = rx
                    .recv_timeout(deadline.saturating_duration_since(Instant::now()))
                    .map_err(|_| Iperf3PeerError::StreamsMissing {
                        opened: k,
                        streams: n,
                        secs: hs.as_secs(),
                    })?;
                slots.push(slot);
                Sock::Tcp(t)
            }
        };
        if let (Some(w), Sock::Tcp(t)) = (p.window, &sock) {
            let s = socket2::SockRef::from(t);
            let _ = s.set_send_buffer_size(w as usize);
            let _ = s.set_recv_buffer_size(w as usize);
        }
        socks.push((sock, server_sends));
    }
    c.write_state(State::TestStart)?;
    c.write_state(State::TestRunning)?;
    let r = run(c, &p, peer, socks, shared, stop);
    drop(slots);
    r
}

fn udp_socket(local: SocketAddr) -> Result<Socket> {
    let s = Socket::new(Domain::for_address(local), Type::DGRAM, None)?;
    s.set_reuse_address(true)?;
    s.set_reuse_port(true)?;
    s.bind(&local.into())?;
    Ok(s)
}

/// A UDP stream: the client's connect datagram on the shared port, a
/// socket of its own connected to the client, the reply. Only a datagram
/// from the control connection's address counts (as misura's own UDP path
/// does): a connect message sprayed from elsewhere cannot take the stream.
fn udp_accept(
    listen: &Socket,
    local: SocketAddr,
    peer: SocketAddr,
    deadline: Instant,
) -> Result<UdpSocket> {
    let u: &UdpSocket = &listen.try_clone()?.into();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(Iperf3PeerError::NoUdpConnect.into());
        }
        u.set_read_timeout(Some(left))?;
        let mut b = [0u8; 64];
        if let Ok((k, from)) = u.recv_from(&mut b) {
            if from.ip().to_canonical() != peer.ip().to_canonical() {
                continue; // not the client's address: not its stream
            }
            if wire::is_connect_msg(&b[..k]) {
                let s = udp_socket(local)?;
                s.connect(&from.into())?;
                let s: UdpSocket = s.into();
                s.send(&wire::CONNECT_REPLY)?;
                return Ok(s);
            }
        }
    }
}

/// The data phase and the results exchange.
fn run(
    c: &mut Ctrl,
    p: &Params,
    peer: SocketAddr,
    socks: Vec<(Sock, bool)>,
    shared: &Arc<Shared>,
    stop: &AtomicBool,
) -> Result<()> {
    let l = &shared.limits;
    let started_at = misura_cli::meta::now_rfc3339();
    let cpu0 = misura_sys::rusage::process_cpu();
    let t0 = Instant::now();
    let udp = p.protocol == Protocol::Udp;
    let len = p.len.unwrap_or(if udp { 1460 } else { 128 * 1024 }) as usize;
    let rate = p.bandwidth.unwrap_or(if udp { 1_000_000 } else { 0 });
    let (stop_send, stop_recv) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicBool::new(false)),
    );
    let moved = Arc::new(AtomicU64::new(0));
    let mut threads = Vec::new();
    for (sock, sender) in socks {
        let spec = StreamSpec {
            sender,
            len,
            rate_bps: rate,
            counters64: p.udp_counters_64bit,
        };
        let flag = if sender {
            stop_send.clone()
        } else {
            stop_recv.clone()
        };
        threads.push((sender, data::start(sock, spec, flag, moved.clone())?));
    }
    // Until TEST_END: at most the test's time plus the idle timeout, and
    // no longer than the idle timeout without a byte on any stream.
    let limit = t0 + Duration::from_secs(p.time) + l.idle_timeout;
    let (mut seen, mut last_data) = (0u64, Instant::now());
    // A stream paced slower than a block per --idle-timeout (-b 1k -l 1460)
    // is not idle between its blocks: twice its interval then.
    let block_every = if rate > 0 {
        Duration::from_secs_f64((2.0 * len as f64 * 8.0 / rate as f64).min(1e6))
    } else {
        Duration::ZERO
    };
    let idle = l.idle_timeout.max(block_every);
    let mut reason = None;
    loop {
        let m = moved.load(Ordering::Relaxed);
        if m != seen {
            (seen, last_data) = (m, Instant::now());
        } else if last_data.elapsed() > idle {
            let _ = c.write_state(State::ServerTerminate);
            reason = Some(format!(
                "no data on any stream for {:.1} s (the idle timeout is {} s)",
                idle.as_secs_f64(),
                l.idle_timeout.as_secs()
            ));
            break;
        }
        if stop.load(Ordering::Relaxed) {
            let _ = c.write_state(State::ServerTerminate);
            reason = Some("the server stopped".to_string());
            break;
        }
        if Instant::now() > limit {
            let _ = c.write_state(State::ServerTerminate);
            reason = Some(format!(
                "no TEST_END within the test's {} s and the idle timeout of {} s",
                p.time,
                l.idle_timeout.as_secs()
            ));
            break;
        }
        match c.poll_state(Duration::from_millis(100)) {
            Ok(None) => {}
            Ok(Some(State::TestEnd)) => break,
            Ok(Some(s)) => {
                reason = Some(format!("the iperf3 client sent {}", s.name()));
                break;
            }
            Err(e) => {
                reason = Some(one_line(&e));
                break;
            }
        }
    }
    let elapsed = t0.elapsed();
    stop_send.store(true, Ordering::Relaxed);
    stop_recv.store(true, Ordering::Relaxed);
    let outs: Vec<StreamOutcome> = threads
        .into_iter()
        .map(|(_, h)| h.join().map(|(_s, o)| o).unwrap_or_default())
        .collect();
    let (u, s) = misura_sys::rusage::process_cpu();
    let cpu = (u.saturating_sub(cpu0.0), s.saturating_sub(cpu0.1));
    let mut client: Option<Results> = None;
    if reason.is_none() {
        match exchange(c, p, &outs, elapsed, cpu) {
            Ok(r) => client = Some(r),
            Err(e) => reason = Some(one_line(&e)),
        }
    }
    let rec = record(
        p,
        peer,
        started_at,
        elapsed,
        &outs,
        client.as_ref(),
        cpu,
        reason,
    );
    if !shared.quiet {
        log::info!(
            "misura serve (iperf3): {} {} {} streams {:.3} s: received {} B, sent {} B{}",
            rec.client,
            rec.kind,
            rec.streams,
            elapsed.as_secs_f64(),
            rec.bytes_received,
            rec.bytes_sent,
            rec.partial_reason
                .as_ref()
                .map(|r| format!(" (partial: {r})"))
                .unwrap_or_default()
        );
    }
    shared.results.lock().unwrap().push(rec);
    Ok(())
}
