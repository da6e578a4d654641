//! What `misura rtt` makes of the probes the session releases: streaming
//! summaries per request size, overall and per `--interval`, the clock
//! offset for one-way delays, and the per-probe log (`--frames`).

use crate::error::Result;
use misura_cli::outfile::RowLog;
use misura_measure::rtt::{OffsetTracker, ProbeTimes};
use misura_measure::stamp_client::ProbeRecord;
use misura_measure::time::{Instant, Span};
use misura_measure::TimestampSource;
use misura_report::rtt::{write_probe_row, RttLatencies, PROBES_HEADER};
use misura_report::SummarySnapshot;
use misura_stats::{Rfc3550Jitter, Summary};
use std::collections::{BTreeMap, VecDeque};
use std::io::Write;

/// Streaming summaries of one group of probes.
pub struct Group {
    pub sent: u64,
    pub lost: u64,
    pub user: Summary,
    pub kernel: Summary,
    pub hardware: Summary,
    turnaround: Summary,
    pub network: Summary,
    forward: Summary,
    backward: Summary,
    jitter: Rfc3550Jitter,
    pub response_bytes: usize,
}

impl Group {
    pub fn new(threshold: Option<Span>) -> Group {
        let s = || Summary::with_threshold(threshold.map(Span::as_ns));
        Group {
            sent: 0,
            lost: 0,
            user: s(),
            kernel: s(),
            hardware: s(),
            turnaround: s(),
            network: s(),
            forward: s(),
            backward: s(),
            jitter: Rfc3550Jitter::new(),
            response_bytes: 0,
        }
    }

    pub fn add(&mut self, p: &ProbeRecord, t: &ProbeTimes, one_way: Option<(Span, Span)>) {
        self.sent += 1;
        if p.lost {
            self.lost += 1;
            return;
        }
        self.response_bytes = p.response_bytes as usize;
        self.user.record(t.user_rtt().as_ns());
        if let Some(k) = p.software_times().kernel_rtt() {
            self.kernel.record(k.as_ns());
        }
        if let Some(h) = p.hardware_rtt() {
            self.hardware.record(h.as_ns());
        }
        if let Some(x) = t.turnaround() {
            self.turnaround.record(x.as_ns());
        }
        if let Some(n) = t.network_rtt() {
            self.network.record(n.as_ns());
            self.jitter.update(0, n.as_ns());
        }
        if let Some((f, b)) = one_way {
            self.forward.record(f.as_ns());
            self.backward.record(b.as_ns());
        }
    }

    pub fn latencies(&self) -> RttLatencies {
        RttLatencies {
            user_rtt: self.user.snapshot().into(),
            kernel_rtt: self.kernel.snapshot_if_any().map(Into::into),
            hardware_rtt: self.hardware.snapshot_if_any().map(Into::into),
            turnaround: self.turnaround.snapshot_if_any().map(Into::into),
            network_rtt: self.network.snapshot_if_any().map(Into::into),
            forward: self.forward.snapshot_if_any().map(Into::into),
            backward: self.backward.snapshot_if_any().map(Into::into),
            jitter_rfc3550_ns: (self.network.count() > 1).then(|| self.jitter.jitter_ns()),
            ipdv: self.jitter.ipdv().snapshot_if_any().map(Into::into),
        }
    }
}

/// Everything derived from released probes.
pub struct Collector {
    threshold: Option<Span>,
    pub per_size: Vec<Group>,
    pub overall: Group,
    interval: Group,
    pub tracker: OffsetTracker,
    frames: Option<RowLog>,
    /// The per-probe log's first write error, once [`Collector::finish`]ed.
    pub frames_error: Option<String>,
    /// `--clock-offset-ns`: the offset to use instead of the estimate.
    pub fixed_offset_ns: Option<f64>,
    /// One point per `--interval` (at most [`MAX_SERIES`]), the probes
    /// sent in it.
    pub series: Vec<IntervalPoint>,
    bins: Option<SendBins>,
    /// Received probes by the source of their client stamps: NIC
    /// hardware, kernel software, user clock.
    pub stamped: [u64; 3],
    /// Received probes by the reflector's RX and TX timestamp methods
    /// (RFC 8972 codes) as their replies stated them; unstated (0) left out.
    pub reflector_rx: BTreeMap<u8, u64>,
    pub reflector_tx: BTreeMap<u8, u64>,
}

/// Points an interval series keeps (a day at 1 s).
const MAX_SERIES: usize = 86_400;

/// One `--interval`'s medians, for a latency-over-time picture.
#[derive(Clone, Debug)]
pub struct IntervalPoint {
    /// When the interval closed (CLOCK_REALTIME).
    pub end: Instant,
    pub sent: u64,
    pub lost: u64,
    pub user_rtt: Option<Span>,
    pub network_rtt: Option<Span>,
    pub forward: Option<Span>,
    pub backward: Option<Span>,
}

impl Collector {
    /// Starts the per-probe log (opened by `run` before anything is sent).
    pub fn new(
        sizes: usize,
        threshold: Option<Span>,
        mut frames: Option<RowLog>,
    ) -> Result<Collector> {
        if let Some(log) = frames.as_mut() {
            log.row(|w| writeln!(w, "{PROBES_HEADER}"));
        }
        Ok(Collector {
            threshold,
            per_size: (0..sizes).map(|_| Group::new(threshold)).collect(),
            overall: Group::new(threshold),
            interval: Group::new(threshold),
            tracker: OffsetTracker::new(10, 4096),
            frames,
            frames_error: None,
            fixed_offset_ns: None,
            series: Vec::new(),
            bins: None,
            stamped: [0; 3],
            reflector_rx: BTreeMap::new(),
            reflector_tx: BTreeMap::new(),
        })
    }

    pub fn add(&mut self, rec: ProbeRecord) {
        let t = rec.times();
        let one_way = if rec.lost {
            None
        } else {
            self.stamped[match rec.stamp_source() {
                TimestampSource::NicHardware => 0,
                TimestampSource::KernelSoftware => 1,
                TimestampSource::UserClock => 2,
            }] += 1;
            for (counts, method) in [
                (&mut self.reflector_rx, rec.reflector_rx_method),
                (&mut self.reflector_tx, rec.reflector_tx_method),
            ] {
                if method != 0 {
                    *counts.entry(method).or_default() += 1;
                }
            }
            self.tracker.update(&t);
            self.one_way(&t)
        };
        self.per_size[rec.size_index as usize].add(&rec, &t, one_way);
        self.overall.add(&rec, &t, one_way);
        self.interval.add(&rec, &t, one_way);
        if let Some(b) = self.bins.as_mut() {
            b.add(&rec, &t, one_way);
        }
        if let Some(log) = self.frames.as_mut() {
            log.row(|w| write_probe_row(w, &rec, one_way));
        }
    }

    /// Forward and backward delays from the given offset, or the one
    /// estimated so far.
    fn one_way(&self, t: &ProbeTimes) -> Option<(Span, Span)> {
        if let Some(off) = self.fixed_offset_ns {
            t.tx_kernel?;
            return t.one_way(Span::from_ns(off.round() as i64));
        }
        let est = self.tracker.estimate_at(t.tx_kernel?)?;
        t.one_way(Span::from_ns(est.offset_ns.round() as i64))
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
    /// series, and a fresh group. `now`: CLOCK_REALTIME.
    /// The series' points are the probes sent in each interval (from
    /// [`Collector::bin_series`] on), closed once all of them are released.
    pub fn close_interval(&mut self, since_start: Span, now: Instant, print: bool) {
        match self.bins.as_mut() {
            Some(b) => b.close(now, &mut self.series, MAX_SERIES),
            None if self.series.len() < MAX_SERIES => self.series.push(point(now, &self.interval)),
            None => {}
        }
        if print {
            let g = &self.interval;
            let l = g.latencies();
            let med = |s: Option<&SummarySnapshot>| {
                s.and_then(|s| s.median_ns)
                    .map_or("-".into(), |v| format!("{:.3}", v as f64 / 1000.0))
            };
            log::info!(
                "[{:>7.1} s] probes {} lost {}  median µs: user {} kernel {} network {}",
                since_start.as_secs_f64(),
                g.sent,
                g.lost,
                med(Some(&l.user_rtt)),
                med(l.kernel_rtt.as_ref()),
                med(l.network_rtt.as_ref())
            );
        }
        self.interval = Group::new(self.threshold);
    }

    /// Lets the per-probe log reach its file at least once a second.
    pub fn tick(&mut self) {
        if let Some(log) = self.frames.as_mut() {
            log.tick();
        }
    }

    /// Bin the series by send time from `origin` (CLOCK_REALTIME), every
    /// `every`; a probe is released at most `lag` after its send.
    pub fn bin_series(&mut self, origin: Instant, every: Span, lag: Span) {
        self.bins = Some(SendBins::new(origin, every, lag, self.threshold));
    }

    /// Flushes the per-probe log and keeps its first write error, if any;
    /// closes the series' last bins.
    pub fn finish(&mut self) {
        if let Some(b) = self.bins.as_mut() {
            b.flush(&mut self.series, MAX_SERIES);
        }
        self.frames_error = self.frames.as_mut().and_then(RowLog::finish);
    }
}

// The `--interval` series by send time: each point holds the probes sent
// in its interval, whenever their replies came. Records leave the session
// in sequence order, so a lost probe holds the answered ones behind it
// until its timeout; binned by release, a loaded path's picture had
// intervals with no probes and then bursts, up to --timeout late. A bin is
// closed once every probe sent in it must have been released (its end plus
// the timeout and one interval), so a few bins are open at a time.
pub struct SendBins {
    origin: Instant,
    every: Span,
    lag: Span,
    threshold: Option<Span>,
    /// Open bins by index, oldest first.
    open: VecDeque<(i64, Group)>,
    /// Bins below this index are closed; a record for one (released later
    /// than the lag allows) is left out of the series only.
    next_k: i64,
}

impl SendBins {
    pub fn new(origin: Instant, every: Span, lag: Span, threshold: Option<Span>) -> SendBins {
        let every = every.max(Span::from_ns(1));
        SendBins {
            origin,
            every,
            lag: lag.max(Span::ZERO) + every,
            threshold,
            open: VecDeque::new(),
            next_k: 0,
        }
    }

    pub fn add(&mut self, rec: &ProbeRecord, t: &ProbeTimes, one_way: Option<(Span, Span)>) {
        let k = self.index(t.tx1);
        if k < self.next_k {
            return;
        }
        let at = match self.open.iter().position(|(j, _)| *j >= k) {
            Some(i) if self.open[i].0 == k => i,
            Some(i) => {
                self.open.insert(i, (k, Group::new(self.threshold)));
                i
            }
            None => {
                self.open.push_back((k, Group::new(self.threshold)));
                self.open.len() - 1
            }
        };
        self.open[at].1.add(rec, t, one_way);
    }

    /// The bin a send at `t` falls in (negative before the origin).
    fn index(&self, t: Instant) -> i64 {
        (t - self.origin).as_ns().div_euclid(self.every.as_ns())
    }

    fn end(&self, k: i64) -> Instant {
        self.origin + Span::from_ns((k + 1) * self.every.as_ns())
    }

    /// Close the bins every probe of which has been released by `now`.
    pub fn close(&mut self, now: Instant, out: &mut Vec<IntervalPoint>, max: usize) {
        while let Some(&(k, _)) = self.open.front() {
            if self.end(k) + self.lag > now {
                break;
            }
            self.pop(out, max);
        }
        let due = self.index(now - self.lag);
        self.next_k = self.next_k.max(due);
    }

    /// Close every bin (the end of the run).
    pub fn flush(&mut self, out: &mut Vec<IntervalPoint>, max: usize) {
        while !self.open.is_empty() {
            self.pop(out, max);
        }
    }

    fn pop(&mut self, out: &mut Vec<IntervalPoint>, max: usize) {
        let Some((k, g)) = self.open.pop_front() else {
            return;
        };
        self.next_k = self.next_k.max(k + 1);
        if out.len() < max {
            out.push(point(self.end(k), &g));
        }
    }
}

/// A group's medians as a point of the series ending at `end`.
pub fn point(end: Instant, g: &Group) -> IntervalPoint {
    let l = g.latencies();
    let med = |s: Option<&SummarySnapshot>| s.and_then(|s| s.median_ns).map(Span::from_ns);
    IntervalPoint {
        end,
        sent: g.sent,
        lost: g.lost,
        user_rtt: med(Some(&l.user_rtt)),
        network_rtt: med(l.network_rtt.as_ref()),
        forward: med(l.forward.as_ref()),
        backward: med(l.backward.as_ref()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: i64 = 1_000_000;

    /// A probe sent at `tx1` ns, answered `rtt` ns later.
    fn probe(seq: u32, tx1: i64, rtt: i64, lost: bool) -> ProbeRecord {
        let tx1 = Instant::from_ns(tx1);
        ProbeRecord {
            seq,
            tx1,
            tx2: tx1 + Span::from_ns(1_000),
            rx2: tx1 + Span::from_ns(rtt),
            lost,
            ..Default::default()
        }
    }

    #[test]
    fn probes_count_in_the_interval_they_were_sent_in() {
        // 500 ms intervals from t = 0, a 2 s timeout. Probe 0 (sent at
        // 100 ms) is lost and holds the answered ones sent after it until
        // its timeout: all are released at 2.1 s.
        let at = |ns: i64| Instant::from_ns(ns);
        let span = Span::from_ns;
        let mut b = SendBins::new(at(0), span(500 * MS), span(2_000 * MS), None);
        let mut out = Vec::new();
        b.close(at(1_000 * MS), &mut out, 100);
        assert!(out.is_empty(), "nothing released yet");
        let lost = probe(0, 100 * MS, 0, true);
        b.add(&lost, &lost.times(), None);
        for (i, at) in [300, 700, 1_200, 1_900].iter().enumerate() {
            let p = probe(i as u32 + 1, at * MS, 5 * MS, false);
            b.add(&p, &p.times(), None);
        }
        // At 2.1 s the first bin may still get records (end 0.5 s + 2 s +
        // one interval): none closes.
        b.close(at(2_100 * MS), &mut out, 100);
        assert!(out.is_empty());
        b.close(at(3_000 * MS), &mut out, 100);
        assert_eq!(out.len(), 1);
        assert_eq!(
            (out[0].end.as_ns(), out[0].sent, out[0].lost),
            (500 * MS, 2, 1)
        );
        assert_eq!(out[0].user_rtt.map(|u| u.as_ns() / MS), Some(5));
        b.flush(&mut out, 100);
        let sent: Vec<(i64, u64)> = out.iter().map(|p| (p.end.as_ns() / MS, p.sent)).collect();
        assert_eq!(sent, [(500, 2), (1_000, 1), (1_500, 1), (2_000, 1)]);
        // A record for a closed bin stays out of the series (it is still in
        // every summary); the series keeps its bound.
        let late = probe(9, 200 * MS, 5 * MS, false);
        b.add(&late, &late.times(), None);
        b.flush(&mut out, 4);
        assert_eq!(out.len(), 4);
    }
}
