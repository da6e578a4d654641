//! One `misura tcp` client's test: the control exchange (REQUEST, data
//! connections), the streams running with their progress and interval
//! lines, DONE → RESULT, and the client's row of the result.

use super::multiplex;
use super::plan::{TcpPlan, Threads};
use super::streams::{stream_worker, Counters, StreamOutcome};
use crate::client::{self, Control, Direction, DoneFigures};
use crate::error::Result;
use crate::proto;
use misura_cli::progress::Progress;
use misura_report::throughput::{
    CpuUse, IntervalLine, ServerFigures, TcpClientResult, TcpStreamResult,
};
use misura_wire::control::Value;
use std::net::TcpStream;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// What every client of one run shares.
pub(super) type Run<'a> = client::Run<'a, TcpPlan>;

/// Client `i`'s whole test, to its row of the result.
pub(super) fn one_client(
    i: u32,
    run: &Run,
    intervals: &Mutex<Vec<IntervalLine>>,
) -> Result<TcpClientResult> {
    let (mut ctl, test_id, socks) = open(i, run)?;
    let granted: Vec<Granted> = socks.iter().map(Granted::of).collect();
    let ran = run_streams(i, run, intervals, socks);
    let outcomes = &ran.outcomes;
    let totals = Totals::of(&ran);
    let (server, no_result) = client::finish(&mut ctl, &totals.done(run.stop));
    let end = End {
        test_id,
        server,
        no_result,
    };
    Ok(client_row(i, run, outcomes, &granted, &totals, end))
}

/// REQUEST the test and open its data connections; the server is told
/// when they cannot be opened.
fn open(i: u32, run: &Run) -> Result<(Control, u64, Vec<TcpStream>)> {
    let p = run.plan;
    let opts = p.opts();
    let req = client::request("tcp", p.duration_ns(), i)
        .with(proto::F_STREAMS, Value::U64(p.streams as u64))
        .with(proto::F_DIRECTION, Value::Str(p.direction.as_str().into()))
        .with(proto::F_MSG_SIZE, Value::U64(p.msg_size.bytes))
        .with(proto::F_SNDBUF, Value::U64(opts.sndbuf.unwrap_or(0) as u64))
        .with(proto::F_RCVBUF, Value::U64(opts.rcvbuf.unwrap_or(0) as u64))
        .with(proto::F_NODELAY, Value::Bool(opts.nodelay));
    let mut t = client::open_test(run.server, req, p.duration_ns(), p.streams as u64, 0)?;
    let socks = (0..p.streams)
        .map(|k| client::data_connection(t.data, t.test_id, k, &opts))
        .collect();
    let socks = t
        .ctl
        .told(socks, "the client could not open its data connections")?;
    Ok((t.ctl, t.test_id, socks))
}

/// A data connection's local port and the buffers the kernel granted it.
struct Granted {
    local_port: u16,
    sndbuf: u64,
    rcvbuf: u64,
}

impl Granted {
    fn of(s: &TcpStream) -> Granted {
        let (sndbuf, rcvbuf) = client::granted_buffers(s);
        Granted {
            local_port: s.local_addr().map(|a| a.port()).unwrap_or(0),
            sndbuf,
            rcvbuf,
        }
    }
}

/// A client's streams, run: each one's outcome, when they started, and the
/// CPU time of the thread(s) that drove them.
struct Ran {
    outcomes: Vec<StreamOutcome>,
    start: Instant,
    cpu: (u64, u64),
}

/// Run every stream to its end, one thread for all (the default) or one
/// thread each (`--threads`), with the progress and interval lines.
fn run_streams(
    i: u32,
    run: &Run,
    intervals: &Mutex<Vec<IntervalLine>>,
    socks: Vec<TcpStream>,
) -> Ran {
    let p = run.plan;
    let counters: Vec<Counters> = (0..p.streams).map(|_| Counters::default()).collect();
    let dl = client::Deadline::new(p.duration_ns());
    let mut watch = Watch::new(i, run, intervals, dl.start, dl.end);
    let (outcomes, cpu) = match p.threads {
        Threads::One => multiplex::drive_all(
            socks,
            p.direction,
            p.msg_size.bytes as usize,
            p.busy_poll,
            dl.end,
            run.stop,
            &counters,
            || {
                watch.tick(moved(&counters));
                watch.next_due()
            },
        ),
        Threads::PerStream => thread_each(run, socks, &counters, dl.end, &mut watch),
    };
    watch.progress.done();
    Ran {
        outcomes,
        start: dl.start,
        cpu,
    }
}

/// Bytes sent and received so far, over all streams.
fn moved(counters: &[Counters]) -> (u64, u64) {
    counters.iter().fold((0, 0), |a, c| {
        (
            a.0 + c.sent.load(Ordering::Relaxed),
            a.1 + c.received.load(Ordering::Relaxed),
        )
    })
}

/// Every stream in its own thread, watched from this one meanwhile.
fn thread_each(
    run: &Run,
    socks: Vec<TcpStream>,
    counters: &[Counters],
    end: Instant,
    watch: &mut Watch,
) -> (Vec<StreamOutcome>, (u64, u64)) {
    let p = run.plan;
    let msg_size = p.msg_size.bytes as usize;
    let ran: Vec<_> = std::thread::scope(|sc| {
        let hs: Vec<_> = socks
            .into_iter()
            .zip(counters)
            .map(|(s, ctr)| {
                let stop: &AtomicUsize = run.stop;
                sc.spawn(move || stream_worker(s, p.direction, msg_size, end, stop, ctr))
            })
            .collect();
        while !hs.iter().all(|h| h.is_finished()) {
            std::thread::sleep(Duration::from_millis(5));
            watch.tick(moved(counters));
        }
        hs.into_iter()
            .map(|h| h.join().expect("stream thread panicked"))
            .collect()
    });
    let cpu = ran.iter().fold((0, 0), |a, (_, c)| (a.0 + c.0, a.1 + c.1));
    (ran.into_iter().map(|(o, _)| o).collect(), cpu)
}

/// After the planned end, how late an interval line may still be written.
const INTERVAL_LATE: Duration = Duration::from_millis(50);

/// The progress line and the `--interval` lines of one client.
struct Watch<'a> {
    client: u32,
    run: &'a Run<'a>,
    intervals: &'a Mutex<Vec<IntervalLine>>,
    progress: Progress,
    end: Instant,
    /// When the next interval line is due.
    next: Option<Instant>,
    /// Bytes sent and received at the previous line, and its instant.
    last: (u64, u64, Instant),
    /// The latest interval's throughput, bit/s, for the progress line.
    latest_bps: Option<f64>,
}

impl<'a> Watch<'a> {
    fn new(
        client: u32,
        run: &'a Run<'a>,
        intervals: &'a Mutex<Vec<IntervalLine>>,
        start: Instant,
        end: Instant,
    ) -> Watch<'a> {
        let p = run.plan;
        Watch {
            client,
            run,
            intervals,
            progress: Progress::new(p.client.quiet, Some(Duration::from_nanos(p.duration_ns()))),
            end,
            next: p.interval_ns().map(|iv| start + Duration::from_nanos(iv)),
            last: (0, 0, start),
            latest_bps: None,
        }
    }

    /// When the next interval line is due, while one may still come.
    fn next_due(&self) -> Option<Instant> {
        self.next
            .filter(|_| Instant::now() <= self.end + INTERVAL_LATE)
    }

    /// With the bytes sent and received so far.
    fn tick(&mut self, (s, r): (u64, u64)) {
        let i = self.client;
        let latest = self.latest_bps;
        self.progress.tick(|| {
            let iv = latest.map_or(String::new(), |b| {
                format!("; last interval {:.3} Mbit/s", b / 1e6)
            });
            format!("client {i}: sent {s} B, received {r} B{iv}")
        });
        let (Some(due), Some(iv)) = (self.next, self.run.plan.interval_ns()) else {
            return;
        };
        let now = Instant::now();
        if now < due || now > self.end + INTERVAL_LATE {
            return;
        }
        let (ls, lr, lt) = self.last;
        let secs = (now - lt).as_secs_f64().max(1e-9);
        let line = IntervalLine {
            client: i,
            start_ns: (lt - self.run.t0).as_nanos() as u64,
            end_ns: (now - self.run.t0).as_nanos() as u64,
            sent_bytes: s - ls,
            received_bytes: r - lr,
            throughput_bps: ((s - ls) + (r - lr)) as f64 * 8.0 / secs,
        };
        // The lines are the result's (printed with it). On a terminal the
        // progress line shows the latest as it comes, so each is read once;
        // into a log, each is written as it comes.
        self.latest_bps = Some(line.throughput_bps);
        if !self.run.plan.client.quiet && !self.progress.is_on() {
            log::info!(
                "[client {i} {:>6.2}-{:<6.2} s] sent {} B received {} B, {:.3} Mbit/s",
                line.start_ns as f64 / 1e9,
                line.end_ns as f64 / 1e9,
                line.sent_bytes,
                line.received_bytes,
                line.throughput_bps / 1e6
            );
        }
        self.intervals.lock().unwrap().push(line);
        self.last = (s, r, now);
        self.next = Some(due + Duration::from_nanos(iv));
    }
}

/// What one client's streams moved, summed, from their start to the last
/// byte written or read.
struct Totals {
    elapsed_ns: u64,
    sent: u64,
    received: u64,
    cpu_local: CpuUse,
    /// The first stream's error.
    error: Option<String>,
}

impl Totals {
    fn of(ran: &Ran) -> Totals {
        let (outcomes, start) = (&ran.outcomes, ran.start);
        let last = outcomes
            .iter()
            .filter_map(|o| o.last_io)
            .max()
            .unwrap_or(start);
        let elapsed_ns = (last.max(start) - start).as_nanos() as u64;
        let (cu, cs) = ran.cpu;
        Totals {
            elapsed_ns,
            sent: outcomes.iter().map(|o| o.sent).sum(),
            received: outcomes.iter().map(|o| o.received).sum(),
            cpu_local: CpuUse::new(cu, cs, elapsed_ns.max(1)),
            error: outcomes.iter().find_map(|o| o.error.clone()),
        }
    }

    /// This side's figures for DONE.
    fn done(&self, stop: &AtomicUsize) -> DoneFigures {
        DoneFigures {
            bytes: self.received,
            packets: 0,
            bytes_sent: self.sent,
            packets_sent: 0,
            elapsed_ns: self.elapsed_ns,
            cpu: self.cpu_local,
            transactions: 0,
            partial: self.error.is_some() || client::interrupted(stop),
        }
    }
}

/// How the control exchange ended.
struct End {
    test_id: u64,
    server: Option<ServerFigures>,
    /// Why no RESULT came, when none did.
    no_result: Option<String>,
}

/// The receiver's count and rates: the server's for what the client sent,
/// the client's own for what it received.
struct Receiver {
    bytes: u64,
    throughput_bps: f64,
    forward_bps: Option<f64>,
    reverse_bps: Option<f64>,
}

/// The server's count is used only as far as it passed the check
/// ([`client::received_by_server`]); a count that failed gives way to this
/// client's own count of what it sent, over its own time.
fn receiver(p: &TcpPlan, t: &Totals, sv: Option<&ServerFigures>, v: &client::Vetted) -> Receiver {
    let claimed = sv.is_some_and(|s| s.bytes.is_some());
    let (forward_bytes, forward_ns) = match v.bytes {
        Some(b) => (b, v.elapsed_ns.unwrap_or(t.elapsed_ns)),
        None if claimed => (t.sent, t.elapsed_ns),
        None => (0, t.elapsed_ns),
    };
    let forward = client::bits_per_s(forward_bytes, forward_ns);
    let reverse = client::bits_per_s(t.received, t.elapsed_ns);
    match p.direction {
        Direction::Forward => Receiver {
            bytes: forward_bytes,
            throughput_bps: forward,
            forward_bps: None,
            reverse_bps: None,
        },
        Direction::Reverse => Receiver {
            bytes: t.received,
            throughput_bps: reverse,
            forward_bps: None,
            reverse_bps: None,
        },
        Direction::Bidir => Receiver {
            bytes: forward_bytes.saturating_add(t.received),
            throughput_bps: forward + reverse,
            forward_bps: Some(forward),
            reverse_bps: Some(reverse),
        },
    }
}

/// One row per stream: its bytes as its receiver counted them, the buffers
/// granted, and TCP_INFO of the client's socket.
fn stream_rows(
    p: &TcpPlan,
    outcomes: &[StreamOutcome],
    granted: &[Granted],
    elapsed_ns: u64,
    v: &client::Vetted,
) -> Vec<TcpStreamResult> {
    outcomes
        .iter()
        .zip(granted)
        .enumerate()
        .map(|(k, (o, g))| {
            let server_count = v.stream_bytes.get(k).copied().flatten();
            let recv = match p.direction {
                Direction::Forward => server_count,
                Direction::Reverse => Some(o.received),
                Direction::Bidir => server_count.map(|f| f.saturating_add(o.received)),
            };
            let info = o.info.unwrap_or_default();
            TcpStreamResult {
                index: k as u32,
                local_port: g.local_port,
                sent_bytes: o.sent,
                received_bytes: o.received,
                receiver_bytes: recv,
                throughput_bps: client::bits_per_s(recv.unwrap_or(o.sent + o.received), elapsed_ns),
                sndbuf_granted: g.sndbuf,
                rcvbuf_granted: g.rcvbuf,
                retransmits: info.total_retrans,
                rtt_us: info.rtt_us,
                rttvar_us: info.rttvar_us,
                min_rtt_us: info.min_rtt_us,
                snd_cwnd: info.snd_cwnd,
                pmtu: info.pmtu,
            }
        })
        .collect()
}

fn client_row(
    i: u32,
    run: &Run,
    outcomes: &[StreamOutcome],
    granted: &[Granted],
    t: &Totals,
    end: End,
) -> TcpClientResult {
    let sv = end.server.as_ref();
    let v = vetted(sv, t, outcomes);
    let rx = receiver(run.plan, t, sv, &v);
    let infos: Vec<_> = outcomes.iter().filter_map(|o| o.info).collect();
    let cpu_remote = sv.and_then(|s| client::remote_cpu(s, t.elapsed_ns));
    let reason = client::end_reason(t.error.as_deref(), sv, end.no_result.as_deref(), run.stop);
    let moved = t.sent + t.received;
    TcpClientResult {
        client: i,
        test_id: Some(end.test_id),
        complete: reason.is_finished(),
        stop_reason: reason,
        elapsed_ns: t.elapsed_ns,
        sent_bytes: t.sent,
        received_bytes: t.received,
        receiver_bytes: rx.bytes,
        throughput_bps: rx.throughput_bps,
        forward_bps: rx.forward_bps,
        reverse_bps: rx.reverse_bps,
        retransmits: infos.iter().map(|t| t.total_retrans as u64).sum(),
        rtt_us_mean: (!infos.is_empty())
            .then(|| infos.iter().map(|t| t.rtt_us as f64).sum::<f64>() / infos.len() as f64),
        streams: stream_rows(run.plan, outcomes, granted, t.elapsed_ns, &v),
        cpu_local: t.cpu_local,
        cpu_remote,
        service_demand_local_us_per_kb: t.cpu_local.us_per_kb(moved),
        service_demand_remote_us_per_kb: cpu_remote.and_then(|c| c.us_per_kb(moved)),
        server: end.server,
    }
}

/// The server's figures checked against this client's counts.
fn vetted(sv: Option<&ServerFigures>, t: &Totals, outcomes: &[StreamOutcome]) -> client::Vetted {
    let sent: Vec<u64> = outcomes.iter().map(|o| o.sent).collect();
    sv.map(|s| client::received_by_server(s, t.sent, &sent, t.elapsed_ns))
        .unwrap_or_default()
}
