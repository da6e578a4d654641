//! The Session-Reflector test packet: a view and a plain value.

use super::error_estimate::ErrorEstimate;
use super::layout::{field, rd16, rd32, rd8x, reflector_layout, Mode};
use crate::WireError;

stamp_view!(
    /// A read/write view of a Session-Reflector test packet (see the module
    /// docs for the layouts). `new_checked` only checks the length for `mode`.
    StampReflectorPacket,
    field::Reflector,
    reflector_layout
);

/// The fields only the reflector's packet has.
impl<T: AsRef<[u8]>> StampReflectorPacket<T> {
    /// When the reflector received the sender's packet (same format as
    /// `timestamp`, i.e. the reflector's Error Estimate Z bit).
    pub fn receive_timestamp(&self) -> [u8; 8] {
        rd8x(self.buffer.as_ref(), self.l().receive_timestamp.start)
    }

    pub fn sender_seq(&self) -> u32 {
        rd32(self.buffer.as_ref(), self.l().sender_seq.start)
    }

    pub fn sender_timestamp(&self) -> [u8; 8] {
        rd8x(self.buffer.as_ref(), self.l().sender_timestamp.start)
    }

    pub fn sender_error_estimate(&self) -> ErrorEstimate {
        ErrorEstimate(rd16(
            self.buffer.as_ref(),
            self.l().sender_error_estimate.start,
        ))
    }

    /// TTL / Hop Limit of the sender's packet as received by the reflector.
    pub fn sender_ttl(&self) -> u8 {
        self.buffer.as_ref()[self.l().sender_ttl]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> StampReflectorPacket<T> {
    pub fn set_receive_timestamp(&mut self, v: [u8; 8]) {
        self.put(self.l().receive_timestamp.clone(), &v);
    }

    pub fn set_sender_seq(&mut self, v: u32) {
        self.put(self.l().sender_seq.clone(), &v.to_be_bytes());
    }

    pub fn set_sender_timestamp(&mut self, v: [u8; 8]) {
        self.put(self.l().sender_timestamp.clone(), &v);
    }

    pub fn set_sender_error_estimate(&mut self, v: ErrorEstimate) {
        self.put(self.l().sender_error_estimate.clone(), &v.0.to_be_bytes());
    }

    pub fn set_sender_ttl(&mut self, v: u8) {
        let at = self.l().sender_ttl;
        self.buffer.as_mut()[at] = v;
    }

    /// Zeroes every MBZ field of the base packet.
    pub fn clear_mbz(&mut self) {
        let b = self.buffer.as_mut();
        match self.mode {
            Mode::Unauthenticated => {
                b[38..40].fill(0);
                b[41..44].fill(0);
            }
            Mode::Authenticated => {
                b[4..16].fill(0);
                b[28..32].fill(0);
                b[40..48].fill(0);
                b[52..64].fill(0);
                b[74..80].fill(0);
                b[81..96].fill(0);
            }
        }
    }
}

/// A Session-Reflector base packet as a plain value.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct ReflectorRepr {
    pub seq: u32,
    pub timestamp: [u8; 8],
    pub error_estimate: ErrorEstimate,
    pub ssid: u16,
    pub receive_timestamp: [u8; 8],
    pub sender_seq: u32,
    pub sender_timestamp: [u8; 8],
    pub sender_error_estimate: ErrorEstimate,
    pub sender_ttl: u8,
    /// `None`: unauthenticated mode; `Some`: authenticated, with this HMAC.
    pub hmac: Option<[u8; 16]>,
}

stamp_repr!(ReflectorRepr, StampReflectorPacket);

impl ReflectorRepr {
    pub fn parse(bytes: &[u8], mode: Mode) -> Result<Self, WireError> {
        let p = StampReflectorPacket::new_checked(bytes, mode)?;
        Ok(ReflectorRepr {
            seq: p.seq(),
            timestamp: p.timestamp(),
            error_estimate: p.error_estimate(),
            ssid: p.ssid(),
            receive_timestamp: p.receive_timestamp(),
            sender_seq: p.sender_seq(),
            sender_timestamp: p.sender_timestamp(),
            sender_error_estimate: p.sender_error_estimate(),
            sender_ttl: p.sender_ttl(),
            hmac: p.hmac(),
        })
    }

    /// The reflector's own fields, after those every packet starts with.
    fn emit_own(&self, p: &mut StampReflectorPacket<&mut [u8]>) {
        p.set_receive_timestamp(self.receive_timestamp);
        p.set_sender_seq(self.sender_seq);
        p.set_sender_timestamp(self.sender_timestamp);
        p.set_sender_error_estimate(self.sender_error_estimate);
        p.set_sender_ttl(self.sender_ttl);
    }
}
