//! The Session-Sender test packet: a view and a plain value.

use super::error_estimate::ErrorEstimate;
use super::layout::{field, sender_layout, Mode};
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

stamp_repr!(SenderRepr, StampSenderPacket);

impl SenderRepr {
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

    /// Nothing beyond the fields every packet starts with.
    fn emit_own(&self, _: &mut StampSenderPacket<&mut [u8]>) {}
}
