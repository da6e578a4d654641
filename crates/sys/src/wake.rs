//! A wake-up timer for one thread that interrupts a blocking system call.
//!
//! Why it exists: a round-trip client waiting for a reply in a blocking
//! `recvmsg` spends one system call where `poll` + `recvmsg` spend two,
//! and, unlike `poll(2)`, the blocking receive is not woken by the TX
//! stamp that the kernel queues on the socket's error queue during the
//! send, so that stamp can be read after the reply instead of between
//! the send and the wait. The wait still needs a deadline (a lost reply
//! must not hold the next probe back), and `SO_RCVTIMEO` rounds to
//! jiffies. So: a POSIX timer on `CLOCK_MONOTONIC` (hrtimer precision)
//! that sends a real-time signal to this thread alone, whose handler is
//! installed without `SA_RESTART`; the blocked receive returns `EINTR`
//! when it fires.
//!
//! The handler only counts; no other thread is signalled. Arming it is a
//! system call, so callers arm it before the send, outside the interval
//! they measure.

use crate::SysError;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Once;

/// How many times the signal has been delivered, in any thread.
static FIRED: AtomicU64 = AtomicU64::new(0);
static INSTALL: Once = Once::new();

extern "C" fn on_signal(_: libc::c_int) {
    FIRED.fetch_add(1, Ordering::Relaxed);
}

/// The real-time signal used: well above the ones glibc keeps for itself
/// (SIGRTMIN is already past them).
fn signo() -> libc::c_int {
    libc::SIGRTMIN() + 6
}

/// One thread's wake-up timer. Not `Send`: it signals the thread that
/// made it.
pub struct WakeTimer {
    id: libc::timer_t,
    _not_send: std::marker::PhantomData<*const ()>,
}

impl WakeTimer {
    /// A disarmed timer that will signal the calling thread.
    pub fn new() -> Result<WakeTimer, SysError> {
        let sig = signo();
        if sig > libc::SIGRTMAX() {
            return Err(SysError::Unsupported {
                what: "a real-time signal for the wake-up timer".into(),
                why: format!(
                    "SIGRTMIN+6 ({sig}) is above SIGRTMAX ({})",
                    libc::SIGRTMAX()
                ),
            });
        }
        let mut err = None;
        INSTALL.call_once(|| {
            // SAFETY: sigaction is plain old data; the handler only touches
            // an atomic, which is async-signal-safe. No SA_RESTART: the
            // point is that a blocking call returns EINTR.
            unsafe {
                let mut sa: libc::sigaction = std::mem::zeroed();
                sa.sa_sigaction = on_signal as *const () as usize;
                sa.sa_flags = 0;
                libc::sigemptyset(&mut sa.sa_mask);
                if libc::sigaction(sig, &sa, std::ptr::null_mut()) != 0 {
                    err = Some(io::Error::last_os_error());
                }
            }
        });
        if let Some(e) = err {
            return Err(SysError::io(
                "installing the wake-up timer's signal handler",
                e,
            ));
        }
        // SAFETY: sigevent is plain old data; all-zero is valid before the
        // fields below are set. gettid has no failure mode.
        let mut sev: libc::sigevent = unsafe { std::mem::zeroed() };
        sev.sigev_notify = libc::SIGEV_THREAD_ID;
        sev.sigev_signo = sig;
        sev.sigev_notify_thread_id = unsafe { libc::gettid() };
        let mut id: libc::timer_t = std::ptr::null_mut();
        // SAFETY: `sev` and `id` are valid for the call.
        if unsafe { libc::timer_create(libc::CLOCK_MONOTONIC, &mut sev, &mut id) } != 0 {
            return Err(SysError::io(
                "creating the wake-up timer (timer_create)",
                io::Error::last_os_error(),
            ));
        }
        Ok(WakeTimer {
            id,
            _not_send: std::marker::PhantomData,
        })
    }

    /// Fires once, `after` from now (at least 1 ns); replaces any
    /// earlier arming.
    pub fn arm(&self, after: misura_time::Span) -> Result<(), SysError> {
        let ns = after.as_ns().max(1);
        let its = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: (ns / 1_000_000_000) as libc::time_t,
                tv_nsec: (ns % 1_000_000_000) as _,
            },
        };
        // SAFETY: `self.id` is a live timer; `its` is valid.
        if unsafe { libc::timer_settime(self.id, 0, &its, std::ptr::null_mut()) } != 0 {
            return Err(SysError::io(
                "arming the wake-up timer (timer_settime)",
                io::Error::last_os_error(),
            ));
        }
        Ok(())
    }

    /// How many wake-up signals have been delivered so far (any thread's
    /// timer): a change since a reading says one fired in between.
    pub fn fired() -> u64 {
        FIRED.load(Ordering::Relaxed)
    }
}

impl Drop for WakeTimer {
    fn drop(&mut self) {
        // SAFETY: `self.id` was made by timer_create and is deleted once.
        unsafe {
            libc::timer_delete(self.id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// A blocking read with nothing to read returns when the timer fires,
    /// not later, and the firing is counted.
    #[test]
    fn the_timer_interrupts_a_blocking_read() {
        let mut fds = [0; 2];
        // SAFETY: a pipe into a valid two-element array.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        let t = WakeTimer::new().unwrap();
        let before = WakeTimer::fired();
        let start = Instant::now();
        t.arm(misura_time::Span::from_millis(20)).unwrap();
        let mut b = [0u8; 1];
        // SAFETY: reading one byte into a live buffer.
        let n = unsafe { libc::read(fds[0], b.as_mut_ptr() as *mut libc::c_void, 1) };
        let e = io::Error::last_os_error();
        let took = start.elapsed();
        assert_eq!(n, -1);
        assert_eq!(e.raw_os_error(), Some(libc::EINTR));
        assert!(took >= Duration::from_millis(19), "woke after {took:?}");
        assert!(took < Duration::from_secs(5), "woke after {took:?}");
        assert!(WakeTimer::fired() > before);
        // SAFETY: closing the pipe's own descriptors once.
        unsafe {
            libc::close(fds[0]);
            libc::close(fds[1]);
        }
    }
}
