//! Reading a Session-Reflector's reply (RFC 8762 §4.3, RFC 8972 TLVs):
//! a checked parse of untrusted bytes into the [`Reply`] the probe ring
//! matches, plus what the reply says about the reflector.

use misura_wire::stamp::{
    self, hmac_covered, Mode, ReflectorRepr, TimestampInfo, TlvFlags, TlvRepr, Tlvs, HMAC_FIELD,
};

use crate::auth::{verify16, StampKey};
use crate::stamp_client::Reply;
use crate::time::Instant;

/// What a reply told about the reflector beyond its timestamps.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct ReplyInfo {
    /// The Timestamp Information TLV, when the reflector filled it in (one
    /// that merely echoes the TLV leaves it zero).
    pub timestamp_info: Option<TimestampInfo>,
    /// Whether the reflector understood the Follow-Up Telemetry TLV (U
    /// clear); `None` when the reply carried none.
    pub follow_up_supported: Option<bool>,
}

/// True when `packet` carries a valid HMAC under `key` (RFC 8762 §4.3.2:
/// over the base packet before the HMAC field). Too short a packet fails.
pub fn reply_authentic(key: &StampKey, packet: &[u8], mode: Mode) -> bool {
    let Some(covered) = hmac_covered(mode) else {
        return true;
    };
    match (packet.get(covered), packet.get(HMAC_FIELD)) {
        (Some(c), Some(tag)) => verify16(key, &[c], tag),
        _ => false,
    }
}

/// Checked decode of a reply received at `rx2` (user clock, after the
/// receive returned) with the kernel's and the NIC's stamps when present.
/// `None` when the base packet is too short for `mode`; broken TLVs are
/// skipped, since the base packet alone is a valid reply.
pub fn decode_reply(
    packet: &[u8],
    mode: Mode,
    rx2: Instant,
    rx_kernel: Option<Instant>,
    rx_hw: Option<Instant>,
) -> Option<(Reply, ReplyInfo)> {
    // The wire's stamps, as points on the reflector's clock.
    let at = |wire: [u8; 8], fmt| Instant::from_ns(stamp::from_wire(wire, fmt));
    let r = ReflectorRepr::parse(packet, mode).ok()?;
    let fmt = r.error_estimate.format();
    let mut info = ReplyInfo::default();
    let mut follow_up = None;
    let mut follow_up_method = 0;
    let tlv_area = packet.get(mode.base_len()..).unwrap_or(&[]);
    for t in Tlvs::new(tlv_area).flatten() {
        match t {
            TlvRepr::TimestampInformation {
                flags, info: ti, ..
            } if !flags.contains(TlvFlags::U)
                && (ti.timestamp_in != 0 || ti.timestamp_out != 0) =>
            {
                info.timestamp_info = Some(ti)
            }
            TlvRepr::FollowUpTelemetry {
                flags,
                seq,
                timestamp,
                mode,
            } => {
                let understood = !flags.contains(TlvFlags::U);
                info.follow_up_supported = Some(understood);
                // All zero: the reflector knows no earlier transmit stamp.
                if understood && timestamp != [0; 8] {
                    follow_up = Some((seq, at(timestamp, fmt)));
                    follow_up_method = mode;
                }
            }
            _ => {}
        }
    }
    let reply = Reply {
        sender_seq: r.sender_seq,
        reflector_seq: r.seq,
        reflector_rx: at(r.receive_timestamp, fmt),
        reflector_tx: at(r.timestamp, fmt),
        sender_ttl: r.sender_ttl,
        response_bytes: u16::try_from(packet.len()).unwrap_or(u16::MAX),
        follow_up,
        follow_up_method,
        reflector_rx_method: info.timestamp_info.map_or(0, |t| t.timestamp_in),
        reflector_tx_method: info.timestamp_info.map_or(0, |t| t.timestamp_out),
        rx2,
        rx_kernel,
        rx_hw,
    };
    Some((reply, info))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::hmac16;
    use crate::stamp_sender::request::RequestLayout;
    use misura_wire::stamp::{
        build_reflection, timestamp_method, ErrorEstimate, ReflectParams, StampTimestampFormat,
    };

    const T: i64 = 1_790_000_000_000_000_000;

    fn reflect(request: &[u8], mode: Mode, follow_up: Option<(u32, [u8; 8], u8)>) -> Vec<u8> {
        let mut out = vec![0xa5; request.len()];
        let ntp = StampTimestampFormat::Ntp;
        let params = ReflectParams {
            seq: 77,
            timestamp: stamp::to_wire(T + 900, ntp),
            error_estimate: ErrorEstimate::from_ns(1_000, false, ntp),
            receive_timestamp: stamp::to_wire(T + 500, ntp),
            sender_ttl: 63,
            tlv_integrity_failed: false,
            timestamp_info: Some(TimestampInfo {
                sync_src_in: 5,
                timestamp_in: timestamp_method::SW_LOCAL,
                sync_src_out: 5,
                timestamp_out: timestamp_method::SW_LOCAL,
            }),
            follow_up,
            counters: None,
            received_tos: None,
            ports: None,
        };
        let n = build_reflection(request, mode, &params, &mut out).unwrap();
        out.truncate(n);
        out
    }

    fn request(mode: Mode, size: usize, seq: u32) -> Vec<u8> {
        let mut r = RequestLayout::new(size, mode).unwrap().template(9).unwrap();
        crate::stamp_sender::request::stamp_request(
            &mut r,
            mode,
            seq,
            crate::time::Instant::from_ns(T),
            None,
        );
        r
    }

    #[test]
    fn decodes_timestamps_and_tlvs() {
        let mode = Mode::Unauthenticated;
        let fu = (76, stamp::to_wire(T - 3_000, StampTimestampFormat::Ntp), 2);
        let reply = reflect(&request(mode, 72, 12), mode, Some(fu));
        let at = Instant::from_ns;
        let (r, info) =
            decode_reply(&reply, mode, at(T + 2_000), Some(at(T + 1_900)), None).unwrap();
        assert_eq!(
            r,
            Reply {
                sender_seq: 12,
                reflector_seq: 77,
                reflector_rx: at(T + 500),
                reflector_tx: at(T + 900),
                sender_ttl: 63,
                response_bytes: 72,
                follow_up: Some((76, at(T - 3_000))),
                follow_up_method: 2,
                reflector_rx_method: timestamp_method::SW_LOCAL,
                reflector_tx_method: timestamp_method::SW_LOCAL,
                rx2: at(T + 2_000),
                rx_kernel: Some(at(T + 1_900)),
                rx_hw: None,
            }
        );
        assert_eq!(info.follow_up_supported, Some(true));
        assert_eq!(
            info.timestamp_info.unwrap().timestamp_in,
            timestamp_method::SW_LOCAL
        );
        // A reflector with nothing to follow up sends zeros: no follow-up.
        let reply = reflect(&request(mode, 72, 12), mode, Some((0, [0; 8], 0)));
        let (r, info) = decode_reply(&reply, mode, at(T), None, None).unwrap();
        assert_eq!((r.follow_up, info.follow_up_supported), (None, Some(true)));
        // No TLVs at all.
        let reply = reflect(&request(mode, 44, 1), mode, Some(fu));
        let (r, info) = decode_reply(&reply, mode, at(T), None, None).unwrap();
        assert_eq!((r.follow_up, info), (None, ReplyInfo::default()));
    }

    #[test]
    fn short_or_broken_bytes_never_panic() {
        let mode = Mode::Unauthenticated;
        let good = reflect(&request(mode, 72, 3), mode, None);
        let at = Instant::from_ns;
        for n in 0..good.len() {
            let d = decode_reply(&good[..n], mode, at(T), None, None);
            assert_eq!(d.is_some(), n >= 44, "length {n}");
        }
        // A TLV length running past the end is skipped, the base packet kept.
        let mut bad = good.clone();
        bad[44 + 2] = 0xff;
        assert!(decode_reply(&bad, mode, at(T), None, None).is_some());
        assert!(decode_reply(&good, Mode::Authenticated, at(T), None, None).is_none());
    }

    #[test]
    fn hmac_checked_over_the_base_packet() {
        let key = StampKey::new(b"k").unwrap();
        let mode = Mode::Authenticated;
        let mut reply = reflect(&request(mode, 140, 3), mode, None);
        let tag = hmac16(&key, &[&reply[..96]]);
        reply[96..112].copy_from_slice(&tag);
        assert!(reply_authentic(&key, &reply, mode));
        assert!(!reply_authentic(
            &StampKey::new(b"j").unwrap(),
            &reply,
            mode
        ));
        let mut flipped = reply.clone();
        flipped[20] ^= 1;
        assert!(!reply_authentic(&key, &flipped, mode));
        assert!(!reply_authentic(&key, &reply[..111], mode));
        assert!(reply_authentic(&key, &reply[..44], Mode::Unauthenticated));
    }
}
