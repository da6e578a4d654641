//! Batched sends with `sendmmsg(2)` on a plain `AF_PACKET` socket: one
//! system call carries up to 1024 frames from buffers prepared up front.
//! It needs no ring memory, and the kernel copies each frame, so buffers
//! can be rewritten as soon as the call returns.

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};

use super::{
    check_range, drop_all_received, open_bound, send_error, set_packet_opt, widen_send_buffer,
    ETH_HLEN, PACKET_QDISC_BYPASS,
};
use crate::SysError;

/// The largest batch (`UIO_MAXIOV`, the kernel's cap for one call).
pub const MMSG_BATCH_MAX: usize = 1024;
/// The largest frame buffer.
pub const MMSG_FRAME_MAX: usize = 1 << 16;

/// `sendmmsg` sender with `batch` buffers of `max_frame` bytes.
pub struct MmsgTx {
    fd: OwnedFd,
    ifname: String,
    max_frame: usize,
    /// `batch * max_frame` bytes; never reallocated (the iovecs point in).
    buf: Vec<u8>,
    /// One iovec per buffer; never reallocated (the headers point in).
    iovs: Vec<libc::iovec>,
    hdrs: Vec<libc::mmsghdr>,
}

// SAFETY: the raw pointers in `iovs` and `hdrs` point only into `buf` and
// `iovs`, heap blocks owned by this value that never move or reallocate;
// nothing else refers to them, so moving the whole to another thread is
// sound.
unsafe impl Send for MmsgTx {}

impl std::fmt::Debug for MmsgTx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MmsgTx")
            .field("ifname", &self.ifname)
            .field("batch", &self.hdrs.len())
            .field("max_frame", &self.max_frame)
            .finish()
    }
}

/// Send-buffer accounting asked for (SO_SNDBUFFORCE; SO_SNDBUF, capped by
/// net.core.wmem_max, without CAP_NET_ADMIN).
pub const SEND_BUFFER_BYTES: usize = 64 << 20;

impl MmsgTx {
    /// Opens a send-only packet socket on `ifname` (frames go out as
    /// `ethertype`, host order) with `batch` (1..=1024) buffers of
    /// `max_frame` (14..=65536) bytes, each initially `max_frame` long.
    pub fn open(
        ifname: &str,
        ethertype: u16,
        batch: usize,
        max_frame: usize,
        qdisc_bypass: bool,
    ) -> Result<MmsgTx, SysError> {
        check_range("sendmmsg batch", batch, 1, MMSG_BATCH_MAX)?;
        check_range("sendmmsg max_frame", max_frame, ETH_HLEN, MMSG_FRAME_MAX)?;
        let (fd, _) = open_bound(ifname, ethertype)?;
        drop_all_received(&fd)?;
        if qdisc_bypass {
            set_packet_opt(&fd, PACKET_QDISC_BYPASS, "PACKET_QDISC_BYPASS", 1)?;
        }
        // Frames queued beyond the port (in the lab: veth, the bridge, a
        // tbf) keep their send-buffer charge until they leave or drop, so
        // a small buffer lets the SUT's queue slow the tester down
        // (measured: 4 954 of 19 980 frames/s offered into a 20 Mbit/s tbf)
        // instead of showing as the SUT's loss. The buffer is accounting,
        // not memory set aside.
        widen_send_buffer(&fd, (batch * (max_frame + 512)).max(SEND_BUFFER_BYTES));
        let mut buf = vec![0u8; batch * max_frame];
        let base = buf.as_mut_ptr();
        let mut iovs: Vec<libc::iovec> = (0..batch)
            .map(|i| libc::iovec {
                // SAFETY: i * max_frame < buf.len(): inside the allocation.
                iov_base: unsafe { base.add(i * max_frame) } as *mut libc::c_void,
                iov_len: max_frame,
            })
            .collect();
        let iov_base = iovs.as_mut_ptr();
        let hdrs = (0..batch)
            .map(|i| {
                // SAFETY: msghdr is plain old data; all-zero is a valid value.
                let mut h: libc::msghdr = unsafe { std::mem::zeroed() };
                // SAFETY: i < batch = iovs.len().
                h.msg_iov = unsafe { iov_base.add(i) };
                h.msg_iovlen = 1;
                libc::mmsghdr {
                    msg_hdr: h,
                    msg_len: 0,
                }
            })
            .collect();
        Ok(MmsgTx {
            fd,
            ifname: ifname.to_string(),
            max_frame,
            buf,
            iovs,
            hdrs,
        })
    }

    /// Buffers in the batch.
    pub fn batch(&self) -> usize {
        self.hdrs.len()
    }

    /// Buffer `i` of the batch, `max_frame` bytes. Panics if `i >= batch`.
    pub fn frame_mut(&mut self, i: usize) -> &mut [u8] {
        let m = self.max_frame;
        &mut self.buf[i * m..(i + 1) * m]
    }

    /// Sets the length of frame `i`. Panics if `i >= batch` or `len` is
    /// outside 14..=max_frame.
    pub fn set_len(&mut self, i: usize, len: usize) {
        assert!(
            (ETH_HLEN..=self.max_frame).contains(&len),
            "MmsgTx::set_len: frame length {len} outside 14..={}",
            self.max_frame
        );
        self.iovs[i].iov_len = len;
    }

    /// Sends frames `0..n` with one `sendmmsg`; returns how many the kernel
    /// took (the first that many; fewer than `n` when its queue filled).
    /// EAGAIN/ENOBUFS on the first frame give `Ok(0)`. Panics if `n > batch`.
    pub fn send(&mut self, n: usize) -> Result<usize, SysError> {
        assert!(
            n <= self.hdrs.len(),
            "MmsgTx::send: {n} > batch {}",
            self.hdrs.len()
        );
        if n == 0 {
            return Ok(0);
        }
        // SAFETY: `hdrs[..n]` are valid mmsghdrs whose iovecs point into
        // `buf` with lengths within each buffer; all live for the call.
        let rc = unsafe {
            libc::sendmmsg(
                self.fd.as_raw_fd(),
                self.hdrs.as_mut_ptr(),
                n as libc::c_uint,
                libc::MSG_DONTWAIT,
            )
        };
        if rc >= 0 {
            return Ok(rc as usize);
        }
        match send_error(std::io::Error::last_os_error(), &self.ifname, "sendmmsg") {
            None => Ok(0),
            Some(e) => Err(e),
        }
    }
}

impl AsFd for MmsgTx {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}
