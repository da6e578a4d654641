//! Feeds arbitrary bytes to the SNTP parser. Besides "never panics", it
//! checks the round trip: whatever parses re-emits to the same 48 header
//! bytes, and the reply checks never panic on any parsed packet.
//!
//! Run from fuzz/: `cargo +nightly fuzz run parse_sntp corpus/parse_sntp`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use misura_wire::sntp::{NtpTimestamp, SntpPacket, SntpRepr, HEADER_LEN};

fuzz_target!(|data: &[u8]| {
    if let Ok(r) = SntpRepr::parse(data) {
        let mut buf = [0xa5u8; HEADER_LEN];
        let n = r.emit(&mut buf).expect("parsed packet must re-emit");
        assert_eq!(&buf[..n], &data[..HEADER_LEN]);
        assert_eq!(SntpRepr::parse(&buf), Ok(r));
        let _ = r.check_server_reply(r.originate_timestamp);
        let _ = r.check_server_reply(NtpTimestamp::ZERO);
        let _ = (
            r.kiss_code(),
            r.reference_id_text(),
            r.receive_timestamp.to_unix_ns(),
        );
    }
    if let Ok(p) = SntpPacket::new_checked(data) {
        let _ = (
            p.leap(),
            p.version(),
            p.mode(),
            p.stratum(),
            p.poll(),
            p.precision(),
        );
        let _ = (
            p.root_delay(),
            p.root_dispersion(),
            p.reference_id(),
            p.trailer().len(),
        );
        let _ = (
            p.reference_timestamp(),
            p.originate_timestamp(),
            p.receive_timestamp(),
            p.transmit_timestamp(),
        );
    }
});
