//! First interop check: STAMP packets built by scapy's contrib/stamp.py
//! (scapy 2.8.0) must parse here. tests/data/stamp_scapy.txt was produced
//! with `python3 gen_stamp.py > crates/wire/tests/data/stamp_scapy.txt`
//! (after `pip install scapy==2.8.0`), where gen_stamp.py is:
//!
//! ```python
//! from scapy.contrib.stamp import *
//! T = STAMPTestTLV
//! tlvs = [
//!     T(flags=0x80, type=3, len=4, value=bytes([1, 2, 2, 1])),
//!     T(flags=0x80, type=5, len=12, value=bytes.fromhex('0000000a0000000b0000000c')),
//!     T(flags=0x80, type=7, len=16, value=bytes.fromhex('0000002a83aa7e8180000000' '02000000')),
//!     T(flags=0x80, type=1, len=6, value=bytes(6)),
//! ]
//! s = STAMPSessionSenderTestUnauthenticated(seq=0x01020304, ts=3913056000.5,
//!     err_estimate=ErrorEstimate(S=1, Z=0, scale=2, multiplier=5), ssid=0xbeef, tlv_objects=tlvs)
//! r = STAMPSessionReflectorTestUnauthenticated(seq=7, ts=3913056001.25,
//!     err_estimate=ErrorEstimate(S=0, Z=0, scale=3, multiplier=9), ssid=0xbeef,
//!     ts_rx=3913056001.0, seq_sender=0x01020304, ts_sender=3913056000.5,
//!     err_estimate_sender=ErrorEstimate(S=1, Z=0, scale=2, multiplier=5), ttl_sender=63,
//!     tlv_objects=[T(flags=0, type=3, len=4, value=bytes([1, 1, 1, 1])),
//!                  T(flags=0x40, type=200, len=2, value=b'\xca\xfe')])
//! print("# STAMP test packets built by scapy", __import__("scapy").VERSION,
//!       "contrib/stamp.py; command: see crates/wire/tests/stamp_scapy.rs")
//! print("sender", bytes(s).hex())
//! print("reflector", bytes(r).hex())
//! ```
//!
//! The TLV flags are given numerically: scapy 2.8.0 declares them as
//! `FlagsField('flags', 0, 8, "UMIRRRRR")`, which maps the letter U to the
//! least significant bit (0x01), whereas RFC 8972 §4 puts U in bit 0, the
//! most significant (0x80). Scapy's *names* for the flags are therefore
//! wrong on the wire; numeric values are unaffected. scapy 2.8.0 has no
//! authenticated-mode packets and no TLV type table.

use misura_wire::stamp::{
    from_wire, ErrorEstimate, Mode, ReflectorRepr, SenderRepr, StampTimestampFormat, TimestampInfo,
    TlvFlags, TlvRepr, Tlvs,
};

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn packets() -> (Vec<u8>, Vec<u8>) {
    let text = include_str!("data/stamp_scapy.txt");
    let mut sender = None;
    let mut reflector = None;
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        match line.split_once(' ') {
            Some(("sender", h)) => sender = Some(hex(h.trim())),
            Some(("reflector", h)) => reflector = Some(hex(h.trim())),
            _ => {}
        }
    }
    (sender.unwrap(), reflector.unwrap())
}

/// 2024-01-01T00:00:00Z as Unix nanoseconds; scapy was given NTP seconds
/// 3913056000 (= 1704067200 + 2208988800).
const T0: i64 = 1_704_067_200_000_000_000;

#[test]
fn scapy_sender_parses() {
    let (b, _) = packets();
    let r = SenderRepr::parse(&b, Mode::Unauthenticated).unwrap();
    assert_eq!(r.seq, 0x0102_0304);
    assert_eq!(r.ssid, 0xbeef);
    assert_eq!(
        r.error_estimate,
        ErrorEstimate::new(true, StampTimestampFormat::Ntp, 2, 5)
    );
    assert_eq!(
        from_wire(r.timestamp, StampTimestampFormat::Ntp),
        T0 + 500_000_000
    );
    assert_eq!(r.hmac, None);
    let tlvs: Vec<_> = Tlvs::new(&b[44..]).map(Result::unwrap).collect();
    assert_eq!(
        tlvs,
        vec![
            TlvRepr::TimestampInformation {
                flags: TlvFlags::U,
                info: TimestampInfo {
                    sync_src_in: 1,
                    timestamp_in: 2,
                    sync_src_out: 2,
                    timestamp_out: 1
                },
                sub_tlvs: &[],
            },
            TlvRepr::DirectMeasurement {
                flags: TlvFlags::U,
                sender_tx: 10,
                reflector_rx: 11,
                reflector_tx: 12
            },
            TlvRepr::FollowUpTelemetry {
                flags: TlvFlags::U,
                seq: 42,
                timestamp: [0x83, 0xaa, 0x7e, 0x81, 0x80, 0, 0, 0],
                mode: 2
            },
            TlvRepr::ExtraPadding {
                flags: TlvFlags::U,
                padding: &[0; 6]
            },
        ]
    );
    // Re-emitting gives scapy's bytes back.
    let mut out = vec![0xa5u8; b.len()];
    let n = r.emit(&mut out).unwrap();
    let m = misura_wire::stamp::emit_tlvs(&tlvs, &mut out[n..]).unwrap();
    assert_eq!(n + m, b.len());
    assert_eq!(out, b);
}

#[test]
fn scapy_reflector_parses() {
    let (_, b) = packets();
    let r = ReflectorRepr::parse(&b, Mode::Unauthenticated).unwrap();
    assert_eq!(r.seq, 7);
    assert_eq!(r.ssid, 0xbeef);
    assert_eq!(
        from_wire(r.timestamp, StampTimestampFormat::Ntp),
        T0 + 1_250_000_000
    );
    assert_eq!(
        from_wire(r.receive_timestamp, StampTimestampFormat::Ntp),
        T0 + 1_000_000_000
    );
    assert_eq!(r.sender_seq, 0x0102_0304);
    assert_eq!(
        from_wire(r.sender_timestamp, StampTimestampFormat::Ntp),
        T0 + 500_000_000
    );
    assert_eq!(
        r.error_estimate,
        ErrorEstimate::new(false, StampTimestampFormat::Ntp, 3, 9)
    );
    assert_eq!(r.sender_error_estimate, ErrorEstimate(0x8205));
    assert_eq!(r.sender_ttl, 63);
    let tlvs: Vec<_> = Tlvs::new(&b[44..]).map(Result::unwrap).collect();
    assert_eq!(
        tlvs,
        vec![
            TlvRepr::TimestampInformation {
                flags: TlvFlags(0),
                info: TimestampInfo {
                    sync_src_in: 1,
                    timestamp_in: 1,
                    sync_src_out: 1,
                    timestamp_out: 1
                },
                sub_tlvs: &[],
            },
            TlvRepr::Unknown {
                flags: TlvFlags::M,
                typ: 200,
                value: &[0xca, 0xfe]
            },
        ]
    );
    let mut out = vec![0xa5u8; 44];
    r.emit(&mut out).unwrap();
    assert_eq!(&out[..], &b[..44]);
}
