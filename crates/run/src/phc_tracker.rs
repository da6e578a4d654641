//! Two NIC clocks tracked against the system clock while a run measures:
//! a thread cross-timestamps the TX port's and the RX port's PHC
//! (`misura_sys::phc_cross`) before the first frame, every
//! [`TRACK_PERIOD`] during the run and after the last, and feeds the pure
//! model (`misura_measure::phc_track`). The analysis thread converts each
//! frame's RX hardware stamp into the TX clock with the model as it stands
//! (points up to a period old; the fit's standard error at the frame's time
//! covers the extrapolation), so memory stays constant for any run length.

use misura_measure::phc_track::{Converted, PhcPair};
use misura_measure::time::Span;
use misura_sys::phc::PhcClock;
use misura_sys::phc_cross::CrossMethod;
use misura_sys::SysError;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Time between rounds during the run.
pub const TRACK_PERIOD: Duration = Duration::from_millis(100);
/// Rounds before the first frame and after the last.
const EDGE_ROUNDS: usize = 16;
/// Cross-timestamps per clock per round (the narrowest is kept).
const SAMPLES: u32 = 9;

/// What the tracker found, for the result.
#[derive(Clone, Debug, Default)]
pub struct TrackerEnd {
    pub methods: [Option<CrossMethod>; 2],
    pub rounds: u64,
    pub read_errors: u64,
    pub last_error: Option<String>,
}

#[derive(Default)]
struct State {
    pair: PhcPair,
    end: TrackerEnd,
}

/// A cheap handle the analysis thread converts with.
#[derive(Clone)]
pub struct PhcConverter(Arc<Mutex<State>>);

impl PhcConverter {
    /// The RX-clock stamp in the TX clock, with its ≈95 % uncertainty.
    pub fn rx_to_tx(&self, rx_hw: misura_measure::time::Instant) -> Option<Converted> {
        self.0.lock().ok()?.pair.rx_to_tx(rx_hw)
    }

    /// The RX clock's fit so far, evaluated at `at_sys` (a system-clock
    /// instant; the fit's line is over ns), and the tracker's counts.
    pub fn rx_fit(
        &self,
        at_sys: misura_measure::time::Instant,
    ) -> (Option<misura_measure::phc_track::ClockFit>, TrackerEnd) {
        match self.0.lock() {
            Ok(s) => (s.pair.rx.describe(at_sys.as_ns()), s.end.clone()),
            Err(_) => (None, TrackerEnd::default()),
        }
    }

    /// The RX clock's model as it stands, for a hot loop that converts its
    /// stamps to system time itself: never waits (`None` while the tracker
    /// holds the lock, or before the clock has two points), so the loop
    /// calls it now and then and keeps the last one.
    pub fn rx_snapshot(&self) -> Option<ToSystem> {
        let s = self.0.try_lock().ok()?;
        let line = s.pair.rx.line()?;
        Some(ToSystem {
            line,
            half_width: Span::from_ns(s.pair.rx.median_half_width()),
        })
    }
}

/// One PHC's line against system time, copied out of the tracker: converts
/// that clock's stamps to CLOCK_REALTIME without a lock.
#[derive(Copy, Clone, Debug)]
pub struct ToSystem {
    line: misura_stats::streaming_fit::LineEstimate,
    half_width: Span,
}

impl ToSystem {
    /// System time of a PHC stamp.
    #[inline]
    pub fn to_sys(&self, phc: i64) -> i64 {
        misura_measure::phc_track::ClockTrack::to_sys(&self.line, phc)
    }

    /// ≈95 % uncertainty of [`ToSystem::to_sys`] at system time `sys`: twice
    /// the fit's standard error there plus the median sandwich half-width.
    pub fn u95_ns(&self, sys: i64) -> f64 {
        2.0 * self.line.se_at(sys) + self.half_width.as_ns() as f64
    }
}

struct Clocks {
    tx: PhcClock,
    rx: PhcClock,
    methods: Vec<CrossMethod>,
}

impl Clocks {
    /// One round on each clock; errors are counted, not fatal.
    fn round(&self, state: &Mutex<State>) {
        let tx = self.tx.cross_timestamp(SAMPLES, &self.methods);
        let rx = self.rx.cross_timestamp(SAMPLES, &self.methods);
        let Ok(mut s) = state.lock() else { return };
        s.end.rounds += 1;
        for (i, r) in [tx, rx].into_iter().enumerate() {
            match r {
                Ok((m, v)) => {
                    s.end.methods[i] = Some(m);
                    let v = crate::ptp::cross_samples(&v);
                    let track = if i == 0 {
                        &mut s.pair.tx
                    } else {
                        &mut s.pair.rx
                    };
                    let _ = track.add_round(&v);
                }
                Err(e) => {
                    s.end.read_errors += 1;
                    s.end.last_error = Some(format!("{} clock: {e}", ["TX", "RX"][i]));
                }
            }
        }
    }
}

/// The running tracker.
pub struct PhcTracker {
    state: Arc<Mutex<State>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Clocks>>,
}

/// Why the tracking could not start.
#[derive(Debug, thiserror::Error)]
pub enum TrackerError {
    /// A clock could not be opened or read (`what` names which, and how).
    #[error("{what}")]
    Clock {
        what: String,
        #[source]
        source: SysError,
    },
    #[error("starting the PTP clock tracking thread")]
    Thread(#[source] std::io::Error),
}

impl PhcTracker {
    /// Opens both clocks, takes the rounds before the run and starts the
    /// thread. `methods` in order of preference (e.g. [`CrossMethod::ALL`]).
    pub fn start(
        tx_dev: &Path,
        rx_dev: &Path,
        methods: &[CrossMethod],
    ) -> Result<PhcTracker, TrackerError> {
        let clock = |what: &str| {
            let what = what.to_string();
            move |source| TrackerError::Clock { what, source }
        };
        let clocks = Clocks {
            tx: PhcClock::open(tx_dev).map_err(clock("opening the TX port's PTP clock"))?,
            rx: PhcClock::open(rx_dev).map_err(clock("opening the RX port's PTP clock"))?,
            methods: methods.to_vec(),
        };
        // Fail early, naming the clock, when neither can be cross-timestamped.
        for (name, c) in [("TX", &clocks.tx), ("RX", &clocks.rx)] {
            c.cross_timestamp(1, methods).map_err(clock(&format!(
                "cross-timestamping the {name} port's PTP clock against CLOCK_REALTIME"
            )))?;
        }
        let state = Arc::new(Mutex::new(State::default()));
        for _ in 0..EDGE_ROUNDS {
            clocks.round(&state);
            std::thread::sleep(Duration::from_millis(2));
        }
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (state, stop) = (state.clone(), stop.clone());
            std::thread::Builder::new()
                .name("misura-phc".into())
                .spawn(move || {
                    let mut next = Instant::now() + TRACK_PERIOD;
                    while !stop.load(Ordering::Acquire) {
                        let now = Instant::now();
                        if now >= next {
                            clocks.round(&state);
                            next += TRACK_PERIOD;
                        } else {
                            std::thread::sleep((next - now).min(Duration::from_millis(20)));
                        }
                    }
                    clocks
                })
                .map_err(TrackerError::Thread)?
        };
        Ok(PhcTracker {
            state,
            stop,
            thread: Some(thread),
        })
    }

    pub fn converter(&self) -> PhcConverter {
        PhcConverter(self.state.clone())
    }

    /// Stops the thread, takes the rounds after the run, and returns the
    /// model and what happened.
    pub fn finish(mut self) -> (PhcPair, TrackerEnd) {
        self.stop.store(true, Ordering::Release);
        if let Some(clocks) = self.thread.take().and_then(|t| t.join().ok()) {
            for _ in 0..EDGE_ROUNDS {
                clocks.round(&self.state);
                std::thread::sleep(Duration::from_millis(2));
            }
        }
        let s = self.state.lock().map(|s| (s.pair.clone(), s.end.clone()));
        s.unwrap_or_default()
    }
}

impl Drop for PhcTracker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
    }
}
