//! The Session-Sender test packet: a view and a plain value.

use super::error_estimate::ErrorEstimate;
use super::layout::{
    check_len, check_out, field, rd16, rd16x, rd32, rd8x, sender_layout, Mode, HMAC_FIELD,
};
use super::tlv_repr::Tlvs;
use crate::WireError;

/// A read/write view of a Session-Sender test packet (see the module docs
/// for the layouts). `new_checked` only checks the length for `mode`.
#[derive(Debug, Clone)]
pub struct StampSenderPacket<T: AsRef<[u8]>> {
    buffer: T,
    mode: Mode,
}

impl<T: AsRef<[u8]>> StampSenderPacket<T> {
    /// Wraps without checking; accessors panic on a buffer shorter than
    /// `mode.base_len()`.
    pub fn new_unchecked(buffer: T, mode: Mode) -> Self {
        StampSenderPacket { buffer, mode }
    }

    /// Wraps a buffer of at least `mode.base_len()` bytes; afterwards no
    /// accessor can panic.
    pub fn new_checked(buffer: T, mode: Mode) -> Result<Self, WireError> {
        check_len(buffer.as_ref().len(), mode.base_len())?;
        Ok(Self::new_unchecked(buffer, mode))
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    fn l(&self) -> &'static field::Sender {
        sender_layout(self.mode)
    }

    pub fn seq(&self) -> u32 {
        rd32(self.buffer.as_ref(), self.l().seq.start)
    }

    pub fn timestamp(&self) -> [u8; 8] {
        rd8x(self.buffer.as_ref(), self.l().timestamp.start)
    }

    pub fn error_estimate(&self) -> ErrorEstimate {
        ErrorEstimate(rd16(self.buffer.as_ref(), self.l().error_estimate.start))
    }

    /// Session-Sender Identifier (RFC 8972 §3; MBZ in plain RFC 8762).
    pub fn ssid(&self) -> u16 {
        rd16(self.buffer.as_ref(), self.l().ssid.start)
    }

    /// The HMAC field; `None` in unauthenticated mode.
    pub fn hmac(&self) -> Option<[u8; 16]> {
        match self.mode {
            Mode::Authenticated => Some(rd16x(self.buffer.as_ref(), HMAC_FIELD.start)),
            Mode::Unauthenticated => None,
        }
    }

    /// The bytes after the base packet (the TLV area; may be empty).
    pub fn tlv_bytes(&self) -> &[u8] {
        &self.buffer.as_ref()[self.mode.base_len()..]
    }

    pub fn tlvs(&self) -> Tlvs<'_> {
        Tlvs::new(self.tlv_bytes())
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> StampSenderPacket<T> {
    pub fn set_seq(&mut self, v: u32) {
        let r = self.l().seq.clone();
        self.buffer.as_mut()[r].copy_from_slice(&v.to_be_bytes());
    }

    pub fn set_timestamp(&mut self, v: [u8; 8]) {
        let r = self.l().timestamp.clone();
        self.buffer.as_mut()[r].copy_from_slice(&v);
    }

    pub fn set_error_estimate(&mut self, v: ErrorEstimate) {
        let r = self.l().error_estimate.clone();
        self.buffer.as_mut()[r].copy_from_slice(&v.0.to_be_bytes());
    }

    pub fn set_ssid(&mut self, v: u16) {
        let r = self.l().ssid.clone();
        self.buffer.as_mut()[r].copy_from_slice(&v.to_be_bytes());
    }

    /// Writes the HMAC field; does nothing in unauthenticated mode.
    pub fn set_hmac(&mut self, v: [u8; 16]) {
        if self.mode == Mode::Authenticated {
            self.buffer.as_mut()[HMAC_FIELD].copy_from_slice(&v);
        }
    }

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

    pub fn tlv_bytes_mut(&mut self) -> &mut [u8] {
        let base = self.mode.base_len();
        &mut self.buffer.as_mut()[base..]
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
        if self.hmac.is_some() {
            Mode::Authenticated
        } else {
            Mode::Unauthenticated
        }
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
        p.clear_mbz();
        p.set_seq(self.seq);
        p.set_timestamp(self.timestamp);
        p.set_error_estimate(self.error_estimate);
        p.set_ssid(self.ssid);
        if let Some(h) = self.hmac {
            p.set_hmac(h);
        }
        Ok(n)
    }
}
