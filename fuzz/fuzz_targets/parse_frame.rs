//! Feeds arbitrary bytes to the frame and probe parsers. Besides "never
//! panics", it checks the round-trip property: anything that parses must
//! re-emit to bytes that parse to the same value.
//!
//! Seeds: fuzz/seeds/parse_frame/ (real frames, checked by misura-wire's
//! tests). Run from fuzz/ with the writable (git-ignored) corpus first, so
//! libFuzzer does not add its findings to the seed directory:
//! `cargo +nightly fuzz run parse_frame corpus/parse_frame seeds/parse_frame`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use misura_wire::ethernet::EthernetFrame;
use misura_wire::probe::{ProbeHeader, MAX_PAYLOAD};
use misura_wire::{emit_frame, parse_frame, EthernetRepr, ProbeRepr, ETHERTYPE_MISURA};

/// Large enough for the biggest frame: tagged header + jumbo payload.
const BUF_LEN: usize = 18 + MAX_PAYLOAD;

fuzz_target!(|data: &[u8]| {
    if let Ok((eth, probe)) = parse_frame(data, ETHERTYPE_MISURA) {
        let mut buf = vec![0u8; BUF_LEN];
        let n = emit_frame(&eth, &probe, &mut buf).expect("parsed frame must re-emit");
        let again = parse_frame(&buf[..n], ETHERTYPE_MISURA).expect("re-emitted frame must parse");
        assert_eq!(again, (eth, probe));
    }

    if let Ok(probe) = ProbeRepr::parse(data) {
        let mut buf = vec![0xa5u8; BUF_LEN];
        let n = probe.emit(&mut buf).expect("parsed probe must re-emit");
        assert_eq!(n, usize::from(probe.payload_len));
        assert_eq!(ProbeRepr::parse(&buf[..n]), Ok(probe));
    }

    // A PTP event envelope: what it leaves is a suffix of the input.
    if let Ok(rest) = misura_wire::ptp::strip_event(data) {
        assert!(rest.len() + misura_wire::ptp::SYNC_LEN <= data.len());
    }

    // The views must not panic once new_checked accepted the buffer.
    if let Ok(f) = EthernetFrame::new_checked(data) {
        let _ = (f.dst(), f.src(), f.ethertype(), f.vlan(), f.payload().len());
        let eth = EthernetRepr::parse(&f).expect("checked frame must parse");
        let mut hdr = [0u8; 18];
        if let Ok(n) = eth.emit(&mut hdr) {
            assert_eq!(&hdr[..n], &data[..n]);
        }
    }
    if let Ok(h) = ProbeHeader::new_checked(data) {
        let _ = (
            h.magic(),
            h.version(),
            h.flags(),
            h.payload_len(),
            h.session_id(),
        );
        let _ = (
            h.stream(),
            h.size_index(),
            h.seq(),
            h.sender_timestamp(),
            h.aux_timestamp(),
        );
    }
});
