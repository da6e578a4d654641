//! misura's time, shared by every crate: an [`Instant`] on the run's single
//! timescale, the [`Span`] between two, a positive [`Period`], and where a
//! timestamp came from ([`TimestampSource`]).
//!
//! A leaf crate (it uses no other misura crate) so that the Linux edge
//! (`misura-sys`, which reads the clocks) and the pure method
//! (`misura-measure`, which never does) speak the same types; `misura-measure`
//! re-exports it as `misura_measure::time`.
#![forbid(unsafe_code)]

pub mod period;

use serde::{Deserialize, Serialize};

/// The origin of a timestamp, carried next to every figure derived from it.
///
/// All sources misura combines in one frame record share one timescale
/// (CLOCK_REALTIME on Linux: the kernel's software stamps use it, so the user
/// windows are read from it too). NIC hardware stamps live on the NIC's own
/// clock and are only ever compared with stamps from the same clock.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimestampSource {
    /// `clock_gettime()` read by misura around a system call.
    UserClock,
    /// `SO_TIMESTAMPING` software stamps taken by the kernel at the driver.
    KernelSoftware,
    /// `SO_TIMESTAMPING` raw hardware stamps taken by the NIC.
    NicHardware,
}

impl TimestampSource {
    pub fn as_str(self) -> &'static str {
        match self {
            TimestampSource::UserClock => "user clock",
            TimestampSource::KernelSoftware => "kernel software",
            TimestampSource::NicHardware => "NIC hardware",
        }
    }
}

/// An instant on the run's single timescale, in integer nanoseconds (the
/// caller's clock: `measure` never reads one). Instants are compared and
/// subtracted; the difference is a [`Span`].
#[derive(
    Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Instant(i64);

/// A signed length of time in integer nanoseconds: the difference of two
/// [`Instant`]s, a timeout, a tolerance. Results carry it as `*_ns: i64`.
#[derive(
    Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Span(i64);

/// A positive [`Span`]: the period of a schedule. Only [`Period::new`] makes
/// one, so whoever holds a `Period` need not check it again.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Period(Span);

impl Instant {
    pub const MIN: Instant = Instant(i64::MIN);
    pub const MAX: Instant = Instant(i64::MAX);

    pub const fn from_ns(ns: i64) -> Instant {
        Instant(ns)
    }

    pub const fn as_ns(self) -> i64 {
        self.0
    }

    /// `self + d`, held at the ends of the timescale.
    pub const fn saturating_add(self, d: Span) -> Instant {
        Instant(self.0.saturating_add(d.0))
    }
}

impl Span {
    pub const ZERO: Span = Span(0);
    pub const MAX: Span = Span(i64::MAX);

    pub const fn from_ns(ns: i64) -> Span {
        Span(ns)
    }

    pub const fn as_ns(self) -> i64 {
        self.0
    }

    pub const fn saturating_mul(self, k: i64) -> Span {
        Span(self.0.saturating_mul(k))
    }

    pub const fn from_millis(ms: i64) -> Span {
        Span(ms.saturating_mul(1_000_000))
    }

    pub const fn from_secs(s: i64) -> Span {
        Span(s.saturating_mul(1_000_000_000))
    }

    /// A `std` duration (a wait handed to the OS, or a length printed the
    /// way `std` prints one), saturating at `Span::MAX`.
    pub fn from_std(d: std::time::Duration) -> Span {
        Span(i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
    }

    /// As a `std` duration for the OS's waits; a negative span is zero.
    pub const fn to_std(self) -> std::time::Duration {
        std::time::Duration::from_nanos(if self.0 > 0 { self.0 as u64 } else { 0 })
    }

    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }

    pub const fn is_positive(self) -> bool {
        self.0 > 0
    }
}

impl Period {
    /// `ns` as a period, `None` unless it is positive.
    pub const fn new(ns: i64) -> Option<Period> {
        if ns > 0 {
            Some(Period(Span(ns)))
        } else {
            None
        }
    }

    pub const fn span(self) -> Span {
        self.0
    }

    pub const fn as_ns(self) -> i64 {
        self.0 .0
    }

    /// The period `k` times over (`k` ≥ 1), held at the largest span.
    pub fn times(self, k: u64) -> Period {
        Period(
            self.0
                .saturating_mul(i64::try_from(k.max(1)).unwrap_or(i64::MAX)),
        )
    }
}

impl std::ops::Sub for Instant {
    type Output = Span;
    fn sub(self, rhs: Instant) -> Span {
        Span(self.0 - rhs.0)
    }
}

impl std::ops::Add<Span> for Instant {
    type Output = Instant;
    fn add(self, rhs: Span) -> Instant {
        Instant(self.0 + rhs.0)
    }
}

impl std::ops::Sub<Span> for Instant {
    type Output = Instant;
    fn sub(self, rhs: Span) -> Instant {
        Instant(self.0 - rhs.0)
    }
}

impl std::ops::AddAssign<Span> for Instant {
    fn add_assign(&mut self, rhs: Span) {
        self.0 += rhs.0;
    }
}

impl std::ops::Add for Span {
    type Output = Span;
    fn add(self, rhs: Span) -> Span {
        Span(self.0 + rhs.0)
    }
}

impl std::ops::Sub for Span {
    type Output = Span;
    fn sub(self, rhs: Span) -> Span {
        Span(self.0 - rhs.0)
    }
}

impl From<Period> for Span {
    fn from(p: Period) -> Span {
        p.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instants_and_spans_do_the_arithmetic_of_nanoseconds() {
        let a = Instant::from_ns(1_000);
        let b = a + Span::from_ns(250);
        assert_eq!(b.as_ns(), 1_250);
        assert_eq!(b - a, Span::from_ns(250));
        assert_eq!(a - b, Span::from_ns(-250));
        assert_eq!(b - Span::from_ns(250), a);
        assert!(Span::from_ns(1) > Span::ZERO && a < b);
        assert_eq!(Instant::MAX.saturating_add(Span::from_ns(1)), Instant::MAX);
    }

    #[test]
    fn a_period_is_positive_by_construction() {
        assert_eq!(Period::new(0), None);
        assert_eq!(Period::new(-5), None);
        let p = Period::new(1_000).unwrap();
        assert_eq!((p.as_ns(), p.span()), (1_000, Span::from_ns(1_000)));
        assert_eq!(p.times(3).as_ns(), 3_000);
        assert_eq!(Period::new(i64::MAX).unwrap().times(2).as_ns(), i64::MAX);
    }

    #[test]
    fn spans_meet_std_durations_at_the_edge() {
        use std::time::Duration;
        assert_eq!(Span::from_secs(15), Span::from_ns(15_000_000_000));
        assert_eq!(Span::from_millis(100).to_std(), Duration::from_millis(100));
        assert_eq!(Span::from_ns(-3).to_std(), Duration::ZERO);
        assert_eq!(
            Span::from_std(Duration::from_micros(7)),
            Span::from_ns(7_000)
        );
        assert_eq!(Span::from_std(Duration::MAX), Span::MAX);
        assert!(Span::from_ns(1).is_positive() && !Span::ZERO.is_positive());
        assert_eq!(Span::from_millis(-1500).as_secs_f64(), -1.5);
    }
}
