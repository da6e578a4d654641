//! One `misura udp` client's test: the control exchange, the datagrams
//! (sent paced, or received in reverse), DONE → RESULT, and the client's
//! row of the result with the receiver's figures.

use super::datagram::{emit_header, HEADER};
use super::flow::{data_socket, receive, send_paced, RecvStats, SendStats};
use super::plan::{PacingMode, UdpPlan};
use crate::client::{self, Control, DoneFigures};
use crate::error::Result;
use crate::proto;
use misura_cli::progress::Progress;
use misura_report::throughput::{CpuUse, ServerFigures, UdpClientResult};
use misura_wire::control::Value;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::AtomicUsize;
use std::time::{Duration, Instant};

/// What every client of one run shares.
pub(super) type Run<'a> = client::Run<'a, UdpPlan>;

/// Client `i`'s whole test, to its row of the result.
pub(super) fn one_client(i: u32, run: &Run) -> Result<UdpClientResult> {
    let (mut ctl, test_id, sock, data) = open(i, run)?;
    let flow = Flow::run(run, &sock, test_id);
    let path_mtu = misura_sys::tcpinfo::path_mtu(&sock, data.is_ipv6()).ok();
    let (server, no_result) = client::finish(&mut ctl, &flow.done(run.stop));
    let sv = server.as_ref();
    let row = match &flow.received {
        Some(r) => client_receives(run.plan, &flow, r, sv),
        None => server_receives(run.plan, &flow, sv),
    };
    let reason = client::end_reason(None, sv, no_result.as_deref(), run.stop);
    Ok(UdpClientResult {
        client: i,
        test_id: Some(test_id),
        complete: reason.is_finished(),
        stop_reason: reason,
        path_mtu,
        cpu_remote: sv.and_then(|s| client::remote_cpu(s, flow.elapsed_ns)),
        server,
        ..row
    })
}

/// REQUEST the test and open the UDP socket to its port; the server is
/// told when that fails.
fn open(i: u32, run: &Run) -> Result<(Control, u64, UdpSocket, SocketAddr)> {
    let p = run.plan;
    let req = client::request("udp", p.duration_ns(), i)
        .with(proto::F_STREAMS, Value::U64(1))
        .with(
            proto::F_DIRECTION,
            Value::Str(p.direction().as_str().into()),
        )
        .with(proto::F_MSG_SIZE, Value::U64(p.msg_size()))
        .with(proto::F_RATE_BPS, Value::U64(p.rate_bps()))
        .with(proto::F_DF, Value::Bool(p.df))
        .with(proto::F_PACING_MODE, Value::Str(p.pacing.as_str().into()));
    let mut t = client::open_test(run.server, req, p.duration_ns(), 1, p.rate_bps())?;
    let sock = data_socket(t.data, p.df && !p.reverse);
    let sock = t
        .ctl
        .told(sock, "the client could not open its UDP socket")?;
    Ok((t.ctl, t.test_id, sock, t.data))
}

/// The client's side of the datagrams: what it sent (forward) or received
/// (reverse), over how long, at what CPU cost.
struct Flow {
    sent: SendStats,
    received: Option<RecvStats>,
    elapsed_ns: u64,
    cpu_local: CpuUse,
}

impl Flow {
    fn run(run: &Run, sock: &UdpSocket, test_id: u64) -> Flow {
        let p = run.plan;
        let progress = Progress::new(p.client.quiet, Some(Duration::from_nanos(p.duration_ns())));
        let cpu0 = client::thread_cpu();
        let (sent, received, elapsed_ns) = if p.reverse {
            announce(sock, test_id);
            let dl = client::Deadline::new(p.duration_ns());
            let r = receive(sock, test_id, p.msg_size(), dl.end, run.stop);
            let el = match (r.first, r.last) {
                (Some(_), Some(l)) => (l - dl.start).as_nanos() as u64,
                _ => p.duration_ns(),
            };
            (SendStats::default(), Some(r), el)
        } else {
            let dl = client::Deadline::new(p.duration_ns());
            let pace = (p.msg_size(), p.rate_bps(), p.pacing == PacingMode::Spin);
            let s = send_paced(sock, pace, test_id, dl.end, run.stop);
            let el = (Instant::now().min(dl.end) - dl.start).as_nanos() as u64;
            // Let the last datagrams reach the server before DONE.
            std::thread::sleep(Duration::from_millis(100));
            (s, None, el)
        };
        progress.done();
        let (cu, cs) = client::thread_cpu_since(cpu0);
        Flow {
            sent,
            received,
            elapsed_ns,
            cpu_local: CpuUse::new(cu, cs, elapsed_ns.max(1)),
        }
    }

    /// This side's figures for DONE.
    fn done(&self, stop: &AtomicUsize) -> DoneFigures {
        DoneFigures {
            bytes: self.received.as_ref().map_or(0, |r| r.bytes),
            packets: self.received.as_ref().map_or(0, |r| r.packets),
            bytes_sent: self.sent.bytes,
            packets_sent: self.sent.packets,
            elapsed_ns: self.elapsed_ns,
            cpu: self.cpu_local,
            transactions: 0,
            partial: client::interrupted(stop),
        }
    }
}

/// Reverse: tell the server where to send (a few times: UDP may lose one).
fn announce(sock: &UdpSocket, test_id: u64) {
    let mut hello = vec![0u8; HEADER];
    for _ in 0..3 {
        emit_header(
            &mut hello,
            test_id,
            u64::MAX,
            misura_sys::clock::realtime_ns(),
        );
        let _ = sock.send(&hello);
        std::thread::sleep(Duration::from_millis(2));
    }
}

fn ratio(lost: u64, sent: u64) -> f64 {
    if sent > 0 {
        lost as f64 / sent as f64
    } else {
        0.0
    }
}

/// Reverse: the client is the receiver; the server's RESULT says what it sent.
fn client_receives(
    p: &UdpPlan,
    f: &Flow,
    r: &RecvStats,
    sv: Option<&ServerFigures>,
) -> UdpClientResult {
    let v = sv
        .map(|s| client::udp_server_figures(s, None, f.elapsed_ns))
        .unwrap_or_default();
    let sent = v.packets_sent.unwrap_or(r.packets);
    let c = r.seq.as_ref().unwrap().counts();
    let lost = sent.saturating_sub(r.packets);
    UdpClientResult {
        receiver: "client".into(),
        sent_packets: sent,
        sent_bytes: sv
            .and_then(|s| s.bytes_sent)
            .filter(|_| v.packets_sent.is_some())
            .unwrap_or(sent.saturating_mul(p.msg_size())),
        received_packets: r.packets,
        received_bytes: r.bytes,
        lost,
        loss_ratio: ratio(lost, sent),
        duplicates: c.duplicates,
        reordered: c.reordered,
        jitter_ns: (r.packets > 1).then(|| r.jitter.jitter_ns().round() as u64),
        owd_min_ns: r.owd_min,
        owd_max_ns: r.owd_max,
        owd_variation_ns: r.owd_min.zip(r.owd_max).map(|(a, b)| b - a),
        throughput_bps: client::bits_per_s(r.bytes, f.elapsed_ns),
        pacing: sv.and_then(|s| s.pacing.clone()),
        ..base_row(p, f)
    }
}

/// Forward: the server is the receiver.
fn server_receives(p: &UdpPlan, f: &Flow, sv: Option<&ServerFigures>) -> UdpClientResult {
    let v = sv
        .map(|s| client::udp_server_figures(s, Some((f.sent.packets, f.sent.bytes)), f.elapsed_ns))
        .unwrap_or_default();
    let received = v.packets.unwrap_or(0);
    let rbytes = v
        .bytes
        .unwrap_or(received.saturating_mul(p.msg_size()))
        .min(f.sent.bytes);
    let lost = f.sent.packets.saturating_sub(received);
    // Receiver rate over the sender's sending time when the server's own
    // span is not known.
    let relapsed = v.elapsed_ns.unwrap_or(f.elapsed_ns);
    UdpClientResult {
        receiver: "server".into(),
        sent_packets: f.sent.packets,
        sent_bytes: f.sent.bytes,
        send_errors: f.sent.errors,
        emsgsize_errors: f.sent.emsgsize,
        received_packets: received,
        received_bytes: rbytes,
        lost,
        loss_ratio: ratio(lost, f.sent.packets),
        duplicates: sv.and_then(|s| s.duplicates).unwrap_or(0),
        reordered: sv.and_then(|s| s.reordered).unwrap_or(0),
        jitter_ns: sv.and_then(|s| s.jitter_ns),
        owd_min_ns: sv.and_then(|s| s.owd_min_ns),
        owd_max_ns: sv.and_then(|s| s.owd_max_ns),
        owd_variation_ns: sv
            .and_then(|s| s.owd_min_ns.zip(s.owd_max_ns))
            .and_then(|(a, b)| b.checked_sub(a)),
        throughput_bps: if received > 0 {
            client::bits_per_s(rbytes, relapsed)
        } else {
            0.0
        },
        pacing: f.sent.pacing.clone(),
        ..base_row(p, f)
    }
}

/// The fields both directions fill the same way.
fn base_row(p: &UdpPlan, f: &Flow) -> UdpClientResult {
    UdpClientResult {
        elapsed_ns: f.elapsed_ns,
        offered_bps: p.rate_bps() as f64,
        cpu_local: f.cpu_local,
        ..not_run_row()
    }
}

/// A client's row with nothing measured.
pub(super) fn not_run_row() -> UdpClientResult {
    UdpClientResult {
        client: 0,
        test_id: None,
        complete: false,
        stop_reason: misura_report::StopReason::Other(String::new()),
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
        pacing: None,
        server: None,
    }
}
