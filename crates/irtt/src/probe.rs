//! `misura rtt HOST --peer irtt`'s method (and `misura load --reflector
//! irtt://HOST`'s): the request checked once into a [`Plan`], the session
//! ([`crate::client`]), and its result as `misura rtt`'s report
//! (`misura.rtt`, with what irtt adds in its `irtt` object); [`run`] does
//! it all from rtt's request (the target resolved too). The caller words
//! [`Error`]s with its flags, picks the exit code and prints.

use crate::client::{self, Options};
use crate::error::Error;
use crate::grant::MAX_INTERVAL;
use crate::report::{params_view, separability};
use misura_measure::period::PeriodBounds;
use misura_measure::time::{Period, Span};
use misura_report::StopReason;
use misura_stats::{Summary, SummarySnapshot};
use misura_wire::irtt::{Layout, MAX_KEY_LEN, MAX_PACKET_LEN, PROTOCOL_VERSION};
use misura_wire::irtt_params::{Clock, Params, ReceivedStats, StampAt};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Longest irtt session misura asks for.
pub const MAX_DURATION: Span = Span::from_secs(7 * 24 * 3600);
/// The probe period when none is given.
pub const DEFAULT_PERIOD: Span = Span::from_millis(100);
/// The periods misura asks an irtt server for: 1 ns (a server raises it
/// to its own minimum) to irtt's 15 s.
const BOUNDS: PeriodBounds = PeriodBounds {
    min: Span::from_ns(1),
    max: MAX_INTERVAL,
};
/// The probes when neither a count nor a duration is given.
pub const DEFAULT_COUNT: u64 = 100;

/// What is asked for, before it is checked.
#[derive(Debug, Clone)]
pub struct Request {
    pub target: SocketAddr,
    pub period: Option<Span>,
    pub count: Option<u64>,
    pub duration: Option<Span>,
    /// irtt's packet length (its header included; 0: the header only).
    pub length: usize,
    pub key: Option<Vec<u8>>,
}

impl Request {
    /// An rtt session's request as an irtt request to `target` (resolved
    /// by the caller): its period, else one probe every 1/rate; its count
    /// and duration; the first request size as irtt's length; its irtt
    /// key.
    pub fn from_rtt_request(r: &misura_rtt::RttRequest, target: SocketAddr) -> Request {
        use misura_rtt::plan::Pace;
        Request {
            target,
            period: match r.plan.pace {
                Pace::Period(p) => Some(p),
                Pace::Rate(rate) => Some(Span::from_std(std::time::Duration::from_secs_f64(
                    1.0 / rate.max(1e-3),
                ))),
                Pace::Default => None,
            },
            count: r.plan.count,
            duration: r.plan.duration,
            length: r.plan.request.first().copied().unwrap_or(0),
            key: r.irtt_hmac.as_ref().map(|k| k.as_bytes().to_vec()),
        }
    }
}

/// A checked request: the parameters misura asks the server for.
#[derive(Debug, Clone)]
pub struct Plan {
    options: Options,
    interval: Span,
}

impl Plan {
    /// Checks every bound of the request, once.
    pub fn new(r: Request) -> Result<Plan, Error> {
        let interval = r.period.unwrap_or(DEFAULT_PERIOD);
        Period::within(interval, BOUNDS).map_err(|_| Error::PeriodOutOfRange {
            period: interval,
            max: MAX_INTERVAL,
        })?;
        let count = match (r.count, r.duration) {
            (None, None) => Some(DEFAULT_COUNT),
            (c, _) => c,
        };
        let by_count = count.map(|c| interval.saturating_mul(c.min(u64::from(u32::MAX)) as i64));
        let duration = match (by_count, r.duration) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => a.or(b).unwrap_or_default(),
        };
        if !duration.is_positive() || duration > MAX_DURATION {
            return Err(Error::DurationOutOfRange {
                duration,
                max: MAX_DURATION,
            });
        }
        if r.length > MAX_PACKET_LEN {
            return Err(Error::PacketTooLong {
                length: r.length,
                max: MAX_PACKET_LEN,
            });
        }
        if let Some(k) = &r.key {
            if k.is_empty() || k.len() > MAX_KEY_LEN {
                return Err(Error::KeyLength {
                    len: k.len(),
                    max: MAX_KEY_LEN,
                });
            }
        }
        let params = Params {
            protocol_version: PROTOCOL_VERSION,
            duration_ns: duration.as_ns(),
            interval_ns: interval.as_ns(),
            length: r.length as i64,
            received_stats: ReceivedStats::Both,
            stamp_at: StampAt::Both,
            clock: Clock::Both,
            dscp: 0,
            server_fill: String::new(),
        };
        Ok(Plan {
            options: Options {
                target: r.target,
                key: r.key,
                params,
                count,
            },
            interval,
        })
    }

    pub fn target(&self) -> SocketAddr {
        self.options.target
    }
    pub fn interval(&self) -> Span {
        self.interval
    }
    /// Probes asked for (None: as many as the duration holds).
    pub fn count(&self) -> Option<u64> {
        self.options.count
    }
}

/// One session as it ran: what was asked, what came back.
pub struct Session {
    pub requested: Params,
    pub target: SocketAddr,
    pub hmac: bool,
    pub started_at: String,
    /// Probes asked for (None: as many as the duration holds).
    pub count: Option<u64>,
    pub run: client::Run,
    /// Every probe asked for was sent and waited for.
    pub complete: bool,
    pub stop_reason: StopReason,
}

/// Runs the session of `plan` until its end, or until `stop` holds a
/// signal's number (then the result is partial and says so).
pub fn measure(plan: &Plan, stop: &AtomicUsize) -> Result<Session, Error> {
    let started_at = misura_cli::meta::now_rfc3339();
    let should_stop = || stop.load(Ordering::Relaxed) != 0;
    let run = client::run(&plan.options, &should_stop)?;
    let (complete, stop_reason) = match (stop.load(Ordering::Relaxed), &run.short) {
        (0, None) if !run.interrupted => (true, StopReason::Finished),
        (0, Some(why)) => (false, StopReason::other(why)),
        (0, None) => (false, StopReason::other("stopped before the end")),
        (s, _) => (false, misura_cli::exit::signal_reason(s)),
    };
    Ok(Session {
        requested: plan.options.params.clone(),
        target: plan.options.target,
        hmac: plan.options.key.is_some(),
        started_at,
        count: plan.options.count,
        run,
        complete,
        stop_reason,
    })
}

/// `misura rtt --peer irtt`'s method from rtt's request: the target
/// resolved (irtt's port by default), the request checked into its plan,
/// `ready` told of the plan before the first probe, then the session
/// ([`measure`]).
pub fn run(
    request: &misura_rtt::RttRequest,
    stop: &AtomicUsize,
    ready: &mut dyn FnMut(&Plan),
) -> Result<Session, Error> {
    let target = misura_cli::target::resolve(
        request.target.as_deref().unwrap_or_default(),
        misura_wire::irtt::DEFAULT_PORT,
    )?;
    let plan = Plan::new(Request::from_rtt_request(request, target))?;
    ready(&plan);
    measure(&plan, stop)
}

/// The summary, unless empty, as the result holding it records it.
fn snap<S: From<SummarySnapshot>>(s: &Summary) -> Option<S> {
    (s.count() > 0).then(|| s.snapshot().into())
}

impl Session {
    /// The processing times the server's stamps gave that cannot be, in
    /// words: None when there were none.
    pub fn implausible(&self) -> Option<String> {
        let t = &self.run.tally;
        let n = t.counts.implausible_processing;
        (n > 0).then(|| {
            format!(
                "the irtt server's stamps gave {n} processing times that cannot be (negative, or longer than the round trip they sit in; from {} ns to {} ns): left out of the server processing time and of the RTT without it",
                t.implausible_processing.min().unwrap_or(0),
                t.implausible_processing.max().unwrap_or(0)
            )
        })
    }

    /// What to warn of, quiet or not: processing times that cannot be,
    /// and a session cut short other than by a signal (why).
    pub fn warnings(&self) -> Vec<String> {
        let signal = matches!(self.stop_reason, StopReason::Interrupted { .. });
        let short = (!self.complete && !signal).then(|| self.stop_reason.to_string());
        self.implausible().into_iter().chain(short).collect()
    }

    /// The session as one of `misura load`'s probes takes it: rtt's
    /// result, named by its target, with no per-probe log nor series.
    pub fn measured(&self) -> misura_rtt::Measured {
        let report = self.report();
        misura_rtt::Measured {
            target_name: report.config.target.clone(),
            report,
            frames_error: None,
            series: Vec::new(),
        }
    }

    /// The session as `misura rtt`'s result (`misura.rtt`, transport
    /// "irtt"), for `misura rtt --peer irtt` and `misura load --reflector
    /// irtt://HOST`: kernel RTT, the user RTT, the server's processing time
    /// as the turnaround and the RTT without it as the network RTT; no
    /// one-way figures with an offset (irtt gives none): those on two wall
    /// clocks, the negotiation and what the server's stamps allow are in
    /// its `irtt` object, and `timestamps.reflector_stamps` counts the
    /// stamps that came.
    pub fn report(&self) -> misura_report::rtt::RttReport {
        use misura_report::model::summary::buckets;
        use misura_report::rtt::*;
        let run = &self.run;
        let t = &run.tally;
        let c = &t.counts;
        let (separable, mut not_separable) = separability(
            &t.stamps,
            c.answered,
            t.server_processing.count(),
            c.sent,
            t.server_received,
        );
        not_separable.extend(self.implausible());
        let latency = RttLatencies {
            user_rtt: t.user_rtt.snapshot().into(),
            kernel_rtt: snap(&t.rtt),
            hardware_rtt: None,
            turnaround: snap(&t.server_processing),
            network_rtt: snap(&t.rtt_net),
            forward: None,
            backward: None,
            jitter_rfc3550_ns: None,
            ipdv: None,
        };
        // The datagram as sent: irtt's length pads it, never shortens it.
        let len =
            Layout::new(&run.granted, self.hmac).packet_len(run.granted.length.max(0) as usize);
        let warnings = self
            .implausible()
            .map(|text| misura_report::Warning {
                code: "peer.irtt-processing-implausible".into(),
                text,
            })
            .into_iter()
            .collect();
        misura_report::Envelope {
            meta: misura_cli::meta::meta("misura.rtt", self.started_at.clone()),
            complete: self.complete,
            stop_reason: self.stop_reason.clone(),
            host: misura_run::host::fingerprint(Default::default()),
            config: RttConfig {
                transport: "irtt".into(),
                target: self.target.to_string(),
                local: run.local.to_string(),
                interface: None,
                frame_format: None,
                netns: None,
                authenticated: self.hmac,
                pattern: misura_report::Pattern::Periodic,
                period_ns: run.granted.interval_ns,
                count: self.count,
                duration_s: Some(self.requested.duration_ns as f64 / 1e9),
                request_sizes: vec![len],
                response_size: Some(len),
                timeout_ns: run.final_wait.as_ns().max(1),
                threshold_ns: None,
                link_rate_bps: None,
                link_speed_source: "unknown".into(),
                ssid: 0,
                seed: 0,
            },
            body: RttFigures {
                timestamps: RttTimestamps {
                    timescale: "CLOCK_REALTIME".into(),
                    client_tx: "kernel software".into(),
                    client_rx: "kernel software".into(),
                    // irtt sends no Timestamp Information: where its stamps
                    // are taken (user space) is in irtt.not_separable.
                    reflector_rx: None,
                    reflector_tx: None,
                    reflector_rx_methods: Default::default(),
                    reflector_tx_methods: Default::default(),
                    reflector_sync: None,
                    reflector_two_step: false,
                    warmup_probes: 0,
                    warmup_unstamped: 0,
                    client_interface: None,
                    client_phc: None,
                    hardware_note: None,
                    reflector_stamps: Some(t.replies_with),
                },
                clock_offset: None,
                totals: RttTotals {
                    sent: c.sent,
                    received: c.answered,
                    lost: c.lost,
                    duplicates: c.duplicates,
                    reordered: c.reordered,
                    unknown: c.unmatched,
                    malformed_replies: c.malformed,
                    auth_failed: c.hmac_failures,
                    tx_stamp_missing: c.tx_user_clock,
                    rx_stamp_missing: c.rx_user_clock,
                    stamped_kernel: c.answered - c.tx_user_clock.min(c.answered),
                    ..Default::default()
                },
                per_size: vec![RttSizeResult {
                    request_bytes: len,
                    response_bytes: len,
                    sent: c.sent,
                    received: c.answered,
                    lost: c.lost,
                    latency: latency.clone(),
                    ideal: None,
                    histogram_network_rtt: Vec::new(),
                    histogram_user_rtt: Vec::new(),
                    hdr_network_rtt: buckets(t.rtt_net.hdr_buckets()),
                    hdr_user_rtt: buckets(t.user_rtt.hdr_buckets()),
                    hdr_kernel_rtt: buckets(t.rtt.hdr_buckets()),
                }],
                overall: latency,
                elapsed_s: run.elapsed.as_secs_f64(),
                frames_file: None,
                irtt: Some(IrttSession {
                    requested: params_view(&self.requested),
                    granted: params_view(&run.granted),
                    server_stamps: t.stamps,
                    separable,
                    not_separable,
                    server_received_count: t.server_received,
                    implausible_processing: c.implausible_processing,
                    implausible_received_count: c.implausible_received_count,
                    implausible_server_processing: snap(&t.implausible_processing),
                    forward_wall: snap(&t.forward),
                    backward_wall: snap(&t.backward),
                    final_wait_s: run.final_wait.as_secs_f64(),
                }),
            },
            warnings,
        }
    }
}
