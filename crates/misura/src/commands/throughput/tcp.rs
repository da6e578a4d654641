//! `misura tcp`: TCP bulk throughput against `misura serve` (seed 001's
//! TCP studies): streams, direction, message size, socket buffers,
//! TCP_NODELAY; per-stream and aggregate throughput, retransmits and RTT
//! from TCP_INFO, buffers actually granted, CPU utilisation of both ends
//! and service demand.

use crate::commands::throughput::client::{self, ClientArgs, Control, DoneFigures, TcpOpts};
use crate::commands::throughput::proto;
use crate::shared::exit::Failure;
use crate::shared::output::{Finished, Report};
use anyhow::Result;
use misura_measure::auth::StampKey;
use misura_report::throughput::{
    CpuUse, IntervalLine, TcpClientResult, TcpConfig, TcpReport, TcpStreamResult,
};
use misura_report::LoopTuning;
use misura_wire::control::Value;
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Long help for the subcommand (shown by `--help`).
pub const LONG_ABOUT: &str = "TCP throughput against `misura serve` (seed 001's TCP studies).

The client opens --streams data connections to the server and, for --duration, writes --msg-size \
chunks (forward), or reads what the server writes (--reverse), or both at once on every connection \
(--bidir, full duplex). The throughput at the top (`throughput_bps` in the JSON) is the one the \
receiver measured: the server's count for forward, the client's for reverse, their sum for bidir.

Per stream: bytes, throughput, the socket buffers the kernel actually granted (Linux doubles a \
--sndbuf/--rcvbuf request and caps it at net.core.[wr]mem_max), and from TCP_INFO the retransmitted \
segments, smoothed RTT, congestion window and path MTU (of the client's sockets: in a reverse test \
the server's retransmits are not seen). CPU: user + system time of the client's test threads and of \
the server (from its RESULT), in % of one CPU, and the service demand in µs of CPU per KB moved \
(netperf's figure, KB = 1024 bytes).

--clients N runs N such clients at once from this machine, each with its own control connection; \
the table lists each and the sum. Exit codes: 0 done, 1 server unreachable / refused (its reason \
is printed) / lost during the test (partial result written), 2 usage, 5 above the limits the \
server announced, 6 output file, 130/143 interrupted.

Examples:
  misura tcp 198.18.0.2
  misura tcp 198.18.0.2 --streams 4 --duration 10s --interval 1s
  misura tcp 198.18.0.2 --reverse --msg-size 64K --rcvbuf 256K --json
  misura tcp 198.18.0.2 --bidir --clients 2 --export-csv tcp.csv";

#[derive(clap::Args, Debug, Clone)]
pub struct TcpArgs {
    #[command(flatten)]
    pub c: ClientArgs,
    /// Parallel data connections.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub streams: u32,
    /// The server sends, the client receives.
    #[arg(long, conflicts_with = "bidir")]
    pub reverse: bool,
    /// Both send at once on every connection (full duplex).
    #[arg(long)]
    pub bidir: bool,
    /// Size of each write (e.g. 1400, 64K).
    #[arg(long, default_value = "128K", value_name = "BYTES")]
    pub msg_size: String,
    /// SO_SNDBUF to ask for (default: the kernel's autotuning).
    #[arg(long, value_name = "BYTES")]
    pub sndbuf: Option<String>,
    /// SO_RCVBUF to ask for (default: the kernel's autotuning).
    #[arg(long, value_name = "BYTES")]
    pub rcvbuf: Option<String>,
    /// Set TCP_NODELAY (no Nagle) on the data connections of both ends.
    #[arg(long)]
    pub nodelay: bool,
    /// Length of the test.
    #[arg(long, default_value = "10s", value_name = "DURATION")]
    pub duration: String,
    /// Also report the bytes moved in every interval of this length.
    #[arg(long, value_name = "DURATION")]
    pub interval: Option<String>,
}

struct Plan {
    direction: &'static str,
    msg_size: u64,
    opts: TcpOpts,
    duration_ns: u64,
    interval_ns: Option<u64>,
    streams: u32,
}

fn plan(a: &TcpArgs) -> Result<Plan, Failure> {
    let msg_size = crate::shared::units::bytes(&a.msg_size)?;
    if msg_size == 0 || msg_size > 64 << 20 {
        return Err(Failure::Params(format!(
            "--msg-size {} must be between 1 byte and 64 MiB",
            a.msg_size
        )));
    }
    let duration_ns = crate::shared::units::duration_ns(&a.duration)? as u64;
    if duration_ns == 0 {
        return Err(Failure::Params("--duration must be above 0".into()));
    }
    let interval_ns = a
        .interval
        .as_deref()
        .map(crate::shared::units::duration_ns)
        .transpose()?
        .map(|v| v as u64);
    if interval_ns == Some(0) {
        return Err(Failure::Params("--interval must be above 0".into()));
    }
    if a.streams == 0 || a.streams > 1024 {
        return Err(Failure::Params(
            "--streams must be between 1 and 1024".into(),
        ));
    }
    if a.c.clients == 0 {
        return Err(Failure::Params("--clients must be at least 1".into()));
    }
    let buf = |s: &Option<String>| -> Result<Option<usize>, Failure> {
        s.as_deref()
            .map(|v| crate::shared::units::bytes(v).map(|b| b as usize))
            .transpose()
    };
    Ok(Plan {
        direction: if a.bidir {
            "bidir"
        } else if a.reverse {
            "reverse"
        } else {
            "forward"
        },
        msg_size,
        opts: TcpOpts {
            sndbuf: buf(&a.sndbuf)?,
            rcvbuf: buf(&a.rcvbuf)?,
            nodelay: a.nodelay,
        },
        duration_ns,
        interval_ns,
        streams: a.streams,
    })
}

/// `misura tcp`: the report, exit code 1 when a client did not complete.
pub fn run(args: &TcpArgs, stop: &Arc<AtomicUsize>) -> Result<Finished> {
    let r = measure(args, stop)?;
    let code = client::exit_code(r.complete);
    let report = Report::new(
        r,
        "tcp",
        args.c.host.clone(),
        misura_report::throughput::write_tcp_text,
    )
    .with_csv(misura_report::throughput::write_tcp_csv);
    Ok(Finished::with_code(report, code))
}

/// Run the test (in the current network namespace) and build the result.
pub fn measure(a: &TcpArgs, stop: &Arc<AtomicUsize>) -> Result<TcpReport> {
    let p = plan(a)?;
    let key = crate::shared::keys::read_key(&a.c.key_file)?;
    let addr = crate::shared::target::resolve(&a.c.host, client::DEFAULT_PORT)?;
    let started_at = crate::shared::meta::now_rfc3339();
    let t0 = Instant::now();
    let intervals = Mutex::new(Vec::new());
    let results = client::run_clients(a.c.clients, |i| {
        one_client(
            i,
            &p,
            addr,
            key.as_ref(),
            stop,
            t0,
            &intervals,
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
    if p.direction == "reverse" {
        warnings.push("reverse test: retransmits and RTT are the client's sockets' (the receiving side); the server's sending side is not seen".into());
    }
    if clients
        .iter()
        .any(|c| c.receiver_bytes < c.sent_bytes && p.direction == "forward" && c.complete)
    {
        warnings.push("the server counted fewer bytes than the client sent: data lost in flight at the end (peer closed early?)".into());
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
    let mut iv = intervals.into_inner().unwrap();
    iv.sort_by_key(|l: &IntervalLine| (l.start_ns, l.client));
    let tuning = LoopTuning {
        netns: a.c.ns.netns.clone(),
        ..Default::default()
    };
    Ok(TcpReport {
        meta: crate::shared::meta::meta("misura.tcp", started_at),
        complete,
        stop_reason,
        throughput_bps: clients.iter().map(|c| c.throughput_bps).sum(),
        retransmits: clients.iter().map(|c| c.retransmits).sum(),
        host: crate::shared::host::fingerprint(tuning),
        config: TcpConfig {
            endpoint: client::endpoint(&a.c, addr, key.is_some()),
            streams: p.streams,
            direction: p.direction.into(),
            msg_size: p.msg_size,
            sndbuf_requested: p.opts.sndbuf.map(|v| v as u64),
            rcvbuf_requested: p.opts.rcvbuf.map(|v| v as u64),
            nodelay: p.opts.nodelay,
            duration_ns: p.duration_ns,
            interval_ns: p.interval_ns,
        },
        clients,
        intervals: iv,
        warnings,
    })
}

fn failed_client(i: u32, e: &anyhow::Error) -> TcpClientResult {
    TcpClientResult {
        client: i,
        test_id: None,
        complete: false,
        stop_reason: format!("{e:#}"),
        elapsed_ns: 0,
        sent_bytes: 0,
        received_bytes: 0,
        receiver_bytes: 0,
        throughput_bps: 0.0,
        forward_bps: None,
        reverse_bps: None,
        retransmits: 0,
        rtt_us_mean: None,
        streams: vec![],
        cpu_local: CpuUse::default(),
        cpu_remote: None,
        service_demand_local_us_per_kb: None,
        service_demand_remote_us_per_kb: None,
        server: None,
    }
}

#[derive(Default)]
struct Counters {
    sent: AtomicU64,
    received: AtomicU64,
}

struct StreamOutcome {
    sent: u64,
    received: u64,
    /// Instant of the last byte written / read.
    last_io: Option<Instant>,
    info: Option<misura_sys::tcpinfo::TcpInfo>,
    cpu: (u64, u64),
    error: Option<String>,
}

const POLL: Duration = Duration::from_millis(200);

/// Write `msg_size` chunks until `end`; returns (bytes, last write, error).
fn send_until(
    s: &mut TcpStream,
    msg_size: usize,
    end: Instant,
    stop: &AtomicUsize,
    ctr: &AtomicU64,
) -> (u64, Option<Instant>, Option<String>) {
    let buf = vec![0x5au8; msg_size];
    let (mut off, mut total, mut last) = (0usize, 0u64, None);
    s.set_write_timeout(Some(POLL)).ok();
    loop {
        let now = Instant::now();
        if now >= end || client::interrupted(stop) {
            return (total, last, None);
        }
        match s.write(&buf[off..]) {
            Ok(0) => {
                return (
                    total,
                    last,
                    Some("the server closed the data connection".into()),
                )
            }
            Ok(n) => {
                off = (off + n) % msg_size;
                total += n as u64;
                ctr.fetch_add(n as u64, Ordering::Relaxed);
                last = Some(Instant::now());
            }
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                ) => {}
            Err(e) => {
                return (
                    total,
                    last,
                    Some(format!("lost the data connection while sending: {e}")),
                )
            }
        }
    }
}

/// Read until the peer closes, or `hard_end`; returns (bytes, last read, error).
fn receive_until(
    s: &mut TcpStream,
    hard_end: Instant,
    stop: &AtomicUsize,
    ctr: &AtomicU64,
) -> (u64, Option<Instant>, Option<String>) {
    let mut buf = vec![0u8; 256 * 1024];
    let (mut total, mut last) = (0u64, None);
    s.set_read_timeout(Some(POLL)).ok();
    loop {
        if Instant::now() >= hard_end {
            return (
                total,
                last,
                Some("the server did not end its sending in time".into()),
            );
        }
        if client::interrupted(stop) {
            return (total, last, None);
        }
        match s.read(&mut buf) {
            Ok(0) => return (total, last, None),
            Ok(n) => {
                total += n as u64;
                ctr.fetch_add(n as u64, Ordering::Relaxed);
                last = Some(Instant::now());
            }
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                ) => {}
            Err(e) => {
                return (
                    total,
                    last,
                    Some(format!("lost the data connection while receiving: {e}")),
                )
            }
        }
    }
}

fn stream_worker(
    mut s: TcpStream,
    dir: &str,
    msg_size: usize,
    end: Instant,
    stop: &AtomicUsize,
    ctr: &Counters,
) -> StreamOutcome {
    let cpu0 = client::thread_cpu();
    let hard_end = end + client::END_GRACE;
    let mut o = StreamOutcome {
        sent: 0,
        received: 0,
        last_io: None,
        info: None,
        cpu: (0, 0),
        error: None,
    };
    match dir {
        "forward" => {
            let (n, last, err) = send_until(&mut s, msg_size, end, stop, &ctr.sent);
            (o.sent, o.last_io, o.error) = (n, last, err);
            o.info = misura_sys::tcpinfo::tcp_info(&s).ok();
            let _ = s.shutdown(Shutdown::Write);
        }
        "reverse" => {
            let (n, last, err) = receive_until(&mut s, hard_end, stop, &ctr.received);
            (o.received, o.last_io, o.error) = (n, last, err);
            o.info = misura_sys::tcpinfo::tcp_info(&s).ok();
        }
        _ => {
            let w = s.try_clone();
            let sent = std::thread::scope(|sc| {
                let h = w.ok().map(|mut w| {
                    sc.spawn(move || {
                        let c0 = client::thread_cpu();
                        let r = send_until(&mut w, msg_size, end, stop, &ctr.sent);
                        let _ = w.shutdown(Shutdown::Write);
                        (r, client::thread_cpu_since(c0))
                    })
                });
                let (n, last, err) = receive_until(&mut s, hard_end, stop, &ctr.received);
                (o.received, o.last_io, o.error) = (n, last, err);
                h.map(|h| h.join().expect("sender thread panicked"))
            });
            if let Some(((n, last, err), cpu)) = sent {
                o.sent = n;
                o.last_io = o.last_io.max(last);
                o.error = o.error.or(err);
                o.cpu = cpu;
            }
            o.info = misura_sys::tcpinfo::tcp_info(&s).ok();
        }
    }
    let (u, sy) = client::thread_cpu_since(cpu0);
    o.cpu = (o.cpu.0 + u, o.cpu.1 + sy);
    o
}

#[allow(clippy::too_many_arguments)]
fn one_client(
    i: u32,
    p: &Plan,
    addr: SocketAddr,
    key: Option<&StampKey>,
    stop: &Arc<AtomicUsize>,
    t0: Instant,
    intervals: &Mutex<Vec<IntervalLine>>,
    quiet: bool,
) -> Result<TcpClientResult> {
    let mut ctl = Control::connect(addr)?;
    ctl.check_limits(p.duration_ns, p.streams as u64, 0)?;
    let req = client::request("tcp", p.duration_ns, i)
        .with(proto::F_STREAMS, Value::U64(p.streams as u64))
        .with(proto::F_DIRECTION, Value::Str(p.direction.into()))
        .with(proto::F_MSG_SIZE, Value::U64(p.msg_size))
        .with(
            proto::F_SNDBUF,
            Value::U64(p.opts.sndbuf.unwrap_or(0) as u64),
        )
        .with(
            proto::F_RCVBUF,
            Value::U64(p.opts.rcvbuf.unwrap_or(0) as u64),
        )
        .with(proto::F_NODELAY, Value::Bool(p.opts.nodelay));
    let acc = ctl.request(req, key)?;
    let data_addr = SocketAddr::new(addr.ip(), acc.data_port);
    let mut socks = Vec::new();
    for _ in 0..p.streams {
        match client::data_connection(data_addr, acc.test_id, &p.opts) {
            Ok(s) => socks.push(s),
            Err(e) => {
                ctl.error("the client could not open its data connections");
                return Err(e);
            }
        }
    }
    let meta: Vec<(u16, (u64, u64))> = socks
        .iter()
        .map(|s| {
            (
                s.local_addr().map(|a| a.port()).unwrap_or(0),
                client::granted_buffers(s),
            )
        })
        .collect();
    let counters: Vec<Counters> = (0..p.streams).map(|_| Counters::default()).collect();
    let dl = client::Deadline::new(p.duration_ns);
    let (start, end) = (dl.start, dl.end);
    let outcomes: Vec<StreamOutcome> = std::thread::scope(|sc| {
        let hs: Vec<_> = socks
            .into_iter()
            .zip(&counters)
            .map(|(s, ctr)| {
                let stop: &AtomicUsize = stop;
                sc.spawn(move || stream_worker(s, p.direction, p.msg_size as usize, end, stop, ctr))
            })
            .collect();
        // Interval lines while the streams run.
        let mut progress = crate::shared::progress::Progress::new(
            quiet,
            Some(Duration::from_nanos(p.duration_ns)),
        );
        let mut next = p.interval_ns.map(|iv| start + Duration::from_nanos(iv));
        let (mut ls, mut lr, mut lt) = (0u64, 0u64, start);
        while !hs.iter().all(|h| h.is_finished()) {
            std::thread::sleep(Duration::from_millis(5));
            let (s, r) = counters.iter().fold((0, 0), |a, c| {
                (
                    a.0 + c.sent.load(Ordering::Relaxed),
                    a.1 + c.received.load(Ordering::Relaxed),
                )
            });
            progress.tick(|| format!("client {i}: sent {s} B, received {r} B"));
            if let (Some(n), Some(iv)) = (next, p.interval_ns) {
                let now = Instant::now();
                if now >= n && now <= end + Duration::from_millis(50) {
                    let secs = (now - lt).as_secs_f64().max(1e-9);
                    let line = IntervalLine {
                        client: i,
                        start_ns: (lt - t0).as_nanos() as u64,
                        end_ns: (now - t0).as_nanos() as u64,
                        sent_bytes: s - ls,
                        received_bytes: r - lr,
                        throughput_bps: ((s - ls) + (r - lr)) as f64 * 8.0 / secs,
                    };
                    if !quiet {
                        eprintln!(
                            "[client {i} {:>6.2}-{:<6.2} s] sent {} B received {} B, {:.3} Mbit/s",
                            line.start_ns as f64 / 1e9,
                            line.end_ns as f64 / 1e9,
                            line.sent_bytes,
                            line.received_bytes,
                            line.throughput_bps / 1e6
                        );
                    }
                    intervals.lock().unwrap().push(line);
                    (ls, lr, lt) = (s, r, now);
                    next = Some(n + Duration::from_nanos(iv));
                }
            }
        }
        progress.done();
        hs.into_iter()
            .map(|h| h.join().expect("stream thread panicked"))
            .collect()
    });
    let last = outcomes
        .iter()
        .filter_map(|o| o.last_io)
        .max()
        .unwrap_or(start);
    let elapsed_ns = (last.max(start) - start).as_nanos() as u64;
    let (cu, cs) = outcomes
        .iter()
        .fold((0, 0), |a, o| (a.0 + o.cpu.0, a.1 + o.cpu.1));
    let sent: u64 = outcomes.iter().map(|o| o.sent).sum();
    let received: u64 = outcomes.iter().map(|o| o.received).sum();
    let stream_err = outcomes.iter().find_map(|o| o.error.clone());
    let cpu_local = CpuUse::new(cu, cs, elapsed_ns.max(1));
    let done = DoneFigures {
        bytes: received,
        packets: 0,
        bytes_sent: sent,
        packets_sent: 0,
        elapsed_ns,
        cpu: cpu_local,
        transactions: 0,
        partial: stream_err.is_some() || client::interrupted(stop),
    };
    let server = ctl.done(
        &client::done_message(&done),
        client::END_GRACE + proto::MESSAGE_TIMEOUT,
    );
    let (server, ctl_err) = match server {
        Ok(s) => (Some(s), None),
        Err(e) => (None, Some(format!("{e:#}"))),
    };
    let sv = server.as_ref();
    let server_elapsed = sv.and_then(|s| s.elapsed_ns).filter(|e| *e > 0);
    let rate = |bytes: u64, ns: u64| {
        if ns > 0 {
            bytes as f64 * 8e9 / ns as f64
        } else {
            0.0
        }
    };
    let fwd_bytes = sv.and_then(|s| s.bytes);
    let (receiver_bytes, throughput_bps, forward_bps, reverse_bps) = match p.direction {
        "forward" => {
            let b = fwd_bytes.unwrap_or(0);
            (b, rate(b, server_elapsed.unwrap_or(elapsed_ns)), None, None)
        }
        "reverse" => (received, rate(received, elapsed_ns), None, None),
        _ => {
            let f = rate(fwd_bytes.unwrap_or(0), server_elapsed.unwrap_or(elapsed_ns));
            let r = rate(received, elapsed_ns);
            (fwd_bytes.unwrap_or(0) + received, f + r, Some(f), Some(r))
        }
    };
    let streams: Vec<TcpStreamResult> = outcomes
        .iter()
        .zip(&meta)
        .enumerate()
        .map(|(k, (o, (port, (sb, rb))))| {
            let recv = match p.direction {
                "forward" => sv.and_then(|s| s.stream_bytes.get(k).copied()),
                "reverse" => Some(o.received),
                _ => sv
                    .and_then(|s| s.stream_bytes.get(k).copied())
                    .map(|f| f + o.received),
            };
            let info = o.info.unwrap_or_default();
            TcpStreamResult {
                index: k as u32,
                local_port: *port,
                sent_bytes: o.sent,
                received_bytes: o.received,
                receiver_bytes: recv,
                throughput_bps: rate(recv.unwrap_or(o.sent + o.received), elapsed_ns),
                sndbuf_granted: *sb,
                rcvbuf_granted: *rb,
                retransmits: info.total_retrans,
                rtt_us: info.rtt_us,
                rttvar_us: info.rttvar_us,
                min_rtt_us: info.min_rtt_us,
                snd_cwnd: info.snd_cwnd,
                pmtu: info.pmtu,
            }
        })
        .collect();
    let infos: Vec<_> = outcomes.iter().filter_map(|o| o.info).collect();
    let cpu_remote = sv.and_then(|s| client::remote_cpu(s, elapsed_ns));
    let partial_server = sv.and_then(|s| s.partial).unwrap_or(false);
    let reason = if let Some(e) = &stream_err {
        e.clone()
    } else if let Some(e) = &ctl_err {
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
    let complete = reason == "finished";
    Ok(TcpClientResult {
        client: i,
        test_id: Some(acc.test_id),
        complete,
        stop_reason: reason,
        elapsed_ns,
        sent_bytes: sent,
        received_bytes: received,
        receiver_bytes,
        throughput_bps,
        forward_bps,
        reverse_bps,
        retransmits: infos.iter().map(|t| t.total_retrans as u64).sum(),
        rtt_us_mean: (!infos.is_empty())
            .then(|| infos.iter().map(|t| t.rtt_us as f64).sum::<f64>() / infos.len() as f64),
        streams,
        cpu_local,
        cpu_remote,
        service_demand_local_us_per_kb: cpu_local.us_per_kb(sent + received),
        service_demand_remote_us_per_kb: cpu_remote.and_then(|c| c.us_per_kb(sent + received)),
        server,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct W {
        #[command(flatten)]
        a: TcpArgs,
    }

    #[test]
    fn flags_resolve_into_a_plan() {
        let w = W::try_parse_from([
            "t",
            "198.18.0.2",
            "--bidir",
            "--msg-size",
            "64K",
            "--sndbuf",
            "256K",
            "--interval",
            "1s",
        ])
        .unwrap();
        let p = plan(&w.a).unwrap();
        assert_eq!(p.direction, "bidir");
        assert_eq!(p.msg_size, 65536);
        assert_eq!(p.opts.sndbuf, Some(262144));
        assert_eq!(p.interval_ns, Some(1_000_000_000));
        assert!(W::try_parse_from(["t", "h", "--reverse", "--bidir"]).is_err());
        let w = W::try_parse_from(["t", "h", "--streams", "0"]).unwrap();
        assert!(matches!(plan(&w.a), Err(Failure::Params(_))));
    }
}
