//! A one-line progress indicator on stderr for long runs: shown only when
//! stderr is a terminal and not `--quiet`; rewritten at most once a second.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

pub struct Progress {
    on: bool,
    started: Instant,
    last: Instant,
    total: Option<Duration>,
}

impl Progress {
    /// `total`: the run's planned length, for the percentage and time left.
    pub fn new(quiet: bool, total: Option<Duration>) -> Progress {
        let now = Instant::now();
        Progress {
            on: !quiet && std::io::stderr().is_terminal(),
            started: now,
            last: now,
            total,
        }
    }

    /// Whether the line is shown at all (a terminal, not quiet).
    pub fn is_on(&self) -> bool {
        self.on
    }

    /// Show `what` (e.g. "12 345 reads, max step 41 µs") if a second passed.
    pub fn tick(&mut self, what: impl FnOnce() -> String) {
        if !self.on || self.last.elapsed() < Duration::from_secs(1) {
            return;
        }
        self.last = Instant::now();
        let el = self.started.elapsed();
        let pct = self
            .total
            .map(|t| {
                let left = t.saturating_sub(el);
                let f = (el.as_secs_f64() / t.as_secs_f64().max(1e-9)).clamp(0.0, 1.0);
                let filled = (f * 20.0).round() as usize;
                format!(
                    " [{}{}] {:.0} %, {:.0} s left;",
                    "#".repeat(filled),
                    "-".repeat(20 - filled),
                    f * 100.0,
                    left.as_secs_f64()
                )
            })
            .unwrap_or_default();
        eprint!("\r\x1b[2K[{:.0} s{pct}] {}", el.as_secs_f64(), what());
    }

    /// Clear the line.
    pub fn done(&self) {
        if self.on {
            eprint!("\r\x1b[2K");
        }
    }
}
