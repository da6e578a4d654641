//! Clocks read with `clock_gettime` (the vDSO for the realtime and monotonic
//! clocks, so no system call on the hot path): as an [`Instant`] on the run's
//! timescale (`realtime`, `monotonic`), the currency of the libraries' APIs,
//! or as `i64` nanoseconds where a raw figure is what is kept.

use misura_time::Instant;

/// Reads `clock` as nanoseconds; 0 if the clock id is invalid (it never is
/// for the ids used here).
#[inline]
pub fn now_ns(clock: libc::clockid_t) -> i64 {
    try_now_ns(clock).unwrap_or(0)
}

/// `clock_gettime(clock)` in nanoseconds, or the error (a PHC whose device
/// went away, an invalid dynamic clock id) where [`now_ns`] would give 0.
#[inline]
pub fn try_now_ns(clock: libc::clockid_t) -> std::io::Result<i64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call.
    if unsafe { libc::clock_gettime(clock, &mut ts) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(timespec_ns(ts.tv_sec as i64, ts.tv_nsec as i64))
}

/// `CLOCK_REALTIME` in nanoseconds since the epoch (the clock software
/// timestamps of `SO_TIMESTAMPING` use).
#[inline]
pub fn realtime_ns() -> i64 {
    now_ns(libc::CLOCK_REALTIME)
}

/// `CLOCK_REALTIME` as an [`Instant`]: the run's timescale, the one the
/// kernel's software stamps use.
#[inline]
pub fn realtime() -> Instant {
    Instant::from_ns(realtime_ns())
}

/// `CLOCK_MONOTONIC` as an [`Instant`] (a timescale of its own: never
/// compared with [`realtime`]'s).
#[inline]
pub fn monotonic() -> Instant {
    Instant::from_ns(monotonic_ns())
}

/// `CLOCK_MONOTONIC` in nanoseconds.
#[inline]
pub fn monotonic_ns() -> i64 {
    now_ns(libc::CLOCK_MONOTONIC)
}

/// `CLOCK_MONOTONIC_RAW` in nanoseconds (not slewed by NTP).
#[inline]
pub fn monotonic_raw_ns() -> i64 {
    now_ns(libc::CLOCK_MONOTONIC_RAW)
}

/// The resolution `clock_getres` reports for `clock`, in nanoseconds;
/// -1 if the clock id is invalid.
pub fn resolution_ns(clock: libc::clockid_t) -> i64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call.
    let rc = unsafe { libc::clock_getres(clock, &mut ts) };
    if rc != 0 {
        return -1;
    }
    timespec_ns(ts.tv_sec as i64, ts.tv_nsec as i64)
}

#[inline]
pub(crate) fn timespec_ns(sec: i64, nsec: i64) -> i64 {
    sec.saturating_mul(1_000_000_000).saturating_add(nsec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clocks_advance_and_resolve() {
        let a = monotonic_ns();
        let b = monotonic_ns();
        assert!(b >= a);
        assert!(realtime_ns() > 1_600_000_000_000_000_000);
        assert!(realtime().as_ns() > 1_600_000_000_000_000_000);
        let (m, n) = (monotonic(), monotonic());
        assert!(n >= m);
        assert!(monotonic_raw_ns() > 0);
        let r = resolution_ns(libc::CLOCK_MONOTONIC);
        assert!((1..=10_000_000).contains(&r), "resolution {r}");
        assert_eq!(resolution_ns(12345), -1);
    }
}
