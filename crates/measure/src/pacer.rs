//! Pacing a sender of equal units (datagrams, or equal TCP writes) at a
//! rate, sans-IO: what is due now, how long to sleep, and the wake-up
//! margin, from `now` passed in.
//!
//! The schedule is open-loop: unit `k` is due at
//! `start + ⌊k · unit_bits · 10⁹ / rate⌋` ns, computed afresh for every `k`
//! in exact integer arithmetic, so no rounding accumulates and nothing the
//! sender did (a late wake-up, a slow send, a burst) moves a later due time.
//! The only departure from the schedule is the catch-up limit: a sender
//! more than `catch_up_ns` behind drops the backlog (counted as skipped)
//! instead of bursting it.
//!
//! The loop that drives it ([`Pacer::poll`]), one unit at a time:
//! - a unit that is due goes now ([`Step::Send`]); a sender that fell
//!   behind (a late wake-up, a slow send) sends its due units back to back,
//!   a burst;
//! - otherwise the next send time is the next unit's due time, but not
//!   sooner than a period `Q = min(spin_share × margin, max_period_ns)`
//!   after the previous burst began. Below that gap a sleep cannot resolve
//!   the schedule: the units go in bursts of those due together, one
//!   wake-up per burst;
//! - the thread sleeps ([`Step::Sleep`]) until `Q / spin_share` (the
//!   margin, unless `Q` was capped) before that time; whatever is due when
//!   it wakes goes at once, and if nothing is due yet it spins
//!   ([`Step::Spin`]) the remainder. Spinning thus takes at most
//!   `1/spin_share` of the time;
//! - the margin is a high quantile of how late recent wake-ups were
//!   ([`Pacer::woke`], [`margin::WakeMargin`]): measured, not assumed.
//!
//! No unit ever leaves before its due time, and the units handed out plus
//! those skipped always equal the schedule's count at the last send.

pub mod margin;

use crate::time::{Instant, Span};
use margin::WakeMargin;
use misura_stats::Summary;
use serde::{Deserialize, Serialize};

/// How a [`Pacer`] paces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacerConfig {
    /// Bytes per unit (the datagram's UDP payload, or one TCP write).
    pub unit_bytes: u64,
    /// Bits per second; 0 = unpaced (every poll sends).
    pub rate_bps: u64,
    /// A sender further behind than this drops its backlog.
    pub catch_up_ns: u64,
    /// Wake-ups are at least `spin_share × margin` apart, which bounds the
    /// spinning to `1/spin_share` of a CPU. 0: spacing first: every unit
    /// at its own due time, spinning as long as it takes (bursts only when
    /// the sender is behind).
    pub spin_share: u64,
    /// The margin's quantile of recent wake-up lateness, per mille.
    pub margin_permille: u32,
    /// The margin never exceeds this.
    pub max_margin_ns: u64,
    /// Wake-ups are never further apart than this (unless the units are).
    pub max_period_ns: u64,
}

impl PacerConfig {
    /// `unit_bytes` at `rate_bps` with misura's defaults: catch up for at
    /// most 10 ms, spin at most 1/8 of a CPU, margin = p99 of the last 256
    /// wake-ups' lateness, at most 0.5 ms; a wake-up at least every 1 ms
    /// (iperf3's default pacing timer), so bursts stay short when the
    /// wake-ups are slow.
    pub fn new(unit_bytes: u64, rate_bps: u64) -> PacerConfig {
        PacerConfig {
            unit_bytes: unit_bytes.max(1),
            rate_bps,
            catch_up_ns: 10_000_000,
            spin_share: 8,
            margin_permille: 990,
            max_margin_ns: 500_000,
            max_period_ns: 1_000_000,
        }
    }
}

/// What the sender does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Send one unit now; `due` units (this one included) are due.
    Send { due: u64 },
    /// Sleep until this instant, then report the wake-up with
    /// [`Pacer::woke`] and poll again.
    Sleep { until: Instant },
    /// Too close to sleep: poll again at once (busy wait) until this time.
    Spin { until: Instant },
}

/// The pacer's account of a run: bursts, wake-ups, the margin, the spacing.
/// Serialised with the names of a UDP result's `pacing` object (which
/// embeds it), where the units are datagrams.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PacerFigures {
    /// The schedule's gap between two units, ns (fractional).
    pub target_gap_ns: f64,
    /// Units handed out and units dropped by the catch-up limit.
    #[serde(rename = "scheduled")]
    pub units: u64,
    pub skipped: u64,
    /// Runs of [`Step::Send`] without a sleep or spin between them, the
    /// longest, and the units sent in runs of more than one.
    pub bursts: u64,
    pub max_burst: u64,
    #[serde(rename = "burst_datagrams")]
    pub burst_units: u64,
    /// Sleeps that ended at their target, and how late (p50, p99, max).
    pub wakeups: u64,
    #[serde(rename = "wake_late_p50_ns")]
    pub wake_late_p50: Option<Span>,
    #[serde(rename = "wake_late_p99_ns")]
    pub wake_late_p99: Option<Span>,
    #[serde(rename = "wake_late_max_ns")]
    pub wake_late_max: Option<Span>,
    /// The margin at the end of the run, and its largest value.
    #[serde(rename = "wake_margin_ns")]
    pub margin_ns: u64,
    #[serde(rename = "wake_margin_max_ns")]
    pub margin_max_ns: u64,
    /// Time spent polling in [`Step::Spin`].
    pub spin_ns: u64,
    /// Gaps between consecutive sends, p50 and p99.
    #[serde(rename = "gap_p50_ns")]
    pub gap_p50: Option<Span>,
    #[serde(rename = "gap_p99_ns")]
    pub gap_p99: Option<Span>,
    /// Send time − due time of each unit, p50, p99, max.
    #[serde(rename = "behind_p50_ns")]
    pub behind_p50: Option<Span>,
    #[serde(rename = "behind_p99_ns")]
    pub behind_p99: Option<Span>,
    #[serde(rename = "behind_max_ns")]
    pub behind_max: Option<Span>,
}

/// A paced sender's schedule and its decisions (module documentation).
#[derive(Clone)]
pub struct Pacer {
    cfg: PacerConfig,
    start: Instant,
    /// Bits of one unit × 10⁹: unit `k` is due `k · this / rate` ns in.
    unit_bit_ns: u128,
    /// Next unit to hand out.
    next: u64,
    /// When the current (or last) burst began.
    last_burst: Option<Instant>,
    last_sent: Option<Instant>,
    spinning_since: Option<Instant>,
    margin: WakeMargin,
    counts: Counts,
    wake_late: Summary,
    gaps: Summary,
    behind: Summary,
}

impl Pacer {
    /// A pacer whose unit 0 is due at `start`.
    pub fn new(cfg: PacerConfig, start: Instant) -> Pacer {
        let unit_bit_ns = cfg.unit_bytes.max(1) as u128 * 8 * 1_000_000_000;
        let target_gap_ns = if cfg.rate_bps > 0 {
            unit_bit_ns as f64 / cfg.rate_bps as f64
        } else {
            0.0
        };
        Pacer {
            cfg,
            start,
            unit_bit_ns,
            next: 0,
            last_burst: None,
            last_sent: None,
            spinning_since: None,
            margin: WakeMargin::new(cfg.margin_permille, cfg.max_margin_ns),
            counts: Counts {
                fig: PacerFigures {
                    target_gap_ns,
                    ..PacerFigures::default()
                },
                run: 0,
            },
            wake_late: Summary::new(),
            gaps: Summary::new(),
            behind: Summary::new(),
        }
    }

    /// When unit `k` is due (absolute ns).
    pub fn due_ns(&self, k: u64) -> i64 {
        if self.cfg.rate_bps == 0 {
            return self.start.as_ns();
        }
        let off = k as u128 * self.unit_bit_ns / self.cfg.rate_bps as u128;
        self.start
            .saturating_add(Span::from_ns(i64::try_from(off).unwrap_or(i64::MAX)))
            .as_ns()
    }

    /// How many units are due at `t`: the k with `due_ns(k) ≤ t`.
    pub fn due_by(&self, t: i64) -> u64 {
        let el = t - self.start.as_ns();
        if el < 0 {
            return 0;
        }
        // ⌊k·B/r⌋ ≤ el  ⇔  k·B < (el+1)·r  ⇔  k < (el+1)·r/B.
        let n = ((el as u128 + 1) * self.cfg.rate_bps as u128).div_ceil(self.unit_bit_ns);
        u64::try_from(n).unwrap_or(u64::MAX)
    }

    /// The current wake-up margin, ns.
    pub fn margin_ns(&self) -> u64 {
        self.margin.ns()
    }

    /// The burst period `Q` and how early a sleep ends, from the margin.
    pub fn period_and_early_ns(&self) -> (u64, u64) {
        if self.cfg.spin_share == 0 {
            return (0, self.margin.ns());
        }
        let share = self.cfg.spin_share;
        let q = (share * self.margin.ns()).min(self.cfg.max_period_ns);
        (q, q / share)
    }

    /// The next step at `now`. A [`Step::Send`] hands out one unit, taken
    /// to leave at `now`.
    pub fn poll(&mut self, now: Instant) -> Step {
        if let Some(s) = self.spinning_since.take() {
            self.counts.fig.spin_ns += (now - s).as_ns().max(0) as u64;
        }
        if self.cfg.rate_bps == 0 {
            return self.send(1, now);
        }
        let due = self.due_by(now.as_ns());
        if due > self.next {
            if now.as_ns() - self.due_ns(self.next) > self.cfg.catch_up_ns as i64 {
                // Too far behind: send the unit due now, drop the rest.
                self.counts.fig.skipped += due - 1 - self.next;
                self.next = due - 1;
            }
            return self.send(due - self.next, now);
        }
        self.counts.end_run();
        // Nothing is due. Send at the next due time, but no sooner than Q
        // after the last burst began.
        let (q, early) = self.period_and_early_ns();
        let mut at = self.due_ns(self.next);
        if let Some(b) = self.last_burst {
            at = at.max(b.as_ns().saturating_add(q as i64));
        }
        if at - now.as_ns() > early as i64 {
            Step::Sleep {
                until: Instant::from_ns(at - early as i64),
            }
        } else {
            self.spinning_since = Some(now);
            Step::Spin {
                until: Instant::from_ns(at),
            }
        }
    }

    fn send(&mut self, due: u64, now: Instant) -> Step {
        if self.counts.run == 0 {
            self.last_burst = Some(now);
        }
        self.counts.run += 1;
        if let Some(p) = self.last_sent {
            self.gaps.record((now - p).as_ns());
        }
        self.last_sent = Some(now);
        if self.cfg.rate_bps > 0 {
            self.behind.record(now.as_ns() - self.due_ns(self.next));
        }
        self.next += 1;
        self.counts.fig.units += 1;
        Step::Send { due }
    }

    /// A [`Step::Sleep`] to `target` ended at `now` (read after the
    /// sleep returned). An interrupted sleep (now before the target) is
    /// not a wake-up sample.
    pub fn woke(&mut self, target: Instant, now: Instant) {
        if now < target {
            return;
        }
        let late = (now - target).as_ns();
        self.margin.record(late as u64);
        let f = &mut self.counts.fig;
        f.wakeups += 1;
        f.margin_max_ns = f.margin_max_ns.max(self.margin.ns());
        self.wake_late.record(late);
    }

    /// The figures so far.
    pub fn figures(&self) -> PacerFigures {
        let mut run = self.counts.clone();
        run.end_run();
        PacerFigures {
            margin_ns: self.margin.ns(),
            wake_late_p50: self.wake_late.quantile(0.5).map(Span::from_ns),
            wake_late_p99: self.wake_late.quantile(0.99).map(Span::from_ns),
            wake_late_max: self.wake_late.max().map(Span::from_ns),
            gap_p50: self.gaps.quantile(0.5).map(Span::from_ns),
            gap_p99: self.gaps.quantile(0.99).map(Span::from_ns),
            behind_p50: self.behind.quantile(0.5).map(Span::from_ns),
            behind_p99: self.behind.quantile(0.99).map(Span::from_ns),
            behind_max: self.behind.max().map(Span::from_ns),
            ..run.fig
        }
    }
}

/// [`PacerFigures`] and the run of sends in progress.
#[derive(Clone, Debug)]
struct Counts {
    fig: PacerFigures,
    run: u64,
}

impl Counts {
    /// The run of sends ended (the sender sleeps or spins): one burst.
    fn end_run(&mut self) {
        if self.run > 0 {
            self.fig.bursts += 1;
            self.fig.max_burst = self.fig.max_burst.max(self.run);
            if self.run > 1 {
                self.fig.burst_units += self.run;
            }
        }
        self.run = 0;
    }
}

#[cfg(test)]
mod tests;
