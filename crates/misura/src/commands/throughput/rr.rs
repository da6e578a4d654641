//! `misura rr`: request/response transactions against `misura serve`
//! (netperf TCP_RR, UDP_RR, TCP_CRR; seed 004): transactions per second,
//! latency per transaction, CPU and service demand per transaction.

use crate::commands::throughput::client::{self, ClientArgs, Control, DoneFigures, TcpOpts};
use crate::commands::throughput::proto;
use crate::shared::exit::Failure;
use crate::shared::output::{Finished, Report};
use anyhow::{Context, Result};
use misura_measure::auth::StampKey;
use misura_report::throughput::{CpuUse, RrClientResult, RrConfig, RrReport};
use misura_report::LoopTuning;
use misura_stats::Summary;
use misura_wire::control::Value;
use std::collections::VecDeque;
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream, UdpSocket};
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Long help for the subcommand (shown by `--help`).
pub const LONG_ABOUT: &str = "Request/response transactions against `misura serve` (netperf TCP_RR, UDP_RR and \
TCP_CRR; seed 004).

The client writes a --request byte request, the server answers with --response bytes, and so on for \
--duration, with --burst transactions in flight. Reported: transactions per second \
(`transactions_per_s` in the JSON, the sum over clients), the latency of every transaction (request \
written → response read, user clock, CLOCK_MONOTONIC) as percentiles, CPU of both ends in % of one \
CPU and the service demand in µs of CPU per transaction.

--proto udp: requests and responses are datagrams (16 bytes or more carry the test id and transaction \
number, echoed); a transaction whose response does not come within --timeout is counted lost and \
another is sent. --connect (TCP only, netperf TCP_CRR): a new TCP connection per transaction \
(connect, request, response, close); the connect() time (the TCP handshake) is reported separately \
and is part of the transaction's latency; --burst N runs N such loops at once.

Exit codes: 0 done, 1 server unreachable / refused (its reason is printed) / lost during the test \
(partial result written), 2 usage, 5 above the server's limits, 6 output file, 130/143 interrupted.

Examples:
  misura rr 198.18.0.2 --proto tcp
  misura rr 198.18.0.2 --proto udp --request 64 --response 1024 --burst 4
  misura rr 198.18.0.2 --proto tcp --connect --duration 5s --json";

#[derive(clap::Args, Debug, Clone)]
pub struct RrArgs {
    #[command(flatten)]
    pub c: ClientArgs,
    /// tcp or udp.
    #[arg(long, default_value = "tcp", value_parser = ["tcp", "udp"])]
    pub proto: String,
    /// Request size, bytes (udp: ≥ 16).
    #[arg(long, value_name = "BYTES")]
    pub request: Option<String>,
    /// Response size, bytes (udp: ≥ 16).
    #[arg(long, value_name = "BYTES")]
    pub response: Option<String>,
    /// Transactions in flight.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub burst: u32,
    /// A new TCP connection per transaction (TCP_CRR).
    #[arg(long)]
    pub connect: bool,
    /// Length of the test.
    #[arg(long, default_value = "10s", value_name = "DURATION")]
    pub duration: String,
    /// udp: a response later than this counts the transaction lost.
    #[arg(long, default_value = "200ms", value_name = "DURATION")]
    pub timeout: String,
}

pub(crate) struct Plan {
    pub kind: &'static str,
    pub request: u64,
    pub response: u64,
    pub burst: u32,
    pub duration_ns: u64,
    pub timeout: Duration,
}

fn plan(a: &RrArgs) -> Result<Plan, Failure> {
    let udp = a.proto == "udp";
    if udp && a.connect {
        return Err(Failure::Usage(
            "--connect opens TCP connections: use it with --proto tcp".into(),
        ));
    }
    // UDP datagrams of 16 bytes or more carry the test id and a transaction
    // number; shorter ones are bare (one transaction in flight, matched by
    // order), so netperf's 1-byte UDP_RR can be reproduced.
    let min = 1;
    let default = if udp { 16 } else { 1 };
    let size = |s: &Option<String>| -> Result<u64, Failure> {
        let v = s
            .as_deref()
            .map(crate::shared::units::bytes)
            .transpose()?
            .unwrap_or(default);
        if v < min || v > if udp { 65_507 } else { 64 << 20 } {
            return Err(Failure::Params(format!(
                "request/response size {v} is out of range ({min} … {} bytes)",
                if udp { 65_507 } else { 64 << 20 }
            )));
        }
        Ok(v)
    };
    let duration_ns = crate::shared::units::duration_ns(&a.duration)? as u64;
    if duration_ns == 0 {
        return Err(Failure::Params("--duration must be above 0".into()));
    }
    if a.burst == 0 || a.burst > 1024 {
        return Err(Failure::Params("--burst must be between 1 and 1024".into()));
    }
    if udp && a.burst > 1 {
        let small = [&a.request, &a.response].iter().any(|s| {
            s.as_deref()
                .map(crate::shared::units::bytes)
                .transpose()
                .ok()
                .flatten()
                .unwrap_or(default)
                < 16
        });
        if small {
            return Err(Failure::Params(
                "UDP requests or responses under 16 bytes carry no transaction number, so only one can be in flight: use --burst 1, or sizes of 16 bytes or more".into(),
            ));
        }
    }
    if a.c.clients == 0 {
        return Err(Failure::Params("--clients must be at least 1".into()));
    }
    Ok(Plan {
        kind: if a.connect {
            "crr"
        } else if udp {
            "rr-udp"
        } else {
            "rr-tcp"
        },
        request: size(&a.request)?,
        response: size(&a.response)?,
        burst: a.burst,
        duration_ns,
        timeout: Duration::from_nanos(
            crate::shared::units::duration_ns(&a.timeout)?.max(1_000_000) as u64,
        ),
    })
}

/// `misura rr`: the report, exit code 1 when a client did not complete.
pub fn run(args: &RrArgs, stop: &Arc<AtomicUsize>) -> Result<Finished> {
    let r = measure(args, stop)?;
    let code = client::exit_code(r.complete);
    let report = Report::new(
        r,
        "rr",
        args.c.host.clone(),
        misura_report::throughput::write_rr_text,
    )
    .with_csv(misura_report::throughput::write_rr_csv);
    Ok(Finished::with_code(report, code))
}

pub fn measure(a: &RrArgs, stop: &Arc<AtomicUsize>) -> Result<RrReport> {
    let p = plan(a)?;
    let key = crate::shared::keys::read_key(&a.c.key_file)?;
    let addr = crate::shared::target::resolve(&a.c.host, client::DEFAULT_PORT)?;
    let started_at = crate::shared::meta::now_rfc3339();
    let results = client::run_clients(a.c.clients, |i| one_client(i, &p, addr, key.as_ref(), stop));
    let mut clients = Vec::new();
    let mut warnings = Vec::new();
    let mut first_err = None;
    for (i, r) in results.into_iter().enumerate() {
        match r {
            Ok(c) => clients.push(c),
            Err(e) => {
                warnings.push(format!("client {i} did not run: {e:#}"));
                clients.push(RrClientResult {
                    client: i as u32,
                    test_id: None,
                    complete: false,
                    stop_reason: format!("{e:#}"),
                    elapsed_ns: 0,
                    transactions: 0,
                    transactions_per_s: 0.0,
                    lost: 0,
                    latency: Summary::new().snapshot(),
                    connect: None,
                    cpu_local: CpuUse::default(),
                    cpu_remote: None,
                    service_demand_local_us_per_transaction: None,
                    service_demand_remote_us_per_transaction: None,
                    server: None,
                });
                first_err.get_or_insert(e);
            }
        }
    }
    if let Some(e) = first_err {
        if clients.iter().all(|c| c.test_id.is_none()) {
            return Err(e);
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
    let tuning = LoopTuning {
        netns: a.c.ns.netns.clone(),
        ..Default::default()
    };
    Ok(RrReport {
        meta: crate::shared::meta::meta("misura.rr", started_at),
        complete,
        stop_reason,
        transactions_per_s: clients.iter().map(|c| c.transactions_per_s).sum(),
        host: crate::shared::host::fingerprint(tuning),
        config: RrConfig {
            endpoint: client::endpoint(&a.c, addr, key.is_some()),
            kind: p.kind.into(),
            request_size: p.request,
            response_size: p.response,
            burst: p.burst,
            duration_ns: p.duration_ns,
            timeout_ns: p.timeout.as_nanos() as u64,
        },
        clients,
        warnings,
    })
}

/// What one transaction loop measured.
#[derive(Default)]
struct Loop {
    transactions: u64,
    lost: u64,
    latency: Summary,
    connect: Summary,
    error: Option<String>,
    cpu: (u64, u64),
}

fn transient(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
    )
}

/// rr-tcp: one connection, `burst` requests in flight.
fn tcp_loop(mut s: TcpStream, p: &Plan, end: Instant, stop: &AtomicUsize) -> Loop {
    let mut l = Loop::default();
    let req = vec![0x5au8; p.request as usize];
    let mut resp = vec![0u8; p.response as usize];
    let mut inflight: VecDeque<Instant> = VecDeque::new();
    s.set_read_timeout(Some(client::END_GRACE)).ok();
    s.set_write_timeout(Some(client::END_GRACE)).ok();
    for _ in 0..p.burst {
        inflight.push_back(Instant::now());
        if let Err(e) = s.write_all(&req) {
            l.error = Some(format!("lost the data connection: {e}"));
            return l;
        }
    }
    while let Some(t) = inflight.pop_front() {
        if let Err(e) = s.read_exact(&mut resp) {
            l.error = Some(if transient(&e) {
                "no response within 5 s: the server or the path is gone".into()
            } else {
                format!("lost the data connection: {e}")
            });
            return l;
        }
        let now = Instant::now();
        l.latency.record((now - t).as_nanos() as i64);
        l.transactions += 1;
        if now < end && !client::interrupted(stop) {
            inflight.push_back(Instant::now());
            if let Err(e) = s.write_all(&req) {
                l.error = Some(format!("lost the data connection: {e}"));
                return l;
            }
        }
    }
    let _ = s.shutdown(Shutdown::Write);
    l
}

/// rr-udp: `burst` datagram transactions in flight, lost after `timeout`.
fn udp_loop(sock: &UdpSocket, test_id: u64, p: &Plan, end: Instant, stop: &AtomicUsize) -> Loop {
    let mut l = Loop::default();
    let mut req = vec![0x5au8; p.request as usize];
    let mut buf = vec![0u8; 65_536];
    let mut inflight: VecDeque<(u64, Instant)> = VecDeque::new();
    let mut seq = 0u64;
    let mut icmp_errors = 0u64;
    sock.set_read_timeout(Some(Duration::from_millis(10).min(p.timeout)))
        .ok();
    // Bare datagrams (under 16 bytes): no header; one transaction in flight.
    let bare = p.request < 16 || p.response < 16;
    let send = |seq: u64, req: &mut Vec<u8>| {
        if !bare {
            req[0..8].copy_from_slice(&test_id.to_be_bytes());
            req[8..16].copy_from_slice(&seq.to_be_bytes());
        }
        sock.send(req)
    };
    loop {
        let now = Instant::now();
        let sending = now < end && !client::interrupted(stop);
        while sending && inflight.len() < p.burst as usize {
            let t = Instant::now();
            if send(seq, &mut req).is_ok() {
                inflight.push_back((seq, t));
            }
            seq += 1;
        }
        if inflight.is_empty() {
            return l;
        }
        // Expire transactions whose response is overdue.
        while let Some(&(_, t)) = inflight.front() {
            if now - t > p.timeout {
                inflight.pop_front();
                l.lost += 1;
            } else {
                break;
            }
        }
        if !sending && now > end + p.timeout + Duration::from_millis(10) {
            l.lost += inflight.len() as u64;
            return l;
        }
        match sock.recv(&mut buf) {
            // The socket is connected to the test's own server port, so a
            // bare response can only be the answer to the one in flight.
            Ok(n) if bare && n as u64 == p.response => {
                let t = Instant::now();
                if let Some((_, t0)) = inflight.pop_front() {
                    l.latency.record((t - t0).as_nanos() as i64);
                    l.transactions += 1;
                }
            }
            Ok(n) if !bare && n >= 16 && buf[0..8] == test_id.to_be_bytes() => {
                let t = Instant::now();
                let got = u64::from_be_bytes(buf[8..16].try_into().unwrap());
                if let Some(k) = inflight.iter().position(|(s, _)| *s == got) {
                    let (_, t0) = inflight.remove(k).unwrap();
                    l.latency.record((t - t0).as_nanos() as i64);
                    l.transactions += 1;
                }
            }
            Ok(_) => {}
            Err(e) if transient(&e) => {}
            Err(e) => {
                // ECONNREFUSED: ICMP port unreachable — the server's socket is gone.
                icmp_errors += 1;
                if icmp_errors > 100 {
                    l.error = Some(format!("the server's UDP port does not answer: {e}"));
                    return l;
                }
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    }
}

/// crr: a new connection per transaction; the connect() time separately.
fn crr_loop(data: SocketAddr, test_id: u64, p: &Plan, end: Instant, stop: &AtomicUsize) -> Loop {
    let mut l = Loop::default();
    let req = vec![0x5au8; p.request as usize];
    let mut resp = vec![0u8; p.response as usize];
    let opts = TcpOpts {
        nodelay: true,
        ..Default::default()
    };
    let cpu0 = client::thread_cpu();
    let mut failures = 0u32;
    while Instant::now() < end && !client::interrupted(stop) {
        let t0 = Instant::now();
        let r = (|| -> Result<()> {
            let (mut s, connect_ns) = client::data_connection_timed(data, test_id, &opts)?;
            l.connect.record(connect_ns as i64);
            s.set_read_timeout(Some(client::END_GRACE)).ok();
            s.write_all(&req).context("sending the request")?;
            s.read_exact(&mut resp).context("reading the response")?;
            // The client closes first: TIME_WAIT stays here, as in netperf TCP_CRR.
            Ok(())
        })();
        if let Err(e) = r {
            // A transaction the server dropped (reset) is counted lost; only
            // a run of them ends the test.
            l.lost += 1;
            failures += 1;
            if failures >= 50 {
                l.error = Some(format!(
                    "50 connections in a row failed, the last with: {e:#}"
                ));
                break;
            }
            continue;
        }
        failures = 0;
        l.latency.record((Instant::now() - t0).as_nanos() as i64);
        l.transactions += 1;
    }
    l.cpu = client::thread_cpu_since(cpu0);
    l
}

fn one_client(
    i: u32,
    p: &Plan,
    addr: SocketAddr,
    key: Option<&StampKey>,
    stop: &Arc<AtomicUsize>,
) -> Result<RrClientResult> {
    let mut ctl = Control::connect(addr)?;
    ctl.check_limits(
        p.duration_ns,
        if p.kind == "crr" { p.burst as u64 } else { 1 },
        0,
    )?;
    let req = client::request(p.kind, p.duration_ns, i)
        .with(proto::F_STREAMS, Value::U64(1))
        .with(proto::F_REQUEST_SIZE, Value::U64(p.request))
        .with(proto::F_RESPONSE_SIZE, Value::U64(p.response))
        .with(proto::F_BURST, Value::U64(p.burst as u64))
        .with(proto::F_NODELAY, Value::Bool(true));
    let acc = ctl.request(req, key)?;
    let data = SocketAddr::new(addr.ip(), acc.data_port);
    let cpu0 = client::thread_cpu();
    let start;
    let l = match p.kind {
        "rr-tcp" => {
            let s = match client::data_connection(
                data,
                acc.test_id,
                &TcpOpts {
                    nodelay: true,
                    ..Default::default()
                },
            ) {
                Ok(s) => s,
                Err(e) => {
                    ctl.error("the client could not open its data connection");
                    return Err(e);
                }
            };
            let dl = client::Deadline::new(p.duration_ns);
            start = dl.start;
            let mut l = tcp_loop(s, p, dl.end, stop);
            l.cpu = client::thread_cpu_since(cpu0);
            l
        }
        "rr-udp" => {
            let bind = if data.is_ipv6() {
                "[::]:0"
            } else {
                "0.0.0.0:0"
            };
            let sock = UdpSocket::bind(bind).context("binding a UDP socket")?;
            sock.connect(data).context("connecting the UDP socket")?;
            let dl = client::Deadline::new(p.duration_ns);
            start = dl.start;
            let mut l = udp_loop(&sock, acc.test_id, p, dl.end, stop);
            l.cpu = client::thread_cpu_since(cpu0);
            l
        }
        _ => {
            let dl = client::Deadline::new(p.duration_ns);
            start = dl.start;
            let merged = Mutex::new(Loop::default());
            std::thread::scope(|sc| {
                for _ in 0..p.burst {
                    sc.spawn(|| {
                        let l = crr_loop(data, acc.test_id, p, dl.end, stop);
                        let mut m = merged.lock().unwrap();
                        m.transactions += l.transactions;
                        m.lost += l.lost;
                        m.latency.merge(&l.latency);
                        m.connect.merge(&l.connect);
                        m.error = m.error.take().or(l.error);
                        m.cpu = (m.cpu.0 + l.cpu.0, m.cpu.1 + l.cpu.1);
                    });
                }
            });
            merged.into_inner().unwrap()
        }
    };
    let elapsed_ns = start.elapsed().as_nanos() as u64;
    let cpu_local = CpuUse::new(l.cpu.0, l.cpu.1, elapsed_ns.max(1));
    let done = DoneFigures {
        bytes: l.transactions * p.response,
        packets: l.transactions,
        bytes_sent: l.transactions * p.request,
        packets_sent: l.transactions,
        elapsed_ns,
        cpu: cpu_local,
        transactions: l.transactions,
        partial: l.error.is_some() || client::interrupted(stop),
    };
    let (server, ctl_err) = match ctl.done(
        &client::done_message(&done),
        client::END_GRACE + proto::MESSAGE_TIMEOUT,
    ) {
        Ok(s) => (Some(s), None),
        Err(e) => (None, Some(format!("{e:#}"))),
    };
    let sv = server.as_ref();
    let cpu_remote = sv.and_then(|s| client::remote_cpu(s, elapsed_ns));
    let remote_tr = sv
        .and_then(|s| s.transactions)
        .filter(|t| *t > 0)
        .unwrap_or(l.transactions);
    let reason = if let Some(e) = &l.error {
        e.clone()
    } else if let Some(e) = ctl_err {
        format!("no result from the server: {e}")
    } else if sv.and_then(|s| s.partial).unwrap_or(false) {
        format!(
            "the server marked its figures partial: {}",
            sv.and_then(|s| s.reason.clone()).unwrap_or_default()
        )
    } else if client::interrupted(stop) {
        client::signal_reason(stop)
    } else {
        "finished".into()
    };
    Ok(RrClientResult {
        client: i,
        test_id: Some(acc.test_id),
        complete: reason == "finished",
        stop_reason: reason,
        elapsed_ns,
        transactions: l.transactions,
        transactions_per_s: if elapsed_ns > 0 {
            l.transactions as f64 * 1e9 / elapsed_ns as f64
        } else {
            0.0
        },
        lost: l.lost,
        latency: l.latency.snapshot(),
        connect: (p.kind == "crr").then(|| l.connect.snapshot()),
        cpu_local,
        cpu_remote,
        service_demand_local_us_per_transaction: cpu_local.us_per_transaction(l.transactions),
        service_demand_remote_us_per_transaction: cpu_remote
            .and_then(|c| c.us_per_transaction(remote_tr)),
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
        a: RrArgs,
    }

    #[test]
    fn kinds_and_sizes() {
        let p = |args: &[&str]| plan(&W::try_parse_from(args).unwrap().a);
        assert_eq!(p(&["t", "h"]).unwrap().kind, "rr-tcp");
        assert_eq!(p(&["t", "h"]).unwrap().request, 1);
        let u = p(&["t", "h", "--proto", "udp"]).unwrap();
        assert_eq!((u.kind, u.request, u.response), ("rr-udp", 16, 16));
        // Bare datagrams under 16 bytes: fine with one in flight, refused with more.
        assert_eq!(
            p(&[
                "t",
                "h",
                "--proto",
                "udp",
                "--request",
                "1",
                "--response",
                "1"
            ])
            .unwrap()
            .request,
            1
        );
        assert!(matches!(
            p(&["t", "h", "--proto", "udp", "--request", "1", "--burst", "2"]),
            Err(Failure::Params(_))
        ));
        assert_eq!(p(&["t", "h", "--connect"]).unwrap().kind, "crr");
        assert!(matches!(
            p(&["t", "h", "--proto", "udp", "--connect"]),
            Err(Failure::Usage(_))
        ));
    }

    #[test]
    fn tcp_loop_against_a_local_echo() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let a = l.local_addr().unwrap();
        let srv = std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            let mut b = [0u8; 1];
            while s.read_exact(&mut b).is_ok() {
                s.write_all(&[1, 2]).unwrap();
            }
        });
        let s = TcpStream::connect(a).unwrap();
        s.set_nodelay(true).unwrap();
        let plan = Plan {
            kind: "rr-tcp",
            request: 1,
            response: 2,
            burst: 3,
            duration_ns: 0,
            timeout: Duration::from_millis(200),
        };
        let r = tcp_loop(
            s,
            &plan,
            Instant::now() + Duration::from_millis(100),
            &AtomicUsize::new(0),
        );
        assert!(r.error.is_none(), "{:?}", r.error);
        assert!(r.transactions > 3);
        assert_eq!(r.latency.count(), r.transactions);
        srv.join().unwrap();
    }
}
