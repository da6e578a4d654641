#![no_main]
//! The control protocol's parser on arbitrary bytes: never panics, and what
//! parses re-emits to the same bytes.

use libfuzzer_sys::fuzz_target;
use misura_wire::control;

fuzz_target!(|data: &[u8]| {
    if let Ok((msg, used)) = control::parse(data) {
        let mut out = Vec::new();
        msg.emit(&mut out).expect("a parsed message re-emits");
        // Floats re-emit bit for bit, so the bytes match exactly.
        assert_eq!(&out[..], &data[..used]);
    }
});
