//! A one-line progress indicator on stderr for long runs: shown only when
//! stderr is a terminal and not `--quiet`; rewritten at most once a second.
//!
//! A library composes the line; the binary draws it, through the sink it
//! installs at startup ([`set_sink`]). Without one (a library used on its
//! own, a test) no line is shown: libraries do not write to stderr.

use std::io::IsTerminal;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

static SINK: OnceLock<fn(&str)> = OnceLock::new();

/// Install what draws a progress line (the binary's terminal writer). Once.
pub fn set_sink(draw: fn(&str)) {
    let _ = SINK.set(draw);
}

/// Whether a live line can be shown: a sink installed, stderr a terminal,
/// and not quiet.
pub fn can_draw(quiet: bool) -> bool {
    !quiet && SINK.get().is_some() && std::io::stderr().is_terminal()
}

/// Hand `text` (with its own `\r` and erase codes) to the sink, if any.
pub fn draw(text: &str) {
    if let Some(f) = SINK.get() {
        f(text);
    }
}

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
            on: can_draw(quiet),
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
        draw(&format!(
            "\r\x1b[2K[{:.0} s{pct}] {}",
            el.as_secs_f64(),
            what()
        ));
    }

    /// Clear the line.
    pub fn done(&self) {
        if self.on {
            draw("\r\x1b[2K");
        }
    }
}
