//! One transmit interface over the engine's three paths. Frames are written
//! in place (`push_with`) and go out on `flush`; a frame counts as sent only
//! once the kernel has taken it, so a frame the path could not take keeps
//! its sequence number for the next try and never shows up as loss.

use misura_sys::ring::{MmsgTx, TxRing};
use misura_sys::xdp::XdpSocket;
use misura_sys::SysError;

/// Frames handed to `sendmmsg` at once.
pub const MMSG_BATCH: usize = 64;

/// An open transmit path.
pub enum TxPath {
    /// `PACKET_TX_RING`.
    Mmap(TxRing),
    /// `sendmmsg(2)` on an `AF_PACKET` socket.
    Packet(MmsgPath),
    /// An AF_XDP socket.
    Xdp(Box<XdpSocket>),
}

/// `sendmmsg` with the frames not yet taken kept for the next flush.
pub struct MmsgPath {
    tx: MmsgTx,
    pending: usize,
}

impl MmsgPath {
    pub fn new(tx: MmsgTx) -> MmsgPath {
        MmsgPath { tx, pending: 0 }
    }
}

impl TxPath {
    /// Queue one frame written by `f` (which returns its length). False
    /// when the path has no room now: try again after a flush.
    #[inline]
    pub fn push_with(&mut self, f: impl FnOnce(&mut [u8]) -> usize) -> bool {
        match self {
            TxPath::Mmap(r) => r.push_with(f),
            TxPath::Xdp(x) => x.tx_push_with(f),
            TxPath::Packet(m) => {
                if m.pending == MMSG_BATCH {
                    return false;
                }
                let i = m.pending;
                let n = f(m.tx.frame_mut(i));
                m.tx.set_len(i, n);
                m.pending += 1;
                true
            }
        }
    }

    /// Hand what is queued to the kernel. For `sendmmsg`, returns the
    /// frames taken; the rings count theirs when they are pushed.
    pub fn flush(&mut self) -> Result<usize, SysError> {
        match self {
            TxPath::Mmap(r) => r.flush(),
            TxPath::Xdp(x) => x.tx_flush(),
            TxPath::Packet(m) => {
                if m.pending == 0 {
                    return Ok(0);
                }
                let n = m.pending;
                let took = m.tx.send(n)?;
                m.pending = n - took.min(n);
                Ok(took)
            }
        }
    }

    /// Forget the frames `sendmmsg` did not take (their sequence numbers
    /// are given back by the caller).
    pub fn drop_unsent(&mut self) {
        if let TxPath::Packet(m) = self {
            m.pending = 0;
        }
    }
}
