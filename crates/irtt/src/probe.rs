//! `misura rtt HOST --peer irtt`'s method (and `misura load --reflector
//! irtt://HOST`'s): the request checked once into a [`Plan`], the session
//! ([`crate::client`]), and its result, either as irtt's own summary
//! (`misura.irtt-rtt`) or as `misura rtt`'s report. The caller resolves
//! the target, turns [`Error`]s into exit codes and prints.

use crate::client::{self, Options};
use crate::error::Error;
use crate::grant::MAX_INTERVAL;
use crate::report::{separability, ParamsView, RttSummary};
use misura_report::StopReason;
use misura_stats::{Summary, SummarySnapshot};
use misura_wire::irtt::{MAX_KEY_LEN, MAX_PACKET_LEN, PROTOCOL_VERSION};
use misura_wire::irtt_params::{Clock, Params, ReceivedStats, StampAt};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// Longest irtt session misura asks for.
pub const MAX_DURATION: Duration = Duration::from_secs(7 * 24 * 3600);
/// The probe period when none is given.
pub const DEFAULT_PERIOD: Duration = Duration::from_millis(100);
/// The probes when neither a count nor a duration is given.
pub const DEFAULT_COUNT: u64 = 100;

/// What is asked for, before it is checked.
#[derive(Debug, Clone)]
pub struct Request {
    pub target: SocketAddr,
    pub period: Option<Duration>,
    pub count: Option<u64>,
    pub duration: Option<Duration>,
    /// irtt's packet length (its header included; 0: the header only).
    pub length: usize,
    pub key: Option<Vec<u8>>,
}

/// A checked request: the parameters misura asks the server for.
#[derive(Debug, Clone)]
pub struct Plan {
    options: Options,
    interval: Duration,
}

impl Plan {
    /// Checks every bound of the request, once.
    pub fn new(r: Request) -> Result<Plan, Error> {
        let interval = r.period.unwrap_or(DEFAULT_PERIOD);
        if interval.is_zero() || interval > MAX_INTERVAL {
            return Err(Error::PeriodOutOfRange {
                period: interval,
                max: MAX_INTERVAL,
            });
        }
        let count = match (r.count, r.duration) {
            (None, None) => Some(DEFAULT_COUNT),
            (c, _) => c,
        };
        let by_count = count.map(|c| interval.saturating_mul(c.min(u64::from(u32::MAX)) as u32));
        let duration = match (by_count, r.duration) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => a.or(b).unwrap_or_default(),
        };
        if duration.is_zero() || duration > MAX_DURATION {
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
            duration_ns: duration.as_nanos() as i64,
            interval_ns: interval.as_nanos() as i64,
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
    pub fn interval(&self) -> Duration {
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
    pub run: client::Run,
    /// Every probe asked for was sent and waited for.
    pub complete: bool,
    pub stop_reason: StopReason,
}

/// Runs the session of `plan` until its end, or until `stop` holds a
/// signal's number (then the result is partial and says so).
pub fn measure(plan: &Plan, stop: &AtomicUsize) -> Result<Session, Error> {
    let started_at = misura_run::meta::now_rfc3339();
    let should_stop = || stop.load(Ordering::Relaxed) != 0;
    let run = client::run(&plan.options, &should_stop)?;
    let (complete, stop_reason) = match (stop.load(Ordering::Relaxed), &run.short) {
        (0, None) if !run.interrupted => (true, StopReason::Finished),
        (0, Some(why)) => (false, StopReason::other(why)),
        (0, None) => (false, StopReason::other("stopped before the end")),
        (s, _) => (false, misura_run::exit::signal_reason(s)),
    };
    Ok(Session {
        requested: plan.options.params.clone(),
        target: plan.options.target,
        hmac: plan.options.key.is_some(),
        started_at,
        run,
        complete,
        stop_reason,
    })
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

    /// irtt's own result (`misura.irtt-rtt`).
    pub fn summary(&self) -> RttSummary {
        let t = &self.run.tally;
        let (separable, mut not_separable) = separability(
            &t.stamps,
            t.counts.answered,
            t.server_processing.count(),
            t.counts.sent,
            t.server_received,
        );
        not_separable.extend(self.implausible());
        RttSummary {
            meta: misura_run::meta::meta("misura.irtt-rtt", self.started_at.clone()),
            complete: self.complete,
            stop_reason: self.stop_reason.clone(),
            target: self.target.to_string(),
            local: self.run.local.to_string(),
            hmac: self.hmac,
            requested: ParamsView::from(&self.requested),
            granted: ParamsView::from(&self.run.granted),
            client_stamps: "kernel software TX stamp (user clock before the send where it did not come) and kernel software RX stamp, CLOCK_REALTIME".into(),
            server_stamps: t.stamps,
            separable,
            not_separable,
            counts: t.counts,
            server_received_count: t.server_received,
            duration_s: self.run.elapsed.as_secs_f64(),
            final_wait_s: self.run.final_wait.as_secs_f64(),
            rtt: snap(&t.rtt),
            rtt_minus_server_processing: snap(&t.rtt_net),
            server_processing: snap(&t.server_processing),
            implausible_server_processing: snap(&t.implausible_processing),
            forward_wall: snap(&t.forward),
            backward_wall: snap(&t.backward),
        }
    }

    /// The session as `misura rtt`'s result, for `misura load --reflector
    /// irtt://HOST` (its phases compare rtt results): kernel RTT, the user
    /// RTT, the server's processing time as the turnaround and the RTT
    /// without it as the network RTT; no one-way figures (irtt gives no
    /// clock offset).
    pub fn rtt_report(&self, count: Option<u64>) -> misura_report::rtt::RttReport {
        use misura_report::model::summary::buckets;
        use misura_report::rtt::*;
        let run = &self.run;
        let t = &run.tally;
        let c = &t.counts;
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
        let len = run.granted.length.max(0) as usize;
        let warnings = self
            .implausible()
            .map(|text| misura_report::Warning {
                code: "peer.irtt-processing-implausible".into(),
                text,
            })
            .into_iter()
            .collect();
        misura_report::Envelope {
            meta: misura_run::meta::meta("misura.rtt", self.started_at.clone()),
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
                count,
                duration_s: Some(self.requested.duration_ns as f64 / 1e9),
                request_sizes: vec![len],
                response_size: Some(len),
                timeout_ns: (run.final_wait.as_nanos() as i64).max(1),
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
                    reflector_rx: Some("irtt server: user space after the read".into()),
                    reflector_tx: Some("irtt server: user space before the write".into()),
                    reflector_rx_methods: Default::default(),
                    reflector_tx_methods: Default::default(),
                    reflector_sync: None,
                    reflector_two_step: false,
                    warmup_probes: 0,
                    warmup_unstamped: 0,
                    client_interface: None,
                    client_phc: None,
                    hardware_note: None,
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
            },
            warnings,
        }
    }
}
