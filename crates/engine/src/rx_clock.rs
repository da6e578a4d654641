//! The receive ring's hardware branch: NIC RX stamps for the load frames.
//!
//! A load frame carries its sender's user-clock time (CLOCK_REALTIME when it
//! was queued); the ring's NIC stamp is in the RX port's PTP clock. To
//! subtract one from the other the RX clock is tracked against system time
//! for the whole trial (`misura_run::phc_tracker`: cross-timestamps before,
//! every 100 ms during and after) and each hardware stamp is converted to
//! system time with the model as it stands. The core loop never waits for
//! the tracker: it copies the model out now and then ([`REFRESH_NS`]) with a
//! lock it only tries, and converts with that copy.
//!
//! NICs such as Intel's 82576, 82599 and X710 stamp only PTP event messages:
//! on those the load frames travel inside PTPv2 Sync headers (`--frame-format
//! ptp`). What the figure then is: sender user clock → NIC RX stamp, so the
//! receive side's host (interrupt, softirq, ring) is out of it and the send
//! side's (syscall, qdisc, driver) is still in; it is named so in the result.

use crate::error::EngineError;
use misura_measure::time::{Instant, Span};
use misura_report::load::RxClockFacts;
use misura_run::phc_tracker::{PhcConverter, PhcTracker, ToSystem};
use misura_sys::phc_cross::CrossMethod;
use misura_sys::tsinfo::{self, HWTSTAMP_FILTER_ALL, HWTSTAMP_FILTER_PTP_V2_EVENT};
use std::path::PathBuf;

/// How often a core copies the clock model out of the tracker.
pub const REFRESH_NS: i64 = 50_000_000;

/// The RX port's PTP clock, tracked while the engine is open.
pub struct RxClock {
    pub phc: PathBuf,
    /// Whether the port stamps every frame or PTP event messages only.
    pub filter_all: bool,
    /// Kept for its thread, which stops when the engine is dropped.
    _tracker: PhcTracker,
    converter: PhcConverter,
}

/// Ask the RX port for NIC RX stamps and start tracking its clock. `Err`
/// says why hardware stamps cannot be had (the caller keeps kernel stamps
/// and puts the reason in the result's notes).
pub fn open(rx: &str, ptp_frames: bool) -> Result<RxClock, EngineError> {
    let no = |why: String| Err(EngineError::NoHardwareRx { why });
    let caps = tsinfo::get_ts_info(rx).map_err(|e| {
        EngineError::hardware_rx(
            format!("reading {rx}'s timestamping capabilities (ETHTOOL_GET_TS_INFO)"),
            e,
        )
    })?;
    if !caps.hw_rx() {
        return no(format!(
            "{rx} has no hardware receive timestamping (ethtool -T {rx})"
        ));
    }
    let filter = if caps.hw_rx_all() {
        HWTSTAMP_FILTER_ALL
    } else if caps.hw_rx_ptp_l2() && ptp_frames {
        HWTSTAMP_FILTER_PTP_V2_EVENT
    } else if caps.hw_rx_ptp_l2() {
        return no(format!(
            "{rx} stamps only PTP event messages in hardware: the frame format ptp (or auto) wraps the load frames in PTP Sync messages to get them"
        ));
    } else {
        return no(format!(
            "{rx} offers no hardware receive filter misura's frames pass (ethtool -T {rx})"
        ));
    };
    let Some(phc) = caps
        .phc_index
        .map(|i| PathBuf::from(format!("/dev/ptp{i}")))
    else {
        return no(format!(
            "{rx} reports no PTP clock index: its NIC stamps cannot be related to system time"
        ));
    };
    tsinfo::enable_hw_timestamping_with(rx, filter).map_err(|e| {
        EngineError::hardware_rx(format!("enabling hardware timestamping on {rx}"), e)
    })?;
    // One clock, tracked as both halves of the pair (its second half is the
    // one whose model converts).
    let tracker = PhcTracker::start(&phc, &phc, &CrossMethod::ALL).map_err(|e| {
        EngineError::hardware_rx(format!("tracking {rx}'s PTP clock {}", phc.display()), e)
    })?;
    Ok(RxClock {
        converter: tracker.converter(),
        phc,
        filter_all: filter == HWTSTAMP_FILTER_ALL,
        _tracker: tracker,
    })
}

impl RxClock {
    /// A handle for one core.
    pub fn core(&self) -> CoreClock {
        CoreClock {
            converter: self.converter.clone(),
            model: None,
            next_refresh: Instant::from_ns(0),
            u95_max: 0.0,
        }
    }

    /// The clock and its fit so far, evaluated at `at_sys`; `u95_ns` is
    /// the largest conversion uncertainty the cores saw (the caller's).
    pub fn facts(&self, at_sys: Instant, u95_ns: Option<f64>) -> RxClockFacts {
        let (fit, end) = self.converter.rx_fit(at_sys);
        RxClockFacts {
            phc: self.phc.display().to_string(),
            rx_filter: if self.filter_all {
                "all"
            } else {
                "ptp_v2_event"
            }
            .into(),
            method: end.methods[1].map(|m| m.name().to_string()),
            rounds: end.rounds,
            read_errors: end.read_errors,
            last_error: end.last_error,
            fit: fit.map(Into::into),
            u95_ns,
        }
    }
}

/// One core's copy of the clock model.
pub struct CoreClock {
    converter: PhcConverter,
    model: Option<ToSystem>,
    next_refresh: Instant,
    /// The largest uncertainty of a conversion this core made.
    pub u95_max: f64,
}

impl CoreClock {
    /// A hardware stamp in system time, `None` before the model has two
    /// points. `now` is the loop's clock read of this turn.
    #[inline]
    pub fn to_sys(&mut self, phc: i64, now: Instant) -> Option<i64> {
        if now >= self.next_refresh {
            self.refresh(now);
        }
        Some(self.model.as_ref()?.to_sys(phc))
    }

    /// Copy the model out (never waiting: while the tracker holds it, try
    /// again a millisecond later rather than on every frame), and note its
    /// uncertainty over the span this copy will serve, once here instead
    /// of per frame.
    #[cold]
    fn refresh(&mut self, now: Instant) {
        let Some(m) = self.converter.rx_snapshot() else {
            self.next_refresh = now + Span::from_millis(1);
            return;
        };
        self.next_refresh = now + Span::from_ns(REFRESH_NS);
        let u = m
            .u95_ns(now.as_ns())
            .max(m.u95_ns(self.next_refresh.as_ns()));
        self.u95_max = self.u95_max.max(u);
        self.model = Some(m);
    }
}
