//! Building a reply in place from a request (RFC 8762 §4.3, RFC 8972 §4).

use super::error_estimate::ErrorEstimate;
use super::layout::{check_out, rd16, Mode, HMAC_LEN};
use super::reflector::ReflectorRepr;
use super::sender::SenderRepr;
use super::tlv::{tlv_type, TlvFlags, TLV_HEADER_LEN};
use super::tlv_repr::TimestampInfo;
use crate::WireError;

/// Length of the reply to a request of `request_len` bytes.
///
/// RFC 8762 keeps test packets symmetric: the sender's MBZ padding makes its
/// base packet as long as the reflector's (44/44 and 112/112 bytes), and
/// RFC 8972 §4 has the reflector return the TLVs it received in place, so a
/// reply is exactly as long as its request; in particular it is never
/// larger, which keeps the reflector from amplifying traffic.
pub const fn reflect_len(request_len: usize) -> usize {
    request_len
}

/// Everything a reflector knows about one request that goes into its reply.
/// Pure data; the caller reads the clocks, counters and IP header.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub struct ReflectParams {
    /// Reply Sequence Number: the request's in stateless mode, the
    /// reflector's own counter in stateful mode (RFC 8762 §4.3).
    pub seq: u32,
    /// Reflector transmit timestamp (format per `error_estimate`).
    pub timestamp: [u8; 8],
    pub error_estimate: ErrorEstimate,
    /// When the request was received (format per `error_estimate`).
    pub receive_timestamp: [u8; 8],
    /// TTL / Hop Limit of the received request.
    pub sender_ttl: u8,
    /// The request's HMAC TLV failed verification: set I on every TLV.
    pub tlv_integrity_failed: bool,
    /// Fills Timestamp Information TLVs (all four octets).
    pub timestamp_info: Option<TimestampInfo>,
    /// Fills Follow-Up Telemetry TLVs: (sequence number, timestamp, mode)
    /// of the previous reply.
    pub follow_up: Option<(u32, [u8; 8], u8)>,
    /// Fills Direct Measurement TLVs: (R_RxC, R_TxC).
    pub counters: Option<(u32, u32)>,
    /// TOS / Traffic Class octet of the received request; fills DSCP2 and
    /// ECN of Class of Service TLVs.
    pub received_tos: Option<u8>,
    /// Fills Location TLVs: (destination port, source port) of the request.
    /// Address sub-TLVs are returned as received.
    pub ports: Option<(u16, u16)>,
}

/// Builds the reflector's reply to `request` (a Session-Sender packet of
/// `mode`) in `out` and returns its length, `reflect_len(request.len())`.
///
/// * The base packet is a [`ReflectorRepr`] from `params` and the request's
///   seq, timestamp, error estimate and SSID. In authenticated mode its HMAC
///   field is zeroed, for the caller to fill over [`hmac_covered`].
/// * The request's TLV area is copied, then walked (RFC 8972 §4): U is
///   cleared on recognized TLVs and set on others; M is set on a known TLV
///   with a bad length, and on a TLV whose length overruns the packet, where
///   processing stops (the rest is returned as received); I is set on all of
///   them if `params.tlv_integrity_failed`. Recognized TLVs get the fields
///   `params` provides; HMAC TLV values are zeroed for the caller to fill
///   over [`tlv_hmac_covered`] of the reply.
///
/// `out` must hold at least `request.len()` bytes; only that many are
/// written.
pub fn build_reflection(
    request: &[u8],
    mode: Mode,
    params: &ReflectParams,
    out: &mut [u8],
) -> Result<usize, WireError> {
    let req = SenderRepr::parse(request, mode)?;
    let n = reflect_len(request.len());
    check_out(out.len(), n)?;
    let out = &mut out[..n];
    let base = mode.base_len();
    let reply = ReflectorRepr {
        seq: params.seq,
        timestamp: params.timestamp,
        error_estimate: params.error_estimate,
        ssid: req.ssid,
        receive_timestamp: params.receive_timestamp,
        sender_seq: req.seq,
        sender_timestamp: req.timestamp,
        sender_error_estimate: req.error_estimate,
        sender_ttl: params.sender_ttl,
        hmac: match mode {
            Mode::Authenticated => Some([0; 16]),
            Mode::Unauthenticated => None,
        },
    };
    reply.emit(out)?;
    out[base..].copy_from_slice(&request[base..]);
    reflect_tlvs(&mut out[base..], params);
    Ok(n)
}

fn reflect_tlvs(area: &mut [u8], params: &ReflectParams) {
    let mut pos = 0;
    while area.len() - pos >= TLV_HEADER_LEN {
        let t = &mut area[pos..];
        let typ = t[1];
        let len = usize::from(rd16(t, 2));
        let mut flags = TlvFlags(t[0]);
        flags.set(TlvFlags::I, params.tlv_integrity_failed);
        if t.len() < TLV_HEADER_LEN + len {
            // Length overruns the packet: flag it and stop.
            flags.set(TlvFlags::M, true);
            t[0] = flags.0;
            return;
        }
        let v = &mut t[TLV_HEADER_LEN..TLV_HEADER_LEN + len];
        let (recognized, well_formed) = fill_tlv(typ, v, params);
        flags.set(TlvFlags::U, !recognized);
        flags.set(TlvFlags::M, !well_formed);
        t[0] = flags.0;
        pos += TLV_HEADER_LEN + len;
    }
}

/// Fills one TLV value in place; returns (recognized, well formed).
fn fill_tlv(typ: u8, v: &mut [u8], p: &ReflectParams) -> (bool, bool) {
    let ok = match typ {
        tlv_type::EXTRA_PADDING => true,
        tlv_type::LOCATION => {
            if v.len() < 4 {
                false
            } else {
                if let Some((dst, src)) = p.ports {
                    v[0..2].copy_from_slice(&dst.to_be_bytes());
                    v[2..4].copy_from_slice(&src.to_be_bytes());
                }
                true
            }
        }
        tlv_type::TIMESTAMP_INFORMATION => {
            if v.len() < 4 {
                false
            } else {
                if let Some(i) = p.timestamp_info {
                    v[0] = i.sync_src_in;
                    v[1] = i.timestamp_in;
                    v[2] = i.sync_src_out;
                    v[3] = i.timestamp_out;
                }
                true
            }
        }
        tlv_type::CLASS_OF_SERVICE => {
            if v.len() != 4 {
                false
            } else {
                if let Some(tos) = p.received_tos {
                    let dscp2 = tos >> 2;
                    let ecn = tos & 0x03;
                    v[0] = (v[0] & 0xfc) | (dscp2 >> 4);
                    v[1] = ((dscp2 & 0x0f) << 4) | (ecn << 2) | (v[1] & 0x03);
                }
                true
            }
        }
        tlv_type::DIRECT_MEASUREMENT => {
            if v.len() != 12 {
                false
            } else {
                if let Some((rx, tx)) = p.counters {
                    v[4..8].copy_from_slice(&rx.to_be_bytes());
                    v[8..12].copy_from_slice(&tx.to_be_bytes());
                }
                true
            }
        }
        tlv_type::ACCESS_REPORT => v.len() == 4,
        tlv_type::FOLLOW_UP_TELEMETRY => {
            if v.len() != 16 {
                false
            } else {
                if let Some((seq, ts, mode)) = p.follow_up {
                    v[0..4].copy_from_slice(&seq.to_be_bytes());
                    v[4..12].copy_from_slice(&ts);
                    v[12] = mode;
                    v[13..16].fill(0);
                }
                true
            }
        }
        tlv_type::HMAC => {
            if v.len() != HMAC_LEN {
                false
            } else {
                v.fill(0);
                true
            }
        }
        _ => return (false, true),
    };
    (true, ok)
}
