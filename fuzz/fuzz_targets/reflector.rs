//! The reflector's whole request path (checks, rate limit, tables, TLVs,
//! the reply), in both modes, over UDP and raw frames: never a panic, and
//! never a reply longer than its request.
#![no_main]
use libfuzzer_sys::fuzz_target;
use misura_measure::auth::StampKey;
use misura_measure::reflector::{
    ClockState, Decision, Peer, Reflector, ReflectorConfig, RequestMeta, Stamp,
};
use misura_measure::TimestampSource;
use misura_wire::ethernet::MacAddr;
use std::net::{IpAddr, SocketAddr};

fuzz_target!(|data: &[u8]| {
    if data.is_empty() {
        return;
    }
    let (ctl, request) = data.split_at(1);
    let key = (ctl[0] & 1 == 1).then(|| StampKey::new(b"fuzz key").unwrap());
    let mut r = Reflector::new(ReflectorConfig {
        key,
        stateful: ctl[0] & 2 == 2,
        rate_per_s: 1_000_000,
        burst: 1_000_000,
        max_sources: 8,
        listen_port: Some(862),
    });
    let meta = RequestMeta {
        src: Peer::Udp(SocketAddr::new(IpAddr::from([198, 18, 0, 1]), 40000)),
        dst: Some(IpAddr::from([198, 18, 0, 2])),
        ttl: Some(ctl[0]),
        rx: Stamp {
            ns: 1_700_000_000_000_000_000,
            source: TimestampSource::KernelSoftware,
        },
        truncated: ctl[0] & 4 == 4,
    };
    let clock = ClockState::FREE_RUNNING;
    let mut out = vec![0u8; request.len() + 64];
    if let Decision::Reply { len, .. } =
        r.handle(request, &meta, meta.rx.ns + 1000, &clock, &mut out)
    {
        assert!(len <= request.len(), "reply {len} B for a {} B request", request.len());
    }
    let l2 = RequestMeta {
        src: Peer::L2(MacAddr([2, 0, 0, 0, 0, 1])),
        ..meta
    };
    if let Decision::Reply { len, .. } = r.handle_l2_frame(
        request,
        0x88b5,
        MacAddr([2, 0, 0, 0, 0, 2]),
        &l2,
        meta.rx.ns + 2000,
        &clock,
        &mut out,
    ) {
        assert!(len <= request.len(), "L2 reply {len} B for a {} B frame", request.len());
    }
});
