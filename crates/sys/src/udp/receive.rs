//! Receiving: datagrams with their RX stamps, TX stamps and ICMP errors
//! from the error queue, and waiting for either.

use super::{is_icmp_pending, Ready, UdpRecvMeta, UdpTsSocket, UdpTxStamp};
use crate::cmsg::{
    recv_errqueue, recv_msg, SockAddrBuf, SO_EE_ORIGIN_ICMP, SO_EE_ORIGIN_ICMP6,
    SO_EE_ORIGIN_TIMESTAMPING,
};
use crate::fd::is_again;
use crate::sockaddr::from_sockaddr;
use crate::SysError;
use std::io;
use std::os::fd::AsRawFd;
use std::time::Duration;

impl UdpTsSocket {
    /// One `recvmsg()` (non-blocking unless switched with
    /// [`UdpTsSocket::set_nonblocking`]).  `Ok(None)` when nothing is
    /// queued.  The datagram is copied into `buf`; [`UdpRecvMeta::len`] is
    /// its real length (larger than `buf.len()` if truncated).  Does not
    /// allocate.
    pub fn recv_from(&self, buf: &mut [u8]) -> Result<Option<UdpRecvMeta>, SysError> {
        self.recv_from_flags(buf, 0)
    }

    /// [`UdpTsSocket::recv_from`] that never blocks (`MSG_DONTWAIT`), on a
    /// socket switched to blocking mode for its waits.
    pub fn recv_from_nowait(&self, buf: &mut [u8]) -> Result<Option<UdpRecvMeta>, SysError> {
        self.recv_from_flags(buf, libc::MSG_DONTWAIT)
    }

    fn recv_from_flags(
        &self,
        buf: &mut [u8],
        flags: libc::c_int,
    ) -> Result<Option<UdpRecvMeta>, SysError> {
        let mut retried = false;
        loop {
            let mut ss = libc::sockaddr_storage::zeroed();
            // MSG_TRUNC makes recvmsg return the real length of a UDP datagram.
            let r = match recv_msg(
                self.fd.as_raw_fd(),
                buf,
                Some(&mut ss),
                libc::MSG_TRUNC | flags,
            ) {
                Ok(r) => r,
                Err(e) if is_again(&e) => return Ok(None),
                Err(e) if is_icmp_pending(&e) && !retried => {
                    retried = true;
                    continue;
                }
                Err(e) => return Err(SysError::io(format!("receiving on UDP {}", self.local), e)),
            };
            let c = r.controls;
            let src = from_sockaddr(&ss, r.name_len).unwrap_or(self.local);
            return Ok(Some(UdpRecvMeta {
                len: r.len,
                src,
                software: c.software,
                hardware: c.hardware,
                ttl_or_hoplimit: c.ttl,
                dst: c.dst,
            }));
        }
    }

    /// One TX stamp from the error queue (`MSG_ERRQUEUE`, never blocks).
    /// `Ok(None)` when no stamp is queued.  ICMP errors met on the way
    /// (port/host unreachable, ...) are consumed and counted
    /// ([`UdpTsSocket::take_icmp_errors`]); any other queued error is
    /// returned as [`SysError::Io`] (and consumed).  With hardware stamps,
    /// a datagram may get a hardware-only stamp.  Does not allocate.
    pub fn recv_tx_timestamp(&self) -> Result<Option<UdpTxStamp>, SysError> {
        // Bounded: a flood of ICMP errors cannot keep us here.
        for _ in 0..64 {
            // OPT_TSONLY: stamps carry no payload; ICMP errors carry the
            // offending datagram, which is dropped (truncated) here.
            let mut payload = [0u8; 64];
            let r = recv_errqueue(self.fd.as_raw_fd(), &mut payload).map_err(|e| {
                SysError::io(
                    format!("reading the TX timestamp queue of UDP {}", self.local),
                    e,
                )
            })?;
            let Some(r) = r else { return Ok(None) };
            let c = r.controls;
            let Some(err) = c.ext_err else {
                // Every error-queue message of an IP socket carries one;
                // skip anything else.
                continue;
            };
            match err.ee_origin {
                SO_EE_ORIGIN_TIMESTAMPING => {
                    return Ok(Some(UdpTxStamp {
                        id: err.ee_data,
                        software: c.software,
                        hardware: c.hardware,
                    }))
                }
                SO_EE_ORIGIN_ICMP | SO_EE_ORIGIN_ICMP6 => {
                    self.icmp_errors.set(self.icmp_errors.get() + 1);
                }
                origin => {
                    return Err(SysError::io(
                        format!(
                            "the error queue of UDP {} reported an error (origin {origin}, type {}, code {})",
                            self.local, err.ee_type, err.ee_code
                        ),
                        io::Error::from_raw_os_error(err.ee_errno as i32),
                    ))
                }
            }
        }
        Ok(None)
    }

    /// The number of ICMP errors (`SO_EE_ORIGIN_ICMP`/`ICMP6`) that
    /// [`UdpTsSocket::recv_tx_timestamp`] consumed since the last call;
    /// resets the count.
    pub fn take_icmp_errors(&self) -> u64 {
        self.icmp_errors.replace(0)
    }

    /// Waits up to `timeout` (`ppoll(2)`) until a datagram or an error-queue
    /// message (TX stamp or ICMP error) is ready: `Ok(true)` then, `Ok(false)`
    /// on timeout.  An undrained error queue makes this return at once, so
    /// drain [`UdpTsSocket::recv_tx_timestamp`] as well as
    /// [`UdpTsSocket::recv_from`].
    pub fn wait_readable(&self, timeout: Duration) -> Result<bool, SysError> {
        let r = self.wait(timeout)?;
        Ok(r.data || r.error_queue)
    }

    /// [`UdpTsSocket::wait_readable`], telling which queue is ready.
    pub fn wait(&self, timeout: Duration) -> Result<Ready, SysError> {
        let deadline = crate::clock::monotonic_ns()
            .saturating_add(i64::try_from(timeout.as_nanos()).unwrap_or(i64::MAX));
        loop {
            let left = deadline.saturating_sub(crate::clock::monotonic_ns()).max(0);
            let ts = libc::timespec {
                tv_sec: (left / 1_000_000_000) as libc::time_t,
                tv_nsec: (left % 1_000_000_000) as _,
            };
            let mut pfd = libc::pollfd {
                fd: self.fd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: `pfd` is one valid pollfd and `ts` a valid timespec;
            // a null signal mask leaves the mask unchanged.
            let rc = unsafe { libc::ppoll(&mut pfd, 1, &ts, std::ptr::null()) };
            if rc < 0 {
                let e = io::Error::last_os_error();
                if e.raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                return Err(SysError::io(format!("polling UDP {}", self.local), e));
            }
            return Ok(Ready {
                data: rc > 0 && pfd.revents & libc::POLLIN != 0,
                error_queue: rc > 0 && pfd.revents & libc::POLLERR != 0,
            });
        }
    }
}
