//! Feeds arbitrary bytes to the irtt packet parser, as a server (requests)
//! and a client (replies), with and without an HMAC key, and reads echo
//! fields under every layout. Besides "never panics", whatever parses as an
//! open packet re-emits and parses back to the same parameters.
//!
//! Run from fuzz/: `cargo +nightly fuzz run parse_irtt corpus/parse_irtt`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use misura_wire::irtt::{self, Layout, Packet};
use misura_wire::irtt_params::{Clock, ReceivedStats, StampAt};

fuzz_target!(|data: &[u8]| {
    for key in [None, Some(&b"fuzz"[..])] {
        for reply in [false, true] {
            let Ok(p) = irtt::parse(data, key, reply) else {
                continue;
            };
            if let Packet::Open { close, token, params } = &p {
                let mut out = [0u8; 512];
                let n = irtt::emit_open(*token, params, *close, key, &mut out)
                    .expect("parsed parameters must re-emit");
                match irtt::parse(&out[..n], key, reply) {
                    Ok(Packet::Open { params: back, .. }) => {
                        // A server fill is cut to 32 bytes; the rest is exact.
                        assert_eq!(back.length, params.length);
                        assert_eq!(back.stamp_at, params.stamp_at);
                    }
                    other => panic!("re-emitted open packet parsed as {other:?}"),
                }
            }
        }
    }
    let stats = [ReceivedStats::None, ReceivedStats::Both];
    let ats = [StampAt::None, StampAt::Both, StampAt::Midpoint];
    for hmac in [false, true] {
        for received_stats in stats {
            for stamp_at in ats {
                for clock in [Clock::Wall, Clock::Both] {
                    let l = Layout { hmac, received_stats, stamp_at, clock };
                    let _ = irtt::parse_echo(data, &l);
                }
            }
        }
    }
});
