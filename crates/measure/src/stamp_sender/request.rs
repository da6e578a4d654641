//! The Session-Sender's test packets (RFC 8762 §4.2, RFC 8972 TLVs): which
//! TLVs a request of a given size carries, its template, and the three
//! fields patched per probe (sequence number, timestamp, HMAC).
//!
//! ```text
//! +--------------------------------+  0
//! | base packet, 44 (112 with key) |  seq, Timestamp, Error Estimate, SSID, [HMAC]
//! +--------------------------------+  base
//! | Follow-Up Telemetry TLV, 20    |  when it fits: asks for the reflector's
//! |                                |  two-step transmit stamp (§4.7)
//! +--------------------------------+
//! | Timestamp Information TLV, 8   |  when it fits: how the reflector stamps (§4.3)
//! +--------------------------------+
//! | Extra Padding TLV, 4 + n       |  the rest, if any (§4.1)
//! +--------------------------------+  size
//! ```

use misura_wire::stamp::{
    self, emit_tlvs, hmac_covered, ErrorEstimate, Mode, SenderRepr, StampSenderPacket,
    StampTimestampFormat, TimestampInfo, TlvFlags, TlvRepr, HMAC_FIELD,
};
use misura_wire::WireError;

use crate::auth::{hmac16, StampKey};
use crate::time::Instant;

/// Bytes of a Follow-Up Telemetry TLV (header and value).
pub const FOLLOW_UP_TLV_LEN: usize = 20;
/// Bytes of a Timestamp Information TLV without sub-TLVs.
pub const TIMESTAMP_INFO_TLV_LEN: usize = 8;
/// Header bytes of an Extra Padding TLV.
const PADDING_TLV_HEADER: usize = 4;

/// The Error Estimate the sender states: 1 µs, not synchronised, NTP format.
const SENDER_ERROR_ESTIMATE_NS: u64 = 1_000;

/// Why a request size cannot be laid out.
#[derive(Copy, Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    #[error("request size {size} is below the STAMP minimum of {min} bytes for this mode")]
    BelowMinimum { size: usize, min: usize },
    /// 1–3 spare bytes: too few for a padding TLV's own header.
    #[error(
        "request size {size} leaves {spare} bytes that no TLV can fill: use {below} or {above}"
    )]
    Unfillable {
        size: usize,
        spare: usize,
        below: usize,
        above: usize,
    },
}

/// The TLVs a request of `size` bytes carries: Follow-Up Telemetry and
/// Timestamp Information when they fit, Extra Padding for the rest.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RequestLayout {
    /// Bytes of the whole STAMP packet.
    pub size: usize,
    pub mode: Mode,
    pub follow_up: bool,
    pub timestamp_info: bool,
    /// Padding octets of the Extra Padding TLV, when there is one.
    pub padding: Option<usize>,
}

impl RequestLayout {
    /// The default request: base packet, Follow-Up Telemetry and Timestamp
    /// Information, no padding.
    pub fn default_size(mode: Mode) -> usize {
        mode.base_len() + FOLLOW_UP_TLV_LEN + TIMESTAMP_INFO_TLV_LEN
    }

    pub fn new(size: usize, mode: Mode) -> Result<RequestLayout, LayoutError> {
        let base = mode.base_len();
        if size < base {
            return Err(LayoutError::BelowMinimum { size, min: base });
        }
        let mut rest = size - base;
        let follow_up = rest >= FOLLOW_UP_TLV_LEN;
        if follow_up {
            rest -= FOLLOW_UP_TLV_LEN;
        }
        let mut timestamp_info = rest >= TIMESTAMP_INFO_TLV_LEN;
        if timestamp_info {
            rest -= TIMESTAMP_INFO_TLV_LEN;
        }
        // A padding TLV needs its 4-byte header; 1-3 spare bytes cannot be
        // expressed, so Timestamp Information gives its room to the padding.
        if (1..PADDING_TLV_HEADER).contains(&rest) && timestamp_info {
            timestamp_info = false;
            rest += TIMESTAMP_INFO_TLV_LEN;
        }
        if (1..PADDING_TLV_HEADER).contains(&rest) {
            return Err(LayoutError::Unfillable {
                size,
                spare: rest,
                below: size - rest,
                above: size + PADDING_TLV_HEADER - rest,
            });
        }
        Ok(RequestLayout {
            size,
            mode,
            follow_up,
            timestamp_info,
            padding: (rest >= PADDING_TLV_HEADER).then(|| rest - PADDING_TLV_HEADER),
        })
    }

    /// The request with sequence number, timestamp and HMAC zero: built once,
    /// copied and patched per probe by [`stamp_request`].
    pub fn template(&self, ssid: u16) -> Result<Vec<u8>, WireError> {
        let mut buf = vec![0u8; self.size];
        let repr = SenderRepr {
            seq: 0,
            timestamp: [0; 8],
            error_estimate: ErrorEstimate::from_ns(
                SENDER_ERROR_ESTIMATE_NS,
                false,
                StampTimestampFormat::Ntp,
            ),
            ssid,
            hmac: (self.mode == Mode::Authenticated).then_some([0; 16]),
        };
        let base = repr.emit(&mut buf)?;
        let pad = vec![0u8; self.padding.unwrap_or(0)];
        let mut tlvs = Vec::with_capacity(3);
        if self.follow_up {
            tlvs.push(TlvRepr::FollowUpTelemetry {
                flags: TlvFlags(0),
                seq: 0,
                timestamp: [0; 8],
                mode: 0,
            });
        }
        if self.timestamp_info {
            tlvs.push(TlvRepr::TimestampInformation {
                flags: TlvFlags(0),
                info: TimestampInfo::default(),
                sub_tlvs: &[],
            });
        }
        if self.padding.is_some() {
            tlvs.push(TlvRepr::ExtraPadding {
                flags: TlvFlags(0),
                padding: &pad,
            });
        }
        let n = emit_tlvs(&tlvs, &mut buf[base..])?;
        debug_assert_eq!(base + n, self.size);
        Ok(buf)
    }
}

/// Patches a request built from a template for one probe: its sequence
/// number, `now` as its Timestamp (NTP format) and, with a key, the HMAC
/// over the fields before it, computed last since it covers the timestamp.
/// `request` must be at least the mode's base length.
pub fn stamp_request(
    request: &mut [u8],
    mode: Mode,
    seq: u32,
    now: Instant,
    key: Option<&StampKey>,
) {
    let mut p = StampSenderPacket::new_unchecked(&mut *request, mode);
    p.set_seq(seq);
    p.set_timestamp(stamp::to_wire(now.as_ns(), StampTimestampFormat::Ntp));
    if let (Some(k), Some(covered)) = (key, hmac_covered(mode)) {
        let mac = hmac16(k, &[&request[covered]]);
        request[HMAC_FIELD].copy_from_slice(&mac);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::verify16;
    use misura_wire::stamp::{SenderRepr, Tlvs};

    #[test]
    fn layouts() {
        let l = RequestLayout::new(44, Mode::Unauthenticated).unwrap();
        assert!(!l.follow_up && !l.timestamp_info && l.padding.is_none());
        let l = RequestLayout::new(72, Mode::Unauthenticated).unwrap();
        assert!(l.follow_up && l.timestamp_info && l.padding.is_none());
        assert_eq!(RequestLayout::default_size(Mode::Unauthenticated), 72);
        assert_eq!(RequestLayout::default_size(Mode::Authenticated), 140);
        let l = RequestLayout::new(1500, Mode::Unauthenticated).unwrap();
        assert_eq!(l.padding, Some(1500 - 72 - 4));
        // 66 = 44 + 20 + 2: no Timestamp Information to give its room up.
        assert_eq!(
            RequestLayout::new(66, Mode::Unauthenticated),
            Err(LayoutError::Unfillable {
                size: 66,
                spare: 2,
                below: 64,
                above: 68
            })
        );
        // 74 = 44 + 20 + 10: Timestamp Information dropped, padding 6.
        let l = RequestLayout::new(74, Mode::Unauthenticated).unwrap();
        assert!(l.follow_up && !l.timestamp_info && l.padding == Some(6));
        assert_eq!(
            RequestLayout::new(40, Mode::Unauthenticated),
            Err(LayoutError::BelowMinimum { size: 40, min: 44 })
        );
        assert_eq!(
            RequestLayout::new(100, Mode::Authenticated),
            Err(LayoutError::BelowMinimum {
                size: 100,
                min: 112
            })
        );
    }

    #[test]
    fn templates_are_whole_tlv_areas() {
        for mode in [Mode::Unauthenticated, Mode::Authenticated] {
            let base = mode.base_len();
            for extra in [0usize, 20, 24, 28, 32, 56, 468, 1428] {
                let l = RequestLayout::new(base + extra, mode).unwrap();
                let b = l.template(7).unwrap();
                assert_eq!(b.len(), base + extra);
                let tlvs: Vec<_> = Tlvs::new(&b[base..]).collect();
                assert!(tlvs.iter().all(|t| t.is_ok()), "{mode:?} {extra}");
                let want = usize::from(l.follow_up)
                    + usize::from(l.timestamp_info)
                    + usize::from(l.padding.is_some());
                assert_eq!(tlvs.len(), want);
                assert_eq!(SenderRepr::parse(&b, mode).unwrap().ssid, 7);
            }
        }
    }

    #[test]
    fn stamping_patches_only_seq_timestamp_and_hmac() {
        let key = StampKey::new(b"shared secret").unwrap();
        let l = RequestLayout::new(140, Mode::Authenticated).unwrap();
        let template = l.template(0x1234).unwrap();
        let mut req = template.clone();
        let now = Instant::from_ns(1_790_000_000_123_456_789);
        stamp_request(&mut req, Mode::Authenticated, 0xdead_beef, now, Some(&key));
        let r = SenderRepr::parse(&req, Mode::Authenticated).unwrap();
        assert_eq!(r.seq, 0xdead_beef);
        assert_eq!(
            stamp::from_wire(r.timestamp, StampTimestampFormat::Ntp),
            now.as_ns()
        );
        assert!(verify16(&key, &[&req[..96]], &req[96..112]));
        // Authenticated layout: seq 0..4, MBZ, Timestamp 16..24, ..., HMAC 96..112.
        let patched = |i: usize| i < 4 || (16..24).contains(&i) || HMAC_FIELD.contains(&i);
        assert!((0..req.len()).all(|i| patched(i) || req[i] == template[i]));
        // Without a key the HMAC-less packet has nothing after the timestamp patched.
        let l = RequestLayout::new(72, Mode::Unauthenticated).unwrap();
        let template = l.template(1).unwrap();
        let mut req = template.clone();
        stamp_request(&mut req, Mode::Unauthenticated, 5, now, None);
        assert_eq!(req[12..], template[12..]);
        assert_eq!(req[..4], 5u32.to_be_bytes());
    }
}
