//! One `misura rr` client's test: the control exchange, the transaction
//! loop of its kind, DONE → RESULT, and the client's row of the result.

use super::loops::{crr_loop, tcp_loop, udp_loop, Loop};
use super::plan::{RrKind, RrPlan};
use crate::client::{self, Control, DoneFigures, TcpOpts};
use crate::error::Result;
use crate::proto;
use misura_report::model::summary::buckets;
use misura_report::throughput::{CpuUse, RrClientResult};
use misura_wire::control::Value;
use std::net::SocketAddr;

use std::sync::Mutex;
use std::time::Instant;

/// What every client of one run shares.
pub(super) type Run<'a> = client::Run<'a, RrPlan>;

/// Client `i`'s whole test, to its row of the result.
pub(super) fn one_client(i: u32, run: &Run) -> Result<RrClientResult> {
    let p = run.plan;
    let (mut ctl, test_id, data) = open(i, run)?;
    let cpu0 = client::thread_cpu();
    let (mut l, start) = match p.kind {
        RrKind::Tcp => one_connection(run, &mut ctl, test_id, data)?,
        RrKind::Udp => datagrams(run, test_id, data)?,
        RrKind::Crr => connection_per_transaction(run, test_id, data),
    };
    if p.kind != RrKind::Crr {
        // crr's loops count their own threads' CPU.
        l.cpu = client::thread_cpu_since(cpu0);
    }
    let elapsed_ns = start.elapsed().as_nanos() as u64;
    let cpu_local = CpuUse::new(l.cpu.0, l.cpu.1, elapsed_ns.max(1));
    let (r, q) = (p.t.request, p.t.response);
    let done = DoneFigures {
        bytes: l.transactions * q,
        packets: l.transactions,
        bytes_sent: l.transactions * r,
        packets_sent: l.transactions,
        elapsed_ns,
        cpu: cpu_local,
        transactions: l.transactions,
        partial: l.error.is_some() || client::interrupted(run.stop),
    };
    let (server, no_result) = client::finish(&mut ctl, &done);
    let sv = server.as_ref();
    let cpu_remote = sv.and_then(|s| client::remote_cpu(s, elapsed_ns));
    let remote_transactions = sv
        .and_then(|s| s.transactions)
        .filter(|t| *t > 0)
        .unwrap_or(l.transactions);
    let reason = client::end_reason(l.error.as_deref(), sv, no_result.as_deref(), run.stop);
    Ok(RrClientResult {
        client: i,
        test_id: Some(test_id),
        complete: reason.is_finished(),
        stop_reason: reason,
        elapsed_ns,
        transactions: l.transactions,
        transactions_per_s: if elapsed_ns > 0 {
            l.transactions as f64 * 1e9 / elapsed_ns as f64
        } else {
            0.0
        },
        lost: l.lost,
        latency: l.latency.snapshot().into(),
        latency_hdr: buckets(l.latency.hdr_buckets()),
        connect: (p.kind == RrKind::Crr).then(|| l.connect.snapshot().into()),
        cpu_local,
        cpu_remote,
        service_demand_local_us_per_transaction: cpu_local.us_per_transaction(l.transactions),
        service_demand_remote_us_per_transaction: cpu_remote
            .and_then(|c| c.us_per_transaction(remote_transactions)),
        server,
    })
}

/// REQUEST the test; returns the test id and its data address.
fn open(i: u32, run: &Run) -> Result<(Control, u64, SocketAddr)> {
    let p = run.plan;
    // crr holds up to `burst` connections open at once.
    let connections = if p.kind == RrKind::Crr {
        p.t.burst as u64
    } else {
        1
    };
    let req = client::request(p.kind.as_str(), p.duration_ns(), i)
        .with(proto::F_STREAMS, Value::U64(1))
        .with(proto::F_REQUEST_SIZE, Value::U64(p.t.request))
        .with(proto::F_RESPONSE_SIZE, Value::U64(p.t.response))
        .with(proto::F_BURST, Value::U64(p.t.burst as u64))
        .with(proto::F_NODELAY, Value::Bool(true));
    let t = client::open_test(run.server, req, p.duration_ns(), connections, 0)?;
    Ok((t.ctl, t.test_id, t.data))
}

const NODELAY: TcpOpts = TcpOpts {
    sndbuf: None,
    rcvbuf: None,
    nodelay: true,
};

/// rr-tcp: one data connection; the server is told when it cannot be opened.
fn one_connection(
    run: &Run,
    ctl: &mut Control,
    test_id: u64,
    data: SocketAddr,
) -> Result<(Loop, Instant)> {
    let s = client::data_connection(data, test_id, 0, &NODELAY);
    let s = ctl.told(s, "the client could not open its data connection")?;
    let dl = client::Deadline::new(run.plan.duration_ns());
    Ok((tcp_loop(s, &run.plan.t, dl.end, run.stop), dl.start))
}

/// rr-udp: a socket connected to the test's UDP port.
fn datagrams(run: &Run, test_id: u64, data: SocketAddr) -> Result<(Loop, Instant)> {
    let sock = client::connected_udp(data)?;
    let dl = client::Deadline::new(run.plan.duration_ns());
    Ok((
        udp_loop(&sock, test_id, &run.plan.t, dl.end, run.stop),
        dl.start,
    ))
}

/// crr: `burst` loops at once, each opening a connection per transaction.
fn connection_per_transaction(run: &Run, test_id: u64, data: SocketAddr) -> (Loop, Instant) {
    let dl = client::Deadline::new(run.plan.duration_ns());
    let merged = Mutex::new(Loop::default());
    std::thread::scope(|sc| {
        for _ in 0..run.plan.t.burst {
            sc.spawn(|| {
                let l = crr_loop(data, test_id, &run.plan.t, dl.end, run.stop);
                merged.lock().unwrap().merge(l);
            });
        }
    });
    (merged.into_inner().unwrap(), dl.start)
}
