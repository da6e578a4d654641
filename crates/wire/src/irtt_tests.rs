//! Tests of the irtt codec, against packets Debian's irtt 0.9.0 client sent.

use super::*;
use crate::irtt_params::{Clock, Params, ReceivedStats, StampAt};

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// `irtt client -d 1s -i 100ms` (defaults otherwise): its open request.
const OPEN_PLAIN: &str = "14a75b0101020280a8d6b907038084af5f050606060706";
/// `irtt client -d 1s -i 100ms -l 100 --hmac=secret`: its open request.
const OPEN_HMAC: &str =
    "14a75b09a9fc9d425fcf6e8c69cde0ee764cb5ab01020280a8d6b907038084af5f04c801050606060706";

fn wanted(length: i64) -> Params {
    Params {
        protocol_version: 1,
        duration_ns: 1_000_000_000,
        interval_ns: 100_000_000,
        length,
        received_stats: ReceivedStats::Both,
        stamp_at: StampAt::Both,
        clock: Clock::Both,
        dscp: 0,
        server_fill: String::new(),
    }
}

#[test]
fn reads_irtt_clients_open_requests_and_writes_the_same_bytes() {
    let b = hex(OPEN_PLAIN);
    let p = parse(&b, None, false).unwrap();
    assert_eq!(
        p,
        Packet::Open {
            close: false,
            token: None,
            params: wanted(0)
        }
    );
    let mut out = [0u8; 64];
    let n = emit_open(None, &wanted(0), false, None, &mut out).unwrap();
    assert_eq!(&out[..n], &b[..]);

    let b = hex(OPEN_HMAC);
    let key = Some(&b"secret"[..]);
    let Packet::Open { params, .. } = parse(&b, key, false).unwrap() else {
        panic!()
    };
    assert_eq!(params, wanted(100));
    let n = emit_open(None, &wanted(100), false, key, &mut out).unwrap();
    assert_eq!(&out[..n], &b[..], "same HMAC-MD5 as irtt's");
}

#[test]
fn hmac_rules_are_irtts() {
    let b = hex(OPEN_HMAC);
    assert_eq!(parse(&b, None, false), Err(IrttError::HmacUnexpected));
    assert_eq!(
        parse(&b, Some(b"other"), false),
        Err(IrttError::HmacMismatch)
    );
    assert_eq!(
        parse(&hex(OPEN_PLAIN), Some(b"secret"), false),
        Err(IrttError::HmacMissing)
    );
    let mut bad = b.clone();
    *bad.last_mut().unwrap() ^= 1;
    assert_eq!(
        parse(&bad, Some(b"secret"), false),
        Err(IrttError::HmacMismatch)
    );
    let long = vec![1u8; MAX_KEY_LEN + 1];
    assert!(parse(&b, Some(&long), false)
        .unwrap_err()
        .to_string()
        .contains("1024"));
}

#[test]
fn header_errors_name_what_is_wrong() {
    assert!(matches!(
        Header::parse(&[0x14, 0xa7]),
        Err(IrttError::Truncated { need: 4, .. })
    ));
    assert_eq!(
        Header::parse(&[1, 2, 3, 0]),
        Err(IrttError::BadMagic([1, 2, 3]))
    );
    assert_eq!(
        Header::parse(&[0x14, 0xa7, 0x5b, 0x10]),
        Err(IrttError::BadFlags(0x10))
    );
    let mut big = vec![0u8; MAX_PACKET_LEN + 1];
    big[..4].copy_from_slice(&[0x14, 0xa7, 0x5b, 0]);
    assert!(Header::parse(&big)
        .unwrap_err()
        .to_string()
        .contains("9216"));
    // A request where a reply is expected, and the other way round.
    let b = hex(OPEN_PLAIN);
    assert_eq!(
        parse(&b, None, true),
        Err(IrttError::ReplyFlag { found: false })
    );
    let e = parse(&b, None, true).unwrap_err().to_string();
    assert!(e.contains("expected set"), "{e}");
}

#[test]
fn open_reply_and_close_round_trip() {
    let mut out = [0u8; 128];
    for key in [None, Some(&b"k"[..])] {
        let n = emit_open(
            Some(0x1122_3344_5566_7788),
            &wanted(0),
            false,
            key,
            &mut out,
        )
        .unwrap();
        assert_eq!(
            parse(&out[..n], key, true).unwrap(),
            Packet::Open {
                close: false,
                token: Some(0x1122_3344_5566_7788),
                params: wanted(0)
            }
        );
        let n = emit_close(42, key, &mut out).unwrap();
        assert_eq!(
            parse(&out[..n], key, false).unwrap(),
            Packet::Close { token: 42 }
        );
    }
    let n = emit_open(Some(0), &wanted(0), false, None, &mut out).unwrap();
    assert_eq!(parse(&out[..n], None, true), Err(IrttError::ZeroToken));
    // A refusal (close) may carry a zero token.
    let n = emit_open(Some(0), &wanted(0), true, None, &mut out).unwrap();
    assert!(parse(&out[..n], None, true).is_ok());
}

#[test]
fn echo_layouts_follow_the_negotiated_fields() {
    let full = Layout::new(&wanted(0), false);
    // token 8 + seqno 4 + count 4 + window 8 + 4 stamps.
    assert_eq!(full.offsets().end, 4 + 8 + 4 + 4 + 8 + 32);
    let mut p = wanted(0);
    p.stamp_at = StampAt::Midpoint;
    p.clock = Clock::Monotonic;
    p.received_stats = ReceivedStats::None;
    let mid = Layout::new(&p, true);
    let o = mid.offsets();
    assert_eq!(o.stamps, [None, None, None, Some(32), None, None]);
    assert_eq!(o.end, 40);
    assert_eq!(mid.packet_len(100), 100);
    assert_eq!(mid.packet_len(0), 40);

    let e = Echo {
        token: 7,
        seqno: 9,
        received_count: Some(3),
        received_window: Some(0b111),
        receive: Time {
            wall_ns: 1,
            mono_ns: 2,
        },
        send: Time {
            wall_ns: 3,
            mono_ns: 4,
        },
    };
    let mut out = [0u8; 256];
    for (layout, key) in [(full, None), (mid, Some(&b"k"[..]))] {
        // A request has its stats and stamps zeroed, and is as long as the reply.
        let rq = emit_echo(&layout, &e, false, 0, key, &mut out).unwrap();
        assert_eq!(
            parse(&out[..rq], key, false).unwrap(),
            Packet::Echo { token: 7 }
        );
        let got = parse_echo(&out[..rq], &layout).unwrap();
        assert_eq!(
            (got.seqno, got.receive, got.send),
            (9, Time::default(), Time::default())
        );
        let rp = emit_echo(&layout, &e, true, 120, key, &mut out).unwrap();
        assert_eq!(rp, 120);
        assert_eq!(
            parse(&out[..rp], key, true).unwrap(),
            Packet::Echo { token: 7 }
        );
        let got = parse_echo(&out[..rp], &layout).unwrap();
        if layout == full {
            assert_eq!(got, e);
        } else {
            // Only the monotonic midpoint travels.
            let mid = Time {
                wall_ns: 0,
                mono_ns: 2,
            };
            assert_eq!(
                (got.received_count, got.receive, got.send),
                (None, mid, mid)
            );
        }
    }
    let e = parse_echo(&out[..20], &full).unwrap_err().to_string();
    assert!(e.contains("need 60 bytes, have 20"), "{e}");
}
