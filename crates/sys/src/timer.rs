//! Absolute sleeps (`clock_nanosleep(…, TIMER_ABSTIME, …)`), the timer
//! cyclictest measures.

use crate::SysError;
use misura_time::Instant;

/// How an absolute sleep ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wake {
    /// The target time was reached.
    Expired,
    /// A signal interrupted the sleep (EINTR) before the target.
    Interrupted,
}

/// Sleeps on `clock` until its value is `target` (absolute). Returns at
/// once if the target is past.
pub fn sleep_until(clock: libc::clockid_t, target: Instant) -> Result<Wake, SysError> {
    let target_ns = target.as_ns();
    let ts = libc::timespec {
        tv_sec: target_ns.div_euclid(1_000_000_000) as libc::time_t,
        tv_nsec: target_ns.rem_euclid(1_000_000_000) as _,
    };
    // SAFETY: `ts` is a valid timespec; the remaining-time pointer may be
    // null with TIMER_ABSTIME.
    let rc =
        unsafe { libc::clock_nanosleep(clock, libc::TIMER_ABSTIME, &ts, std::ptr::null_mut()) };
    // clock_nanosleep returns the error number instead of setting errno.
    match rc {
        0 => Ok(Wake::Expired),
        libc::EINTR => Ok(Wake::Interrupted),
        e => Err(SysError::io(
            format!("clock_nanosleep on clock {clock}"),
            std::io::Error::from_raw_os_error(e),
        )),
    }
}

/// [`sleep_until`] on `CLOCK_REALTIME`, the clock the frame engine paces on.
pub fn sleep_until_realtime(target: Instant) -> Result<Wake, SysError> {
    sleep_until(libc::CLOCK_REALTIME, target)
}

/// Sleeps until `target` on the run's timescale (`CLOCK_REALTIME`, the
/// clock [`crate::clock::realtime`] reads).
pub fn sleep_until_instant(target: Instant) -> Result<Wake, SysError> {
    sleep_until_realtime(target)
}

/// [`sleep_until`] on `CLOCK_MONOTONIC`, cyclictest's default clock.
pub fn sleep_until_monotonic(target: Instant) -> Result<Wake, SysError> {
    sleep_until(libc::CLOCK_MONOTONIC, target)
}

/// Sets the calling thread's timer slack (`prctl(PR_SET_TIMERSLACK)`): how
/// much later than asked the kernel may end its sleeps to batch wake-ups
/// (50 µs by default for SCHED_OTHER threads). A pacer that measures its own
/// wake-up lateness asks for little slack so the lateness is the timer's,
/// not a deliberate delay. Returns the slack now in force.
pub fn set_timer_slack_ns(ns: u64) -> Result<u64, SysError> {
    // SAFETY: PR_SET_TIMERSLACK takes one unsigned long; no pointers.
    let rc = unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, ns as libc::c_ulong, 0, 0, 0) };
    if rc != 0 {
        return Err(SysError::io(
            format!("prctl(PR_SET_TIMERSLACK, {ns})"),
            std::io::Error::last_os_error(),
        ));
    }
    crate::hostinfo::timer_slack_ns()
}

/// A PM QoS request keeping CPU wake-up latency at most `us` µs while the
/// returned file is open: 0 keeps the CPUs out of deep idle states, as
/// cyclictest does unless `--laptop`. Dropping the file ends the request.
pub fn hold_cpu_dma_latency(us: i32) -> Result<std::fs::File, SysError> {
    use std::io::Write;
    const DEV: &str = "/dev/cpu_dma_latency";
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .open(DEV)
        .map_err(|e| {
            if crate::error::is_perm(&e) {
                SysError::NeedCapability {
                    cap: "CAP_DAC_OVERRIDE",
                    what: format!("writing {DEV}"),
                }
            } else {
                SysError::io(format!("opening {DEV}"), e)
            }
        })?;
    // The kernel takes a binary s32 (or a hex string).
    f.write_all(&us.to_ne_bytes())
        .map_err(|e| SysError::io(format!("writing {us} to {DEV}"), e))?;
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sleeps_until_the_target() {
        let target = crate::clock::monotonic() + misura_time::Span::from_millis(2);
        assert_eq!(
            sleep_until(libc::CLOCK_MONOTONIC, target).unwrap(),
            Wake::Expired
        );
        assert!(crate::clock::monotonic() >= target);
        // A past target returns at once.
        assert_eq!(
            sleep_until(libc::CLOCK_MONOTONIC, Instant::from_ns(1)).unwrap(),
            Wake::Expired
        );
        assert!(sleep_until(12345, target).is_err());
    }

    #[test]
    fn timer_slack_is_per_thread_and_settable() {
        std::thread::spawn(|| {
            assert_eq!(set_timer_slack_ns(1_000).unwrap(), 1_000);
            assert_eq!(crate::hostinfo::timer_slack_ns().unwrap(), 1_000);
        })
        .join()
        .unwrap();
    }
}
