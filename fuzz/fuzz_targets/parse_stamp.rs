//! Feeds arbitrary bytes to the STAMP parsers (RFC 8762/8972): both packet
//! kinds in both modes, the TLV iterator and the reflection builder. Besides
//! "never panics", it checks round trips: whatever parses must re-emit to
//! bytes that parse to the same value.
//!
//! Seeds: fuzz/seeds/parse_stamp/ (checked by misura-wire's
//! tests/stamp_fuzz_seeds.rs). Run from fuzz/ with a writable corpus first:
//! `cargo +nightly fuzz run parse_stamp corpus/parse_stamp seeds/parse_stamp`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use misura_wire::stamp::{
    build_reflection, reflect_len, tlv_hmac_covered, Mode, ReflectParams, ReflectorRepr,
    SenderRepr, StampReflectorPacket, StampSenderPacket, TlvRepr, Tlvs,
};

fuzz_target!(|data: &[u8]| {
    for mode in [Mode::Unauthenticated, Mode::Authenticated] {
        let base = mode.base_len();

        if let Ok(s) = SenderRepr::parse(data, mode) {
            assert_eq!(s.mode(), mode);
            let mut buf = [0xa5u8; 112];
            let n = s.emit(&mut buf).expect("parsed sender must re-emit");
            assert_eq!(n, base);
            assert_eq!(SenderRepr::parse(&buf[..n], mode), Ok(s));
            let v = StampSenderPacket::new_checked(data, mode).expect("parsed, so long enough");
            assert_eq!(v.tlv_bytes().len(), data.len() - base);
        }

        if let Ok(r) = ReflectorRepr::parse(data, mode) {
            assert_eq!(r.mode(), mode);
            let mut buf = [0xa5u8; 112];
            let n = r.emit(&mut buf).expect("parsed reflector must re-emit");
            assert_eq!(n, base);
            assert_eq!(ReflectorRepr::parse(&buf[..n], mode), Ok(r));
            let v = StampReflectorPacket::new_checked(data, mode).expect("parsed, so long enough");
            let _ = (v.sender_ttl(), v.hmac(), v.tlvs().count());
        }

        // TLVs: each one that parses re-emits to bytes that parse the same.
        if let Some(area) = data.get(base..) {
            let mut tlvs = Tlvs::new(area);
            let mut count = 0usize;
            while let Some(t) = tlvs.next() {
                count += 1;
                assert!(count <= area.len() + 1, "TLV iterator does not end");
                assert!(tlvs.offset() <= area.len());
                if let Ok(t) = t {
                    let mut buf = vec![0xa5u8; t.buffer_len()];
                    let n = t.emit(&mut buf).expect("parsed TLV must re-emit");
                    assert_eq!(n, t.buffer_len());
                    assert_eq!(TlvRepr::parse(&buf), Ok(t));
                }
            }
        }

        if let Some(cov) = tlv_hmac_covered(data, mode) {
            assert!(cov.tlvs.start == base && cov.tlvs.end <= cov.hmac.start);
            assert!(cov.hmac.end <= data.len());
        }

        // The reply is exactly as long as the request and is a valid
        // reflector packet; it never writes beyond reflect_len.
        let mut out = vec![0x5au8; data.len() + 8];
        if let Ok(n) = build_reflection(data, mode, &ReflectParams::default(), &mut out) {
            assert_eq!(n, reflect_len(data.len()));
            assert!(out[n..].iter().all(|&b| b == 0x5a));
            let r = ReflectorRepr::parse(&out[..n], mode).expect("reply must parse");
            let s = SenderRepr::parse(data, mode).expect("request parsed");
            assert_eq!((r.sender_seq, r.ssid), (s.seq, s.ssid));
            assert_eq!(
                Tlvs::new(&out[base..n]).count(),
                Tlvs::new(&data[base..]).count()
            );
        }
    }
});
