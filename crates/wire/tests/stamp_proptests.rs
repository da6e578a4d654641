//! STAMP property tests: emit-then-parse is the identity for both packet
//! kinds in both modes and for TLV lists; no parser, iterator or the
//! reflection builder panics on arbitrary bytes.

use misura_wire::stamp::{
    build_reflection, emit_tlvs, from_wire, to_wire, ErrorEstimate, Mode, ReflectParams,
    ReflectorRepr, SenderRepr, StampReflectorPacket, StampSenderPacket, StampTimestampFormat,
    TimestampInfo, TlvFlags, TlvRepr, Tlvs,
};
use proptest::prelude::*;

fn arb_hmac() -> impl Strategy<Value = Option<[u8; 16]>> {
    proptest::option::of(any::<[u8; 16]>())
}

fn arb_sender() -> impl Strategy<Value = SenderRepr> {
    (
        any::<u32>(),
        any::<[u8; 8]>(),
        any::<u16>(),
        any::<u16>(),
        arb_hmac(),
    )
        .prop_map(|(seq, timestamp, ee, ssid, hmac)| SenderRepr {
            seq,
            timestamp,
            error_estimate: ErrorEstimate(ee),
            ssid,
            hmac,
        })
}

fn arb_reflector() -> impl Strategy<Value = ReflectorRepr> {
    (
        (any::<u32>(), any::<[u8; 8]>(), any::<u16>(), any::<u16>()),
        (
            any::<[u8; 8]>(),
            any::<u32>(),
            any::<[u8; 8]>(),
            any::<u16>(),
        ),
        any::<u8>(),
        arb_hmac(),
    )
        .prop_map(
            |((seq, ts, ee, ssid), (rx, sseq, sts, see), ttl, hmac)| ReflectorRepr {
                seq,
                timestamp: ts,
                error_estimate: ErrorEstimate(ee),
                ssid,
                receive_timestamp: rx,
                sender_seq: sseq,
                sender_timestamp: sts,
                sender_error_estimate: ErrorEstimate(see),
                sender_ttl: ttl,
                hmac,
            },
        )
}

/// TLV description owning its variable parts; `as_repr` borrows them.
#[derive(Clone, Debug)]
enum Tlv {
    Pad(u8, Vec<u8>),
    Loc(u8, u16, u16, Vec<u8>),
    Ts(u8, [u8; 4], Vec<u8>),
    Cos(u8, u8, u8, u8, u8),
    Dm(u8, u32, u32, u32),
    Ar(u8, u8, u8),
    Fu(u8, u32, [u8; 8], u8),
    Hmac(u8, [u8; 16]),
    Unknown(u8, u8, Vec<u8>),
}

impl Tlv {
    fn as_repr(&self) -> TlvRepr<'_> {
        match self {
            Tlv::Pad(f, p) => TlvRepr::ExtraPadding {
                flags: TlvFlags(*f),
                padding: p,
            },
            Tlv::Loc(f, d, s, sub) => TlvRepr::Location {
                flags: TlvFlags(*f),
                dst_port: *d,
                src_port: *s,
                sub_tlvs: sub,
            },
            Tlv::Ts(f, i, sub) => TlvRepr::TimestampInformation {
                flags: TlvFlags(*f),
                info: TimestampInfo {
                    sync_src_in: i[0],
                    timestamp_in: i[1],
                    sync_src_out: i[2],
                    timestamp_out: i[3],
                },
                sub_tlvs: sub,
            },
            Tlv::Cos(f, d1, d2, e, r) => TlvRepr::ClassOfService {
                flags: TlvFlags(*f),
                dscp1: *d1,
                dscp2: *d2,
                ecn: *e,
                rp: *r,
            },
            Tlv::Dm(f, a, b, c) => TlvRepr::DirectMeasurement {
                flags: TlvFlags(*f),
                sender_tx: *a,
                reflector_rx: *b,
                reflector_tx: *c,
            },
            Tlv::Ar(f, id, rc) => TlvRepr::AccessReport {
                flags: TlvFlags(*f),
                id: *id,
                return_code: *rc,
            },
            Tlv::Fu(f, s, t, m) => TlvRepr::FollowUpTelemetry {
                flags: TlvFlags(*f),
                seq: *s,
                timestamp: *t,
                mode: *m,
            },
            Tlv::Hmac(f, h) => TlvRepr::Hmac {
                flags: TlvFlags(*f),
                hmac: *h,
            },
            Tlv::Unknown(f, t, v) => TlvRepr::Unknown {
                flags: TlvFlags(*f),
                typ: *t,
                value: v,
            },
        }
    }
}

fn bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(any::<u8>(), 0..max)
}

fn arb_tlv() -> impl Strategy<Value = Tlv> {
    prop_oneof![
        (any::<u8>(), bytes(40)).prop_map(|(f, p)| Tlv::Pad(f, p)),
        (any::<u8>(), any::<u16>(), any::<u16>(), bytes(24))
            .prop_map(|(f, d, s, v)| Tlv::Loc(f, d, s, v)),
        (any::<u8>(), any::<[u8; 4]>(), bytes(12)).prop_map(|(f, i, v)| Tlv::Ts(f, i, v)),
        (any::<u8>(), 0u8..64, 0u8..64, 0u8..4, 0u8..4)
            .prop_map(|(f, a, b, e, r)| Tlv::Cos(f, a, b, e, r)),
        (any::<u8>(), any::<u32>(), any::<u32>(), any::<u32>())
            .prop_map(|(f, a, b, c)| Tlv::Dm(f, a, b, c)),
        (any::<u8>(), 0u8..16, any::<u8>()).prop_map(|(f, i, r)| Tlv::Ar(f, i, r)),
        (any::<u8>(), any::<u32>(), any::<[u8; 8]>(), any::<u8>())
            .prop_map(|(f, s, t, m)| Tlv::Fu(f, s, t, m)),
        (any::<u8>(), any::<[u8; 16]>()).prop_map(|(f, h)| Tlv::Hmac(f, h)),
        (any::<u8>(), 9u8..=255, bytes(40)).prop_map(|(f, t, v)| Tlv::Unknown(f, t, v)),
    ]
}

proptest! {
    #[test]
    fn sender_round_trip(r in arb_sender(), tail in bytes(64)) {
        let mut buf = vec![0xa5u8; 112 + tail.len()];
        let n = r.emit(&mut buf).unwrap();
        prop_assert_eq!(n, r.buffer_len());
        buf[n..n + tail.len()].copy_from_slice(&tail);
        prop_assert_eq!(SenderRepr::parse(&buf[..n + tail.len()], r.mode()), Ok(r));
        let p = StampSenderPacket::new_checked(&buf[..n + tail.len()], r.mode()).unwrap();
        prop_assert_eq!(p.tlv_bytes(), &tail[..]);
    }

    #[test]
    fn reflector_round_trip(r in arb_reflector()) {
        let mut buf = [0xa5u8; 112];
        let n = r.emit(&mut buf).unwrap();
        prop_assert_eq!(ReflectorRepr::parse(&buf[..n], r.mode()), Ok(r));
    }

    #[test]
    fn tlv_list_round_trip(tlvs in proptest::collection::vec(arb_tlv(), 0..8)) {
        let reprs: Vec<TlvRepr<'_>> = tlvs.iter().map(Tlv::as_repr).collect();
        let mut buf = vec![0xa5u8; 2048];
        let n = emit_tlvs(&reprs, &mut buf).unwrap();
        let back: Vec<_> = Tlvs::new(&buf[..n]).collect::<Result<_, _>>().unwrap();
        prop_assert_eq!(back, reprs);
    }

    #[test]
    fn arbitrary_bytes_never_panic(data in bytes(300), auth in any::<bool>()) {
        let mode = if auth { Mode::Authenticated } else { Mode::Unauthenticated };
        let _ = SenderRepr::parse(&data, mode);
        let _ = ReflectorRepr::parse(&data, mode);
        for t in Tlvs::new(&data) {
            let _ = t;
        }
        if let Ok(p) = StampReflectorPacket::new_checked(&data[..], mode) {
            prop_assert!(p.tlvs().count() <= data.len());
        }
        let mut out = vec![0u8; data.len()];
        if let Ok(n) = build_reflection(&data, mode, &ReflectParams::default(), &mut out) {
            prop_assert_eq!(n, data.len());
            prop_assert!(ReflectorRepr::parse(&out[..n], mode).is_ok());
        }
    }

    #[test]
    fn ntp_round_trip(ns in -61_505_152_000_000_000i64..4_233_462_144_000_000_000) {
        prop_assert_eq!(from_wire(to_wire(ns, StampTimestampFormat::Ntp), StampTimestampFormat::Ntp), ns);
    }

    #[test]
    fn ptp_round_trip(ns in 0i64..(1i64 << 32) * 1_000_000_000) {
        prop_assert_eq!(from_wire(to_wire(ns, StampTimestampFormat::Ptp), StampTimestampFormat::Ptp), ns);
    }

    #[test]
    fn error_estimate_covers(ns in any::<u64>()) {
        let e = ErrorEstimate::from_ns(ns, false, StampTimestampFormat::Ntp);
        prop_assert!(e.is_valid());
        prop_assert!(e.to_ns() >= u128::from(ns));
    }
}
