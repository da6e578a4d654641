//! The Session-Sender test packet: a view and a plain value.

use super::error_estimate::ErrorEstimate;
use super::layout::{check_out, field, sender_layout, Mode};
use crate::WireError;

stamp_view!(
    /// A read/write view of a Session-Sender test packet (see the module docs
    /// for the layouts). `new_checked` only checks the length for `mode`.
    StampSenderPacket,
    field::Sender,
    sender_layout
);

impl<T: AsRef<[u8]> + AsMut<[u8]>> StampSenderPacket<T> {
    /// Zeroes every MBZ field of the base packet.
    pub fn clear_mbz(&mut self) {
        let b = self.buffer.as_mut();
        match self.mode {
            Mode::Unauthenticated => b[16..44].fill(0),
            Mode::Authenticated => {
                b[4..16].fill(0);
                b[28..96].fill(0);
            }
        }
    }
}

/// A Session-Sender base packet as a plain value. TLVs are handled by
/// [`Tlvs`] / [`TlvRepr`] separately.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct SenderRepr {
    pub seq: u32,
    /// Raw timestamp in the format given by `error_estimate.format()`; see
    /// [`to_wire`] / [`from_wire`].
    pub timestamp: [u8; 8],
    pub error_estimate: ErrorEstimate,
    pub ssid: u16,
    /// `None`: unauthenticated mode. `Some`: authenticated mode with this
    /// HMAC field (zeros while building; see [`hmac_covered`]).
    pub hmac: Option<[u8; 16]>,
}

impl SenderRepr {
    pub fn mode(&self) -> Mode {
        Mode::of_hmac(&self.hmac)
    }

    /// Parses the base packet at the start of `bytes` (trailing TLVs are
    /// allowed and ignored; MBZ contents are ignored).
    pub fn parse(bytes: &[u8], mode: Mode) -> Result<Self, WireError> {
        let p = StampSenderPacket::new_checked(bytes, mode)?;
        Ok(SenderRepr {
            seq: p.seq(),
            timestamp: p.timestamp(),
            error_estimate: p.error_estimate(),
            ssid: p.ssid(),
            hmac: p.hmac(),
        })
    }

    /// Bytes `emit` writes: 44 or 112.
    pub fn buffer_len(&self) -> usize {
        self.mode().base_len()
    }

    /// Writes the base packet (MBZ zeroed) to the start of `buf` and returns
    /// its length. Bytes beyond are untouched, as is all of `buf` on error.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        let n = self.buffer_len();
        check_out(buf.len(), n)?;
        let mut p = StampSenderPacket::new_unchecked(&mut buf[..n], self.mode());
        p.put_base(
            self.seq,
            self.timestamp,
            self.error_estimate,
            self.ssid,
            self.hmac,
        );
        Ok(n)
    }
}
