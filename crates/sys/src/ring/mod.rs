//! The high-rate packet paths: memory-mapped `AF_PACKET` rings and batched
//! sends, for the line-rate frame engine (minimum-size frames at millions
//! per second, every received frame stamped by the kernel).
//!
//! * [`RxRing`]: a `TPACKET_V3` receive ring. The kernel fills whole blocks
//!   of frames, each with its `SO_TIMESTAMPING` stamp in the frame header,
//!   and hands a block to user space; [`RxRing::poll`] walks it in place
//!   (no copy, no system call per frame) and gives it back.
//! * [`TxRing`]: a `PACKET_TX_RING` (`TPACKET_V2` slots). Frames are written
//!   in place and one `send()` asks the kernel to transmit all of them.
//! * [`MmsgTx`]: `sendmmsg(2)` of prepared buffers on a plain packet
//!   socket, the path that needs no ring memory.
//! * [`probe`]: which of these the kernel and interface offer, and why not.
//!
//! The per-frame socket with control-message stamps is
//! [`crate::packet::PacketSocket`]; this module is its fast sibling.
//! Layouts and constants follow the kernel's `linux/if_packet.h` and
//! `Documentation/networking/packet_mmap.rst` (stable ABI).

mod mmsg;
mod probe;
mod rx;
mod tx;

pub use mmsg::MmsgTx;
pub use probe::{probe, Availability, Capabilities};
pub use rx::{Fanout, FanoutMode, RingFrame, RingStats, RxRing, RxRingConfig};
pub use tx::{TxCounters, TxRing, TxRingConfig};

use std::io;
use std::mem::size_of;
use std::os::fd::{AsRawFd, OwnedFd};

use crate::cmsg::SOL_PACKET;
use crate::fd::cvt;
use crate::SysError;

// Socket options of SOL_PACKET (linux/if_packet.h).
const PACKET_RX_RING: libc::c_int = 5;
const PACKET_STATISTICS: libc::c_int = 6;
const PACKET_VERSION: libc::c_int = 10;
const PACKET_TX_RING: libc::c_int = 13;
const PACKET_TIMESTAMP: libc::c_int = 17;
const PACKET_FANOUT: libc::c_int = 18;
const PACKET_QDISC_BYPASS: libc::c_int = 20;
const PACKET_IGNORE_OUTGOING: libc::c_int = 23;

const TPACKET_V2: libc::c_int = 1;
const TPACKET_V3: libc::c_int = 2;

/// `sll_pkttype` of a frame this host sent.
const PACKET_OUTGOING: u8 = 4;
/// The Ethernet header every frame starts with.
const ETH_HLEN: usize = 14;

/// Where a frame's time stamp came from.
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum StampSource {
    /// No stamp.
    None,
    /// The kernel's software stamp (`CLOCK_REALTIME`, taken on receive).
    Software,
    /// The NIC's raw hardware stamp (its PHC time).
    Hardware,
}

/// One `mmap`ed ring, unmapped on drop.
#[derive(Debug)]
struct Mapping {
    base: std::ptr::NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is plain shared memory owned by this value alone; the
// pointer is not tied to the thread that made it, and every access goes
// through `&self`/`&mut self` of the ring that owns the mapping.
unsafe impl Send for Mapping {}

impl Mapping {
    /// Maps `len` bytes of the ring of `fd`, `MAP_LOCKED` when the memory
    /// lock limit allows, plain `MAP_SHARED` otherwise.
    fn new(fd: &OwnedFd, len: usize, what: &str) -> Result<Mapping, SysError> {
        let map = |flags: libc::c_int| {
            // SAFETY: a fresh mapping (null hint) of a packet socket's ring;
            // the kernel checks `len` against the ring it allocated.
            let p = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    flags,
                    fd.as_raw_fd(),
                    0,
                )
            };
            if p == libc::MAP_FAILED {
                Err(io::Error::last_os_error())
            } else {
                Ok(p)
            }
        };
        let p = map(libc::MAP_SHARED | libc::MAP_LOCKED)
            .or_else(|_| map(libc::MAP_SHARED))
            .map_err(|e| match e.raw_os_error() {
                Some(libc::ENOMEM) | Some(libc::EAGAIN) | Some(libc::EPERM) => {
                    SysError::Unsupported {
                        what: format!("mapping the {len}-byte {what}"),
                        why: format!(
                            "{e}: the address space or RLIMIT_MEMLOCK (`ulimit -l`) is too \
                             small; ask for fewer or smaller blocks"
                        ),
                    }
                }
                _ => SysError::io(format!("mapping the {len}-byte {what}"), e),
            })?;
        let base = std::ptr::NonNull::new(p as *mut u8)
            .ok_or_else(|| SysError::invalid(format!("mmap of the {what} returned null")))?;
        Ok(Mapping { base, len })
    }

    fn ptr(&self) -> *mut u8 {
        self.base.as_ptr()
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: `base`/`len` are exactly what mmap returned and no slice
        // into the mapping outlives `self` (they borrow the ring).
        unsafe {
            libc::munmap(self.base.as_ptr() as *mut libc::c_void, self.len);
        }
    }
}

/// A non-blocking packet socket bound to `ifname` and `ethertype`, with
/// the ifindex: [`crate::packet::open_bound`], its permission error naming
/// a packet ring.
fn open_bound(ifname: &str, ethertype: u16) -> Result<(OwnedFd, u32), SysError> {
    crate::packet::open_bound(ifname, ethertype, "a packet ring")
}

/// An integer `SOL_PACKET` option, with an error naming it.
fn set_packet_opt(
    fd: &OwnedFd,
    name: libc::c_int,
    what: &str,
    v: libc::c_int,
) -> Result<(), SysError> {
    crate::fd::set_int(fd.as_raw_fd(), SOL_PACKET, name, v).map_err(|e| {
        if e.raw_os_error() == Some(libc::ENOPROTOOPT) {
            SysError::Unsupported {
                what: what.into(),
                why: "this kernel does not know the option".into(),
            }
        } else {
            SysError::io(format!("setting {what}"), e)
        }
    })
}

/// `PACKET_VERSION`: the ring's frame layout, `TPACKET_V2` or `TPACKET_V3`.
fn set_version(fd: &OwnedFd, version: libc::c_int) -> Result<(), SysError> {
    let what = if version == TPACKET_V3 {
        "PACKET_VERSION = TPACKET_V3"
    } else {
        "PACKET_VERSION = TPACKET_V2"
    };
    set_packet_opt(fd, PACKET_VERSION, what, version)
}

/// `setsockopt(fd, SOL_PACKET, name, &req)` for a ring request struct.
fn set_ring<T>(fd: &OwnedFd, name: libc::c_int, req: &T, what: &str) -> Result<(), SysError> {
    // SAFETY: `req` is a valid, initialised `T` (a repr(C) tpacket_req*) and
    // its exact size is passed; the kernel only reads it.
    let rc = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            SOL_PACKET,
            name,
            req as *const T as *const libc::c_void,
            size_of::<T>() as libc::socklen_t,
        )
    };
    cvt(rc).map(|_| ()).map_err(|e| match e.raw_os_error() {
        Some(libc::ENOMEM) => SysError::Unsupported {
            what: what.into(),
            why: "the kernel could not allocate the ring memory (kernel memory is short); \
                  ask for fewer or smaller blocks"
                .into(),
        },
        Some(libc::EPERM) => SysError::NeedCapability {
            cap: "CAP_NET_RAW",
            what: what.into(),
        },
        _ => SysError::io(what, e),
    })
}

/// `SO_SNDBUF` as large as allowed (forced past `wmem_max` with
/// `CAP_NET_ADMIN`), so a burst of queued frames is not cut short by the
/// socket's send budget. Best effort.
fn widen_send_buffer(fd: &OwnedFd, bytes: usize) {
    let v = bytes.min(i32::MAX as usize / 2) as libc::c_int;
    let raw = fd.as_raw_fd();
    if crate::fd::set_int(raw, libc::SOL_SOCKET, libc::SO_SNDBUFFORCE, v).is_err() {
        let _ = crate::fd::set_int(raw, libc::SOL_SOCKET, libc::SO_SNDBUF, v);
    }
}

/// Attaches a one-instruction classic BPF filter that accepts nothing, so
/// a send-only socket bound to an ethertype never queues (copies) frames
/// that arrive with that ethertype.
fn drop_all_received(fd: &OwnedFd) -> Result<(), SysError> {
    // BPF_RET | BPF_K with k = 0: keep 0 bytes, i.e. drop.
    let prog = [libc::sock_filter {
        code: 0x06,
        jt: 0,
        jf: 0,
        k: 0,
    }];
    let fprog = libc::sock_fprog {
        len: 1,
        filter: prog.as_ptr() as *mut libc::sock_filter,
    };
    // SAFETY: `fprog` points at `prog`, one valid instruction, both alive for
    // the call; the kernel copies the program.
    let rc = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_ATTACH_FILTER,
            &fprog as *const libc::sock_fprog as *const libc::c_void,
            size_of::<libc::sock_fprog>() as libc::socklen_t,
        )
    };
    cvt(rc)
        .map(|_| ())
        .map_err(|e| SysError::io("attaching the drop-all receive filter", e))
}

/// The classification of a send error shared by the TX paths: `None` for
/// "try again later" (queue or socket budget full), else the error.
fn send_error(e: io::Error, ifname: &str, what: &str) -> Option<SysError> {
    match e.raw_os_error() {
        Some(libc::EAGAIN) | Some(libc::ENOBUFS) | Some(libc::EINTR) => None,
        Some(libc::ENETDOWN) | Some(libc::ENXIO) => Some(SysError::InterfaceDown {
            name: ifname.to_string(),
        }),
        Some(libc::EMSGSIZE) => Some(SysError::io(
            format!("{what} on `{ifname}`: a frame is longer than the MTU plus the link header"),
            e,
        )),
        _ => Some(SysError::io(format!("{what} on `{ifname}`"), e)),
    }
}

/// Checks `value` lies in `lo..=hi`; the error names the setting and bound.
fn check_range(name: &str, value: usize, lo: usize, hi: usize) -> Result<(), SysError> {
    if (lo..=hi).contains(&value) {
        Ok(())
    } else {
        Err(SysError::invalid(format!(
            "{name} = {value} is out of range: it must be between {lo} and {hi}"
        )))
    }
}

/// The page size (`sysconf(_SC_PAGESIZE)`), 4096 if unknown.
fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as usize
    } else {
        4096
    }
}
