//! misura as an iperf3 client (`misura tcp|udp HOST --peer iperf3`): the
//! control exchange with `iperf3 -s`, the data streams, and both ends'
//! figures. A failure before the data flows is an error; after, the run
//! ends with what was measured, marked partial, with the reason.

use super::control::{Ctrl, STEP_TIMEOUT};
use super::data::{self, Sock, StreamOutcome, StreamSpec};
use crate::error::{Iperf3PeerError, Result, ThroughputError};
use misura_cli::exit::one_line;
use misura_wire::iperf3::{self as wire, Cookie, Params, Protocol, Results, State, StreamResult};
use socket2::{Domain, SockAddr, Socket, Type};
use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::sync::atomic::AtomicU64;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// After the test's time, how long the server has for the whole results
/// exchange; then the run ends, partial, with what this end counted.
pub const FINISH_GRACE: Duration = Duration::from_secs(10);

/// What the client asks of the server.
#[derive(Clone, Debug)]
pub struct Iperf3Plan {
    /// HOST, HOST:PORT or [V6]:PORT (default port 5201).
    pub host: String,
    pub params: Params,
    /// `--cport`: the first local port of the data streams.
    pub cport: Option<u16>,
}

/// One data stream as this end saw it.
#[derive(Clone, Debug, Default)]
pub struct StreamRow {
    /// iperf3's stream id (1, 3, 4, …).
    pub id: i64,
    pub local_port: u16,
    pub sndbuf: u64,
    pub rcvbuf: u64,
    pub outcome: StreamOutcome,
}

/// A run against an iperf3 server.
#[derive(Clone, Debug)]
pub struct PeerRun {
    pub addr: SocketAddr,
    pub started_at: String,
    pub complete: bool,
    pub stop_reason: misura_report::StopReason,
    /// TEST_RUNNING received → TEST_END sent.
    pub elapsed_ns: u64,
    pub streams: Vec<StreamRow>,
    /// This process's CPU over the test (user, system ns).
    pub cpu_local: (u64, u64),
    /// The server's results message, when it came.
    pub peer: Option<Results>,
}

/// iperf3's id of the k-th stream (id 2 is never used).
pub fn stream_id(k: usize) -> i64 {
    if k == 0 {
        1
    } else {
        k as i64 + 2
    }
}

/// Run the test; `Err` when it could not start.
pub fn run(p: &Iperf3Plan, stop: &Arc<AtomicUsize>) -> Result<PeerRun> {
    run_on(p, None, stop)
}

/// Run the test on `conn`, a control connection already open to the
/// server (`--peer auto`'s probe), or on a new one.
pub fn run_on(p: &Iperf3Plan, conn: Option<TcpStream>, stop: &Arc<AtomicUsize>) -> Result<PeerRun> {
    let addr = misura_cli::target::resolve(&p.host, wire::DEFAULT_PORT)?;
    let started_at = misura_cli::meta::now_rfc3339();
    let mut rnd = [0u8; wire::COOKIE_LEN - 1];
    {
        use std::io::Read;
        std::fs::File::open("/dev/urandom")
            .and_then(|mut f| f.read_exact(&mut rnd))
            .map_err(ThroughputError::step(
                "reading /dev/urandom for the iperf3 cookie",
            ))?;
    }
    let cookie = Cookie::from_random(&rnd);
    let s = match conn {
        Some(s) => s,
        None => TcpStream::connect_timeout(&addr, crate::client::CONNECT_TIMEOUT)
            .map_err(|source| Iperf3PeerError::Connect { addr, source })?,
    };
    let mut c = Ctrl::new(s)?;
    c.s.set_write_timeout(Some(STEP_TIMEOUT))?;
    use std::io::Write;
    c.s.write_all(&cookie.0)
        .map_err(ThroughputError::step("sending the cookie"))?;
    c.expect_state(State::ParamExchange)?;
    c.write_json(&p.params.to_json())?;
    c.expect_state(State::CreateStreams)?;
    let (send, recv) = p.params.senders();
    let mut socks = Vec::new();
    for k in 0..(send + recv) as usize {
        let sender = k < send as usize;
        let port = p.cport.map(|c| c.saturating_add(k as u16));
        let (sock, row) =
            connect_stream(p, addr, &cookie, port, k).map_err(|e| Iperf3PeerError::Stream {
                stream: k + 1,
                addr,
                source: Box::new(e),
            })?;
        socks.push((sock, sender, row));
    }
    c.expect_state(State::TestStart)?;
    c.expect_state(State::TestRunning)?;
    Ok(measure(p, addr, started_at, c, socks, stop))
}

fn connect_stream(
    p: &Iperf3Plan,
    addr: SocketAddr,
    cookie: &Cookie,
    port: Option<u16>,
    k: usize,
) -> Result<(Sock, StreamRow)> {
    let udp = p.params.protocol == Protocol::Udp;
    let ty = if udp { Type::DGRAM } else { Type::STREAM };
    let so = Socket::new(Domain::for_address(addr), ty, None)?;
    if let Some(w) = p.params.window {
        so.set_send_buffer_size(w as usize)?;
        so.set_recv_buffer_size(w as usize)?;
    }
    if let Some(port) = port {
        let any: SocketAddr = if addr.is_ipv6() {
            ([0u16; 8], port).into()
        } else {
            ([0u8; 4], port).into()
        };
        so.set_reuse_address(true)?;
        so.bind(&SockAddr::from(any))
            .map_err(|source| Iperf3PeerError::BindCport { port, source })?;
    }
    if p.params.nodelay && !udp {
        so.set_tcp_nodelay(true)?;
    }
    so.connect_timeout(&SockAddr::from(addr), crate::client::CONNECT_TIMEOUT)?;
    let row = StreamRow {
        id: stream_id(k),
        local_port: so.local_addr()?.as_socket().map_or(0, |a| a.port()),
        sndbuf: so.send_buffer_size()? as u64,
        rcvbuf: so.recv_buffer_size()? as u64,
        outcome: StreamOutcome::default(),
    };
    if udp {
        let u: UdpSocket = so.into();
        u.send(&wire::CONNECT_MSG)?;
        u.set_read_timeout(Some(Duration::from_millis(200)))?;
        let deadline = Instant::now() + STEP_TIMEOUT;
        let mut b = [0u8; 65_536];
        loop {
            if Instant::now() > deadline {
                return Err(Iperf3PeerError::NoConnectReply {
                    secs: STEP_TIMEOUT.as_secs(),
                }
                .into());
            }
            match u.recv(&mut b) {
                Ok(n) if wire::is_connect_reply(&b[..n]) => break,
                Ok(_) => {}
                Err(_) => {}
            }
        }
        Ok((Sock::Udp(u), row))
    } else {
        let mut t: TcpStream = so.into();
        use std::io::Write;
        t.set_write_timeout(Some(STEP_TIMEOUT))?;
        t.write_all(&cookie.0).map_err(ThroughputError::step(
            "sending the cookie on a data connection",
        ))?;
        Ok((Sock::Tcp(t), row))
    }
}

/// The running test: streams started, the control connection watched
/// until the planned end, then TEST_END and the results exchange.
fn measure(
    p: &Iperf3Plan,
    addr: SocketAddr,
    started_at: String,
    mut c: Ctrl,
    socks: Vec<(Sock, bool, StreamRow)>,
    stop: &Arc<AtomicUsize>,
) -> PeerRun {
    let cpu0 = misura_sys::rusage::process_cpu();
    let t0 = Instant::now();
    let end = t0 + Duration::from_secs(p.params.time.max(1));
    let stop_send = Arc::new(AtomicBool::new(false));
    let stop_recv = Arc::new(AtomicBool::new(false));
    let udp = p.params.protocol == Protocol::Udp;
    let len = p.params.len.unwrap_or(if udp { 1460 } else { 128 * 1024 }) as usize;
    let rate = p
        .params
        .bandwidth
        .unwrap_or(if udp { 1_000_000 } else { 0 });
    let mut rows = Vec::new();
    let mut threads = Vec::new();
    let mut reason = String::new();
    for (sock, sender, row) in socks {
        let spec = StreamSpec {
            sender,
            len,
            rate_bps: rate,
            counters64: p.params.udp_counters_64bit,
        };
        let flag = if sender { &stop_send } else { &stop_recv };
        match data::start(sock, spec, flag.clone(), Arc::new(AtomicU64::new(0))) {
            Ok(h) => threads.push(Some(h)),
            Err(e) => {
                reason = format!("could not start a stream thread: {e}");
                threads.push(None);
            }
        }
        rows.push(row);
    }
    // Until the planned end: watch the control connection.
    while reason.is_empty() && Instant::now() < end {
        if stop.load(Ordering::Relaxed) != 0 {
            reason = crate::client::signal_reason(stop).to_string();
            break;
        }
        match c.poll_state(
            Duration::from_millis(100).min(end.saturating_duration_since(Instant::now())),
        ) {
            Ok(None) => {}
            Ok(Some(s)) => reason = format!("the iperf3 server sent {} during the test", s.name()),
            Err(e) => reason = one_line(&e),
        }
    }
    stop_send.store(true, Ordering::Relaxed);
    let elapsed_ns = t0.elapsed().as_nanos() as u64;
    // From here the results exchange: bounded by the test's end plus
    // FINISH_GRACE in all, however the server drips or never stops sending,
    // and a signal ends it at once.
    c.until = Some(Instant::now().max(end) + FINISH_GRACE);
    c.abort = Some(stop.clone());
    let mut kept = Vec::new();
    for (row, h) in rows.iter_mut().zip(&mut threads) {
        if row_is_sender(row, p) {
            if let Some((sock, o)) = h.take().and_then(|h| h.join().ok()) {
                row.outcome = o;
                kept.push(sock);
            }
        }
    }
    let (u, s) = misura_sys::rusage::process_cpu();
    let cpu_local = (u.saturating_sub(cpu0.0), s.saturating_sub(cpu0.1));
    let mut peer = None;
    if reason.is_empty() || stop.load(Ordering::Relaxed) != 0 {
        let state = if reason.is_empty() {
            State::TestEnd
        } else {
            State::ClientTerminate
        };
        let _ = c.write_state(state);
    }
    if reason.is_empty() {
        match finish(
            &mut c,
            p,
            &mut rows,
            &mut threads,
            &stop_recv,
            elapsed_ns,
            cpu_local,
        ) {
            Ok(r) => peer = Some(r),
            Err(e) => reason = one_line(&e),
        }
    }
    stop_recv.store(true, Ordering::Relaxed);
    for (row, h) in rows.iter_mut().zip(&mut threads) {
        if let Some((sock, o)) = h.take().and_then(|h| h.join().ok()) {
            row.outcome = o;
            kept.push(sock);
        }
    }
    drop(kept);
    PeerRun {
        addr,
        started_at,
        complete: reason.is_empty(),
        stop_reason: if reason.is_empty() {
            misura_report::StopReason::Finished
        } else {
            misura_report::StopReason::other(reason)
        },
        elapsed_ns,
        streams: rows,
        cpu_local,
        peer,
    }
}

fn row_is_sender(row: &StreamRow, p: &Iperf3Plan) -> bool {
    let (send, _) = p.params.senders();
    let k = if row.id == 1 { 0 } else { row.id as usize - 2 };
    k < send as usize
}

/// TEST_END sent: wait for EXCHANGE_RESULTS (the receivers still drain),
/// swap results, DISPLAY_RESULTS → IPERF_DONE.
fn finish(
    c: &mut Ctrl,
    p: &Iperf3Plan,
    rows: &mut [StreamRow],
    threads: &mut [Option<data::Running>],
    stop_recv: &AtomicBool,
    elapsed_ns: u64,
    cpu: (u64, u64),
) -> Result<Results> {
    c.expect_state(State::ExchangeResults)?;
    // The server closed its streams at TEST_END: the receivers end at EOF
    // (TCP) or are stopped here (UDP).
    stop_recv.store(true, Ordering::Relaxed);
    for (row, h) in rows.iter_mut().zip(threads.iter_mut()) {
        if let Some((_sock, o)) = h.take().and_then(|h| h.join().ok()) {
            row.outcome = o;
        }
    }
    let ours = own_results(p, rows, elapsed_ns, cpu);
    c.write_json(&ours.to_json())?;
    let body = c.read_json("the server's results message")?;
    let theirs = Results::parse(&body)?;
    c.expect_state(State::DisplayResults)?;
    c.write_state(State::IperfDone)?;
    Ok(theirs)
}

/// This end's results message (what iperf3's send_results writes).
pub fn own_results(
    p: &Iperf3Plan,
    rows: &[StreamRow],
    elapsed_ns: u64,
    cpu: (u64, u64),
) -> Results {
    let secs = elapsed_ns as f64 / 1e9;
    let pct = |ns: u64| {
        if elapsed_ns > 0 {
            100.0 * ns as f64 / elapsed_ns as f64
        } else {
            0.0
        }
    };
    let tcp = p.params.protocol == Protocol::Tcp;
    let (send, _) = p.params.senders();
    Results {
        cpu_util_total: pct(cpu.0 + cpu.1),
        cpu_util_user: pct(cpu.0),
        cpu_util_system: pct(cpu.1),
        sender_has_retransmits: if send == 0 { -1 } else { tcp as i64 },
        congestion_used: None,
        streams: rows
            .iter()
            .map(|r| (r, &r.outcome))
            .map(|(r, o)| StreamResult {
                id: r.id,
                bytes: o.bytes,
                retransmits: match (o.sender && tcp, o.info) {
                    (true, Some(i)) => i.total_retrans as i64,
                    _ => -1,
                },
                jitter: o.jitter_s,
                errors: o.lost as i64,
                packets: o.packets as i64,
                start_time: Some(0.0),
                end_time: Some(secs),
            })
            .collect(),
    }
}
