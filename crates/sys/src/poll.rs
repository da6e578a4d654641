//! `ppoll(2)` over a set of descriptors: the readiness loop of one thread
//! that drives several non-blocking sockets (`misura tcp`'s streams), as
//! iperf3 3.12+ and nuttcp do with select(2).
//!
//! The set holds raw descriptor numbers between [`PollSet::push`] and
//! [`PollSet::wait`]; a descriptor closed in between is reported by the
//! kernel as invalid (`POLLNVAL`, shown as [`Ready::error`]), never read
//! through, so no lifetime ties the set to the sockets.

use std::io;
use std::os::fd::{AsFd, AsRawFd};
use std::time::Duration;

/// What [`PollSet::wait`] found on one descriptor.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ready {
    /// Data to read, or the peer's end of stream (a read returns 0).
    pub readable: bool,
    /// Room to write.
    pub writable: bool,
    /// The peer hung up (`POLLHUP`): a read or write says how.
    pub hangup: bool,
    /// An error is pending on the socket (`POLLERR`), or the descriptor is
    /// not open (`POLLNVAL`): a read or write returns it.
    pub error: bool,
}

/// Descriptors and what to wait for on each, reused from turn to turn.
#[derive(Default)]
pub struct PollSet {
    fds: Vec<libc::pollfd>,
}

impl PollSet {
    pub fn new() -> PollSet {
        PollSet::default()
    }

    /// Forget every descriptor (the set keeps its allocation).
    pub fn clear(&mut self) {
        self.fds.clear();
    }

    /// Wait on `fd` for reading and/or writing; returns its index for
    /// [`PollSet::ready`].
    pub fn push(&mut self, fd: &impl AsFd, read: bool, write: bool) -> usize {
        let mut events = 0;
        if read {
            events |= libc::POLLIN;
        }
        if write {
            events |= libc::POLLOUT;
        }
        self.fds.push(libc::pollfd {
            fd: fd.as_fd().as_raw_fd(),
            events,
            revents: 0,
        });
        self.fds.len() - 1
    }

    pub fn len(&self) -> usize {
        self.fds.len()
    }

    pub fn is_empty(&self) -> bool {
        self.fds.is_empty()
    }

    /// Wait up to `timeout` (nanosecond resolution) until a descriptor is
    /// ready; returns how many are. A signal ends the wait early with 0, so
    /// the caller looks at its stop flag.
    pub fn wait(&mut self, timeout: Duration) -> io::Result<usize> {
        Ok(self.ppoll(timeout)?.unwrap_or(0))
    }

    /// Like [`PollSet::wait`], but first poll without sleeping for up to
    /// `spin` (never past `timeout`): what arrives in that time is seen at
    /// once, and a CPU that never went idle needs no wake-up (on a VM each
    /// one costs the waker an interrupt through the hypervisor). A signal
    /// during the spin returns 0 at once, as [`PollSet::wait`] does.
    pub fn wait_spinning_first(&mut self, spin: Duration, timeout: Duration) -> io::Result<usize> {
        if spin.is_zero() {
            return self.wait(timeout);
        }
        let start = std::time::Instant::now();
        loop {
            match self.ppoll(Duration::ZERO)? {
                None => return Ok(0),
                Some(0) => {}
                Some(n) => return Ok(n),
            }
            let spent = start.elapsed();
            if spent >= spin || spent >= timeout {
                return self.wait(timeout.saturating_sub(spent));
            }
        }
    }

    /// One `ppoll(2)`: how many descriptors are ready, or `None` when a
    /// signal interrupted it.
    fn ppoll(&mut self, timeout: Duration) -> io::Result<Option<usize>> {
        for p in &mut self.fds {
            p.revents = 0;
        }
        let ts = libc::timespec {
            tv_sec: timeout.as_secs().min(i32::MAX as u64) as libc::time_t,
            tv_nsec: timeout.subsec_nanos() as _,
        };
        // SAFETY: `fds` is a valid, initialised array of `len` pollfds that
        // lives for the call; `ts` is a valid timespec; a null signal mask
        // leaves the thread's mask unchanged.
        let rc = unsafe {
            libc::ppoll(
                self.fds.as_mut_ptr(),
                self.fds.len() as libc::nfds_t,
                &ts,
                std::ptr::null(),
            )
        };
        if rc < 0 {
            let e = io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EINTR) {
                return Ok(None);
            }
            return Err(e);
        }
        Ok(Some(rc as usize))
    }

    /// What the last [`PollSet::wait`] found on descriptor `i`.
    pub fn ready(&self, i: usize) -> Ready {
        let r = self.fds.get(i).map(|p| p.revents).unwrap_or(0);
        Ready {
            readable: r & libc::POLLIN != 0,
            writable: r & libc::POLLOUT != 0,
            hangup: r & libc::POLLHUP != 0,
            error: r & (libc::POLLERR | libc::POLLNVAL) != 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::unix::net::UnixStream;

    #[test]
    fn readiness_of_a_socket_pair() {
        let (mut a, b) = UnixStream::pair().unwrap();
        let mut set = PollSet::new();
        let ib = set.push(&b, true, false);
        let t = std::time::Instant::now();
        assert_eq!(set.wait(Duration::from_millis(20)).unwrap(), 0);
        assert!(
            t.elapsed() >= Duration::from_millis(19),
            "waited its timeout"
        );
        assert_eq!(set.ready(ib), Ready::default());
        a.write_all(b"x").unwrap();
        let ia = set.push(&a, false, true);
        assert_eq!(set.wait(Duration::from_secs(1)).unwrap(), 2);
        assert!(set.ready(ib).readable && !set.ready(ib).writable);
        assert!(set.ready(ia).writable && !set.ready(ia).readable);
        drop(a);
        set.clear();
        set.push(&b, true, false);
        set.wait(Duration::from_secs(1)).unwrap();
        assert!(set.ready(0).readable && set.ready(0).hangup);
        assert_eq!(set.len(), 1);
    }
}
