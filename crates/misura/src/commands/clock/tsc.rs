//! `misura clock tsc`: the TSC frequency against CLOCK_MONOTONIC_RAW and,
//! with `--ntp`, against an NTP server by seed 003's minimum-RTT method.
//! The estimators are in `misura_measure::tscfreq`; this file reads the
//! clocks, talks SNTP and writes the report.

use crate::shared::exit::Failure;
use crate::shared::meta::{meta, now_rfc3339};
use crate::shared::output::{Finished, Report};
use crate::shared::progress::Progress;
use crate::shared::units::duration_ns;
use anyhow::{anyhow, Result};
use misura_measure::tscfreq::{self, NtpExchange, TightestPerBin, TscRawPair};
use misura_report::tsc::*;
use misura_report::LoopTuning;
use misura_sys::clock::{monotonic_raw_ns, realtime_ns};
use misura_sys::tsc;
use misura_wire::sntp::{self, NtpTimestamp, ReplyError, SntpRepr};
use std::io::ErrorKind;
use std::net::{SocketAddr, ToSocketAddrs, UdpSocket};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Long help for the subcommand (shown by `--help`).
pub const LONG_ABOUT: &str = "Measure the frequency of the CPU's time-stamp counter (TSC).

Against CLOCK_MONOTONIC_RAW (default): misura reads the TSC, then the raw clock, then \
the TSC again, many times; the raw reading lies inside the TSC bracket, so each read \
ties the two clocks together within half a bracket. The tightest bracket of each short \
time bin is kept. Reported: ΔTSC/ΔRAW over the run with a bound from the bracket widths, \
the least-squares slope of TSC against RAW with its 95 % interval, the frequency in each \
of --windows windows and their spread (stability, ppm), the kernel's own calibration \
where it says (and how far the measurement is from it), and the TSC flags with what \
they mean.

With --ntp SERVER (seed 003, Li et al. 2006): an SNTP request about every --interval; \
the TSC is read at send (s) and at receive (r), the server's Receive Timestamp (ts) \
is taken from the reply. Exchanges with the minimum round trip have the same one-way \
delay, so f = (s_j − s_i)/(ts_j − ts_i) for two of them far apart. misura keeps the \
fastest exchange of each window and picks the pair with the tightest bound: each \
one-way delay is known to within RTT/2, plus the server's stated precision. The result \
is compared with the MONOTONIC_RAW estimate over the same period. The NTP figure is \
against the server's clock: a server whose clock is off in rate shifts it by as much.

Examples:
  misura clock tsc --duration 30s --windows 10
  misura clock tsc --ntp pool.ntp.org --interval 1s --count 300 --export-json tsc.json
  misura clock tsc --netns misura-h1 --ntp 198.18.0.2 --interval 200ms --count 40";

#[derive(clap::Args, Debug, Clone)]
pub struct TscArgs {
    /// Length of a MONOTONIC_RAW run (e.g. 2s, 1m). Ignored with --ntp,
    /// whose length is --count × --interval.
    #[arg(long, default_value = "10s")]
    pub duration: String,
    /// Number of windows for the stability figure (and, with --ntp, for
    /// picking the fastest exchange of each).
    #[arg(long, default_value_t = 10)]
    pub windows: u32,
    /// NTP server (name or address, optional :PORT, default 123): estimate
    /// the frequency by seed 003's method.
    #[arg(long, value_name = "SERVER[:PORT]")]
    pub ntp: Option<String>,
    /// Time between SNTP requests. Public servers ask for no more than one
    /// request every few seconds; use a server of your own for short intervals.
    #[arg(long, default_value = "1s")]
    pub interval: String,
    /// Number of SNTP requests.
    #[arg(long, default_value_t = 60)]
    pub count: u64,
    #[command(flatten)]
    pub out: crate::shared::output::OutputArgs,
    #[command(flatten)]
    pub ns: crate::shared::netns::NetnsArgs,
}

/// TSC reads per bin: enough to catch an undisturbed bracket, short enough
/// (~20 µs) not to monopolise the CPU.
const TRIES_PER_BIN: usize = 200;
/// Bins per stability window.
const BINS_PER_WINDOW: i64 = 25;
/// How long to spin for a reply before blocking: a LAN answers within it,
/// and spinning keeps the wake-up out of the RTT.
const SPIN: Duration = Duration::from_millis(2);

const FLAG_MEANINGS: [(&str, &str); 7] = [
    ("tsc", "the CPU has a time-stamp counter"),
    ("rdtscp", "RDTSCP reads it in order, with the CPU number"),
    (
        "constant_tsc",
        "ticks at a fixed rate whatever the CPU frequency (P-state)",
    ),
    (
        "nonstop_tsc",
        "keeps ticking in deep idle states (C-states)",
    ),
    (
        "tsc_known_freq",
        "the CPU or hypervisor states the TSC frequency; the kernel does not calibrate it",
    ),
    (
        "tsc_reliable",
        "the kernel trusts it without the clocksource watchdog",
    ),
    (
        "tsc_adjust",
        "IA32_TSC_ADJUST: the kernel can keep all CPUs' counters in step",
    ),
];

/// The tightest of `tries` (TSC, RAW, TSC) reads; reads whose two TSC
/// values came from different CPUs (a migration) are dropped.
fn tight_pair(tries: usize, read: &mut u64) -> Option<TscRawPair> {
    let mut best: Option<TscRawPair> = None;
    for _ in 0..tries {
        let (a, ca) = tsc::read_ordered();
        let raw = monotonic_raw_ns();
        let (b, cb) = tsc::read_ordered();
        *read += 1;
        if ca != cb || b < a {
            continue;
        }
        let p = TscRawPair {
            tsc_before: a,
            raw_ns: raw,
            tsc_after: b,
        };
        if best.is_none_or(|q| p.width() < q.width()) {
            best = Some(p);
        }
    }
    best
}

fn interrupted(stop: &AtomicUsize) -> Option<String> {
    match stop.load(Ordering::Relaxed) {
        0 => None,
        s => Some(format!("interrupted by signal {s}; partial results")),
    }
}

/// Sleep until CLOCK_MONOTONIC_RAW reaches `until_ns`, waking for a stop.
fn sleep_until_raw(until_ns: i64, stop: &AtomicUsize) {
    loop {
        let left = until_ns - monotonic_raw_ns();
        if left <= 0 || stop.load(Ordering::Relaxed) != 0 {
            return;
        }
        std::thread::sleep(Duration::from_nanos(left.min(50_000_000) as u64));
    }
}

fn tsc_facts() -> TscFacts {
    let have = tsc::flags();
    let flags = FLAG_MEANINGS
        .iter()
        .map(|(n, m)| TscFlag {
            name: n.to_string(),
            present: have.iter().any(|h| h == n),
            meaning: m.to_string(),
        })
        .collect();
    let (kernel_calibration_hz, kernel_calibration_source) = match tsc::kernel_khz() {
        Some((khz, src)) => (Some(khz * 1e3), src),
        None => (
            None,
            "not reported: no tsc_khz in sysfs and no calibration line readable in the kernel log (dmesg needs root or kernel.dmesg_restrict=0)"
                .to_string(),
        ),
    };
    TscFacts {
        available: tsc::AVAILABLE,
        flags,
        clocksource: misura_sys::host::host_facts().clocksource,
        kernel_calibration_hz,
        kernel_calibration_source,
    }
}

fn bounded(b: &tscfreq::BoundedFrequency) -> BoundedFrequency {
    BoundedFrequency {
        frequency_hz: b.frequency_hz,
        bound_hz: b.bound_hz,
        bound_ppm: b.bound_ppm(),
        span_s: b.span_ns as f64 / 1e9,
    }
}

fn fitted(f: &tscfreq::FittedFrequency) -> FittedFrequency {
    FittedFrequency {
        frequency_hz: f.frequency_hz,
        ci95_hz: f.ci95_hz,
        ci95_ppm: f.ci95_ppm(),
        points: f.points,
        residual_std_ns: f.residual_std_ns,
    }
}

/// The MONOTONIC_RAW estimate from the kept pairs.
fn raw_estimate(
    pairs: &[TscRawPair],
    read: u64,
    windows: u32,
    kernel_hz: Option<f64>,
) -> Option<RawEstimate> {
    let ends = tscfreq::endpoint_estimate(pairs.first()?, pairs.last()?)?;
    let f = ends.frequency_hz;
    let mut widths: Vec<u64> = pairs.iter().map(TscRawPair::width).collect();
    widths.sort_unstable();
    let w = tscfreq::window_estimates(pairs, windows as usize);
    let stab = tscfreq::stability(&w, f);
    Some(RawEstimate {
        pairs_read: read,
        pairs_kept: pairs.len(),
        min_bracket_ns: widths[0] as f64 / f * 1e9,
        median_bracket_ns: widths[widths.len() / 2] as f64 / f * 1e9,
        endpoints: bounded(&ends),
        fit: tscfreq::fit_estimate(pairs).as_ref().map(fitted),
        windows: w
            .iter()
            .map(|w| RawWindow {
                start_s: w.start_ns as f64 / 1e9,
                end_s: w.end_ns as f64 / 1e9,
                pairs: w.pairs,
                frequency_hz: w.estimate.frequency_hz,
                bound_ppm: w.estimate.bound_ppm(),
                deviation_ppm: (w.estimate.frequency_hz / f - 1.0) * 1e6,
            })
            .collect(),
        stability: stab.map(|s| StabilityReport {
            windows: s.windows,
            std_dev_ppm: s.std_dev_ppm,
            spread_ppm: s.spread_ppm,
            max_deviation_ppm: s.max_deviation_ppm,
            resolution_ppm: s.resolution_ppm,
        }),
        kernel_difference_ppm: kernel_hz.map(|k| (f / k - 1.0) * 1e6),
    })
}

/// Resolve SERVER, SERVER:PORT, [V6]:PORT or a bare address.
fn resolve_server(s: &str) -> Result<SocketAddr> {
    if let Ok(sa) = s.parse::<SocketAddr>() {
        return Ok(sa);
    }
    if let Ok(ip) = s
        .trim_matches(|c| c == '[' || c == ']')
        .parse::<std::net::IpAddr>()
    {
        return Ok(SocketAddr::new(ip, sntp::UDP_PORT));
    }
    let with_port = if s
        .rsplit_once(':')
        .is_some_and(|(_, p)| p.parse::<u16>().is_ok())
    {
        s.to_string()
    } else {
        format!("{s}:{}", sntp::UDP_PORT)
    };
    match with_port.to_socket_addrs() {
        Ok(mut it) => it.next().ok_or_else(|| {
            anyhow!(Failure::Params(format!(
                "NTP server `{s}` resolves to no address"
            )))
        }),
        Err(e) => Err(anyhow!(Failure::Params(format!(
            "cannot resolve NTP server `{s}` ({e}): give an IP address or a resolvable host name"
        )))),
    }
}

/// Why replies were refused, kept to name the failure when none was usable.
#[derive(Default)]
struct Problems {
    refused: bool,
    not_ntp: Option<String>,
    kiss: Option<String>,
    unsync: Option<String>,
}

struct NtpRun {
    report: NtpReport,
    pairs: Vec<TscRawPair>,
    read: u64,
}

fn run_ntp(
    args: &TscArgs,
    server: &str,
    stop: &AtomicUsize,
    progress: &mut Progress,
    freq_hint: f64,
) -> Result<NtpRun> {
    let interval_ns = duration_ns(&args.interval)?;
    if interval_ns < 1_000_000 {
        return Err(Failure::Usage(format!("--interval {} is below 1 ms", args.interval)).into());
    }
    if args.count < 2 {
        return Err(Failure::Usage(
            "--count must be at least 2: the method needs two exchanges".into(),
        )
        .into());
    }
    let addr = resolve_server(server)?;
    let bind: SocketAddr = if addr.is_ipv4() {
        "0.0.0.0:0".parse()?
    } else {
        "[::]:0".parse()?
    };
    let sock = UdpSocket::bind(bind).map_err(|e| anyhow!("cannot open a UDP socket: {e}"))?;
    sock.connect(addr)
        .map_err(|e| anyhow!("cannot reach {addr}: {e} (no route?)"))?;
    let timeout = Duration::from_nanos(interval_ns.min(1_000_000_000) as u64);

    let mut report = NtpReport {
        server: server.to_string(),
        address: Some(addr.to_string()),
        requests: 0,
        replies: 0,
        timeouts: 0,
        rejected: 0,
        stratum: None,
        reference_id: None,
        precision_ns: None,
        rtt_min_ns: None,
        rtt_median_ns: None,
        estimate: None,
        raw_same_period: None,
        comparison: None,
        realtime_vs_raw_ppm: None,
        error: None,
    };
    let mut problems = Problems::default();
    let mut exchanges: Vec<NtpExchange> = Vec::new();
    // Per request: the tight (TSC, RAW) pair and CLOCK_REALTIME just after.
    let mut pairs: Vec<(u64, TscRawPair, i64)> = Vec::new();
    let mut read = 0u64;
    let mut buf = [0u8; 512];
    let t0 = monotonic_raw_ns();
    for seq in 0..args.count {
        sleep_until_raw(t0 + seq as i64 * interval_ns, stop);
        if stop.load(Ordering::Relaxed) != 0 {
            break;
        }
        if let Some(p) = tight_pair(TRIES_PER_BIN / 4, &mut read) {
            pairs.push((seq, p, realtime_ns()));
        }
        let sent = NtpTimestamp::from_unix_ns(realtime_ns());
        let mut req = [0u8; sntp::HEADER_LEN];
        SntpRepr::client_request(sent).emit(&mut req)?;
        let (s, _) = tsc::read_ordered();
        report.requests += 1;
        if let Err(e) = sock.send(&req) {
            if e.kind() == ErrorKind::ConnectionRefused {
                problems.refused = true;
                continue;
            }
            return Err(anyhow!("cannot send to {addr}: {e}"));
        }
        let started = Instant::now();
        sock.set_nonblocking(true)?;
        let mut blocking = false;
        loop {
            let got = sock.recv(&mut buf);
            let (r, _) = tsc::read_ordered();
            match got {
                Ok(n) => match SntpRepr::parse(&buf[..n]) {
                    Err(e) => {
                        report.rejected += 1;
                        problems.not_ntp = Some(format!("{n}-byte datagram: {e}"));
                    }
                    Ok(rep) => match rep.check_server_reply(sent) {
                        Ok(()) => {
                            report.replies += 1;
                            report.stratum = Some(rep.stratum);
                            report.reference_id = Some(rep.reference_id_text());
                            report.precision_ns = Some(sntp::log2_to_ns(rep.precision));
                            exchanges.push(NtpExchange {
                                seq,
                                s,
                                r,
                                ts_ns: rep.receive_timestamp.to_unix_ns(),
                            });
                            break;
                        }
                        // A late answer to an earlier request: not an error.
                        Err(ReplyError::NotOurRequest) => {}
                        // RFC 5905 §7.4: a client told off stops asking.
                        Err(e @ ReplyError::KissOfDeath(_)) => {
                            report.rejected += 1;
                            problems.kiss = Some(e.to_string());
                            break;
                        }
                        Err(e @ ReplyError::Unsynchronized { .. }) => {
                            report.rejected += 1;
                            problems.unsync = Some(e.to_string());
                            break;
                        }
                        Err(e) => {
                            report.rejected += 1;
                            problems.not_ntp = Some(e.to_string());
                        }
                    },
                },
                Err(e) if e.kind() == ErrorKind::ConnectionRefused => {
                    problems.refused = true;
                    break;
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::TimedOut => {
                    let waited = started.elapsed();
                    if waited >= timeout || stop.load(Ordering::Relaxed) != 0 {
                        report.timeouts += 1;
                        break;
                    }
                    if waited >= SPIN && !blocking {
                        sock.set_nonblocking(false)?;
                        blocking = true;
                    }
                    if blocking {
                        sock.set_read_timeout(Some(
                            (timeout - waited).max(Duration::from_millis(1)),
                        ))?;
                    }
                }
                Err(e) => return Err(anyhow!("receiving from {addr}: {e}")),
            }
        }
        if problems.kiss.is_some() {
            break;
        }
        let (req_n, rep_n) = (report.requests, report.replies);
        progress.tick(|| format!("{req_n} requests, {rep_n} replies"));
    }

    let pair_of = |seq: u64| pairs.iter().find(|(s, _, _)| *s == seq).map(|(_, p, _)| *p);
    let hz_of_ticks = |t: u64| t as f64 / freq_hint * 1e9;
    if !exchanges.is_empty() {
        let mut rtts: Vec<u64> = exchanges.iter().map(NtpExchange::rtt_ticks).collect();
        rtts.sort_unstable();
        report.rtt_min_ns = Some(hz_of_ticks(rtts[0]));
        report.rtt_median_ns = Some(hz_of_ticks(rtts[rtts.len() / 2]));
    }
    let windows = (args.windows as usize).clamp(2, exchanges.len().max(2));
    let est = tscfreq::min_rtt_estimate(&exchanges, windows, report.precision_ns.unwrap_or(0.0));
    if let Some(e) = &est {
        let s0 = exchanges.iter().map(|x| x.s).min().unwrap_or(0);
        let xref = |x: &NtpExchange| ExchangeRef {
            seq: x.seq,
            rtt_ns: hz_of_ticks(x.rtt_ticks()),
            at_s: (x.s - s0) as f64 / freq_hint,
        };
        let b = &e.pair.estimate;
        report.estimate = Some(NtpFrequency {
            frequency_hz: b.frequency_hz,
            bound_hz: b.bound_hz,
            bound_ppm: b.bound_ppm(),
            span_s: b.span_ns as f64 / 1e9,
            first: xref(&e.pair.first),
            last: xref(&e.pair.last),
            windows: e.selected.len(),
            fit: e.fit.as_ref().map(fitted),
        });
        if let (Some(a), Some(z)) = (pair_of(e.pair.first.seq), pair_of(e.pair.last.seq)) {
            if let Some(raw) = tscfreq::endpoint_estimate(&a, &z) {
                let g = tscfreq::agreement(b, &raw);
                report.raw_same_period = Some(bounded(&raw));
                report.comparison = Some(Comparison {
                    difference_ppm: g.difference_ppm,
                    combined_bound_ppm: g.combined_bound_ppm,
                    within_uncertainty: g.within,
                });
            }
        }
    }
    if let (Some((_, a, ra)), Some((_, z, rz))) = (pairs.first(), pairs.last()) {
        let draw = z.raw_ns - a.raw_ns;
        if draw > 0 {
            report.realtime_vs_raw_ppm = Some(((rz - ra) as f64 / draw as f64 - 1.0) * 1e6);
        }
    }
    if est.is_none() {
        let n = args.count;
        report.error = Some(if problems.refused && exchanges.is_empty() {
            format!("{addr} refused the requests (ICMP port unreachable): no NTP server listens on UDP port {}", addr.port())
        } else if let (Some(k), true) = (&problems.kiss, exchanges.is_empty()) {
            format!("NTP server {server} ({addr}) sent a {k}")
        } else if let (Some(u), true) = (&problems.unsync, exchanges.is_empty()) {
            format!("NTP server {server} ({addr}) answered, but {u}: its timestamps cannot serve as a reference")
        } else if let (Some(g), true) = (&problems.not_ntp, exchanges.is_empty()) {
            format!("the answers from {addr} are not NTP server replies ({g})")
        } else if exchanges.is_empty() && interrupted(stop).is_none() {
            format!(
                "no answer from NTP server {server} ({addr}) to {} requests within {:.0} ms each: is an NTP server running there, and is UDP port {} open?",
                report.requests,
                timeout.as_secs_f64() * 1e3,
                addr.port()
            )
        } else {
            format!(
                "{} usable replies out of {n} requests: the method needs two minimum-RTT exchanges in different windows; send more (--count)",
                exchanges.len()
            )
        });
    }
    Ok(NtpRun {
        report,
        pairs: pairs.into_iter().map(|(_, p, _)| p).collect(),
        read,
    })
}

pub fn run(args: &TscArgs, stop: &Arc<AtomicUsize>) -> Result<Finished> {
    if !tsc::AVAILABLE {
        return Err(Failure::Params("this build has no TSC to read (not x86-64)".into()).into());
    }
    if args.windows == 0 {
        return Err(Failure::Usage("--windows must be at least 1".into()).into());
    }
    let duration = duration_ns(&args.duration)?;
    if args.ntp.is_none() && duration < 10_000_000 {
        return Err(Failure::Usage(format!(
            "--duration {} is too short: give at least 10ms",
            args.duration
        ))
        .into());
    }
    let started_at = now_rfc3339();
    let facts = tsc_facts();
    let kernel_hz = facts.kernel_calibration_hz;
    let wall = Instant::now();

    let (raw, ntp) = match &args.ntp {
        None => {
            let bins = (i64::from(args.windows) * BINS_PER_WINDOW).max(2);
            let bin_ns = (duration / bins).max(1);
            // One bin more for the closing pair at t0 + duration.
            let mut keep = TightestPerBin::new(bin_ns, bins as usize + 1);
            let mut read = 0u64;
            let mut progress =
                Progress::new(args.out.quiet, Some(Duration::from_nanos(duration as u64)));
            let t0 = monotonic_raw_ns();
            for k in 0..bins {
                sleep_until_raw(t0 + k * bin_ns, stop);
                if stop.load(Ordering::Relaxed) != 0 {
                    break;
                }
                if let Some(p) = tight_pair(TRIES_PER_BIN, &mut read) {
                    keep.offer(p);
                }
                let kept = keep.pairs();
                progress.tick(|| {
                    match tscfreq::endpoint_estimate(&kept[0], &kept[kept.len() - 1]) {
                        Some(e) => format!("{read} reads, {} so far", format_mhz(e.frequency_hz)),
                        None => format!("{read} reads"),
                    }
                });
            }
            // One last pair at the very end, so the span is the duration.
            if stop.load(Ordering::Relaxed) == 0 {
                sleep_until_raw(t0 + duration, stop);
                if let Some(p) = tight_pair(TRIES_PER_BIN, &mut read) {
                    keep.offer(p);
                }
            }
            progress.done();
            (
                raw_estimate(&keep.pairs(), read, args.windows, kernel_hz),
                None,
            )
        }
        Some(server) => {
            let interval = duration_ns(&args.interval)?;
            let mut progress = Progress::new(
                args.out.quiet,
                Some(Duration::from_nanos(
                    (interval.max(0) as u64).saturating_mul(args.count),
                )),
            );
            let hint = kernel_hz.unwrap_or_else(quick_frequency);
            let run = run_ntp(args, server, stop, &mut progress, hint)?;
            progress.done();
            (
                raw_estimate(&run.pairs, run.read, args.windows, kernel_hz),
                Some(run.report),
            )
        }
    };

    let mut warnings = Vec::new();
    let has = |n: &str| facts.flags.iter().any(|f| f.name == n && f.present);
    if !has("constant_tsc") {
        warnings.push("no constant_tsc: the TSC rate follows the CPU frequency, so no single frequency converts it to time; set the governor to `performance` and disable boost, or use CLOCK_MONOTONIC_RAW".into());
    }
    if !has("nonstop_tsc") {
        warnings.push("no nonstop_tsc: the TSC may stop in deep idle states; limit C-states (e.g. `cpupower idle-set -D 0`) or use CLOCK_MONOTONIC_RAW".into());
    }
    match &facts.clocksource {
        Some(cs) if cs != "tsc" => warnings.push(format!(
            "the kernel's clocksource is `{cs}`, not `tsc`: the kernel does not trust the TSC here (or a hypervisor clock is preferred); check `dmesg | grep -i tsc`"
        )),
        _ => {}
    }
    let host = crate::shared::host::fingerprint(LoopTuning {
        netns: args.ns.netns.clone(),
        ..LoopTuning::default()
    });
    if host.virtualized == Some(true) {
        warnings.push(
            "running in a virtual machine: the hypervisor may scale or offset the guest's TSC"
                .into(),
        );
    }
    if let Some(c) = ntp.as_ref().and_then(|n| n.comparison.as_ref()) {
        if !c.within_uncertainty {
            warnings.push(format!(
                "the NTP estimate differs from MONOTONIC_RAW by {:+.3} ppm, more than the combined uncertainty ± {:.3} ppm: the server's clock runs at another rate than this host's oscillator (see realtime_vs_raw_ppm when the server is this host)",
                c.difference_ppm, c.combined_bound_ppm
            ));
        }
    }
    let stop_reason = interrupted(stop).unwrap_or_else(|| "finished".into());
    let error = ntp.as_ref().and_then(|n| n.error.clone());
    let report = TscReport {
        meta: meta("misura.clock-tsc", started_at),
        complete: stop_reason == "finished",
        stop_reason,
        host,
        config: TscConfig {
            mode: if args.ntp.is_some() {
                "ntp".into()
            } else {
                "monotonic-raw".into()
            },
            duration_s: args.ntp.is_none().then(|| duration as f64 / 1e9),
            windows: args.windows,
            server: args.ntp.clone(),
            interval_s: args
                .ntp
                .as_ref()
                .map(|_| duration_ns(&args.interval).unwrap_or(0) as f64 / 1e9),
            count: args.ntp.as_ref().map(|_| args.count),
            netns: args.ns.netns.clone(),
        },
        tsc: facts,
        raw,
        ntp,
        elapsed_s: wall.elapsed().as_secs_f64(),
        warnings,
    };
    let target = args
        .ntp
        .clone()
        .unwrap_or_else(|| "CLOCK_MONOTONIC_RAW".into());
    let report = Report::new(report, "clock-tsc", target, write_text);
    Ok(match error {
        // A failure after a complete run (the NTP server stopped answering at
        // the end) still shows what was measured, then fails the run.
        Some(e) if report.value.complete => {
            eprintln!("misura: error: {e}");
            Finished::with_code(report, crate::shared::exit::ERROR)
        }
        _ => Finished::ok(report),
    })
}

fn format_mhz(hz: f64) -> String {
    format!("{:.3} MHz", hz / 1e6)
}

/// A rough frequency (0.1 s against MONOTONIC_RAW) to turn ticks into
/// nanoseconds for display when the kernel does not state its own.
fn quick_frequency() -> f64 {
    let mut n = 0;
    let a = tight_pair(50, &mut n);
    std::thread::sleep(Duration::from_millis(100));
    let b = tight_pair(50, &mut n);
    a.zip(b)
        .and_then(|(a, b)| tscfreq::endpoint_estimate(&a, &b))
        .map_or(1e9, |e| e.frequency_hz)
}
