//! The `PACKET_TX_RING`: frames are written in place into slots of a ring
//! shared with the kernel, marked `TP_STATUS_SEND_REQUEST`, and one
//! `send(fd, NULL, 0)` makes the kernel transmit every marked slot in ring
//! order. The kernel sets a slot back to `TP_STATUS_AVAILABLE` once the
//! device is done with its frame (or `TP_STATUS_WRONG_FORMAT` if it
//! refused it).
//!
//! Slots use the `TPACKET_V2` layout. Without `PACKET_TX_HAS_OFF` the
//! kernel takes the frame from `tp_hdrlen - sizeof(sockaddr_ll)` =
//! `TPACKET_ALIGN(sizeof(tpacket2_hdr))` = 32 bytes into the slot
//! (`tpacket_parse_header` in `net/packet/af_packet.c`):
//!
//! ```text
//!  0          4        8            12     14     16 ...          32
//! | tp_status | tp_len | tp_snaplen | mac  | net  | (unused on TX) | frame ...
//! ```
//!
//! The kernel marks ring frames zero-copy; a device that forwards frames
//! inside the host (veth) copies each into a freshly allocated page
//! (`skb_copy_ubufs`), so there [`super::MmsgTx`] is the faster path.
//!
//! A slot the kernel refused stays where its send loop stopped; without
//! `PACKET_LOSS` (not set, so refusals are seen) the kernel resumes there
//! when that slot is next written, so [`TxRing::push_with`] only offers
//! buffers of a length the device accepts (at most MTU + 14).

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{fence, AtomicU32, Ordering};

use super::{
    check_range, drop_all_received, open_bound, page_size, send_error, set_packet_opt, set_ring,
    set_version, widen_send_buffer, Mapping, ETH_HLEN, PACKET_QDISC_BYPASS, PACKET_TX_RING,
    TPACKET_V2,
};
use crate::SysError;

/// The largest TX ring [`TxRing::open`] maps.
pub const TX_RING_MAX_BYTES: usize = 1 << 30;
const FRAME_SIZE_MIN: usize = 96;
const FRAME_SIZE_MAX: usize = 1 << 16;
const FRAME_COUNT_MAX: usize = 1 << 20;
/// `TPACKET_ALIGN(sizeof(struct tpacket2_hdr))`: where a slot's frame starts.
const DATA_OFFSET: usize = 32;

const TP_STATUS_AVAILABLE: u32 = 0;
const TP_STATUS_SEND_REQUEST: u32 = 1;
const TP_STATUS_WRONG_FORMAT: u32 = 4;

/// `struct tpacket_req`.
#[repr(C)]
struct TpacketReq {
    block_size: u32,
    block_nr: u32,
    frame_size: u32,
    frame_nr: u32,
}

/// How to build a [`TxRing`].
#[derive(Clone, Debug)]
pub struct TxRingConfig {
    /// Bytes per slot (32 of header, the rest frame): a multiple of 16,
    /// 96..=65536. Default 2048.
    pub frame_size: usize,
    /// Slots, 1..=1 048 576 (rounded up to fill whole pages); the ring is
    /// at most [`TX_RING_MAX_BYTES`]. Default 4096.
    pub frame_count: usize,
    /// `PACKET_QDISC_BYPASS`: hand frames straight to the driver.
    pub qdisc_bypass: bool,
}

impl Default for TxRingConfig {
    fn default() -> TxRingConfig {
        TxRingConfig {
            frame_size: 2048,
            frame_count: 4096,
            qdisc_bypass: false,
        }
    }
}

/// What a [`TxRing`] has done.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct TxCounters {
    /// Frames written into slots.
    pub pushed: u64,
    /// [`TxRing::flush`] calls.
    pub flushes: u64,
    /// Bytes the kernel reported sent.
    pub bytes: u64,
    /// Slots found `TP_STATUS_WRONG_FORMAT` (the kernel refused the frame).
    pub wrong_format: u64,
    /// Flushes answered EAGAIN/ENOBUFS (queue or socket budget full).
    pub would_block: u64,
}

/// A `PACKET_TX_RING` on its own `AF_PACKET` socket bound to one
/// interface. Unmaps and closes on drop.
#[derive(Debug)]
pub struct TxRing {
    map: Mapping,
    fd: OwnedFd,
    ifname: String,
    frame_size: usize,
    per_block: usize,
    block_size: usize,
    slots: usize,
    data_max: usize,
    /// Next slot to write.
    head: usize,
    /// Oldest slot handed to the kernel and not yet seen free again.
    tail: usize,
    pending: usize,
    counters: TxCounters,
}

/// The block size and count for `cfg`: blocks of whole pages holding whole
/// slots.
fn geometry(cfg: &TxRingConfig) -> Result<(usize, usize), SysError> {
    check_range(
        "tx ring frame_size",
        cfg.frame_size,
        FRAME_SIZE_MIN,
        FRAME_SIZE_MAX,
    )?;
    if cfg.frame_size % 16 != 0 {
        return Err(SysError::invalid(format!(
            "tx ring frame_size = {} must be a multiple of 16 (TPACKET_ALIGNMENT)",
            cfg.frame_size
        )));
    }
    check_range("tx ring frame_count", cfg.frame_count, 1, FRAME_COUNT_MAX)?;
    let page = page_size();
    let block_size = cfg.frame_size.div_ceil(page) * page;
    let per_block = block_size / cfg.frame_size;
    let blocks = cfg.frame_count.div_ceil(per_block);
    let total = blocks * block_size;
    if total > TX_RING_MAX_BYTES {
        return Err(SysError::invalid(format!(
            "tx ring of frame_count {} × frame_size {} needs {total} bytes, over the \
             {TX_RING_MAX_BYTES}-byte (1 GiB) limit",
            cfg.frame_count, cfg.frame_size
        )));
    }
    Ok((block_size, blocks))
}

impl TxRing {
    /// Opens the ring on `ifname`, sending frames as `ethertype` (host
    /// order; the socket receives nothing). Errors as [`super::RxRing::open`].
    pub fn open(ifname: &str, ethertype: u16, cfg: &TxRingConfig) -> Result<TxRing, SysError> {
        let (block_size, blocks) = geometry(cfg)?;
        let mtu = crate::iface::interface_info(ifname)?.mtu as usize;
        let (fd, _) = open_bound(ifname, ethertype)?;
        drop_all_received(&fd)?;
        set_version(&fd, TPACKET_V2)?;
        if cfg.qdisc_bypass {
            set_packet_opt(&fd, PACKET_QDISC_BYPASS, "PACKET_QDISC_BYPASS", 1)?;
        }
        let per_block = block_size / cfg.frame_size;
        let slots = per_block * blocks;
        let req = TpacketReq {
            block_size: block_size as u32,
            block_nr: blocks as u32,
            frame_size: cfg.frame_size as u32,
            frame_nr: slots as u32,
        };
        let total = block_size * blocks;
        let what = format!("a {total}-byte PACKET_TX_RING on `{ifname}`");
        set_ring(&fd, PACKET_TX_RING, &req, &what)?;
        let map = Mapping::new(&fd, total, "tx ring")?;
        widen_send_buffer(&fd, total);
        Ok(TxRing {
            map,
            fd,
            ifname: ifname.to_string(),
            frame_size: cfg.frame_size,
            per_block,
            block_size,
            slots,
            data_max: (cfg.frame_size - DATA_OFFSET).min(mtu + ETH_HLEN),
            head: 0,
            tail: 0,
            pending: 0,
            counters: TxCounters::default(),
        })
    }

    /// The longest frame a slot takes (slot size less header, at most the
    /// MTU plus the Ethernet header).
    pub fn max_frame_len(&self) -> usize {
        self.data_max
    }

    /// Slots in the ring.
    pub fn capacity(&self) -> usize {
        self.slots
    }

    fn slot(&self, i: usize) -> *mut u8 {
        let off = (i / self.per_block) * self.block_size + (i % self.per_block) * self.frame_size;
        // SAFETY: i < slots, so `off + frame_size` lies inside the mapping.
        unsafe { self.map.ptr().add(off) }
    }

    fn status(&self, i: usize) -> &AtomicU32 {
        // SAFETY: the slot start is 16-aligned and inside the mapping; its
        // first word is tp_status, which both sides access atomically.
        unsafe { &*(self.slot(i) as *const AtomicU32) }
    }

    /// Writes one frame into the next free slot: `f` gets a buffer of
    /// [`TxRing::max_frame_len`] bytes and returns the frame's length.
    /// False (and `f` not called) when every slot still waits for the
    /// kernel. Panics if `f` returns a length below 14 or above the buffer.
    pub fn push_with(&mut self, f: impl FnOnce(&mut [u8]) -> usize) -> bool {
        if self.pending == self.slots {
            self.reclaim();
            if self.pending == self.slots {
                return false;
            }
        }
        let p = self.slot(self.head);
        // SAFETY: the slot is ours (AVAILABLE, reclaimed in order): the
        // kernel does not touch it until we set SEND_REQUEST below; the
        // buffer lies inside the slot.
        let buf = unsafe { std::slice::from_raw_parts_mut(p.add(DATA_OFFSET), self.data_max) };
        let len = f(buf);
        assert!(
            (ETH_HLEN..=self.data_max).contains(&len),
            "TxRing::push_with: frame length {len} outside 14..={}",
            self.data_max
        );
        // SAFETY: tp_len is the u32 at offset 4 of our slot.
        unsafe { (p.add(4) as *mut u32).write(len as u32) };
        fence(Ordering::Release);
        self.status(self.head)
            .store(TP_STATUS_SEND_REQUEST, Ordering::Release);
        self.head = (self.head + 1) % self.slots;
        self.pending += 1;
        self.counters.pushed += 1;
        true
    }

    /// Takes back, in ring order, the slots the kernel has finished with;
    /// returns the free slots.
    pub fn reclaim(&mut self) -> usize {
        while self.pending > 0 {
            match self.status(self.tail).load(Ordering::Acquire) {
                TP_STATUS_AVAILABLE => {}
                TP_STATUS_WRONG_FORMAT => {
                    self.counters.wrong_format += 1;
                    self.status(self.tail)
                        .store(TP_STATUS_AVAILABLE, Ordering::Release);
                }
                _ => break,
            }
            self.tail = (self.tail + 1) % self.slots;
            self.pending -= 1;
        }
        self.free_slots()
    }

    /// Asks the kernel to send every queued slot: `send(fd, NULL, 0,
    /// MSG_DONTWAIT)`. Returns the bytes it sent; EAGAIN/ENOBUFS give 0
    /// and count in [`TxCounters::would_block`]. Reclaims finished slots.
    pub fn flush(&mut self) -> Result<usize, SysError> {
        self.counters.flushes += 1;
        // SAFETY: a null buffer of length 0 is what the TX ring expects.
        let rc =
            unsafe { libc::send(self.fd.as_raw_fd(), std::ptr::null(), 0, libc::MSG_DONTWAIT) };
        let sent = if rc < 0 {
            match send_error(
                std::io::Error::last_os_error(),
                &self.ifname,
                "flushing the tx ring",
            ) {
                None => {
                    self.counters.would_block += 1;
                    0
                }
                Some(e) => {
                    self.reclaim();
                    return Err(e);
                }
            }
        } else {
            rc as usize
        };
        self.counters.bytes += sent as u64;
        self.reclaim();
        Ok(sent)
    }

    /// Slots free to write, as of the last reclaim.
    pub fn free_slots(&self) -> usize {
        self.slots - self.pending
    }

    /// What the ring has done so far.
    pub fn counters(&self) -> TxCounters {
        self.counters
    }
}

impl AsFd for TxRing {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geometry_and_bounds() {
        let (bs, n) = geometry(&TxRingConfig::default()).unwrap();
        assert_eq!(bs % page_size(), 0);
        assert!(n * (bs / 2048) >= 4096);
        let huge = TxRingConfig {
            frame_count: 1 << 20,
            frame_size: 1 << 16,
            ..Default::default()
        };
        assert!(geometry(&huge).unwrap_err().to_string().contains("1 GiB"));
        let odd = TxRingConfig {
            frame_size: 100,
            ..Default::default()
        };
        assert!(geometry(&odd)
            .unwrap_err()
            .to_string()
            .contains("multiple of 16"));
        let none = TxRingConfig {
            frame_count: 0,
            ..Default::default()
        };
        assert!(geometry(&none)
            .unwrap_err()
            .to_string()
            .contains("frame_count"));
        assert_eq!(std::mem::size_of::<TpacketReq>(), 16);
    }
}
