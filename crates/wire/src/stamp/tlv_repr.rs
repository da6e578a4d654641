//! STAMP TLVs as plain values (RFC 8972 §4): the typed iterator, parsing,
//! emitting, and the HMAC TLV's coverage.

use super::layout::{check_out, rd16, rd16x, rd32, rd8x, Mode, HMAC_LEN};
use super::tlv::{tlv_type, RawTlv, RawTlvs, TlvFlags, TLV_HEADER_LEN};
use crate::WireError;
use core::ops::Range;

/// Iterator over the TLV area (the bytes after the 44- or 112-byte base
/// packet), yielding typed TLVs.
///
/// * A TLV whose length runs past the end of the area (or a 1–3 byte tail
///   too short for a header) yields `Err(Truncated)` and ends iteration.
/// * A known type with a length invalid for it yields `Err(BadTlv)`;
///   iteration continues with the next TLV, since the framing is intact.
///
/// Never reads outside the slice, never panics, never allocates.
#[derive(Clone, Debug)]
pub struct Tlvs<'a> {
    raw: RawTlvs<'a>,
}

impl<'a> Tlvs<'a> {
    pub fn new(tlv_area: &'a [u8]) -> Self {
        Tlvs {
            raw: RawTlvs::new(tlv_area),
        }
    }

    /// Offset (within the TLV area) of the next TLV to be read.
    pub fn offset(&self) -> usize {
        self.raw.offset()
    }
}

impl<'a> Iterator for Tlvs<'a> {
    type Item = Result<TlvRepr<'a>, WireError>;

    fn next(&mut self) -> Option<Self::Item> {
        Some(self.raw.next()?.and_then(TlvRepr::from_raw))
    }
}

/// Value of the Timestamp Information TLV apart from sub-TLVs.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct TimestampInfo {
    /// Synchronization source of the reflector's receive timestamp.
    pub sync_src_in: u8,
    /// Timestamping method of the reflector's receive timestamp.
    pub timestamp_in: u8,
    /// Synchronization source of the reflector's transmit timestamp.
    pub sync_src_out: u8,
    /// Timestamping method of the reflector's transmit timestamp.
    pub timestamp_out: u8,
}

/// A STAMP TLV (RFC 8972 §4). Each starts with the common header:
///
/// ```text
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |STAMP TLV Flags|     Type      |           Length              |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ~                 Value (Length octets)                         ~
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
///
/// The value diagrams are on each variant. Reserved fields are zeroed by
/// `emit` and ignored by `parse`. Variable parts borrow from the buffer, so
/// parsing does not allocate.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TlvRepr<'a> {
    /// Type 1 (§4.1): any number of padding octets.
    ///
    /// ```text
    /// ~                        Extra Padding                          ~
    /// ```
    ExtraPadding { flags: TlvFlags, padding: &'a [u8] },
    /// Type 2 (§4.2), length ≥ 4; sub-TLVs (same header format) carry the
    /// addresses and are kept raw.
    ///
    /// ```text
    /// |      Destination Port         |          Source Port          |
    /// ~                          Sub-TLVs                             ~
    /// ```
    Location {
        flags: TlvFlags,
        dst_port: u16,
        src_port: u16,
        sub_tlvs: &'a [u8],
    },
    /// Type 3 (§4.3), length ≥ 4:
    ///
    /// ```text
    /// | Sync Src In   | Timestamp In  | Sync Src Out  | Timestamp Out |
    /// ~                    Optional Sub-TLVs                          ~
    /// ```
    TimestampInformation {
        flags: TlvFlags,
        info: TimestampInfo,
        sub_tlvs: &'a [u8],
    },
    /// Type 4 (§4.4), length 4:
    ///
    /// ```text
    /// |   DSCP1   |   DSCP2   |ECN| RP|          Reserved             |
    /// ```
    ClassOfService {
        flags: TlvFlags,
        /// DSCP the sender asks the reflector to use in the reply (6 bits).
        dscp1: u8,
        /// DSCP of the received packet, filled by the reflector (6 bits).
        dscp2: u8,
        /// ECN of the received packet, filled by the reflector (2 bits).
        ecn: u8,
        /// Reverse Path (2 bits).
        rp: u8,
    },
    /// Type 5 (§4.5), length 12:
    ///
    /// ```text
    /// |             Session-Sender Tx counter (S_TxC)                 |
    /// |             Session-Reflector Rx counter (R_RxC)              |
    /// |             Session-Reflector Tx counter (R_TxC)              |
    /// ```
    DirectMeasurement {
        flags: TlvFlags,
        sender_tx: u32,
        reflector_rx: u32,
        reflector_tx: u32,
    },
    /// Type 6 (§4.6), length 4:
    ///
    /// ```text
    /// |   ID  | Resv  |  Return Code  |           Reserved            |
    /// ```
    AccessReport {
        flags: TlvFlags,
        /// Access ID (4 bits; 1 = 3GPP, 2 = non-3GPP).
        id: u8,
        return_code: u8,
    },
    /// Type 7 (§4.7), length 16:
    ///
    /// ```text
    /// |                       Sequence Number                         |
    /// |                    Follow-up Timestamp                        |
    /// |                                                               |
    /// | Timestamp M   |                 Reserved                      |
    /// ```
    FollowUpTelemetry {
        flags: TlvFlags,
        /// Sequence number of the reflector's previous reply.
        seq: u32,
        /// Its precise transmit timestamp.
        timestamp: [u8; 8],
        /// How it was taken ([`timestamp_method`]).
        mode: u8,
    },
    /// Type 8 (§4.8), length 16: HMAC-SHA-256 truncated to 128 bits over
    /// the base packet's Sequence Number and all preceding TLVs (see
    /// [`tlv_hmac_covered`]).
    ///
    /// ```text
    /// |                        HMAC (16 octets)                       |
    /// ```
    Hmac { flags: TlvFlags, hmac: [u8; 16] },
    /// Any other type, value kept raw.
    Unknown {
        flags: TlvFlags,
        typ: u8,
        value: &'a [u8],
    },
}

fn bad_tlv(typ: u8, len: usize) -> WireError {
    WireError::BadTlv { typ, len }
}

impl<'a> TlvRepr<'a> {
    /// Interprets a framed TLV. Known types with a length invalid for them
    /// give `BadTlv`.
    pub fn from_raw(raw: RawTlv<'a>) -> Result<Self, WireError> {
        let v = raw.value;
        let flags = raw.flags;
        let exact = |n: usize| {
            if v.len() == n {
                Ok(())
            } else {
                Err(bad_tlv(raw.typ, v.len()))
            }
        };
        Ok(match raw.typ {
            tlv_type::EXTRA_PADDING => TlvRepr::ExtraPadding { flags, padding: v },
            tlv_type::LOCATION => {
                if v.len() < 4 {
                    return Err(bad_tlv(raw.typ, v.len()));
                }
                TlvRepr::Location {
                    flags,
                    dst_port: rd16(v, 0),
                    src_port: rd16(v, 2),
                    sub_tlvs: &v[4..],
                }
            }
            tlv_type::TIMESTAMP_INFORMATION => {
                if v.len() < 4 {
                    return Err(bad_tlv(raw.typ, v.len()));
                }
                TlvRepr::TimestampInformation {
                    flags,
                    info: TimestampInfo {
                        sync_src_in: v[0],
                        timestamp_in: v[1],
                        sync_src_out: v[2],
                        timestamp_out: v[3],
                    },
                    sub_tlvs: &v[4..],
                }
            }
            tlv_type::CLASS_OF_SERVICE => {
                exact(4)?;
                TlvRepr::ClassOfService {
                    flags,
                    dscp1: v[0] >> 2,
                    dscp2: ((v[0] & 0x03) << 4) | (v[1] >> 4),
                    ecn: (v[1] >> 2) & 0x03,
                    rp: v[1] & 0x03,
                }
            }
            tlv_type::DIRECT_MEASUREMENT => {
                exact(12)?;
                TlvRepr::DirectMeasurement {
                    flags,
                    sender_tx: rd32(v, 0),
                    reflector_rx: rd32(v, 4),
                    reflector_tx: rd32(v, 8),
                }
            }
            tlv_type::ACCESS_REPORT => {
                exact(4)?;
                TlvRepr::AccessReport {
                    flags,
                    id: v[0] >> 4,
                    return_code: v[1],
                }
            }
            tlv_type::FOLLOW_UP_TELEMETRY => {
                exact(16)?;
                TlvRepr::FollowUpTelemetry {
                    flags,
                    seq: rd32(v, 0),
                    timestamp: rd8x(v, 4),
                    mode: v[12],
                }
            }
            tlv_type::HMAC => {
                exact(16)?;
                TlvRepr::Hmac {
                    flags,
                    hmac: rd16x(v, 0),
                }
            }
            typ => TlvRepr::Unknown {
                flags,
                typ,
                value: v,
            },
        })
    }

    /// Parses one TLV at the start of `bytes` (trailing bytes ignored).
    pub fn parse(bytes: &'a [u8]) -> Result<Self, WireError> {
        match RawTlvs::new(bytes).next() {
            Some(r) => TlvRepr::from_raw(r?),
            None => Err(WireError::Truncated {
                need: TLV_HEADER_LEN,
                have: 0,
            }),
        }
    }

    pub fn flags(&self) -> TlvFlags {
        match *self {
            TlvRepr::ExtraPadding { flags, .. }
            | TlvRepr::Location { flags, .. }
            | TlvRepr::TimestampInformation { flags, .. }
            | TlvRepr::ClassOfService { flags, .. }
            | TlvRepr::DirectMeasurement { flags, .. }
            | TlvRepr::AccessReport { flags, .. }
            | TlvRepr::FollowUpTelemetry { flags, .. }
            | TlvRepr::Hmac { flags, .. }
            | TlvRepr::Unknown { flags, .. } => flags,
        }
    }

    pub fn typ(&self) -> u8 {
        match *self {
            TlvRepr::ExtraPadding { .. } => tlv_type::EXTRA_PADDING,
            TlvRepr::Location { .. } => tlv_type::LOCATION,
            TlvRepr::TimestampInformation { .. } => tlv_type::TIMESTAMP_INFORMATION,
            TlvRepr::ClassOfService { .. } => tlv_type::CLASS_OF_SERVICE,
            TlvRepr::DirectMeasurement { .. } => tlv_type::DIRECT_MEASUREMENT,
            TlvRepr::AccessReport { .. } => tlv_type::ACCESS_REPORT,
            TlvRepr::FollowUpTelemetry { .. } => tlv_type::FOLLOW_UP_TELEMETRY,
            TlvRepr::Hmac { .. } => tlv_type::HMAC,
            TlvRepr::Unknown { typ, .. } => typ,
        }
    }

    /// Length of the value (the Length field).
    pub fn value_len(&self) -> usize {
        match *self {
            TlvRepr::ExtraPadding { padding, .. } => padding.len(),
            TlvRepr::Location { sub_tlvs, .. } => 4 + sub_tlvs.len(),
            TlvRepr::TimestampInformation { sub_tlvs, .. } => 4 + sub_tlvs.len(),
            TlvRepr::ClassOfService { .. } | TlvRepr::AccessReport { .. } => 4,
            TlvRepr::DirectMeasurement { .. } => 12,
            TlvRepr::FollowUpTelemetry { .. } | TlvRepr::Hmac { .. } => 16,
            TlvRepr::Unknown { value, .. } => value.len(),
        }
    }

    /// Bytes `emit` writes: header + value.
    pub fn buffer_len(&self) -> usize {
        TLV_HEADER_LEN + self.value_len()
    }

    /// Writes the TLV at the start of `buf` and returns its length. Fails
    /// (writing nothing) if the value exceeds 65535 octets, a sub-field
    /// exceeds its bit width, or `buf` is too small.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        let vlen = self.value_len();
        let len16 = u16::try_from(vlen).map_err(|_| WireError::BadLength {
            field: "STAMP TLV length",
            value: vlen,
        })?;
        match *self {
            TlvRepr::ClassOfService {
                dscp1,
                dscp2,
                ecn,
                rp,
                ..
            } => {
                check_bits("dscp1", dscp1, 6)?;
                check_bits("dscp2", dscp2, 6)?;
                check_bits("ecn", ecn, 2)?;
                check_bits("rp", rp, 2)?;
            }
            TlvRepr::AccessReport { id, .. } => check_bits("access id", id, 4)?,
            _ => {}
        }
        let n = TLV_HEADER_LEN + vlen;
        check_out(buf.len(), n)?;
        let buf = &mut buf[..n];
        buf[0] = self.flags().0;
        buf[1] = self.typ();
        buf[2..4].copy_from_slice(&len16.to_be_bytes());
        let v = &mut buf[TLV_HEADER_LEN..];
        match *self {
            TlvRepr::ExtraPadding { padding, .. } => v.copy_from_slice(padding),
            TlvRepr::Location {
                dst_port,
                src_port,
                sub_tlvs,
                ..
            } => {
                v[0..2].copy_from_slice(&dst_port.to_be_bytes());
                v[2..4].copy_from_slice(&src_port.to_be_bytes());
                v[4..].copy_from_slice(sub_tlvs);
            }
            TlvRepr::TimestampInformation { info, sub_tlvs, .. } => {
                v[0] = info.sync_src_in;
                v[1] = info.timestamp_in;
                v[2] = info.sync_src_out;
                v[3] = info.timestamp_out;
                v[4..].copy_from_slice(sub_tlvs);
            }
            TlvRepr::ClassOfService {
                dscp1,
                dscp2,
                ecn,
                rp,
                ..
            } => {
                v[0] = (dscp1 << 2) | (dscp2 >> 4);
                v[1] = ((dscp2 & 0x0f) << 4) | (ecn << 2) | rp;
                v[2..4].fill(0);
            }
            TlvRepr::DirectMeasurement {
                sender_tx,
                reflector_rx,
                reflector_tx,
                ..
            } => {
                v[0..4].copy_from_slice(&sender_tx.to_be_bytes());
                v[4..8].copy_from_slice(&reflector_rx.to_be_bytes());
                v[8..12].copy_from_slice(&reflector_tx.to_be_bytes());
            }
            TlvRepr::AccessReport {
                id, return_code, ..
            } => {
                v[0] = id << 4;
                v[1] = return_code;
                v[2..4].fill(0);
            }
            TlvRepr::FollowUpTelemetry {
                seq,
                timestamp,
                mode,
                ..
            } => {
                v[0..4].copy_from_slice(&seq.to_be_bytes());
                v[4..12].copy_from_slice(&timestamp);
                v[12] = mode;
                v[13..16].fill(0);
            }
            TlvRepr::Hmac { hmac, .. } => v.copy_from_slice(&hmac),
            TlvRepr::Unknown { value, .. } => v.copy_from_slice(value),
        }
        Ok(n)
    }
}

fn check_bits(field: &'static str, v: u8, bits: u32) -> Result<(), WireError> {
    if u32::from(v) >> bits != 0 {
        return Err(WireError::BadField {
            field,
            value: u32::from(v),
        });
    }
    Ok(())
}

/// Emits `tlvs` back to back at the start of `buf`; returns the bytes
/// written. On error `buf` may hold the TLVs emitted so far.
pub fn emit_tlvs(tlvs: &[TlvRepr<'_>], buf: &mut [u8]) -> Result<usize, WireError> {
    let need: usize = tlvs.iter().map(TlvRepr::buffer_len).sum();
    check_out(buf.len(), need)?;
    let mut at = 0;
    for t in tlvs {
        at += t.emit(&mut buf[at..])?;
    }
    Ok(at)
}

/// What the RFC 8972 §4.8 HMAC TLV of a packet covers, as byte ranges of
/// the whole packet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TlvHmacCoverage {
    /// The base packet's Sequence Number (always `0..4`).
    pub seq: Range<usize>,
    /// All TLVs preceding the HMAC TLV (may be empty).
    pub tlvs: Range<usize>,
    /// The HMAC TLV's 16-octet value.
    pub hmac: Range<usize>,
}

/// Finds the first well-formed HMAC TLV of `packet` (RFC 8972 requires it
/// to follow the TLVs it protects) and returns what its HMAC covers: the
/// concatenation of the Sequence Number field and the TLVs before it (their
/// headers included). `None` if there is none (or the TLV framing breaks
/// before it).
pub fn tlv_hmac_covered(packet: &[u8], mode: Mode) -> Option<TlvHmacCoverage> {
    let base = mode.base_len();
    let area = packet.get(base..)?;
    for raw in RawTlvs::new(area) {
        let raw = raw.ok()?;
        if raw.typ == tlv_type::HMAC && raw.value.len() == HMAC_LEN {
            let start = base + raw.offset;
            return Some(TlvHmacCoverage {
                seq: 0..4,
                tlvs: base..start,
                hmac: start + TLV_HEADER_LEN..start + TLV_HEADER_LEN + HMAC_LEN,
            });
        }
    }
    None
}
