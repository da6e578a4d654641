//! `misura udp`: paced UDP against `misura serve` (seed 001's UDP and
//! don't-fragment studies, seed 004's iperf figures): received rate, loss,
//! duplicates, out-of-order, RFC 3550 jitter and one-way delay variation.
//!
//! Datagram (docs/control-protocol.md), big-endian, padded to --msg-size:
//!
//! ```text
//!  0               8               16              24
//! +---------------+---------------+---------------+-------- - -
//! |    test id    |      seq      | sender CLOCK_REALTIME ns | padding
//! +---------------+---------------+---------------+-------- - -
//! ```

use crate::commands::throughput::client::{self, ClientArgs, Control, DoneFigures};
use crate::commands::throughput::proto;
use crate::shared::exit::Failure;
use crate::shared::output::{Finished, Report};
use anyhow::{Context, Result};
use misura_measure::auth::StampKey;
use misura_report::throughput::{CpuUse, UdpClientResult, UdpConfig, UdpReport};
use misura_report::LoopTuning;
use misura_stats::{Arrival, Rfc3550Jitter, SequenceTracker};
use misura_wire::control::Value;
use std::io::ErrorKind;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Long help for the subcommand (shown by `--help`).
pub const LONG_ABOUT: &str = "Paced UDP against `misura serve` (seed 001's UDP studies, seed 004's iperf figures).

The sender (the client; the server with --reverse) sends --msg-size datagrams (UDP payload, at \
least 24 bytes) at --rate for --duration, each carrying the test id, a sequence number and its send \
time (CLOCK_REALTIME). The receiver counts them: received rate (`throughput_bps` in the JSON, as the \
receiver measured it), loss = sent − received, duplicates, out-of-order arrivals, RFC 3550 \
interarrival jitter, and the one-way delay's extremes and their difference (its variation; the \
delays themselves include the two clocks' offset unless both ends share a clock). The rate counts \
UDP payload bytes; a sender that falls behind catches up for at most 10 ms, then drops the backlog \
(no long bursts).

--df sets don't-fragment (IP_MTU_DISCOVER = IP_PMTUDISC_DO): a datagram above the path MTU then \
cannot leave (EMSGSIZE) or is dropped on the way, so nothing arrives (seed 001, Fig. 16). misura \
says so plainly and reports the path MTU the kernel holds (IP_MTU).

Exit codes: 0 done, 1 server unreachable / refused (its reason is printed) / lost during the test \
(partial result written), 2 usage, 5 above the server's limits or a datagram below 24 bytes, 6 \
output file, 130/143 interrupted.

Examples:
  misura udp 198.18.0.2 --rate 100M
  misura udp 198.18.0.2 --rate 1G --msg-size 1472 --duration 10s --json
  misura udp 198.18.0.2 --rate 10M --msg-size 2000 --df
  misura udp 198.18.0.2 --rate 50M --reverse --clients 2";

#[derive(clap::Args, Debug, Clone)]
pub struct UdpArgs {
    #[command(flatten)]
    pub c: ClientArgs,
    /// Sending rate of UDP payload (e.g. 10M, 1G).
    #[arg(long, value_name = "RATE")]
    pub rate: String,
    /// UDP payload per datagram, bytes (≥ 24).
    #[arg(long, default_value = "1472", value_name = "BYTES")]
    pub msg_size: String,
    /// Length of the test.
    #[arg(long, default_value = "10s", value_name = "DURATION")]
    pub duration: String,
    /// Set don't-fragment on the sender's socket.
    #[arg(long)]
    pub df: bool,
    /// The server sends, the client receives.
    #[arg(long)]
    pub reverse: bool,
}

pub const HEADER: usize = 24;
/// After the sender's planned end, how long the receiver waits for stragglers.
const DRAIN: Duration = Duration::from_millis(300);

struct Plan {
    rate_bps: u64,
    msg_size: u64,
    duration_ns: u64,
    df: bool,
    reverse: bool,
}

fn plan(a: &UdpArgs) -> Result<Plan, Failure> {
    let rate_bps = crate::shared::units::rate_bps(&a.rate)?;
    let msg_size = crate::shared::units::bytes(&a.msg_size)?;
    if !(HEADER as u64..=65_507).contains(&msg_size) {
        return Err(Failure::Params(format!("--msg-size {msg_size} must be between {HEADER} and 65507 bytes (the UDP payload limit)")));
    }
    let duration_ns = crate::shared::units::duration_ns(&a.duration)? as u64;
    if duration_ns == 0 {
        return Err(Failure::Params("--duration must be above 0".into()));
    }
    if a.c.clients == 0 {
        return Err(Failure::Params("--clients must be at least 1".into()));
    }
    Ok(Plan {
        rate_bps,
        msg_size,
        duration_ns,
        df: a.df,
        reverse: a.reverse,
    })
}

/// `misura udp`: the report, exit code 1 when a client did not complete.
pub fn run(args: &UdpArgs, stop: &Arc<AtomicUsize>) -> Result<Finished> {
    let r = measure(args, stop)?;
    let code = client::exit_code(r.complete);
    let report = Report::new(
        r,
        "udp",
        args.c.host.clone(),
        misura_report::throughput::write_udp_text,
    )
    .with_csv(misura_report::throughput::write_udp_csv);
    Ok(Finished::with_code(report, code))
}

pub fn measure(a: &UdpArgs, stop: &Arc<AtomicUsize>) -> Result<UdpReport> {
    let p = plan(a)?;
    let key = crate::shared::keys::read_key(&a.c.key_file)?;
    let addr = crate::shared::target::resolve(&a.c.host, client::DEFAULT_PORT)?;
    let started_at = crate::shared::meta::now_rfc3339();
    let results = client::run_clients(a.c.clients, |i| {
        one_client(
            i,
            &p,
            addr,
            key.as_ref(),
            stop,
            a.c.out.quiet || a.c.out.json,
        )
    });
    let mut clients = Vec::new();
    let mut warnings = Vec::new();
    let mut first_err = None;
    for (i, r) in results.into_iter().enumerate() {
        match r {
            Ok(c) => clients.push(c),
            Err(e) => {
                warnings.push(format!("client {i} did not run: {e:#}"));
                clients.push(failed_client(i as u32, &e));
                first_err.get_or_insert(e);
            }
        }
    }
    if let Some(e) = first_err {
        if clients.iter().all(|c| c.test_id.is_none()) {
            return Err(e);
        }
    }
    for c in &clients {
        if c.test_id.is_some() && c.received_packets == 0 && c.sent_packets + c.send_errors > 0 {
            if p.df && p.msg_size + 28 > c.path_mtu.unwrap_or(u32::MAX) as u64 {
                warnings.push(format!(
                    "nothing arrives above the path MTU of {} bytes with don't-fragment set: {}-byte datagrams are {}-byte IPv4 packets{}",
                    c.path_mtu.unwrap_or(0),
                    p.msg_size,
                    p.msg_size + 28,
                    if c.emsgsize_errors > 0 { format!(" ({} sends failed with EMSGSIZE)", c.emsgsize_errors) } else { String::new() }
                ));
            } else if p.df {
                warnings.push(format!(
                    "client {}: nothing arrived with don't-fragment set (path MTU {})",
                    c.client,
                    c.path_mtu
                        .map_or("unknown".into(), |m| format!("{m} bytes"))
                ));
            } else {
                warnings.push(format!("client {}: nothing arrived", c.client));
            }
        }
    }
    let complete = clients.iter().all(|c| c.complete);
    let stop_reason = if client::interrupted(stop) {
        client::signal_reason(stop)
    } else if complete {
        "finished".into()
    } else {
        clients
            .iter()
            .find(|c| !c.complete)
            .map(|c| c.stop_reason.clone())
            .unwrap_or_default()
    };
    let sent: u64 = clients.iter().map(|c| c.sent_packets).sum();
    let lost: u64 = clients.iter().map(|c| c.lost).sum();
    let tuning = LoopTuning {
        netns: a.c.ns.netns.clone(),
        ..Default::default()
    };
    Ok(UdpReport {
        meta: crate::shared::meta::meta("misura.udp", started_at),
        complete,
        stop_reason,
        throughput_bps: clients.iter().map(|c| c.throughput_bps).sum(),
        lost,
        loss_ratio: if sent > 0 {
            lost as f64 / sent as f64
        } else {
            0.0
        },
        host: crate::shared::host::fingerprint(tuning),
        config: UdpConfig {
            endpoint: client::endpoint(&a.c, addr, key.is_some()),
            direction: if p.reverse { "reverse" } else { "forward" }.into(),
            rate_bps: p.rate_bps,
            msg_size: p.msg_size,
            duration_ns: p.duration_ns,
            df: p.df,
        },
        clients,
        warnings,
    })
}

fn failed_client(i: u32, e: &anyhow::Error) -> UdpClientResult {
    UdpClientResult {
        client: i,
        test_id: None,
        complete: false,
        stop_reason: format!("{e:#}"),
        receiver: "server".into(),
        elapsed_ns: 0,
        sent_packets: 0,
        sent_bytes: 0,
        send_errors: 0,
        emsgsize_errors: 0,
        received_packets: 0,
        received_bytes: 0,
        lost: 0,
        loss_ratio: 0.0,
        duplicates: 0,
        reordered: 0,
        jitter_ns: None,
        owd_min_ns: None,
        owd_max_ns: None,
        owd_variation_ns: None,
        offered_bps: 0.0,
        throughput_bps: 0.0,
        path_mtu: None,
        cpu_local: CpuUse::default(),
        cpu_remote: None,
        server: None,
    }
}

/// Emit the datagram header into `buf` (which is at least 24 bytes).
pub fn emit_header(buf: &mut [u8], test_id: u64, seq: u64, sent_ns: i64) {
    buf[0..8].copy_from_slice(&test_id.to_be_bytes());
    buf[8..16].copy_from_slice(&seq.to_be_bytes());
    buf[16..24].copy_from_slice(&sent_ns.to_be_bytes());
}

/// Parse a datagram header: (test id, seq, sender ns); None if short.
pub fn parse_header(buf: &[u8]) -> Option<(u64, u64, i64)> {
    if buf.len() < HEADER {
        return None;
    }
    let u = |r: std::ops::Range<usize>| u64::from_be_bytes(buf[r].try_into().unwrap());
    Some((u(0..8), u(8..16), u(16..24) as i64))
}

/// Nanoseconds from the start at which datagram `k` is due.
pub fn due_ns(k: u64, msg_size: u64, rate_bps: u64) -> u64 {
    (k as u128 * msg_size as u128 * 8 * 1_000_000_000 / rate_bps.max(1) as u128) as u64
}

#[derive(Default)]
struct SendStats {
    packets: u64,
    bytes: u64,
    errors: u64,
    emsgsize: u64,
    last_error: Option<String>,
}

fn send_paced(
    sock: &UdpSocket,
    p: &Plan,
    test_id: u64,
    start: Instant,
    end: Instant,
    stop: &AtomicUsize,
) -> SendStats {
    let mut buf = vec![0u8; p.msg_size as usize];
    let mut st = SendStats::default();
    let mut k = 0u64;
    let catch_up = Duration::from_millis(10);
    loop {
        let now = Instant::now();
        if now >= end || client::interrupted(stop) {
            return st;
        }
        let due = start + Duration::from_nanos(due_ns(k, p.msg_size, p.rate_bps));
        if now < due {
            let wait = due - now;
            if wait > Duration::from_micros(200) {
                std::thread::sleep(wait - Duration::from_micros(100));
            } else {
                std::hint::spin_loop();
            }
            continue;
        }
        if now - due > catch_up {
            // Too far behind: skip the backlog rather than burst it.
            let el = (now - start).as_nanos();
            k = (el * p.rate_bps as u128 / (p.msg_size as u128 * 8 * 1_000_000_000)) as u64;
        }
        emit_header(
            &mut buf,
            test_id,
            st.packets + st.errors,
            misura_sys::clock::realtime_ns(),
        );
        match sock.send(&buf) {
            Ok(_) => {
                st.packets += 1;
                st.bytes += p.msg_size;
            }
            Err(e) if e.raw_os_error() == Some(libc_emsgsize()) => {
                st.errors += 1;
                st.emsgsize += 1;
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => {}
            Err(e) => {
                // ECONNREFUSED from an ICMP port unreachable and the like:
                // count and go on, the receiver's count tells what arrived.
                st.errors += 1;
                st.last_error = Some(e.to_string());
            }
        }
        k += 1;
    }
}

const fn libc_emsgsize() -> i32 {
    90 // EMSGSIZE on Linux
}

#[derive(Default)]
struct RecvStats {
    packets: u64,
    bytes: u64,
    seq: Option<SequenceTracker>,
    jitter: Rfc3550Jitter,
    owd_min: Option<i64>,
    owd_max: Option<i64>,
    first: Option<Instant>,
    last: Option<Instant>,
}

fn receive(
    sock: &UdpSocket,
    test_id: u64,
    msg_size: u64,
    end: Instant,
    stop: &AtomicUsize,
) -> RecvStats {
    let mut buf = vec![0u8; 65_536];
    let mut st = RecvStats {
        seq: Some(SequenceTracker::new()),
        ..Default::default()
    };
    sock.set_read_timeout(Some(Duration::from_millis(50))).ok();
    loop {
        let now = Instant::now();
        // Stop DRAIN after the planned end once the stream has gone quiet,
        // or END_GRACE after it whatever happens.
        let quiet_since = st.last.unwrap_or(end).max(end);
        if now >= quiet_since + DRAIN || now >= end + client::END_GRACE || client::interrupted(stop)
        {
            return st;
        }
        match sock.recv(&mut buf) {
            Ok(n) => {
                let rx = misura_sys::clock::realtime_ns();
                let Some((id, seq, tx)) = parse_header(&buf[..n]) else {
                    continue;
                };
                if id != test_id || seq == u64::MAX {
                    continue;
                }
                let t = Instant::now();
                st.first.get_or_insert(t);
                st.last = Some(t);
                let tracker = st.seq.as_mut().unwrap();
                if matches!(tracker.record(seq), Arrival::Duplicate) {
                    continue;
                }
                st.packets += 1;
                st.bytes += (n as u64).min(msg_size.max(n as u64));
                st.jitter.update(tx, rx);
                let owd = rx - tx;
                st.owd_min = Some(st.owd_min.map_or(owd, |m| m.min(owd)));
                st.owd_max = Some(st.owd_max.map_or(owd, |m| m.max(owd)));
            }
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                ) => {}
            Err(_) => std::thread::sleep(Duration::from_millis(10)), // ICMP errors and the like
        }
    }
}

fn data_socket(server: SocketAddr, df: bool) -> Result<UdpSocket> {
    let bind: SocketAddr = if server.is_ipv6() {
        "[::]:0".parse().unwrap()
    } else {
        "0.0.0.0:0".parse().unwrap()
    };
    let s = socket2::Socket::new(
        socket2::Domain::for_address(server),
        socket2::Type::DGRAM,
        Some(socket2::Protocol::UDP),
    )
    .context("creating a UDP socket")?;
    // Large buffers so the kernel, not the socket, is what limits the rate.
    let _ = s.set_send_buffer_size(4 << 20);
    let _ = s.set_recv_buffer_size(4 << 20);
    s.bind(&bind.into()).context("binding a UDP socket")?;
    let u: UdpSocket = s.into();
    u.connect(server)
        .with_context(|| format!("connecting the UDP socket to {server}"))?;
    if df {
        misura_sys::tcpinfo::set_dont_fragment(&u, server.is_ipv6())?;
    }
    Ok(u)
}

fn one_client(
    i: u32,
    p: &Plan,
    addr: SocketAddr,
    key: Option<&StampKey>,
    stop: &Arc<AtomicUsize>,
    quiet: bool,
) -> Result<UdpClientResult> {
    let mut ctl = Control::connect(addr)?;
    ctl.check_limits(p.duration_ns, 1, p.rate_bps)?;
    let req = client::request("udp", p.duration_ns, i)
        .with(proto::F_STREAMS, Value::U64(1))
        .with(
            proto::F_DIRECTION,
            Value::Str(if p.reverse { "reverse" } else { "forward" }.into()),
        )
        .with(proto::F_MSG_SIZE, Value::U64(p.msg_size))
        .with(proto::F_RATE_BPS, Value::U64(p.rate_bps))
        .with(proto::F_DF, Value::Bool(p.df));
    let acc = ctl.request(req, key)?;
    let data = SocketAddr::new(addr.ip(), acc.data_port);
    let sock = match data_socket(data, p.df && !p.reverse) {
        Ok(s) => s,
        Err(e) => {
            ctl.error("the client could not open its UDP socket");
            return Err(e);
        }
    };
    let progress =
        crate::shared::progress::Progress::new(quiet, Some(Duration::from_nanos(p.duration_ns)));
    let cpu0 = client::thread_cpu();
    let (send, recv, start, elapsed_ns) = if p.reverse {
        // Tell the server where to send (a few times: UDP may lose one).
        let mut hello = vec![0u8; HEADER];
        for _ in 0..3 {
            emit_header(
                &mut hello,
                acc.test_id,
                u64::MAX,
                misura_sys::clock::realtime_ns(),
            );
            let _ = sock.send(&hello);
            std::thread::sleep(Duration::from_millis(2));
        }
        let dl = client::Deadline::new(p.duration_ns);
        let r = receive(&sock, acc.test_id, p.msg_size, dl.end, stop);
        let el = match (r.first, r.last) {
            (Some(_), Some(l)) => (l - dl.start).as_nanos() as u64,
            _ => p.duration_ns,
        };
        (SendStats::default(), Some(r), dl.start, el)
    } else {
        let dl = client::Deadline::new(p.duration_ns);
        let s = send_paced(&sock, p, acc.test_id, dl.start, dl.end, stop);
        let el = (Instant::now().min(dl.end) - dl.start).as_nanos() as u64;
        // Let the last datagrams reach the server before DONE.
        std::thread::sleep(Duration::from_millis(100));
        (s, None, dl.start, el)
    };
    let _ = start;
    progress.done();
    let (cu, cs) = client::thread_cpu_since(cpu0);
    let cpu_local = CpuUse::new(cu, cs, elapsed_ns.max(1));
    let path_mtu = misura_sys::tcpinfo::path_mtu(&sock, data.is_ipv6()).ok();
    let done = DoneFigures {
        bytes: recv.as_ref().map_or(0, |r| r.bytes),
        packets: recv.as_ref().map_or(0, |r| r.packets),
        bytes_sent: send.bytes,
        packets_sent: send.packets,
        elapsed_ns,
        cpu: cpu_local,
        transactions: 0,
        partial: client::interrupted(stop),
    };
    let (server, ctl_err) = match ctl.done(
        &client::done_message(&done),
        client::END_GRACE + proto::MESSAGE_TIMEOUT,
    ) {
        Ok(s) => (Some(s), None),
        Err(e) => (None, Some(format!("{e:#}"))),
    };
    let sv = server.as_ref();
    let rate = |bytes: u64, ns: u64| {
        if ns > 0 {
            bytes as f64 * 8e9 / ns as f64
        } else {
            0.0
        }
    };
    let r = match &recv {
        // Reverse: the client is the receiver; the server's RESULT says what it sent.
        Some(r) => {
            let sent = sv.and_then(|s| s.packets_sent).unwrap_or(r.packets);
            let c = r.seq.as_ref().unwrap().counts();
            let lost = sent.saturating_sub(r.packets);
            UdpClientResult {
                client: i,
                test_id: Some(acc.test_id),
                complete: true,
                stop_reason: String::new(),
                receiver: "client".into(),
                elapsed_ns,
                sent_packets: sent,
                sent_bytes: sv.and_then(|s| s.bytes_sent).unwrap_or(sent * p.msg_size),
                send_errors: 0,
                emsgsize_errors: 0,
                received_packets: r.packets,
                received_bytes: r.bytes,
                lost,
                loss_ratio: if sent > 0 {
                    lost as f64 / sent as f64
                } else {
                    0.0
                },
                duplicates: c.duplicates,
                reordered: c.reordered,
                jitter_ns: (r.packets > 1).then(|| r.jitter.jitter_ns().round() as u64),
                owd_min_ns: r.owd_min,
                owd_max_ns: r.owd_max,
                owd_variation_ns: r.owd_min.zip(r.owd_max).map(|(a, b)| b - a),
                offered_bps: p.rate_bps as f64,
                throughput_bps: rate(r.bytes, elapsed_ns),
                path_mtu,
                cpu_local,
                cpu_remote: sv.and_then(|s| client::remote_cpu(s, elapsed_ns)),
                server: server.clone(),
            }
        }
        // Forward: the server is the receiver.
        None => {
            let received = sv.and_then(|s| s.packets).unwrap_or(0);
            let rbytes = sv.and_then(|s| s.bytes).unwrap_or(received * p.msg_size);
            let lost = send.packets.saturating_sub(received);
            let relapsed = sv
                .and_then(|s| s.elapsed_ns)
                .filter(|e| *e > 0)
                .unwrap_or(elapsed_ns);
            UdpClientResult {
                client: i,
                test_id: Some(acc.test_id),
                complete: true,
                stop_reason: String::new(),
                receiver: "server".into(),
                elapsed_ns,
                sent_packets: send.packets,
                sent_bytes: send.bytes,
                send_errors: send.errors,
                emsgsize_errors: send.emsgsize,
                received_packets: received,
                received_bytes: rbytes,
                lost,
                loss_ratio: if send.packets > 0 {
                    lost as f64 / send.packets as f64
                } else {
                    0.0
                },
                duplicates: sv.and_then(|s| s.duplicates).unwrap_or(0),
                reordered: sv.and_then(|s| s.reordered).unwrap_or(0),
                jitter_ns: sv.and_then(|s| s.jitter_ns),
                owd_min_ns: sv.and_then(|s| s.owd_min_ns),
                owd_max_ns: sv.and_then(|s| s.owd_max_ns),
                owd_variation_ns: sv
                    .and_then(|s| s.owd_min_ns.zip(s.owd_max_ns))
                    .map(|(a, b)| b - a),
                offered_bps: p.rate_bps as f64,
                // Receiver rate over the sender's sending time when the
                // server's own span is not known.
                throughput_bps: if received > 0 {
                    rate(rbytes, relapsed)
                } else {
                    0.0
                },
                path_mtu,
                cpu_local,
                cpu_remote: sv.and_then(|s| client::remote_cpu(s, elapsed_ns)),
                server: server.clone(),
            }
        }
    };
    let partial_server = sv.and_then(|s| s.partial).unwrap_or(false);
    let reason = if let Some(e) = ctl_err {
        format!("no result from the server: {e}")
    } else if partial_server {
        format!(
            "the server marked its figures partial: {}",
            sv.and_then(|s| s.reason.clone()).unwrap_or_default()
        )
    } else if client::interrupted(stop) {
        client::signal_reason(stop)
    } else {
        "finished".into()
    };
    Ok(UdpClientResult {
        complete: reason == "finished",
        stop_reason: reason,
        ..r
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trip() {
        let mut b = [0xa5u8; 40];
        emit_header(&mut b, 0x0102030405060708, 9, -5);
        assert_eq!(&b[0..8], &[1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(&b[8..16], &9u64.to_be_bytes());
        assert_eq!(b[24], 0xa5, "padding untouched");
        assert_eq!(parse_header(&b), Some((0x0102030405060708, 9, -5)));
        assert_eq!(parse_header(&b[..23]), None);
    }

    #[test]
    fn pacing_schedule() {
        // 1000-byte datagrams at 8 Mbit/s: one per millisecond.
        assert_eq!(due_ns(0, 1000, 8_000_000), 0);
        assert_eq!(due_ns(1, 1000, 8_000_000), 1_000_000);
        assert_eq!(due_ns(1000, 1000, 8_000_000), 1_000_000_000);
        // No drift over many datagrams at a rate that does not divide evenly.
        assert_eq!(due_ns(3_000_000, 1472, 1_000_000_000), 35_328_000_000);
    }
}
