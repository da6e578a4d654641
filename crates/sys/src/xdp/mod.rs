//! AF_XDP transmit: frames written straight into a UMEM shared with the
//! kernel, handed over through the TX descriptor ring, their frames given
//! back through the completion ring. Hand-written on `libc`'s if_xdp
//! definitions rather than a crate: `xdpilone` is EUPL-1.2 (copyleft, not
//! for an MIT/Apache-2.0 tool) and `xdp` does not fit the engine's
//! write-in-place interface; transmit needs no XDP program, so nothing
//! else is needed.
//!
//! Receive is not done here: an AF_XDP frame has no skb and so no kernel RX
//! stamp, and the frame engine stamps every received frame; it receives
//! through a TPACKET_V3 ring instead.
//!
//! Binding asks for zero-copy first (NICs whose driver supports it) and
//! falls back to copy mode (any driver, veth included: the kernel builds an
//! skb from the UMEM frame). In copy mode the kernel sends at most a few
//! dozen frames per wake-up, so `tx_flush` kicks while the kernel makes
//! progress.

mod ring;

use crate::fd::cvt;
use crate::SysError;
use ring::{Mapped, Ring};
use std::mem::size_of;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// Most UMEM frames (and so bytes: × frame size) one socket may ask for.
pub const MAX_FRAMES: u32 = 1 << 18;

/// Where and how to bind.
#[derive(Clone, Debug)]
pub struct XdpConfig {
    /// The interface queue to send on.
    pub queue: u32,
    /// UMEM frame size: 2048 or 4096.
    pub frame_size: u32,
    /// UMEM frames (a power of two, up to [`MAX_FRAMES`]).
    pub frame_count: u32,
    /// Only zero-copy (fail if the driver cannot), only copy, or either.
    pub zero_copy: Option<bool>,
}

impl Default for XdpConfig {
    fn default() -> XdpConfig {
        XdpConfig {
            queue: 0,
            frame_size: 2048,
            frame_count: 4096,
            zero_copy: None,
        }
    }
}

/// How the socket was bound.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct XdpBound {
    pub zero_copy: bool,
}

/// Counters of one socket.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct XdpCounters {
    pub pushed: u64,
    pub completed: u64,
    /// Kicks the kernel answered with EAGAIN/EBUSY/ENOBUFS.
    pub kicks_refused: u64,
    /// `XDP_STATISTICS` tx_invalid_descs.
    pub tx_invalid: u64,
}

/// An AF_XDP socket bound for transmit.
pub struct XdpSocket {
    fd: OwnedFd,
    umem: Mapped,
    frame_size: u32,
    tx: Ring,
    cq: Ring,
    free: Vec<u64>,
    bound: XdpBound,
    counters: XdpCounters,
}

// SAFETY: the mappings are owned by this value and only touched through
// `&mut self`; moving it to another thread moves that ownership.
unsafe impl Send for XdpSocket {}

fn unsupported(what: &str, e: std::io::Error) -> SysError {
    match e.raw_os_error() {
        Some(libc::EPERM) | Some(libc::EACCES) => SysError::NeedCapability {
            cap: "CAP_NET_RAW",
            what: format!("AF_XDP ({what})"),
        },
        _ => SysError::Unsupported {
            what: format!("AF_XDP ({what})"),
            why: e.to_string(),
        },
    }
}

fn set_opt<T>(fd: &OwnedFd, name: libc::c_int, v: &T, what: &str) -> Result<(), SysError> {
    // SAFETY: `v` points at a live T of the size passed.
    let rc = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_XDP,
            name,
            (v as *const T).cast(),
            size_of::<T>() as libc::socklen_t,
        )
    };
    cvt(rc).map(|_| ()).map_err(|e| unsupported(what, e))
}

impl XdpSocket {
    /// Open and bind an AF_XDP socket for transmit on `ifname`.
    pub fn open(ifname: &str, cfg: &XdpConfig) -> Result<XdpSocket, SysError> {
        if cfg.frame_size != 2048 && cfg.frame_size != 4096 {
            return Err(SysError::Unsupported {
                what: format!("AF_XDP frame size {}", cfg.frame_size),
                why: "use 2048 or 4096".into(),
            });
        }
        if !cfg.frame_count.is_power_of_two()
            || cfg.frame_count < 64
            || cfg.frame_count > MAX_FRAMES
        {
            return Err(SysError::Unsupported {
                what: format!("AF_XDP frame count {}", cfg.frame_count),
                why: format!("use a power of two from 64 to {MAX_FRAMES}"),
            });
        }
        let ifindex = crate::iface::interface_index(ifname)?;
        // SAFETY: plain socket(2) call.
        let raw = unsafe { libc::socket(libc::AF_XDP, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) };
        let raw = cvt(raw).map_err(|e| unsupported("socket", e))?;
        // SAFETY: `raw` is a fresh descriptor that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let len = cfg.frame_count as usize * cfg.frame_size as usize;
        let umem = Mapped::anonymous(len).map_err(|e| unsupported("UMEM memory", e))?;
        let reg = libc::xdp_umem_reg {
            addr: umem.ptr as u64,
            len: len as u64,
            chunk_size: cfg.frame_size,
            headroom: 0,
            flags: 0,
            tx_metadata_len: 0,
        };
        set_opt(&fd, libc::XDP_UMEM_REG, &reg, "registering the UMEM")?;
        let ring_size: u32 = cfg.frame_count.min(4096);
        // The kernel wants a fill ring beside the completion ring even for
        // a socket that only sends; it is never used.
        set_opt(&fd, libc::XDP_UMEM_FILL_RING, &ring_size, "fill ring size")?;
        set_opt(
            &fd,
            libc::XDP_UMEM_COMPLETION_RING,
            &ring_size,
            "completion ring size",
        )?;
        set_opt(&fd, libc::XDP_TX_RING, &ring_size, "TX ring size")?;
        let off = ring::offsets(&fd).map_err(|e| unsupported("ring offsets", e))?;
        let tx = Ring::map(
            &fd,
            &off.tx,
            ring_size,
            size_of::<libc::xdp_desc>(),
            libc::XDP_PGOFF_TX_RING as u64,
        )
        .map_err(|e| unsupported("mapping the TX ring", e))?;
        let cq = Ring::map(
            &fd,
            &off.cr,
            ring_size,
            size_of::<u64>(),
            libc::XDP_UMEM_PGOFF_COMPLETION_RING,
        )
        .map_err(|e| unsupported("mapping the completion ring", e))?;
        // In copy mode each frame becomes an skb charged to this socket's
        // send buffer until it leaves or drops: a queue beyond the port (a
        // lab tbf) would otherwise slow the tester down (see ring::mmsg).
        let _ = crate::fd::set_int(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_SNDBUFFORCE,
            64 << 20,
        );
        let bound = bind(&fd, ifindex, cfg.queue, cfg.zero_copy)?;
        let free = (0..cfg.frame_count as u64)
            .rev()
            .map(|i| i * cfg.frame_size as u64)
            .collect();
        Ok(XdpSocket {
            fd,
            umem,
            frame_size: cfg.frame_size,
            tx,
            cq,
            free,
            bound,
            counters: XdpCounters::default(),
        })
    }

    pub fn mode(&self) -> XdpBound {
        self.bound
    }

    /// Write a frame (`f` returns its length, 0 to give up) into a free
    /// UMEM frame and queue it on the TX ring; false when neither a frame
    /// nor a descriptor is free.
    pub fn tx_push_with(&mut self, f: impl FnOnce(&mut [u8]) -> usize) -> bool {
        if self.free.is_empty() {
            self.reclaim();
        }
        if self.tx.free_slots() == 0 {
            return false;
        }
        let Some(addr) = self.free.pop() else {
            return false;
        };
        // SAFETY: `addr` is a frame offset below the UMEM's length, owned
        // by user space (it is on the free list), frame_size bytes long.
        let buf = unsafe {
            std::slice::from_raw_parts_mut(
                self.umem.ptr.add(addr as usize),
                self.frame_size as usize,
            )
        };
        let len = f(buf);
        if len == 0 || len > self.frame_size as usize {
            self.free.push(addr);
            return false;
        }
        let desc = libc::xdp_desc {
            addr,
            len: len as u32,
            options: 0,
        };
        self.tx.push_desc(desc);
        self.counters.pushed += 1;
        true
    }

    /// Publish what was queued and kick the kernel until it has taken the
    /// whole TX ring (copy mode sends a few dozen frames per kick), then
    /// take back the completed frames. Returns the frames completed.
    pub fn tx_flush(&mut self) -> Result<usize, SysError> {
        self.tx.publish();
        // Kick while the kernel makes progress; what it leaves goes with
        // the next flush.
        let mut before = u32::MAX;
        for _ in 0..256 {
            let pending = self.tx.pending();
            if pending == 0 || pending == before {
                break;
            }
            before = pending;
            // SAFETY: a zero-length sendto with no address only wakes the
            // socket's transmit path.
            let rc = unsafe {
                libc::sendto(
                    self.fd.as_raw_fd(),
                    std::ptr::null(),
                    0,
                    libc::MSG_DONTWAIT,
                    std::ptr::null(),
                    0,
                )
            };
            if rc < 0 {
                let e = std::io::Error::last_os_error();
                match e.raw_os_error() {
                    Some(libc::EAGAIN) | Some(libc::EBUSY) | Some(libc::ENOBUFS) => {
                        self.counters.kicks_refused += 1;
                        self.reclaim();
                    }
                    _ => return Err(SysError::io("waking the AF_XDP transmit path", e)),
                }
            }
        }
        Ok(self.reclaim())
    }

    /// Frames completed since the last call go back on the free list.
    fn reclaim(&mut self) -> usize {
        let n = self.cq.consume_addrs(&mut self.free);
        self.counters.completed += n as u64;
        n
    }

    pub fn counters(&mut self) -> XdpCounters {
        let mut s: libc::xdp_statistics = unsafe_zeroed();
        let mut len = size_of::<libc::xdp_statistics>() as libc::socklen_t;
        // SAFETY: `s` is a writable xdp_statistics of `len` bytes.
        let rc = unsafe {
            libc::getsockopt(
                self.fd.as_raw_fd(),
                libc::SOL_XDP,
                libc::XDP_STATISTICS,
                (&mut s as *mut libc::xdp_statistics).cast(),
                &mut len,
            )
        };
        if rc == 0 {
            self.counters.tx_invalid = s.tx_invalid_descs;
        }
        self.counters
    }
}

fn unsafe_zeroed<T>() -> T {
    // SAFETY: only used for the plain-data kernel structs of if_xdp.h,
    // for which all-zero bytes are a valid value.
    unsafe { std::mem::zeroed() }
}

/// Bind, zero-copy first unless told otherwise.
fn bind(
    fd: &OwnedFd,
    ifindex: u32,
    queue: u32,
    zero_copy: Option<bool>,
) -> Result<XdpBound, SysError> {
    let tries: &[(bool, u16)] = match zero_copy {
        Some(true) => &[(true, libc::XDP_ZEROCOPY)],
        Some(false) => &[(false, libc::XDP_COPY)],
        None => &[(true, libc::XDP_ZEROCOPY), (false, libc::XDP_COPY)],
    };
    let mut last = None;
    for &(zc, flag) in tries {
        let mut sa: libc::sockaddr_xdp = unsafe_zeroed();
        sa.sxdp_family = libc::AF_XDP as u16;
        sa.sxdp_flags = flag | libc::XDP_USE_NEED_WAKEUP;
        sa.sxdp_ifindex = ifindex;
        sa.sxdp_queue_id = queue;
        // SAFETY: `sa` is a valid sockaddr_xdp of the size passed.
        let rc = unsafe {
            libc::bind(
                fd.as_raw_fd(),
                (&sa as *const libc::sockaddr_xdp).cast(),
                size_of::<libc::sockaddr_xdp>() as libc::socklen_t,
            )
        };
        match cvt(rc) {
            Ok(_) => return Ok(XdpBound { zero_copy: zc }),
            Err(e) => last = Some((zc, e)),
        }
    }
    let (zc, e) = last.expect("at least one bind was tried");
    Err(unsupported(
        &format!(
            "binding queue {queue} in {} mode",
            if zc { "zero-copy" } else { "copy" }
        ),
        e,
    ))
}
