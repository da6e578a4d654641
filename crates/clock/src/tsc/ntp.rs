//! The TSC against an NTP server (seed 003, Li et al. 2006): SNTP requests
//! stamped with the TSC at send and receive, the server's Receive Timestamp
//! from each reply, and the minimum-RTT estimate over them.

use super::raw::{bounded, fitted, sleep_until_raw, tight_pair, TRIES_PER_BIN};
use crate::error::MeasureError;
use misura_measure::time::Span;

type Result<T> = std::result::Result<T, MeasureError>;
use misura_cli::progress::Progress;
use misura_measure::tscfreq::{self, NtpExchange, TscRawPair};
use misura_report::tsc::{Comparison, ExchangeRef, NtpFrequency, NtpReport};
use misura_sys::clock::{monotonic_raw_ns, realtime_ns};
use misura_sys::tsc;
use misura_wire::sntp::{self, NtpTimestamp, ReplyError, SntpRepr};
use std::io::ErrorKind;
use std::net::{SocketAddr, ToSocketAddrs, UdpSocket};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How long to spin for a reply before blocking: a LAN answers within it,
/// and spinning keeps the wake-up out of the RTT.
const SPIN: Duration = Duration::from_millis(2);

/// The SNTP run the flags ask for.
pub struct NtpPlan {
    pub server: String,
    pub interval: Span,
    pub count: u64,
    pub windows: u32,
}

/// What an NTP run gives: its report, and the (TSC, RAW) pairs read beside
/// the requests for the MONOTONIC_RAW estimate over the same period.
pub struct NtpRun {
    pub report: NtpReport,
    pub pairs: Vec<TscRawPair>,
    pub read: u64,
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
        Ok(mut it) => it
            .next()
            .ok_or_else(|| MeasureError::NtpNoAddress { server: s.into() }),
        Err(e) => Err(MeasureError::NtpUnresolved {
            server: s.into(),
            why: e.to_string(),
        }),
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

/// An SNTP client talking to one server, and what it has collected.
struct Session<'a> {
    server: &'a str,
    sock: UdpSocket,
    addr: SocketAddr,
    /// How long to wait for each reply.
    timeout: Duration,
    stop: &'a AtomicUsize,
    report: NtpReport,
    problems: Problems,
    exchanges: Vec<NtpExchange>,
    /// Per request: the tight (TSC, RAW) pair and CLOCK_REALTIME just after.
    pairs: Vec<(u64, TscRawPair, i64)>,
    read: u64,
}

impl<'a> Session<'a> {
    fn open(server: &'a str, interval: Span, stop: &'a AtomicUsize) -> Result<Session<'a>> {
        let addr = resolve_server(server)?;
        let bind = if addr.is_ipv4() {
            SocketAddr::from(([0u8; 4], 0))
        } else {
            SocketAddr::from(([0u16; 8], 0))
        };
        let sock =
            UdpSocket::bind(bind).map_err(MeasureError::socket("cannot open a UDP socket"))?;
        sock.connect(addr).map_err(|e| MeasureError::Socket {
            what: format!("cannot reach {addr}"),
            error: std::io::Error::new(e.kind(), format!("{e} (no route?)")),
        })?;
        Ok(Session {
            server,
            sock,
            addr,
            timeout: Duration::from_nanos(interval.as_ns().min(1_000_000_000) as u64),
            stop,
            report: NtpReport {
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
            },
            problems: Problems::default(),
            exchanges: Vec::new(),
            pairs: Vec::new(),
            read: 0,
        })
    }

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed) != 0
    }

    /// Request `seq` and wait for its reply. False when the request could
    /// not even be sent (the server's port refused an earlier one).
    fn exchange(&mut self, seq: u64) -> Result<bool> {
        if let Some(p) = tight_pair(TRIES_PER_BIN / 4, &mut self.read) {
            self.pairs.push((seq, p, realtime_ns()));
        }
        let sent = NtpTimestamp::from_unix_ns(realtime_ns());
        let mut req = [0u8; sntp::HEADER_LEN];
        SntpRepr::client_request(sent).emit(&mut req)?;
        let (s, _) = tsc::read_ordered();
        self.report.requests += 1;
        if let Err(e) = self.sock.send(&req) {
            if e.kind() == ErrorKind::ConnectionRefused {
                self.problems.refused = true;
                return Ok(false);
            }
            return Err(MeasureError::socket(format!(
                "cannot send to {}",
                self.addr
            ))(e));
        }
        self.await_reply(seq, sent, s)?;
        Ok(true)
    }

    /// Spin for the reply, then block, until the timeout; the TSC is read
    /// right after each receive.
    fn await_reply(&mut self, seq: u64, sent: NtpTimestamp, s: u64) -> Result<()> {
        let mut buf = [0u8; 512];
        let started = Instant::now();
        self.sock
            .set_nonblocking(true)
            .map_err(MeasureError::socket("the NTP socket"))?;
        let mut blocking = false;
        loop {
            let got = self.sock.recv(&mut buf);
            let (r, _) = tsc::read_ordered();
            match got {
                Ok(n) => {
                    if self.take(
                        &buf[..n],
                        NtpExchange {
                            seq,
                            s,
                            r,
                            ts: misura_measure::time::Instant::from_ns(0),
                        },
                        sent,
                    ) {
                        return Ok(());
                    }
                }
                Err(e) if e.kind() == ErrorKind::ConnectionRefused => {
                    self.problems.refused = true;
                    return Ok(());
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::TimedOut => {
                    let waited = started.elapsed();
                    if waited >= self.timeout || self.stopped() {
                        self.report.timeouts += 1;
                        return Ok(());
                    }
                    if waited >= SPIN && !blocking {
                        self.sock
                            .set_nonblocking(false)
                            .map_err(MeasureError::socket("the NTP socket"))?;
                        blocking = true;
                    }
                    if blocking {
                        self.sock
                            .set_read_timeout(Some(
                                (self.timeout - waited).max(Duration::from_millis(1)),
                            ))
                            .map_err(MeasureError::socket("the NTP socket"))?;
                    }
                }
                Err(e) => {
                    return Err(MeasureError::socket(format!(
                        "receiving from {}",
                        self.addr
                    ))(e))
                }
            }
        }
    }

    /// Judge a datagram received for `x` (its server time not yet known):
    /// true when the wait for this request is over.
    fn take(&mut self, datagram: &[u8], mut x: NtpExchange, sent: NtpTimestamp) -> bool {
        let rep = match SntpRepr::parse(datagram) {
            Ok(rep) => rep,
            Err(e) => {
                self.report.rejected += 1;
                self.problems.not_ntp = Some(format!("{}-byte datagram: {e}", datagram.len()));
                return false;
            }
        };
        match rep.check_server_reply(sent) {
            Ok(()) => {
                self.report.replies += 1;
                self.report.stratum = Some(rep.stratum);
                self.report.reference_id = Some(rep.reference_id_text());
                self.report.precision_ns = Some(sntp::log2_to_ns(rep.precision));
                x.ts = misura_measure::time::Instant::from_ns(rep.receive_timestamp.to_unix_ns());
                self.exchanges.push(x);
                true
            }
            // A late answer to an earlier request: not an error.
            Err(ReplyError::NotOurRequest) => false,
            // RFC 5905 §7.4: a client told off stops asking.
            Err(e @ ReplyError::KissOfDeath(_)) => {
                self.report.rejected += 1;
                self.problems.kiss = Some(e.to_string());
                true
            }
            Err(e @ ReplyError::Unsynchronized { .. }) => {
                self.report.rejected += 1;
                self.problems.unsync = Some(e.to_string());
                true
            }
            Err(e) => {
                self.report.rejected += 1;
                self.problems.not_ntp = Some(e.to_string());
                false
            }
        }
    }

    /// The round trips, the minimum-RTT frequency with the MONOTONIC_RAW
    /// one over the same period, and CLOCK_REALTIME's rate against RAW.
    /// False when no estimate could be made.
    fn estimate(&mut self, windows: u32, freq_hint: f64) -> bool {
        let exchanges = &self.exchanges;
        let report = &mut self.report;
        let pairs = &self.pairs;
        let pair_of = |seq: u64| pairs.iter().find(|(s, _, _)| *s == seq).map(|(_, p, _)| *p);
        let ns_of_ticks = |t: u64| t as f64 / freq_hint * 1e9;
        if !exchanges.is_empty() {
            let mut rtts: Vec<u64> = exchanges.iter().map(NtpExchange::rtt_ticks).collect();
            rtts.sort_unstable();
            report.rtt_min_ns = Some(ns_of_ticks(rtts[0]));
            report.rtt_median_ns = Some(ns_of_ticks(rtts[rtts.len() / 2]));
        }
        let windows = (windows as usize).clamp(2, exchanges.len().max(2));
        let est = tscfreq::min_rtt_estimate(exchanges, windows, report.precision_ns.unwrap_or(0.0));
        if let Some(e) = &est {
            let s0 = exchanges.iter().map(|x| x.s).min().unwrap_or(0);
            let xref = |x: &NtpExchange| ExchangeRef {
                seq: x.seq,
                rtt_ns: ns_of_ticks(x.rtt_ticks()),
                at_s: (x.s - s0) as f64 / freq_hint,
            };
            let b = &e.pair.estimate;
            report.estimate = Some(NtpFrequency {
                frequency_hz: b.frequency_hz,
                bound_hz: b.bound_hz,
                bound_ppm: b.bound_ppm(),
                span_s: b.span.as_ns() as f64 / 1e9,
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
            let draw = (z.raw - a.raw).as_ns();
            if draw > 0 {
                report.realtime_vs_raw_ppm = Some(((rz - ra) as f64 / draw as f64 - 1.0) * 1e6);
            }
        }
        est.is_some()
    }

    /// Why no estimate came out of `count` requests, most telling reason first.
    fn failure(&self, count: u64) -> String {
        let (addr, server, p) = (self.addr, self.server, &self.problems);
        let none = self.exchanges.is_empty();
        if p.refused && none {
            format!("{addr} refused the requests (ICMP port unreachable): no NTP server listens on UDP port {}", addr.port())
        } else if let (Some(k), true) = (&p.kiss, none) {
            format!("NTP server {server} ({addr}) sent a {k}")
        } else if let (Some(u), true) = (&p.unsync, none) {
            format!("NTP server {server} ({addr}) answered, but {u}: its timestamps cannot serve as a reference")
        } else if let (Some(g), true) = (&p.not_ntp, none) {
            format!("the answers from {addr} are not NTP server replies ({g})")
        } else if none && !self.stopped() {
            format!(
                "no answer from NTP server {server} ({addr}) to {} requests within {:.0} ms each: is an NTP server running there, and is UDP port {} open?",
                self.report.requests,
                self.timeout.as_secs_f64() * 1e3,
                addr.port()
            )
        } else {
            format!(
                "{} usable replies out of {count} requests: the method needs two minimum-RTT exchanges in different windows; send more requests",
                self.exchanges.len()
            )
        }
    }
}

/// One request every `interval_ns` until `count`, a signal, or a kiss of death.
pub fn run(
    plan: &NtpPlan,
    stop: &AtomicUsize,
    progress: &mut Progress,
    freq_hint: f64,
) -> Result<NtpRun> {
    let mut s = Session::open(&plan.server, plan.interval, stop)?;
    let t0 = monotonic_raw_ns();
    for seq in 0..plan.count {
        let at = t0 + seq as i64 * plan.interval.as_ns();
        sleep_until_raw(misura_measure::time::Instant::from_ns(at), stop);
        if s.stopped() {
            break;
        }
        if !s.exchange(seq)? {
            continue;
        }
        if s.problems.kiss.is_some() {
            break;
        }
        let (req_n, rep_n) = (s.report.requests, s.report.replies);
        progress.tick(|| format!("{req_n} requests, {rep_n} replies"));
    }
    if !s.estimate(plan.windows, freq_hint) {
        s.report.error = Some(s.failure(plan.count));
    }
    Ok(NtpRun {
        report: s.report,
        pairs: s.pairs.into_iter().map(|(_, p, _)| p).collect(),
        read: s.read,
    })
}
