//! What the kernel and one interface offer the high-rate paths, found by
//! trying each on a throw-away socket (a small ring, the option, a fanout
//! group with a kernel-chosen id), and the interface's queue counts, so
//! the frame engine can pick the best path and say why another is missing.

use std::os::fd::{AsRawFd, OwnedFd};

use super::rx::TpacketReq3;
use super::{
    open_bound, page_size, set_packet_opt, set_ring, set_version, PACKET_FANOUT,
    PACKET_QDISC_BYPASS, PACKET_RX_RING, PACKET_TX_RING, TPACKET_V2, TPACKET_V3,
};
use crate::cmsg::SOL_PACKET;
use crate::sys::{self, EthtoolErr};
use crate::SysError;

/// The ethertype probe sockets bind to (IEEE local experimental 2); they
/// live a few microseconds and receive nothing of interest.
const PROBE_ETHERTYPE: u16 = 0x88B6;
const ETHTOOL_GCHANNELS: u32 = 0x3c;
const PACKET_FANOUT_LB: libc::c_int = 1;
const PACKET_FANOUT_FLAG_UNIQUEID: libc::c_int = 0x2000;

/// Whether one path works, and if not, why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Availability {
    /// The kernel accepted it.
    Available,
    /// It failed; the error's text.
    Missing(String),
}

impl Availability {
    pub fn is_available(&self) -> bool {
        matches!(self, Availability::Available)
    }

    fn of(r: Result<(), SysError>) -> Availability {
        match r {
            Ok(()) => Availability::Available,
            Err(e) => Availability::Missing(e.to_string()),
        }
    }
}

/// What [`probe`] found for one interface.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Capabilities {
    /// A `TPACKET_V3` `PACKET_RX_RING` ([`super::RxRing`]).
    pub rx_ring_v3: Availability,
    /// A `TPACKET_V2` `PACKET_TX_RING` ([`super::TxRing`]).
    pub tx_ring: Availability,
    /// `PACKET_QDISC_BYPASS`.
    pub qdisc_bypass: Availability,
    /// `PACKET_FANOUT` (spreading one stream over several rings).
    pub fanout: Availability,
    /// Receive queues (`ETHTOOL_GCHANNELS` rx + combined), if reported.
    pub rx_queues: Option<u32>,
    /// Transmit queues (tx + combined), if reported.
    pub tx_queues: Option<u32>,
}

/// Tries each path on `ifname` in the calling thread's network namespace.
/// Never fails: a path that cannot be opened at all (no such interface, no
/// `CAP_NET_RAW`) is `Missing` with that reason.
pub fn probe(ifname: &str) -> Capabilities {
    let (rx_queues, tx_queues) = channels(ifname).unwrap_or((None, None));
    Capabilities {
        rx_ring_v3: Availability::of(try_rx_ring(ifname)),
        tx_ring: Availability::of(try_tx_ring(ifname)),
        qdisc_bypass: Availability::of(open_bound(ifname, PROBE_ETHERTYPE).and_then(|(fd, _)| {
            set_packet_opt(&fd, PACKET_QDISC_BYPASS, "PACKET_QDISC_BYPASS", 1)
        })),
        fanout: Availability::of(try_fanout(ifname)),
        rx_queues,
        tx_queues,
    }
}

fn try_rx_ring(ifname: &str) -> Result<(), SysError> {
    let (fd, _) = open_bound(ifname, PROBE_ETHERTYPE)?;
    set_version(&fd, TPACKET_V3)?;
    let req = TpacketReq3::one_page(page_size());
    set_ring(&fd, PACKET_RX_RING, &req, "a one-page TPACKET_V3 rx ring")
}

fn try_tx_ring(ifname: &str) -> Result<(), SysError> {
    let (fd, _) = open_bound(ifname, PROBE_ETHERTYPE)?;
    set_version(&fd, TPACKET_V2)?;
    let page = page_size() as u32;
    // struct tpacket_req: one page of 2048-byte slots.
    let req: [u32; 4] = [page, 1, 2048, page / 2048];
    set_ring(&fd, PACKET_TX_RING, &req, "a one-page PACKET_TX_RING")
}

fn try_fanout(ifname: &str) -> Result<(), SysError> {
    let (fd, _) = open_bound(ifname, PROBE_ETHERTYPE)?;
    join_unique_group(&fd)
}

/// Joins a new fanout group whose id the kernel picks (left on close).
fn join_unique_group(fd: &OwnedFd) -> Result<(), SysError> {
    let v = (PACKET_FANOUT_LB | PACKET_FANOUT_FLAG_UNIQUEID) << 16;
    crate::fd::set_int(fd.as_raw_fd(), SOL_PACKET, PACKET_FANOUT, v).map_err(|e| {
        if e.raw_os_error() == Some(libc::ENOPROTOOPT) {
            SysError::Unsupported {
                what: "PACKET_FANOUT".into(),
                why: "this kernel does not know the option".into(),
            }
        } else {
            SysError::io("joining a PACKET_FANOUT group", e)
        }
    })
}

/// `struct ethtool_channels`.
#[repr(C)]
#[derive(Default)]
struct EthtoolChannels {
    cmd: u32,
    max_rx: u32,
    max_tx: u32,
    max_other: u32,
    max_combined: u32,
    rx_count: u32,
    tx_count: u32,
    other_count: u32,
    combined_count: u32,
}

/// Queue counts from `ETHTOOL_GCHANNELS` (asked through a socket, so right
/// inside a namespace); `None` when the driver does not say.
fn channels(ifname: &str) -> Result<(Option<u32>, Option<u32>), SysError> {
    let fd = sys::control_socket()?;
    let mut ch = EthtoolChannels {
        cmd: ETHTOOL_GCHANNELS,
        ..Default::default()
    };
    // SAFETY: `EthtoolChannels` is the kernel's `struct ethtool_channels`,
    // the struct ETHTOOL_GCHANNELS reads and writes.
    match unsafe { sys::ethtool(&fd, ifname, &mut ch) } {
        Ok(()) => {
            let rx = ch.rx_count + ch.combined_count;
            let tx = ch.tx_count + ch.combined_count;
            Ok(((rx > 0).then_some(rx), (tx > 0).then_some(tx)))
        }
        Err(EthtoolErr::Name(e)) => Err(e),
        Err(EthtoolErr::Os(_)) => Ok((None, None)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_interface_is_named() {
        let c = probe("misura-nope7");
        match &c.rx_ring_v3 {
            Availability::Missing(why) => assert!(why.contains("misura-nope7"), "{why}"),
            other => panic!("{other:?}"),
        }
        assert!(!c.tx_ring.is_available() && !c.fanout.is_available());
        assert_eq!((c.rx_queues, c.tx_queues), (None, None));
    }

    #[test]
    fn channels_struct_size() {
        assert_eq!(std::mem::size_of::<EthtoolChannels>(), 36);
    }
}
