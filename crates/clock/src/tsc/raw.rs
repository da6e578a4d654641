//! The TSC against CLOCK_MONOTONIC_RAW: (TSC, RAW, TSC) reads, the tightest
//! of each short time bin kept, and the estimates made from them.

use misura_cli::progress::Progress;
use misura_measure::time::{Instant, Span};
use misura_measure::tscfreq::{self, TightestPerBin, TscRawPair};
use misura_report::tsc::{
    BoundedFrequency, FittedFrequency, RawEstimate, RawWindow, StabilityReport,
};
use misura_sys::clock::monotonic_raw_ns;
use misura_sys::tsc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// TSC reads per bin: enough to catch an undisturbed bracket, short enough
/// (~20 µs) not to monopolise the CPU.
pub const TRIES_PER_BIN: usize = 200;
/// Bins per stability window.
const BINS_PER_WINDOW: i64 = 25;

/// The tightest of `tries` (TSC, RAW, TSC) reads; reads whose two TSC
/// values came from different CPUs (a migration) are dropped.
pub fn tight_pair(tries: usize, read: &mut u64) -> Option<TscRawPair> {
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
            raw: Instant::from_ns(raw),
            tsc_after: b,
        };
        if best.is_none_or(|q| p.width() < q.width()) {
            best = Some(p);
        }
    }
    best
}

/// Sleep until CLOCK_MONOTONIC_RAW reaches `until`, waking for a stop.
pub fn sleep_until_raw(until: Instant, stop: &AtomicUsize) {
    loop {
        let left = until.as_ns() - monotonic_raw_ns();
        if left <= 0 || stop.load(Ordering::Relaxed) != 0 {
            return;
        }
        std::thread::sleep(Duration::from_nanos(left.min(50_000_000) as u64));
    }
}

pub fn bounded(b: &tscfreq::BoundedFrequency) -> BoundedFrequency {
    BoundedFrequency {
        frequency_hz: b.frequency_hz,
        bound_hz: b.bound_hz,
        bound_ppm: b.bound_ppm(),
        span_s: b.span.as_ns() as f64 / 1e9,
    }
}

pub fn fitted(f: &tscfreq::FittedFrequency) -> FittedFrequency {
    FittedFrequency {
        frequency_hz: f.frequency_hz,
        ci95_hz: f.ci95_hz,
        ci95_ppm: f.ci95_ppm(),
        points: f.points,
        residual_std_ns: f.residual_std_ns,
    }
}

/// The MONOTONIC_RAW estimate from the kept pairs.
pub fn estimate(
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
                start_s: w.start.as_ns() as f64 / 1e9,
                end_s: w.end.as_ns() as f64 / 1e9,
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

/// A MONOTONIC_RAW run of `duration`: the tightest pair of each bin,
/// then one at the very end so the span is the duration.
pub fn run(
    duration: Span,
    windows: u32,
    kernel_hz: Option<f64>,
    stop: &AtomicUsize,
    quiet: bool,
) -> Option<RawEstimate> {
    let duration_ns = duration.as_ns();
    let bins = (i64::from(windows) * BINS_PER_WINDOW).max(2);
    let bin_ns = (duration_ns / bins).max(1);
    // One bin more for the closing pair at t0 + duration.
    let mut keep = TightestPerBin::new(Span::from_ns(bin_ns), bins as usize + 1);
    let mut read = 0u64;
    let mut progress = Progress::new(quiet, Some(Duration::from_nanos(duration_ns as u64)));
    let t0 = monotonic_raw_ns();
    for k in 0..bins {
        sleep_until_raw(Instant::from_ns(t0 + k * bin_ns), stop);
        if stop.load(Ordering::Relaxed) != 0 {
            break;
        }
        if let Some(p) = tight_pair(TRIES_PER_BIN, &mut read) {
            keep.offer(p);
        }
        let kept = keep.pairs();
        progress.tick(
            || match tscfreq::endpoint_estimate(&kept[0], &kept[kept.len() - 1]) {
                Some(e) => format!("{read} reads, {} so far", format_mhz(e.frequency_hz)),
                None => format!("{read} reads"),
            },
        );
    }
    if stop.load(Ordering::Relaxed) == 0 {
        sleep_until_raw(Instant::from_ns(t0 + duration_ns), stop);
        if let Some(p) = tight_pair(TRIES_PER_BIN, &mut read) {
            keep.offer(p);
        }
    }
    progress.done();
    estimate(&keep.pairs(), read, windows, kernel_hz)
}

fn format_mhz(hz: f64) -> String {
    format!("{:.3} MHz", hz / 1e6)
}

/// A rough frequency (0.1 s against MONOTONIC_RAW) to turn ticks into
/// nanoseconds for display when the kernel does not state its own.
pub fn quick_frequency() -> f64 {
    let mut n = 0;
    let a = tight_pair(50, &mut n);
    std::thread::sleep(Duration::from_millis(100));
    let b = tight_pair(50, &mut n);
    a.zip(b)
        .and_then(|(a, b)| tscfreq::endpoint_estimate(&a, &b))
        .map_or(1e9, |e| e.frequency_hz)
}
