//! Feeds arbitrary bytes to iperf3's control-message parsers (what a
//! hostile iperf3 peer can send misura's client or server): the JSON length
//! prefix, the parameter and results messages, the cookie, state bytes and
//! the UDP header. Besides "never panics", whatever parses re-emits and
//! parses to the same value.
//!
//! Run from fuzz/: `cargo +nightly fuzz run parse_iperf3 corpus/parse_iperf3`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use misura_wire::iperf3::{self, Cookie, Params, Results, State, UdpHeader};

fuzz_target!(|data: &[u8]| {
    if let Some(p) = data.get(..4) {
        let _ = iperf3::json_len(p.try_into().unwrap());
    }
    if let Ok(p) = Params::parse(data) {
        assert_eq!(Params::parse(p.to_json().as_bytes()).as_ref(), Ok(&p));
    }
    if let Ok(r) = Results::parse(data) {
        assert_eq!(
            Results::parse(r.to_json().as_bytes()).map(|x| x.streams.len()),
            Ok(r.streams.len())
        );
    }
    if let Ok(c) = Cookie::parse(data) {
        assert_eq!(c.as_str().len(), iperf3::COOKIE_LEN - 1);
    }
    if let Some(&b) = data.first() {
        if let Ok(s) = State::from_byte(b) {
            assert_eq!(s.byte(), b);
        }
    }
    for wide in [false, true] {
        if let Ok(h) = UdpHeader::parse(data, wide) {
            let mut b = [0u8; 16];
            h.emit(&mut b, wide).unwrap();
            assert_eq!(UdpHeader::parse(&b, wide), Ok(h));
        }
    }
    let _ = (iperf3::is_connect_msg(data), iperf3::is_connect_reply(data));
});
