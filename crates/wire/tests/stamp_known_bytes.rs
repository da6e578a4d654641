//! STAMP (RFC 8762 / RFC 8972) against hand-written byte literals. Every
//! literal is laid out from the RFC diagrams, with a distinct value in every
//! field, so a misplaced offset cannot pass. Emit targets are prefilled with
//! 0xa5 to prove that MBZ fields are zeroed and nothing beyond is touched.

use misura_wire::stamp::{
    self, build_reflection, emit_tlvs, from_wire, hmac_covered, reflect_len, tlv_hmac_covered,
    tlv_type, to_wire, ErrorEstimate, Mode, RawTlvs, ReflectParams, ReflectorRepr, SenderRepr,
    StampReflectorPacket, StampSenderPacket, StampTimestampFormat as Fmt, TimestampInfo, TlvFlags,
    TlvRepr, Tlvs,
};
use misura_wire::WireError;

const TS1: [u8; 8] = [0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18];
const TS2: [u8; 8] = [0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28];
const TS3: [u8; 8] = [0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38];
const HMAC: [u8; 16] = [
    0xe0, 0xe1, 0xe2, 0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8, 0xe9, 0xea, 0xeb, 0xec, 0xed, 0xee, 0xef,
];

fn sender(hmac: Option<[u8; 16]>) -> SenderRepr {
    SenderRepr {
        seq: 0x0102_0304,
        timestamp: TS1,
        error_estimate: ErrorEstimate(0x8305), // S=1, Z=0, scale 3, mult 5
        ssid: 0x4142,
        hmac,
    }
}

fn reflector(hmac: Option<[u8; 16]>) -> ReflectorRepr {
    ReflectorRepr {
        seq: 0x0506_0708,
        timestamp: TS2,
        error_estimate: ErrorEstimate(0x4a09), // S=0, Z=1, scale 10, mult 9
        ssid: 0x4344,
        receive_timestamp: TS3,
        sender_seq: 0x5152_5354,
        sender_timestamp: TS1,
        sender_error_estimate: ErrorEstimate(0xc10b),
        sender_ttl: 0x3f,
        hmac,
    }
}

fn unauth_sender_bytes() -> Vec<u8> {
    let mut v = vec![0x01, 0x02, 0x03, 0x04]; // seq
    v.extend_from_slice(&TS1); // 4..12 timestamp
    v.extend_from_slice(&[0x83, 0x05, 0x41, 0x42]); // 12 EE, 14 SSID
    v.extend_from_slice(&[0; 28]); // 16..44 MBZ
    assert_eq!(v.len(), 44);
    v
}

fn auth_sender_bytes() -> Vec<u8> {
    let mut v = vec![0x01, 0x02, 0x03, 0x04]; // seq
    v.extend_from_slice(&[0; 12]); // 4..16 MBZ
    v.extend_from_slice(&TS1); // 16..24 timestamp
    v.extend_from_slice(&[0x83, 0x05, 0x41, 0x42]); // 24 EE, 26 SSID
    v.extend_from_slice(&[0; 68]); // 28..96 MBZ
    v.extend_from_slice(&HMAC); // 96..112
    assert_eq!(v.len(), 112);
    v
}

fn unauth_reflector_bytes() -> Vec<u8> {
    let mut v = vec![0x05, 0x06, 0x07, 0x08]; // seq
    v.extend_from_slice(&TS2); // 4 timestamp
    v.extend_from_slice(&[0x4a, 0x09, 0x43, 0x44]); // 12 EE, 14 SSID
    v.extend_from_slice(&TS3); // 16 receive timestamp
    v.extend_from_slice(&[0x51, 0x52, 0x53, 0x54]); // 24 sender seq
    v.extend_from_slice(&TS1); // 28 sender timestamp
    v.extend_from_slice(&[0xc1, 0x0b, 0, 0]); // 36 sender EE, 38 MBZ
    v.extend_from_slice(&[0x3f, 0, 0, 0]); // 40 TTL, 41 MBZ
    assert_eq!(v.len(), 44);
    v
}

fn auth_reflector_bytes() -> Vec<u8> {
    let mut v = vec![0x05, 0x06, 0x07, 0x08]; // 0 seq
    v.extend_from_slice(&[0; 12]); // 4 MBZ
    v.extend_from_slice(&TS2); // 16 timestamp
    v.extend_from_slice(&[0x4a, 0x09, 0x43, 0x44]); // 24 EE, 26 SSID
    v.extend_from_slice(&[0; 4]); // 28 MBZ
    v.extend_from_slice(&TS3); // 32 receive timestamp
    v.extend_from_slice(&[0; 8]); // 40 MBZ
    v.extend_from_slice(&[0x51, 0x52, 0x53, 0x54]); // 48 sender seq
    v.extend_from_slice(&[0; 12]); // 52 MBZ
    v.extend_from_slice(&TS1); // 64 sender timestamp
    v.extend_from_slice(&[0xc1, 0x0b]); // 72 sender EE
    v.extend_from_slice(&[0; 6]); // 74 MBZ
    v.push(0x3f); // 80 TTL
    v.extend_from_slice(&[0; 15]); // 81 MBZ
    v.extend_from_slice(&HMAC); // 96 HMAC
    assert_eq!(v.len(), 112);
    v
}

fn check_emit(emit: impl Fn(&mut [u8]) -> Result<usize, WireError>, expected: &[u8]) {
    let mut buf = [0xa5u8; 200];
    let n = emit(&mut buf).unwrap();
    assert_eq!(n, expected.len());
    assert_eq!(&buf[..n], expected);
    assert!(buf[n..].iter().all(|&b| b == 0xa5), "wrote past the packet");
    // Too small: error and untouched.
    let mut small = vec![0xa5u8; expected.len() - 1];
    assert_eq!(
        emit(&mut small),
        Err(WireError::BufferTooSmall {
            need: expected.len(),
            have: expected.len() - 1
        })
    );
    assert!(small.iter().all(|&b| b == 0xa5));
}

#[test]
fn sender_unauthenticated_known_bytes() {
    let r = sender(None);
    let b = unauth_sender_bytes();
    check_emit(|buf| r.emit(buf), &b);
    assert_eq!(r.buffer_len(), 44);
    assert_eq!(SenderRepr::parse(&b, Mode::Unauthenticated), Ok(r));
    let p = StampSenderPacket::new_checked(&b[..], Mode::Unauthenticated).unwrap();
    assert_eq!(p.seq(), 0x0102_0304);
    assert_eq!(p.timestamp(), TS1);
    assert_eq!(p.ssid(), 0x4142);
    assert_eq!(p.hmac(), None);
    assert!(p.tlv_bytes().is_empty());
}

#[test]
fn sender_authenticated_known_bytes() {
    let r = sender(Some(HMAC));
    let b = auth_sender_bytes();
    check_emit(|buf| r.emit(buf), &b);
    assert_eq!(r.buffer_len(), 112);
    assert_eq!(SenderRepr::parse(&b, Mode::Authenticated), Ok(r));
    let p = StampSenderPacket::new_checked(&b[..], Mode::Authenticated).unwrap();
    assert_eq!(p.hmac(), Some(HMAC));
    assert_eq!(p.error_estimate(), ErrorEstimate(0x8305));
}

#[test]
fn reflector_unauthenticated_known_bytes() {
    let r = reflector(None);
    let b = unauth_reflector_bytes();
    check_emit(|buf| r.emit(buf), &b);
    assert_eq!(ReflectorRepr::parse(&b, Mode::Unauthenticated), Ok(r));
    let p = StampReflectorPacket::new_checked(&b[..], Mode::Unauthenticated).unwrap();
    assert_eq!(p.receive_timestamp(), TS3);
    assert_eq!(p.sender_seq(), 0x5152_5354);
    assert_eq!(p.sender_timestamp(), TS1);
    assert_eq!(p.sender_error_estimate(), ErrorEstimate(0xc10b));
    assert_eq!(p.sender_ttl(), 0x3f);
}

#[test]
fn reflector_authenticated_known_bytes() {
    let r = reflector(Some(HMAC));
    let b = auth_reflector_bytes();
    check_emit(|buf| r.emit(buf), &b);
    assert_eq!(ReflectorRepr::parse(&b, Mode::Authenticated), Ok(r));
    let p = StampReflectorPacket::new_checked(&b[..], Mode::Authenticated).unwrap();
    assert_eq!(p.hmac(), Some(HMAC));
    assert_eq!(p.sender_ttl(), 0x3f);
}

#[test]
fn mbz_is_ignored_on_parse() {
    let mut b = unauth_reflector_bytes();
    b[38] = 0xff;
    b[43] = 0xff;
    assert_eq!(
        ReflectorRepr::parse(&b, Mode::Unauthenticated),
        Ok(reflector(None))
    );
    let mut b = auth_sender_bytes();
    b[5] = 0xff;
    b[95] = 0xff;
    assert_eq!(
        SenderRepr::parse(&b, Mode::Authenticated),
        Ok(sender(Some(HMAC)))
    );
}

#[test]
fn view_setters_patch_in_place() {
    let mut b = auth_reflector_bytes();
    let mut p = StampReflectorPacket::new_checked(&mut b[..], Mode::Authenticated).unwrap();
    p.set_seq(0xdead_beef);
    p.set_sender_ttl(1);
    p.set_hmac([0; 16]);
    assert_eq!(&b[0..4], &[0xde, 0xad, 0xbe, 0xef]);
    assert_eq!(b[80], 1);
    assert_eq!(&b[96..112], &[0; 16]);
}

#[test]
fn truncated_base_packets() {
    for mode in [Mode::Unauthenticated, Mode::Authenticated] {
        let need = mode.base_len();
        let b = vec![0u8; need - 1];
        let e = WireError::Truncated {
            need,
            have: need - 1,
        };
        assert_eq!(SenderRepr::parse(&b, mode), Err(e.clone()));
        assert_eq!(ReflectorRepr::parse(&b, mode), Err(e));
        assert!(StampSenderPacket::new_checked(&b[..], mode).is_err());
        assert!(StampReflectorPacket::new_checked(&[][..], mode).is_err());
    }
    // An unauthenticated 44-byte packet is too short for authenticated mode.
    assert!(SenderRepr::parse(&unauth_sender_bytes(), Mode::Authenticated).is_err());
}

#[test]
fn hmac_ranges() {
    assert_eq!(hmac_covered(Mode::Authenticated), Some(0..96));
    assert_eq!(hmac_covered(Mode::Unauthenticated), None);
    assert_eq!(stamp::HMAC_FIELD, 96..112);
}

// ----------------------------------------------------------------- TLVs --

fn check_tlv(t: TlvRepr<'_>, expected: &[u8]) {
    check_emit(|buf| t.emit(buf), expected);
    assert_eq!(t.buffer_len(), expected.len());
    assert_eq!(TlvRepr::parse(expected), Ok(t));
    let all: Vec<_> = Tlvs::new(expected).collect();
    assert_eq!(all, vec![Ok(t)]);
}

#[test]
fn tlv_extra_padding() {
    check_tlv(
        TlvRepr::ExtraPadding {
            flags: TlvFlags::U,
            padding: &[0x61, 0x62, 0x63],
        },
        &[0x80, 0x01, 0x00, 0x03, 0x61, 0x62, 0x63],
    );
}

#[test]
fn tlv_location() {
    check_tlv(
        TlvRepr::Location {
            flags: TlvFlags(0x40),
            dst_port: 0x035e,
            src_port: 0xc001,
            sub_tlvs: &[0x80, 0x02, 0x00, 0x04, 0xc0, 0x00, 0x02, 0x01],
        },
        &[
            0x40, 0x02, 0x00, 0x0c, // header
            0x03, 0x5e, 0xc0, 0x01, // ports
            0x80, 0x02, 0x00, 0x04, 0xc0, 0x00, 0x02, 0x01, // sub-TLV
        ],
    );
}

#[test]
fn tlv_timestamp_information() {
    check_tlv(
        TlvRepr::TimestampInformation {
            flags: TlvFlags(0x20),
            info: TimestampInfo {
                sync_src_in: stamp::sync_source::PTP,
                timestamp_in: stamp::timestamp_method::HW_ASSIST,
                sync_src_out: stamp::sync_source::LOCAL_FREE_RUNNING,
                timestamp_out: stamp::timestamp_method::CONTROL_PLANE,
            },
            sub_tlvs: &[],
        },
        &[0x20, 0x03, 0x00, 0x04, 0x02, 0x01, 0x05, 0x03],
    );
}

#[test]
fn tlv_class_of_service() {
    // DSCP1 = 0b101110 (EF), DSCP2 = 0b001010 (AF11), ECN = 0b01, RP = 0b10.
    // Bits: 101110 001010 01 10 -> 1011 1000 1010 0110 = 0xb8 0xa6.
    check_tlv(
        TlvRepr::ClassOfService {
            flags: TlvFlags::U,
            dscp1: 46,
            dscp2: 10,
            ecn: 1,
            rp: 2,
        },
        &[0x80, 0x04, 0x00, 0x04, 0xb8, 0xa6, 0x00, 0x00],
    );
    // Out-of-range sub-field.
    let bad = TlvRepr::ClassOfService {
        flags: TlvFlags(0),
        dscp1: 64,
        dscp2: 0,
        ecn: 0,
        rp: 0,
    };
    assert!(matches!(
        bad.emit(&mut [0; 8]),
        Err(WireError::BadField { .. })
    ));
}

#[test]
fn tlv_direct_measurement() {
    check_tlv(
        TlvRepr::DirectMeasurement {
            flags: TlvFlags::U,
            sender_tx: 0x0a0b_0c0d,
            reflector_rx: 0x1a1b_1c1d,
            reflector_tx: 0x2a2b_2c2d,
        },
        &[
            0x80, 0x05, 0x00, 0x0c, 0x0a, 0x0b, 0x0c, 0x0d, 0x1a, 0x1b, 0x1c, 0x1d, 0x2a, 0x2b,
            0x2c, 0x2d,
        ],
    );
}

#[test]
fn tlv_access_report() {
    check_tlv(
        TlvRepr::AccessReport {
            flags: TlvFlags::U,
            id: 2,
            return_code: 1,
        },
        &[0x80, 0x06, 0x00, 0x04, 0x20, 0x01, 0x00, 0x00],
    );
}

#[test]
fn tlv_follow_up_telemetry() {
    check_tlv(
        TlvRepr::FollowUpTelemetry {
            flags: TlvFlags(0),
            seq: 0x7172_7374,
            timestamp: TS2,
            mode: stamp::timestamp_method::SW_LOCAL,
        },
        &[
            0x00, 0x07, 0x00, 0x10, // header
            0x71, 0x72, 0x73, 0x74, // seq
            0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28, // timestamp
            0x02, 0x00, 0x00, 0x00, // mode, reserved
        ],
    );
}

#[test]
fn tlv_hmac() {
    let mut expected = vec![0x80, 0x08, 0x00, 0x10];
    expected.extend_from_slice(&HMAC);
    check_tlv(
        TlvRepr::Hmac {
            flags: TlvFlags::U,
            hmac: HMAC,
        },
        &expected,
    );
}

#[test]
fn tlv_unknown_survives() {
    check_tlv(
        TlvRepr::Unknown {
            flags: TlvFlags(0x9f),
            typ: 0xf3,
            value: &[0xca, 0xfe],
        },
        &[0x9f, 0xf3, 0x00, 0x02, 0xca, 0xfe],
    );
}

#[test]
fn tlv_type_numbers() {
    assert_eq!(
        [
            tlv_type::EXTRA_PADDING,
            tlv_type::LOCATION,
            tlv_type::TIMESTAMP_INFORMATION,
            tlv_type::CLASS_OF_SERVICE,
            tlv_type::DIRECT_MEASUREMENT,
            tlv_type::ACCESS_REPORT,
            tlv_type::FOLLOW_UP_TELEMETRY,
            tlv_type::HMAC
        ],
        [1, 2, 3, 4, 5, 6, 7, 8]
    );
    assert_eq!(
        (TlvFlags::U.0, TlvFlags::M.0, TlvFlags::I.0),
        (0x80, 0x40, 0x20)
    );
}

#[test]
fn tlv_iteration_errors() {
    // Good TLV, then a known type with the wrong length (iteration goes on),
    // then one whose length overruns the buffer (iteration stops).
    let b = [
        0x80, 0x01, 0x00, 0x01, 0x00, // padding, 1 byte
        0x80, 0x05, 0x00, 0x02, 0xaa, 0xbb, // direct measurement, length 2
        0x80, 0x06, 0x00, 0x04, 0x10, 0x01, 0x00, 0x00, // access report
        0x80, 0x07, 0x00, 0x10, 0x00, // follow-up, claims 16, has 1
    ];
    let v: Vec<_> = Tlvs::new(&b).collect();
    assert_eq!(v.len(), 4);
    assert!(v[0].is_ok());
    assert_eq!(v[1], Err(WireError::BadTlv { typ: 5, len: 2 }));
    assert!(v[2].is_ok());
    assert_eq!(v[3], Err(WireError::Truncated { need: 20, have: 5 }));

    // A tail too short for a header.
    let v: Vec<_> = Tlvs::new(&[0x80, 0x01, 0x00]).collect();
    assert_eq!(v, vec![Err(WireError::Truncated { need: 4, have: 3 })]);
    assert_eq!(Tlvs::new(&[]).count(), 0);
    assert!(TlvRepr::parse(&[]).is_err());
}

#[test]
fn tlvs_in_packet_and_emit_list() {
    let tlvs = [
        TlvRepr::TimestampInformation {
            flags: TlvFlags::SENDER,
            info: TimestampInfo::default(),
            sub_tlvs: &[],
        },
        TlvRepr::Hmac {
            flags: TlvFlags::SENDER,
            hmac: [0; 16],
        },
    ];
    let mut buf = [0xa5u8; 200];
    let base = sender(Some(HMAC)).emit(&mut buf).unwrap();
    let n = base + emit_tlvs(&tlvs, &mut buf[base..]).unwrap();
    assert_eq!(n, 112 + 8 + 20);
    let p = StampSenderPacket::new_checked(&buf[..n], Mode::Authenticated).unwrap();
    let got: Vec<_> = p.tlvs().map(Result::unwrap).collect();
    assert_eq!(got, tlvs);
    let cov = tlv_hmac_covered(&buf[..n], Mode::Authenticated).unwrap();
    assert_eq!(cov.seq, 0..4);
    assert_eq!(cov.tlvs, 112..120);
    assert_eq!(cov.hmac, 124..140);
    assert_eq!(tlv_hmac_covered(&buf[..base], Mode::Authenticated), None);
    assert!(emit_tlvs(&tlvs, &mut [0; 27]).is_err());
}

// ----------------------------------------------------------- reflection --

#[test]
fn reflect_len_is_symmetric() {
    assert_eq!(reflect_len(44), 44);
    assert_eq!(reflect_len(112 + 20), 132);
}

#[test]
fn reflection_fills_base_and_tlvs() {
    // Unauthenticated request with every TLV a reflector fills, plus an
    // unknown one, a malformed one, then one whose length overruns.
    let mut req = unauth_sender_bytes();
    req.extend_from_slice(&[0x80, 0x03, 0x00, 0x04, 0, 0, 0, 0]); // 44 ts info
    req.extend_from_slice(&[0x80, 0x07, 0x00, 0x10]); // 52 follow-up
    req.extend_from_slice(&[0; 16]);
    req.extend_from_slice(&[0x80, 0x05, 0x00, 0x0c, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0]); // 72
    req.extend_from_slice(&[0x80, 0x04, 0x00, 0x04, 0xb8, 0x02, 0, 0]); // 88 CoS, RP=2
    req.extend_from_slice(&[0x80, 0x02, 0x00, 0x04, 0, 0, 0, 0]); // 96 location
    req.extend_from_slice(&[0x80, 0xf0, 0x00, 0x01, 0x77]); // 104 unknown
    req.extend_from_slice(&[0x80, 0x06, 0x00, 0x01, 0x10]); // 109 bad access report
    req.extend_from_slice(&[0x80, 0x01, 0x00, 0x09, 0, 0]); // 114 overrun
    let params = ReflectParams {
        seq: 0x0506_0708,
        timestamp: TS2,
        error_estimate: ErrorEstimate(0x4a09),
        receive_timestamp: TS3,
        sender_ttl: 0x3f,
        tlv_integrity_failed: false,
        timestamp_info: Some(TimestampInfo {
            sync_src_in: 2,
            timestamp_in: 1,
            sync_src_out: 1,
            timestamp_out: 2,
        }),
        follow_up: Some((0x99, TS1, 1)),
        counters: Some((0x0102, 0x0304)),
        received_tos: Some(0x29), // DSCP 10, ECN 1
        ports: Some((862, 50000)),
    };
    let mut out = [0xa5u8; 200];
    let n = build_reflection(&req, Mode::Unauthenticated, &params, &mut out).unwrap();
    assert_eq!(n, req.len());
    assert!(out[n..].iter().all(|&b| b == 0xa5));
    let mut base = unauth_reflector_bytes();
    base[14..16].copy_from_slice(&[0x41, 0x42]); // SSID echoed from request
    base[24..28].copy_from_slice(&[0x01, 0x02, 0x03, 0x04]); // request seq
    base[36..38].copy_from_slice(&[0x83, 0x05]); // request EE
    assert_eq!(&out[..44], &base[..]);
    let mut tl = vec![0x00, 0x03, 0x00, 0x04, 2, 1, 1, 2];
    tl.extend_from_slice(&[0x00, 0x07, 0x00, 0x10, 0, 0, 0, 0x99]);
    tl.extend_from_slice(&TS1);
    tl.extend_from_slice(&[1, 0, 0, 0]);
    tl.extend_from_slice(&[0x00, 0x05, 0x00, 0x0c, 0, 0, 0, 9, 0, 0, 1, 2, 0, 0, 3, 4]);
    // DSCP1 46 kept, DSCP2 10, ECN 1, RP 2 kept: 101110 001010 01 10.
    tl.extend_from_slice(&[0x00, 0x04, 0x00, 0x04, 0xb8, 0xa6, 0, 0]);
    tl.extend_from_slice(&[0x00, 0x02, 0x00, 0x04, 0x03, 0x5e, 0xc3, 0x50]);
    tl.extend_from_slice(&[0x80, 0xf0, 0x00, 0x01, 0x77]); // U stays set
    tl.extend_from_slice(&[0x40, 0x06, 0x00, 0x01, 0x10]); // M set, U cleared
    tl.extend_from_slice(&[0xc0, 0x01, 0x00, 0x09, 0, 0]); // M set, stop
    assert_eq!(&out[44..n], &tl[..]);
}

#[test]
fn reflection_authenticated_zeroes_hmacs_and_sets_integrity() {
    let mut req = auth_sender_bytes();
    req.extend_from_slice(&[0x80, 0x01, 0x00, 0x02, 0xab, 0xcd]);
    req.extend_from_slice(&[0x80, 0x08, 0x00, 0x10]);
    req.extend_from_slice(&HMAC);
    let params = ReflectParams {
        tlv_integrity_failed: true,
        ..Default::default()
    };
    let mut out = vec![0xa5u8; req.len()];
    let n = build_reflection(&req, Mode::Authenticated, &params, &mut out).unwrap();
    assert_eq!(n, req.len());
    assert_eq!(&out[96..112], &[0; 16]);
    assert_eq!(&out[112..118], &[0x20, 0x01, 0x00, 0x02, 0xab, 0xcd]);
    assert_eq!(&out[118..122], &[0x20, 0x08, 0x00, 0x10]);
    assert_eq!(&out[122..138], &[0; 16]);
    let r = ReflectorRepr::parse(&out, Mode::Authenticated).unwrap();
    assert_eq!(r.sender_seq, 0x0102_0304);
    assert_eq!(r.sender_timestamp, TS1);
    assert_eq!(r.hmac, Some([0; 16]));
    let cov = tlv_hmac_covered(&out, Mode::Authenticated).unwrap();
    assert_eq!((cov.tlvs, cov.hmac), (112..118, 122..138));

    // The caller's buffer must hold the whole reply.
    let mut small = vec![0u8; req.len() - 1];
    assert!(matches!(
        build_reflection(&req, Mode::Authenticated, &params, &mut small),
        Err(WireError::BufferTooSmall { .. })
    ));
    // A request too short for its mode.
    assert!(matches!(
        build_reflection(&req[..100], Mode::Authenticated, &params, &mut out),
        Err(WireError::Truncated { .. })
    ));
}

#[test]
fn raw_tlvs_offsets() {
    let b = [0x80, 0x01, 0x00, 0x00, 0x80, 0xf0, 0x00, 0x01, 0x07];
    let v: Vec<_> = RawTlvs::new(&b).map(Result::unwrap).collect();
    assert_eq!(v[0].offset, 0);
    assert_eq!(v[1].offset, 4);
    assert_eq!(v[1].value, &[0x07]);
    assert_eq!(v[1].total_len(), 5);
}

// ----------------------------------------------------------- timestamps --

#[test]
fn ntp_epoch_and_fraction() {
    // Unix epoch = NTP 2_208_988_800 s = 0x83aa7e80.
    assert_eq!(stamp::NTP_UNIX_OFFSET_SECS, 2_208_988_800);
    assert_eq!(to_wire(0, Fmt::Ntp), [0x83, 0xaa, 0x7e, 0x80, 0, 0, 0, 0]);
    // 1.5 s after the epoch: seconds + 1, fraction 0x80000000.
    assert_eq!(
        to_wire(1_500_000_000, Fmt::Ntp),
        [0x83, 0xaa, 0x7e, 0x81, 0x80, 0, 0, 0]
    );
    assert_eq!(
        from_wire([0x83, 0xaa, 0x7e, 0x81, 0x80, 0, 0, 0], Fmt::Ntp),
        1_500_000_000
    );
    // 2024-01-01T00:00:00Z, as built by scapy.
    assert_eq!(
        from_wire([0xe9, 0x3c, 0x7f, 0x00, 0, 0, 0, 0], Fmt::Ntp),
        1_704_067_200_000_000_000
    );
    // 1 ns: round(2^32 / 1e9) = 4.
    assert_eq!(to_wire(1, Fmt::Ntp)[4..], [0, 0, 0, 4]);
    // Just below a second: no carry into the seconds.
    assert_eq!(
        to_wire(999_999_999, Fmt::Ntp),
        [0x83, 0xaa, 0x7e, 0x80, 0xff, 0xff, 0xff, 0xfc]
    );
    // Era 1 (after 2036-02-07): seconds wrap, top bit clear.
    let t2040 = 2_208_988_800_000_000_000; // 2040-01-01
    let w = to_wire(t2040, Fmt::Ntp);
    assert_eq!(w[0] & 0x80, 0);
    assert_eq!(from_wire(w, Fmt::Ntp), t2040);
}

#[test]
fn ntp_round_trip_is_exact_to_the_nanosecond() {
    let mut ns: i64 = 1_704_067_200_000_000_000;
    for step in 0..200_000i64 {
        ns += 1 + step * 7919;
        assert_eq!(from_wire(to_wire(ns, Fmt::Ntp), Fmt::Ntp), ns, "at {ns}");
    }
    // The NTP window ends: 1968-01-20T03:14:08Z and 2104-02-26.
    let lo = -61_505_152_000_000_000;
    let hi = 4_233_462_144_000_000_000 - 1;
    for ns in [lo, lo + 1, -1, 0, 1, hi - 1, hi] {
        assert_eq!(from_wire(to_wire(ns, Fmt::Ntp), Fmt::Ntp), ns);
    }
}

#[test]
fn ptp_is_exact() {
    let ns = 1_704_067_200_123_456_789;
    let w = to_wire(ns, Fmt::Ptp);
    assert_eq!(&w[..4], &1_704_067_200u32.to_be_bytes());
    assert_eq!(&w[4..], &123_456_789u32.to_be_bytes());
    assert_eq!(from_wire(w, Fmt::Ptp), ns);
    assert_eq!(to_wire(0, Fmt::Ptp), [0; 8]);
    assert_eq!(from_wire([0, 0, 0, 1, 0, 0, 0, 1], Fmt::Ptp), 1_000_000_001);
}

// ------------------------------------------------------- error estimate --

#[test]
fn error_estimate_bits() {
    let e = ErrorEstimate::new(true, Fmt::Ptp, 0x3f, 0xff);
    assert_eq!(e.0, 0xffff);
    let e = ErrorEstimate::new(false, Fmt::Ntp, 2, 5);
    assert_eq!(e.0.to_be_bytes(), [0x02, 0x05]);
    let e = ErrorEstimate(0x8a07);
    assert!(e.synchronized());
    assert_eq!(e.format(), Fmt::Ntp);
    assert_eq!((e.scale(), e.multiplier()), (10, 7));
    assert_eq!(ErrorEstimate(0x4001).format(), Fmt::Ptp);
    assert!(!ErrorEstimate(0x8100).is_valid());
    assert!(ErrorEstimate(0x0001).is_valid());
    // Parsing keeps multiplier 0 as it is.
    let mut b = unauth_sender_bytes();
    b[12..14].copy_from_slice(&[0x81, 0x00]);
    let r = SenderRepr::parse(&b, Mode::Unauthenticated).unwrap();
    assert_eq!(r.error_estimate, ErrorEstimate(0x8100));
    assert!(!r.error_estimate.is_valid());
}

#[test]
fn error_estimate_values() {
    // 1 · 2^-32 s = 0.2328 ns, rounded up to 1 ns.
    assert_eq!(ErrorEstimate::new(false, Fmt::Ntp, 0, 1).to_ns(), 1);
    // 1 · 2^(32-32) = 1 s.
    assert_eq!(
        ErrorEstimate::new(false, Fmt::Ntp, 32, 1).to_ns(),
        1_000_000_000
    );
    assert_eq!(
        ErrorEstimate::new(false, Fmt::Ntp, 32, 1).as_secs_f64(),
        1.0
    );
    // 0 ns -> smallest valid.
    let e = ErrorEstimate::from_ns(0, false, Fmt::Ntp);
    assert_eq!((e.scale(), e.multiplier()), (0, 1));
    // 1 s = 2^32 units: smallest scale with m <= 255 is 25 (m = 128).
    let e = ErrorEstimate::from_ns(1_000_000_000, true, Fmt::Ptp);
    assert_eq!((e.scale(), e.multiplier()), (25, 128));
    assert!(e.synchronized());
    assert_eq!(e.format(), Fmt::Ptp);
    // 1 µs = 4294.97 units -> 4295 -> scale 5: ceil(4295/32) = 135 (4320 units).
    let e = ErrorEstimate::from_ns(1_000, false, Fmt::Ntp);
    assert_eq!((e.scale(), e.multiplier()), (5, 135));
    assert_eq!(e.to_ns(), 1_006); // 4320e9/2^32 = 1005.82 -> 1006
                                  // The largest input (584 years) is still representable (max 255·2^31 s).
    let e = ErrorEstimate::from_ns(u64::MAX, false, Fmt::Ntp);
    assert!(e.to_ns() >= u128::from(u64::MAX));
    assert_eq!((e.scale(), e.multiplier()), (59, 138));
    // Always >= the request, and minimal: the next smaller value is below.
    for ns in [
        1u64,
        7,
        233,
        999,
        1_000_000,
        123_456_789,
        86_400_000_000_000,
    ] {
        let e = ErrorEstimate::from_ns(ns, false, Fmt::Ntp);
        assert!(e.is_valid());
        assert!(e.to_ns() >= u128::from(ns), "{ns}");
        let units = u128::from(e.multiplier()) << e.scale();
        let exact_ns = units as f64 * 1e9 / 4_294_967_296.0;
        assert!(exact_ns >= ns as f64 - 1e-6);
        if e.multiplier() > 1 {
            let smaller =
                (u128::from(e.multiplier() - 1) << e.scale()) as f64 * 1e9 / 4_294_967_296.0;
            assert!(smaller < ns as f64, "{ns}: not minimal");
        }
    }
}
