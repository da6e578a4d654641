//! The `TPACKET_V3` receive ring: the kernel writes frames back to back
//! into blocks, stamps each in its `tpacket3_hdr`, and hands a block to
//! user space when it is full or its retire timer fires. [`RxRing::poll`]
//! walks the blocks the kernel has handed over, in ring order, without a
//! copy or a system call per frame, and gives each block back.
//!
//! Block layout (`struct tpacket_block_desc` + `tpacket_hdr_v1`):
//!
//! ```text
//!  0       4                8              12          16                20
//! +-------+----------------+--------------+-----------+-----------------+---
//! |version|offset_to_priv  | block_status | num_pkts  | offset_to_first | ...
//! +-------+----------------+--------------+-----------+-----------------+---
//! frame (tpacket3_hdr, 16-aligned), then sockaddr_ll at +48, data at tp_mac:
//!  0            4      8       12          16     20        24     26     28
//! | next_offset | sec  | nsec  | snaplen   | len  | status  | mac  | net  |
//!  28      32          36
//! | rxhash | vlan_tci  | vlan_tpid | pad ...
//! ```

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{fence, AtomicU32, Ordering};

use super::{
    check_range, open_bound, page_size, set_packet_opt, set_ring, set_version, Mapping,
    StampSource, PACKET_FANOUT, PACKET_IGNORE_OUTGOING, PACKET_OUTGOING, PACKET_RX_RING,
    PACKET_STATISTICS, PACKET_TIMESTAMP, TPACKET_V3,
};
use crate::cmsg::{
    SOF_RAW_HARDWARE, SOF_RX_HARDWARE, SOF_RX_SOFTWARE, SOF_SOFTWARE, SOL_PACKET,
    SO_TIMESTAMPING_OLD,
};
use crate::SysError;

/// The largest ring [`RxRing::open`] maps (block_size × block_count).
pub const RX_RING_MAX_BYTES: usize = 1 << 30;
const BLOCK_SIZE_MAX: usize = 1 << 28;
const BLOCK_COUNT_MAX: usize = 1 << 16;
const RETIRE_TIMEOUT_MAX_MS: u32 = 10_000;
/// `TPACKET3_HDRLEN` rounded up to `TPACKET_ALIGNMENT`: the smallest frame.
const FRAME_SIZE_MIN: usize = 80;

const TP_STATUS_KERNEL: u32 = 0;
const TP_STATUS_USER: u32 = 1;
const TP_STATUS_VLAN_VALID: u32 = 1 << 4;
const TP_STATUS_TS_SOFTWARE: u32 = 1 << 29;
const TP_STATUS_TS_RAW_HARDWARE: u32 = 1 << 31;

/// `TPACKET_ALIGN(sizeof(struct tpacket3_hdr))`: where the `sockaddr_ll`
/// of a frame starts; its `sll_pkttype` is 10 bytes further.
const SLL_OFFSET: usize = 48;
const SLL_PKTTYPE: usize = 10;

/// `struct tpacket_req3`.
#[repr(C)]
pub(super) struct TpacketReq3 {
    block_size: u32,
    block_nr: u32,
    frame_size: u32,
    frame_nr: u32,
    retire_blk_tov: u32,
    sizeof_priv: u32,
    feature_req_word: u32,
}

impl TpacketReq3 {
    /// One block of one page of 2048-byte frames, the smallest V3 ring.
    pub(super) fn one_page(page: usize) -> TpacketReq3 {
        TpacketReq3 {
            block_size: page as u32,
            block_nr: 1,
            frame_size: 2048,
            frame_nr: (page / 2048) as u32,
            retire_blk_tov: 0,
            sizeof_priv: 0,
            feature_req_word: 0,
        }
    }
}

/// `struct tpacket3_hdr` up to the VLAN fields.
#[repr(C)]
#[derive(Copy, Clone)]
struct Tpacket3Hdr {
    next_offset: u32,
    sec: u32,
    nsec: u32,
    snaplen: u32,
    len: u32,
    status: u32,
    mac: u16,
    net: u16,
    rxhash: u32,
    vlan_tci: u32,
    vlan_tpid: u16,
    padding: u16,
}

/// `PACKET_FANOUT` modes: how the kernel spreads the frames of one group
/// over its sockets.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FanoutMode {
    /// By the CPU that received the frame (`PACKET_FANOUT_CPU`).
    Cpu,
    /// By the flow hash (`PACKET_FANOUT_HASH`).
    Hash,
    /// Round robin (`PACKET_FANOUT_LB`).
    LoadBalance,
    /// By the receive queue (`PACKET_FANOUT_QM`).
    QueueMapping,
}

impl FanoutMode {
    fn kernel_value(self) -> libc::c_int {
        match self {
            FanoutMode::Hash => 0,
            FanoutMode::LoadBalance => 1,
            FanoutMode::Cpu => 2,
            FanoutMode::QueueMapping => 5,
        }
    }
}

/// A fanout group: rings of one process (same interface and ethertype)
/// joined under one `group` id share the frames.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Fanout {
    /// Group id, unique per network namespace.
    pub group: u16,
    /// How frames are spread.
    pub mode: FanoutMode,
}

/// How to build an [`RxRing`].
#[derive(Clone, Debug)]
pub struct RxRingConfig {
    /// Bytes per block: a power of two, a multiple of the page size, at
    /// most 256 MiB. Default 1 MiB.
    pub block_size: usize,
    /// Blocks in the ring, 1..=65536; `block_size * block_count` at most
    /// [`RX_RING_MAX_BYTES`]. Default 64.
    pub block_count: usize,
    /// `tp_frame_size`: the kernel's frame-count hint (V3 packs frames by
    /// their real size). Multiple of 16, 80..=block_size. Default 2048.
    pub frame_size: usize,
    /// A block that is not full is handed over after this many ms (0 =
    /// the kernel's choice), at most 10 000. Default 1.
    pub retire_timeout_ms: u32,
    /// Ask for raw hardware RX stamps (the device must have hardware
    /// stamping switched on, see [`crate::tsinfo::enable_hw_timestamping`]).
    pub hardware_stamps: bool,
    /// Join a fanout group.
    pub fanout: Option<Fanout>,
    /// `PACKET_IGNORE_OUTGOING`: skip frames this host sends. Default true.
    pub ignore_outgoing: bool,
}

impl Default for RxRingConfig {
    fn default() -> RxRingConfig {
        RxRingConfig {
            block_size: 1 << 20,
            block_count: 64,
            frame_size: 2048,
            retire_timeout_ms: 1,
            hardware_stamps: false,
            fanout: None,
            ignore_outgoing: true,
        }
    }
}

/// One received frame, borrowed from the ring.
#[derive(Debug)]
pub struct RingFrame<'a> {
    /// The captured bytes (`tp_snaplen`), from the Ethernet header on.
    pub data: &'a [u8],
    /// The frame's length on the wire (`tp_len`).
    pub wire_len: u32,
    /// The stamp (`tp_sec`/`tp_nsec`); `None` when `tp_status` says the
    /// kernel had none.
    pub stamp_at: Option<misura_time::Instant>,
    /// What clock the stamp is from.
    pub stamp: StampSource,
    /// The VLAN tag the device stripped, if any.
    pub vlan_tci: Option<u16>,
    /// The frame was sent by this host (`PACKET_OUTGOING`).
    pub outgoing: bool,
}

/// `PACKET_STATISTICS` accumulated since the ring was opened.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct RingStats {
    /// Frames that reached the socket (delivered to the ring plus dropped).
    pub packets: u64,
    /// Frames dropped because the ring had no room.
    pub drops: u64,
    /// Times the ring was frozen (every block held by user space).
    pub freeze_q: u64,
}

/// A `TPACKET_V3` receive ring on an `AF_PACKET` socket bound to one
/// interface and ethertype. Unmaps and closes on drop.
#[derive(Debug)]
pub struct RxRing {
    map: Mapping,
    fd: OwnedFd,
    ifname: String,
    block_size: usize,
    block_count: usize,
    next_block: usize,
    stamp: StampSource,
    totals: RingStats,
}

fn validate(cfg: &RxRingConfig) -> Result<(), SysError> {
    let page = page_size();
    check_range("rx ring block_size", cfg.block_size, page, BLOCK_SIZE_MAX)?;
    if !cfg.block_size.is_power_of_two() {
        return Err(SysError::invalid(format!(
            "rx ring block_size = {} must be a power of two (and a multiple of the {page}-byte page)",
            cfg.block_size
        )));
    }
    check_range("rx ring block_count", cfg.block_count, 1, BLOCK_COUNT_MAX)?;
    let total = cfg.block_size.saturating_mul(cfg.block_count);
    if total > RX_RING_MAX_BYTES {
        return Err(SysError::invalid(format!(
            "rx ring of block_size {} × block_count {} = {total} bytes exceeds the \
             {RX_RING_MAX_BYTES}-byte (1 GiB) limit",
            cfg.block_size, cfg.block_count
        )));
    }
    check_range(
        "rx ring frame_size",
        cfg.frame_size,
        FRAME_SIZE_MIN,
        cfg.block_size,
    )?;
    if cfg.frame_size % 16 != 0 {
        return Err(SysError::invalid(format!(
            "rx ring frame_size = {} must be a multiple of 16 (TPACKET_ALIGNMENT)",
            cfg.frame_size
        )));
    }
    check_range(
        "rx ring retire_timeout_ms",
        cfg.retire_timeout_ms as usize,
        0,
        RETIRE_TIMEOUT_MAX_MS as usize,
    )
}

impl RxRing {
    /// Opens the ring on `ifname` for frames of `ethertype` (host order).
    /// Fails with `NoSuchInterface`, `NeedCapability`, an error naming the
    /// bound a size in `cfg` breaks, or `Unsupported` naming the memory
    /// limit that refused the ring.
    pub fn open(ifname: &str, ethertype: u16, cfg: &RxRingConfig) -> Result<RxRing, SysError> {
        validate(cfg)?;
        let (fd, _) = open_bound(ifname, ethertype)?;
        set_version(&fd, TPACKET_V3)?;
        if cfg.ignore_outgoing {
            set_packet_opt(&fd, PACKET_IGNORE_OUTGOING, "PACKET_IGNORE_OUTGOING", 1)?;
        }
        let stamp = enable_stamps(&fd, ifname, cfg.hardware_stamps)?;
        let per_block = cfg.block_size / cfg.frame_size;
        let req = TpacketReq3 {
            block_size: cfg.block_size as u32,
            block_nr: cfg.block_count as u32,
            frame_size: cfg.frame_size as u32,
            frame_nr: (per_block * cfg.block_count) as u32,
            retire_blk_tov: cfg.retire_timeout_ms,
            sizeof_priv: 0,
            feature_req_word: 0,
        };
        let total = cfg.block_size * cfg.block_count;
        let what = format!("a {total}-byte TPACKET_V3 rx ring on `{ifname}`");
        set_ring(&fd, PACKET_RX_RING, &req, &what)?;
        let map = Mapping::new(&fd, total, "rx ring")?;
        if let Some(f) = cfg.fanout {
            let v = libc::c_int::from(f.group) | (f.mode.kernel_value() << 16);
            crate::fd::set_int(fd.as_raw_fd(), SOL_PACKET, PACKET_FANOUT, v).map_err(|e| {
                SysError::io(
                    format!(
                        "joining fanout group {} ({:?}) on `{ifname}` (a group of another \
                         mode, interface or ethertype already uses that id?)",
                        f.group, f.mode
                    ),
                    e,
                )
            })?;
        }
        Ok(RxRing {
            map,
            fd,
            ifname: ifname.to_string(),
            block_size: cfg.block_size,
            block_count: cfg.block_count,
            next_block: 0,
            stamp,
            totals: RingStats::default(),
        })
    }

    /// What stamps the kernel was asked for and accepted.
    pub fn timestamping(&self) -> StampSource {
        self.stamp
    }

    /// Walks every block the kernel has handed to user space (at most one
    /// lap of the ring), calling `f` per frame in arrival order, and gives
    /// each block back. `timeout_ms` 0: do not wait; > 0: if nothing is
    /// ready, `poll(2)` for at most that long, then walk again. Returns the
    /// frames seen.
    pub fn poll(
        &mut self,
        timeout_ms: i32,
        mut f: impl FnMut(&RingFrame<'_>),
    ) -> Result<usize, SysError> {
        let n = self.walk(&mut f);
        if n > 0 || timeout_ms <= 0 {
            return Ok(n);
        }
        let mut pfd = libc::pollfd {
            fd: self.fd.as_raw_fd(),
            events: libc::POLLIN | libc::POLLRDNORM,
            revents: 0,
        };
        // SAFETY: `pfd` is a valid pollfd alive for the call; nfds is 1.
        let rc = unsafe { libc::poll(&mut pfd, 1, timeout_ms) };
        if rc < 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EINTR) {
                return Err(SysError::io(
                    format!("waiting on the rx ring of `{}`", self.ifname),
                    e,
                ));
            }
        }
        Ok(self.walk(&mut f))
    }

    fn block_status(&self, i: usize) -> &AtomicU32 {
        // SAFETY: block `i` < block_count lies inside the mapping; its
        // page-aligned base plus 8 is 4-aligned; the kernel and we access
        // block_status only atomically (the kernel with smp barriers).
        unsafe { &*(self.map.ptr().add(i * self.block_size + 8) as *const AtomicU32) }
    }

    fn walk(&mut self, f: &mut impl FnMut(&RingFrame<'_>)) -> usize {
        let mut seen = 0;
        for _ in 0..self.block_count {
            let i = self.next_block;
            if self.block_status(i).load(Ordering::Acquire) & TP_STATUS_USER == 0 {
                break;
            }
            // SAFETY: block `i` is inside the mapping and user space owns it
            // until block_status goes back to TP_STATUS_KERNEL below.
            let block = unsafe {
                std::slice::from_raw_parts(self.map.ptr().add(i * self.block_size), self.block_size)
            };
            seen += walk_block(block, f);
            fence(Ordering::Release);
            self.block_status(i)
                .store(TP_STATUS_KERNEL, Ordering::Release);
            self.next_block = (i + 1) % self.block_count;
        }
        seen
    }

    /// `PACKET_STATISTICS` since open (the kernel resets its counters on
    /// each read; this sums them).
    pub fn stats(&mut self) -> Result<RingStats, SysError> {
        let mut st = [0u32; 3];
        let mut len = std::mem::size_of_val(&st) as libc::socklen_t;
        // SAFETY: `st` (struct tpacket_stats_v3: three u32) and `len` are
        // valid and writable; `len` holds the buffer size.
        let rc = unsafe {
            libc::getsockopt(
                self.fd.as_raw_fd(),
                SOL_PACKET,
                PACKET_STATISTICS,
                st.as_mut_ptr() as *mut libc::c_void,
                &mut len,
            )
        };
        crate::fd::cvt(rc).map_err(|e| {
            SysError::io(format!("reading PACKET_STATISTICS of `{}`", self.ifname), e)
        })?;
        self.totals.packets += u64::from(st[0]);
        self.totals.drops += u64::from(st[1]);
        self.totals.freeze_q += u64::from(st[2]);
        Ok(self.totals)
    }
}

impl AsFd for RxRing {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

/// Calls `f` on every frame of one user-owned block; returns how many.
/// Offsets come from the kernel but are checked against the block, so a
/// bad one ends the walk instead of reading outside it.
fn walk_block(block: &[u8], f: &mut impl FnMut(&RingFrame<'_>)) -> usize {
    let word =
        |at: usize| u32::from_ne_bytes([block[at], block[at + 1], block[at + 2], block[at + 3]]);
    let num = word(12) as usize;
    let mut at = word(16) as usize;
    let hdr_len = std::mem::size_of::<Tpacket3Hdr>();
    let mut seen = 0;
    while seen < num && at % 4 == 0 && at + SLL_OFFSET + SLL_PKTTYPE < block.len() && at >= 20 {
        // SAFETY: `at + hdr_len` is inside `block` (checked above, the sll
        // lies past the header); read_unaligned has no alignment needs.
        let h: Tpacket3Hdr =
            unsafe { std::ptr::read_unaligned(block.as_ptr().add(at) as *const Tpacket3Hdr) };
        debug_assert!(hdr_len <= SLL_OFFSET);
        let start = at + usize::from(h.mac);
        let Some(data) = block.get(start..start + h.snaplen as usize) else {
            break;
        };
        let stamp = if h.status & TP_STATUS_TS_RAW_HARDWARE != 0 {
            StampSource::Hardware
        } else if h.status & TP_STATUS_TS_SOFTWARE != 0 {
            StampSource::Software
        } else {
            StampSource::None
        };
        f(&RingFrame {
            data,
            wire_len: h.len,
            stamp_at: (stamp != StampSource::None).then(|| {
                misura_time::Instant::from_ns(i64::from(h.sec) * 1_000_000_000 + i64::from(h.nsec))
            }),
            stamp,
            vlan_tci: (h.status & TP_STATUS_VLAN_VALID != 0).then_some(h.vlan_tci as u16),
            outgoing: block[at + SLL_OFFSET + SLL_PKTTYPE] == PACKET_OUTGOING,
        });
        seen += 1;
        if h.next_offset == 0 {
            break;
        }
        at += h.next_offset as usize;
    }
    seen
}

/// `SO_TIMESTAMPING` (software RX always; raw hardware when asked and the
/// device reports it), and `PACKET_TIMESTAMP` so ring frames carry the
/// hardware stamp. Returns the source ring frames will carry.
fn enable_stamps(fd: &OwnedFd, ifname: &str, hardware: bool) -> Result<StampSource, SysError> {
    let hw = hardware
        && crate::tsinfo::get_ts_info_with(fd, ifname)
            .map(|c| c.hw_rx())
            .unwrap_or(true);
    let mut flags = SOF_RX_SOFTWARE | SOF_SOFTWARE;
    if hw {
        flags |= SOF_RX_HARDWARE | SOF_RAW_HARDWARE;
    }
    crate::fd::set_int(
        fd.as_raw_fd(),
        libc::SOL_SOCKET,
        SO_TIMESTAMPING_OLD,
        flags as libc::c_int,
    )
    .map_err(|e| {
        SysError::io(
            format!("enabling SO_TIMESTAMPING on the rx ring of `{ifname}`"),
            e,
        )
    })?;
    if hw {
        set_packet_opt(
            fd,
            PACKET_TIMESTAMP,
            "PACKET_TIMESTAMP",
            SOF_RAW_HARDWARE as libc::c_int,
        )?;
        return Ok(StampSource::Hardware);
    }
    Ok(StampSource::Software)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_bounded() {
        let ok = RxRingConfig::default();
        assert!(validate(&ok).is_ok());
        let big = RxRingConfig {
            block_count: 2048,
            ..ok.clone()
        };
        let e = validate(&big).unwrap_err().to_string();
        assert!(e.contains("1 GiB"), "{e}");
        let odd = RxRingConfig {
            block_size: 3 << 12,
            ..ok.clone()
        };
        assert!(validate(&odd)
            .unwrap_err()
            .to_string()
            .contains("power of two"));
        let tiny = RxRingConfig {
            frame_size: 64,
            ..ok.clone()
        };
        assert!(validate(&tiny)
            .unwrap_err()
            .to_string()
            .contains("frame_size"));
        let slow = RxRingConfig {
            retire_timeout_ms: 60_000,
            ..ok
        };
        assert!(validate(&slow)
            .unwrap_err()
            .to_string()
            .contains("retire_timeout_ms"));
    }

    #[test]
    fn header_layout_matches_the_kernel() {
        assert_eq!(std::mem::size_of::<TpacketReq3>(), 28);
        assert_eq!(std::mem::size_of::<Tpacket3Hdr>(), 40);
    }
}
