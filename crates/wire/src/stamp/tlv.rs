//! STAMP TLVs (RFC 8972 §4): the header, the type and flag values, and
//! the framing iterator over a packet's TLV area.

use super::layout::rd16;
use crate::WireError;

/// Length of a TLV header (flags, type, length).
pub const TLV_HEADER_LEN: usize = 4;

/// STAMP TLV Types (IANA registry created by RFC 8972 §5.2). scapy 2.8.0's
/// `contrib/stamp.py` leaves its type table empty, so these come from the
/// RFC text.
pub mod tlv_type {
    pub const EXTRA_PADDING: u8 = 1;
    pub const LOCATION: u8 = 2;
    pub const TIMESTAMP_INFORMATION: u8 = 3;
    pub const CLASS_OF_SERVICE: u8 = 4;
    pub const DIRECT_MEASUREMENT: u8 = 5;
    pub const ACCESS_REPORT: u8 = 6;
    pub const FOLLOW_UP_TELEMETRY: u8 = 7;
    pub const HMAC: u8 = 8;
}

/// Synchronization Source values of the Timestamp Information TLV (RFC 8972
/// §5.4).
pub mod sync_source {
    pub const NTP: u8 = 1;
    pub const PTP: u8 = 2;
    pub const SSU_BITS: u8 = 3;
    pub const GPS_GLONASS_LORAN_C: u8 = 4;
    pub const LOCAL_FREE_RUNNING: u8 = 5;
}

/// Timestamping Method values (Timestamp Information TLV, RFC 8972 §5.5)
/// and Timestamp Mode values (Follow-Up Telemetry TLV) — same code points.
pub mod timestamp_method {
    pub const HW_ASSIST: u8 = 1;
    pub const SW_LOCAL: u8 = 2;
    pub const CONTROL_PLANE: u8 = 3;
}

/// The STAMP TLV Flags octet (RFC 8972 §4):
///
/// ```text
///  0 1 2 3 4 5 6 7
/// +-+-+-+-+-+-+-+-+
/// |U|M|I|R|R|R|R|R|
/// +-+-+-+-+-+-+-+-+
/// ```
///
/// A Session-Sender sends U = 1, M = I = 0; the reflector clears U for the
/// TLVs it understood, sets M on malformed ones and I on all of them if the
/// HMAC TLV failed verification. Reserved bits are kept as they are.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct TlvFlags(pub u8);

impl TlvFlags {
    /// Unrecognized.
    pub const U: TlvFlags = TlvFlags(0x80);
    /// Malformed.
    pub const M: TlvFlags = TlvFlags(0x40);
    /// Integrity check failed.
    pub const I: TlvFlags = TlvFlags(0x20);
    /// What a Session-Sender sends (RFC 8972 §4): U set, M and I clear.
    pub const SENDER: TlvFlags = TlvFlags(0x80);

    pub const fn contains(&self, other: TlvFlags) -> bool {
        self.0 & other.0 == other.0
    }

    pub fn set(&mut self, other: TlvFlags, on: bool) {
        if on {
            self.0 |= other.0
        } else {
            self.0 &= !other.0
        }
    }
}

/// One TLV as located in a buffer, value not interpreted.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RawTlv<'a> {
    /// Offset of the TLV header within the TLV area.
    pub offset: usize,
    pub flags: TlvFlags,
    pub typ: u8,
    pub value: &'a [u8],
}

impl RawTlv<'_> {
    /// Header plus value.
    pub fn total_len(&self) -> usize {
        TLV_HEADER_LEN + self.value.len()
    }
}

/// Walks TLV framing only. Yields `Err(Truncated)` once, then stops, when a
/// header or a value runs past the end of the area.
#[derive(Clone, Debug)]
pub struct RawTlvs<'a> {
    bytes: &'a [u8],
    pos: usize,
    done: bool,
}

impl<'a> RawTlvs<'a> {
    pub fn new(tlv_area: &'a [u8]) -> Self {
        RawTlvs {
            bytes: tlv_area,
            pos: 0,
            done: false,
        }
    }

    /// Offset of the next TLV to be read.
    pub fn offset(&self) -> usize {
        self.pos
    }
}

impl<'a> Iterator for RawTlvs<'a> {
    type Item = Result<RawTlv<'a>, WireError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done || self.pos >= self.bytes.len() {
            return None;
        }
        let rest = &self.bytes[self.pos..];
        if rest.len() < TLV_HEADER_LEN {
            self.done = true;
            return Some(Err(WireError::Truncated {
                need: TLV_HEADER_LEN,
                have: rest.len(),
            }));
        }
        let len = usize::from(rd16(rest, 2));
        if rest.len() < TLV_HEADER_LEN + len {
            self.done = true;
            return Some(Err(WireError::Truncated {
                need: TLV_HEADER_LEN + len,
                have: rest.len(),
            }));
        }
        let tlv = RawTlv {
            offset: self.pos,
            flags: TlvFlags(rest[0]),
            typ: rest[1],
            value: &rest[TLV_HEADER_LEN..TLV_HEADER_LEN + len],
        };
        self.pos += TLV_HEADER_LEN + len;
        Some(Ok(tlv))
    }
}
