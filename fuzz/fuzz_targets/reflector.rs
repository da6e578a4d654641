//! The reflector's whole request path (checks, rate limit, tables, TLVs,
//! the reply), in both modes, over UDP and raw frames (misura's, and
//! PTP-wrapped: the bytes after misura's Sync header, or as the whole PTP
//! message, foreign headers included): never a panic, never a reply longer
//! than its request, and a PTP-wrapped request's reply PTP-wrapped too.
#![no_main]
use libfuzzer_sys::fuzz_target;
use misura_measure::auth::StampKey;
use misura_measure::reflector::{
    ClockState, Decision, Peer, Reflector, ReflectorConfig, RequestMeta, Stamp,
};
use misura_measure::time::{Instant, Span};
use misura_measure::TimestampSource;
use misura_wire::ethernet::MacAddr;
use misura_wire::ptp;
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
            at: Instant::from_ns(1_700_000_000_000_000_000),
            source: TimestampSource::KernelSoftware,
        },
        truncated: ctl[0] & 4 == 4,
    };
    let clock = ClockState::FREE_RUNNING;
    let mut out = vec![0u8; request.len() + 64];
    if let Decision::Reply { len, .. } = r.handle(
        request,
        &meta,
        meta.rx.at + Span::from_ns(1000),
        &clock,
        &mut out,
    ) {
        assert!(
            len <= request.len(),
            "reply {len} B for a {} B request",
            request.len()
        );
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
        meta.rx.at + Span::from_ns(2000),
        &clock,
        &mut out,
    ) {
        assert!(
            len <= request.len(),
            "L2 reply {len} B for a {} B frame",
            request.len()
        );
    }
    // PTP-wrapped: Ethernet to us, EtherType 0x88F7, then misura's Sync
    // header and the bytes (ctl bit 8), or the bytes as the PTP message.
    let mut frame = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x88, 0xf7];
    if ctl[0] & 8 == 8 {
        let mut sync = [0u8; ptp::SYNC_LEN];
        ptp::emit_sync(&mut sync, 1, ptp::clock_identity([2, 0, 0, 0, 0, 1])).unwrap();
        frame.extend_from_slice(&sync);
    }
    frame.extend_from_slice(request);
    let mut out = vec![0u8; frame.len() + 64];
    if let Decision::Reply { len, .. } = r.handle_l2_frame(
        &frame,
        0x88b5,
        MacAddr([2, 0, 0, 0, 0, 2]),
        &l2,
        meta.rx.at + Span::from_ns(3000),
        &clock,
        &mut out,
    ) {
        assert!(
            len <= frame.len(),
            "PTP reply {len} B for a {} B frame",
            frame.len()
        );
        assert_eq!(&out[12..14], &[0x88, 0xf7], "a PTP request's reply is PTP");
        ptp::strip_misura_sync(&out[14..len]).expect("the reply's Sync header is misura's");
    }
});
