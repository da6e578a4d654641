//! What `misura rtt` makes of the probes the session releases: streaming
//! summaries per request size, overall and per `--interval`, the clock
//! offset for one-way delays, and the per-probe log (`--frames`).

use crate::shared::outfile::RowLog;
use anyhow::Result;
use misura_measure::rtt::{OffsetTracker, ProbeTimes};
use misura_measure::stamp_client::ProbeRecord;
use misura_report::rtt::{write_probe_row, RttLatencies, PROBES_HEADER};
use misura_stats::{Rfc3550Jitter, Summary, SummarySnapshot};
use std::io::Write;

/// Streaming summaries of one group of probes.
pub struct Group {
    pub sent: u64,
    pub lost: u64,
    pub user: Summary,
    pub kernel: Summary,
    turnaround: Summary,
    pub network: Summary,
    forward: Summary,
    backward: Summary,
    jitter: Rfc3550Jitter,
    pub response_bytes: usize,
}

impl Group {
    pub fn new(threshold: Option<i64>) -> Group {
        let s = || Summary::with_threshold(threshold);
        Group {
            sent: 0,
            lost: 0,
            user: s(),
            kernel: s(),
            turnaround: s(),
            network: s(),
            forward: s(),
            backward: s(),
            jitter: Rfc3550Jitter::new(),
            response_bytes: 0,
        }
    }

    fn add(&mut self, p: &ProbeRecord, t: &ProbeTimes, one_way: Option<(i64, i64)>) {
        self.sent += 1;
        if p.lost {
            self.lost += 1;
            return;
        }
        self.response_bytes = p.response_bytes as usize;
        self.user.record(t.user_rtt());
        if let Some(k) = t.kernel_rtt() {
            self.kernel.record(k);
        }
        if let Some(x) = t.turnaround() {
            self.turnaround.record(x);
        }
        if let Some(n) = t.network_rtt() {
            self.network.record(n);
            self.jitter.update(0, n);
        }
        if let Some((f, b)) = one_way {
            self.forward.record(f);
            self.backward.record(b);
        }
    }

    pub fn latencies(&self) -> RttLatencies {
        let snap = |s: &Summary| (s.count() > 0).then(|| s.snapshot());
        RttLatencies {
            user_rtt: self.user.snapshot(),
            kernel_rtt: snap(&self.kernel),
            turnaround: snap(&self.turnaround),
            network_rtt: snap(&self.network),
            forward: snap(&self.forward),
            backward: snap(&self.backward),
            jitter_rfc3550_ns: (self.network.count() > 1).then(|| self.jitter.jitter_ns()),
            ipdv: snap(self.jitter.ipdv()),
        }
    }
}

/// Everything derived from released probes.
pub struct Collector {
    threshold_ns: Option<i64>,
    pub per_size: Vec<Group>,
    pub overall: Group,
    interval: Group,
    pub tracker: OffsetTracker,
    frames: Option<RowLog>,
    /// The per-probe log's first write error, once [`Collector::finish`]ed.
    pub frames_error: Option<String>,
    /// `--clock-offset-ns`: the offset to use instead of the estimate.
    pub fixed_offset_ns: Option<f64>,
    /// One point per `--interval` (at most [`MAX_SERIES`]).
    pub series: Vec<IntervalPoint>,
}

/// Points an interval series keeps (a day at 1 s).
const MAX_SERIES: usize = 86_400;

/// One `--interval`'s medians, for a latency-over-time picture.
#[derive(Clone, Debug)]
pub struct IntervalPoint {
    /// When the interval closed, CLOCK_REALTIME ns.
    pub end_ns: i64,
    pub sent: u64,
    pub lost: u64,
    pub user_ns: Option<i64>,
    pub network_ns: Option<i64>,
    pub forward_ns: Option<i64>,
    pub backward_ns: Option<i64>,
}

impl Collector {
    /// Starts the per-probe log (opened by `run` before anything is sent).
    pub fn new(
        sizes: usize,
        threshold_ns: Option<i64>,
        mut frames: Option<RowLog>,
    ) -> Result<Collector> {
        if let Some(log) = frames.as_mut() {
            log.row(|w| writeln!(w, "{PROBES_HEADER}"));
        }
        Ok(Collector {
            threshold_ns,
            per_size: (0..sizes).map(|_| Group::new(threshold_ns)).collect(),
            overall: Group::new(threshold_ns),
            interval: Group::new(threshold_ns),
            tracker: OffsetTracker::new(10, 4096),
            frames,
            frames_error: None,
            fixed_offset_ns: None,
            series: Vec::new(),
        })
    }

    pub fn add(&mut self, rec: ProbeRecord) {
        let t = rec.times();
        let one_way = if rec.lost {
            None
        } else {
            self.tracker.update(&t);
            self.one_way(&t)
        };
        self.per_size[rec.size_index as usize].add(&rec, &t, one_way);
        self.overall.add(&rec, &t, one_way);
        self.interval.add(&rec, &t, one_way);
        if let Some(log) = self.frames.as_mut() {
            log.row(|w| write_probe_row(w, &rec, one_way));
        }
    }

    /// Forward and backward delays from the given offset, or the one
    /// estimated so far.
    fn one_way(&self, t: &ProbeTimes) -> Option<(i64, i64)> {
        if let Some(off) = self.fixed_offset_ns {
            t.tx_kernel?;
            return t.one_way(off.round() as i64);
        }
        let est = self.tracker.estimate_at(t.tx_kernel?)?;
        t.one_way(est.offset_ns.round() as i64)
    }

    /// The progress line.
    pub fn progress(&self) -> String {
        let o = &self.overall;
        let q = |s: &Summary, p: f64| {
            s.quantile(p)
                .map_or("-".into(), |v| format!("{:.3}", v as f64 / 1000.0))
        };
        format!(
            "{} probes, {} lost; network RTT median {} µs p99 {} µs; user median {} µs",
            o.sent,
            o.lost,
            q(&o.network, 0.5),
            q(&o.network, 0.99),
            q(&o.user, 0.5)
        )
    }

    /// Ends an `--interval`: its line (unless quiet), its point of the
    /// series, and a fresh group. `now_ns`: CLOCK_REALTIME.
    pub fn close_interval(&mut self, since_start_ns: i64, now_ns: i64, print: bool) {
        if self.series.len() < MAX_SERIES {
            let l = self.interval.latencies();
            let med = |s: Option<&SummarySnapshot>| s.and_then(|s| s.median_ns);
            self.series.push(IntervalPoint {
                end_ns: now_ns,
                sent: self.interval.sent,
                lost: self.interval.lost,
                user_ns: med(Some(&l.user_rtt)),
                network_ns: med(l.network_rtt.as_ref()),
                forward_ns: med(l.forward.as_ref()),
                backward_ns: med(l.backward.as_ref()),
            });
        }
        if print {
            let g = &self.interval;
            let l = g.latencies();
            let med = |s: Option<&SummarySnapshot>| {
                s.and_then(|s| s.median_ns)
                    .map_or("-".into(), |v| format!("{:.3}", v as f64 / 1000.0))
            };
            eprintln!(
                "[{:>7.1} s] probes {} lost {}  median µs: user {} kernel {} network {}",
                since_start_ns as f64 / 1e9,
                g.sent,
                g.lost,
                med(Some(&l.user_rtt)),
                med(l.kernel_rtt.as_ref()),
                med(l.network_rtt.as_ref())
            );
        }
        self.interval = Group::new(self.threshold_ns);
    }

    /// Lets the per-probe log reach its file at least once a second.
    pub fn tick(&mut self) {
        if let Some(log) = self.frames.as_mut() {
            log.tick();
        }
    }

    /// Flushes the per-probe log and keeps its first write error, if any.
    pub fn finish(&mut self) {
        self.frames_error = self.frames.as_mut().and_then(RowLog::finish);
    }
}
