use super::*;
use crate::auth::hmac16;
use misura_wire::ethernet::{EthernetFrame, EthernetRepr};
use misura_wire::probe::{self, ProbeFlags, ProbeRepr};
use misura_wire::ptp;
use misura_wire::stamp::{
    emit_tlvs, from_wire, ReflectorRepr, StampReflectorPacket, TlvFlags, TlvRepr, AUTH_LEN,
    UNAUTH_LEN,
};
use proptest::prelude::*;

const NOW: i64 = 1_700_000_000_123_456_789;
/// [`NOW`] as the instant the reflector is handed.
const AT_NOW: Instant = Instant::from_ns(NOW);

fn cfg() -> ReflectorConfig {
    ReflectorConfig {
        key: None,
        stateful: false,
        rate_per_s: 1_000_000,
        burst: 1_000_000,
        max_sources: 16,
        listen_port: Some(862),
    }
}

fn src(n: u8, port: u16) -> Peer {
    Peer::Udp(SocketAddr::new(IpAddr::from([198, 18, 0, n]), port))
}

fn meta(peer: Peer, rx_ns: i64) -> RequestMeta {
    RequestMeta {
        src: peer,
        dst: Some(IpAddr::from([198, 18, 0, 2])),
        ttl: Some(64),
        rx: Stamp {
            at: Instant::from_ns(rx_ns),
            source: TimestampSource::KernelSoftware,
        },
        truncated: false,
    }
}

/// A sender packet with Timestamp Information and Follow-Up TLVs.
fn request(mode: Mode, seq: u32, fmt: StampTimestampFormat, ssid: u16, tlvs: bool) -> Vec<u8> {
    let mut buf = vec![0xa5; 200];
    let n = SenderRepr {
        seq,
        timestamp: stamp::to_wire(NOW - 1_000_000, fmt),
        error_estimate: ErrorEstimate::new(false, fmt, 0, 1),
        ssid,
        hmac: (mode == Mode::Authenticated).then_some([0; 16]),
    }
    .emit(&mut buf)
    .unwrap();
    let mut len = n;
    if tlvs {
        let t = [
            TlvRepr::TimestampInformation {
                flags: TlvFlags::SENDER,
                info: TimestampInfo::default(),
                sub_tlvs: &[],
            },
            TlvRepr::FollowUpTelemetry {
                flags: TlvFlags::SENDER,
                seq: 0,
                timestamp: [0; 8],
                mode: 0,
            },
        ];
        len += emit_tlvs(&t, &mut buf[n..]).unwrap();
    }
    buf.truncate(len);
    buf
}

/// An unauthenticated sender packet `seq` (NTP timestamp, SSID 0), no TLVs.
fn plain(seq: u32) -> Vec<u8> {
    request(
        Mode::Unauthenticated,
        seq,
        StampTimestampFormat::Ntp,
        0,
        false,
    )
}

fn sign(key: &StampKey, req: &mut [u8]) {
    if let Some(c) = tlv_hmac_covered(req, Mode::Authenticated) {
        let tag = hmac16(key, &[&req[c.seq.clone()], &req[c.tlvs.clone()]]);
        req[c.hmac].copy_from_slice(&tag);
    }
    let tag = hmac16(key, &[&req[..96]]);
    req[HMAC_FIELD].copy_from_slice(&tag);
}

fn tlvs_of(reply: &[u8], mode: Mode) -> Vec<TlvRepr<'_>> {
    let base = StampReflectorPacket::new_checked(reply, mode)
        .unwrap()
        .mode()
        .base_len();
    misura_wire::stamp::Tlvs::new(&reply[base..])
        .map(Result::unwrap)
        .collect()
}

#[test]
fn stateless_reply_byte_checked() {
    let mut r = Reflector::new(cfg());
    let req = request(
        Mode::Unauthenticated,
        77,
        StampTimestampFormat::Ntp,
        0x1234,
        true,
    );
    let mut out = [0xa5u8; 300];
    let rx = NOW - 5_000;
    let d = r.handle(
        &req,
        &meta(src(1, 40000), rx),
        AT_NOW,
        &ClockState::FREE_RUNNING,
        &mut out,
    );
    assert_eq!(
        d,
        Decision::Reply {
            len: req.len(),
            reply_seq: 77
        }
    );
    assert_eq!(out[req.len()], 0xa5, "nothing written past the reply");
    let rep = ReflectorRepr::parse(&out[..req.len()], Mode::Unauthenticated).unwrap();
    assert_eq!(rep.seq, 77);
    assert_eq!(rep.sender_seq, 77);
    assert_eq!(rep.ssid, 0x1234);
    assert_eq!(rep.sender_ttl, 64);
    assert_eq!(
        rep.timestamp,
        stamp::to_wire(NOW, StampTimestampFormat::Ntp)
    );
    assert_eq!(
        rep.receive_timestamp,
        stamp::to_wire(rx, StampTimestampFormat::Ntp)
    );
    assert_eq!(
        from_wire(rep.receive_timestamp, StampTimestampFormat::Ntp),
        rx
    );
    assert_eq!(rep.sender_timestamp, req[4..12]);
    assert!(!rep.error_estimate.synchronized());
    assert_eq!(rep.error_estimate.format(), StampTimestampFormat::Ntp);
    assert!(rep.error_estimate.to_ns() >= 1_000_000_000);
    // Byte layout of the base packet (RFC 8762 §4.3.1).
    let o = &out[..req.len()];
    assert_eq!(&o[0..4], &77u32.to_be_bytes());
    assert_eq!(&o[14..16], &[0x12, 0x34]);
    assert_eq!(&o[24..28], &77u32.to_be_bytes());
    assert_eq!(o[40], 64);
    assert_eq!(&o[38..40], &[0, 0]);
    assert_eq!(&o[41..44], &[0, 0, 0]);
    // TLVs: recognised (U clear), Timestamp Information filled.
    let t = tlvs_of(o, Mode::Unauthenticated);
    assert_eq!(
        t[0],
        TlvRepr::TimestampInformation {
            flags: TlvFlags(0),
            info: TimestampInfo {
                sync_src_in: sync_source::LOCAL_FREE_RUNNING,
                timestamp_in: timestamp_method::SW_LOCAL,
                sync_src_out: sync_source::LOCAL_FREE_RUNNING,
                timestamp_out: timestamp_method::SW_LOCAL,
            },
            sub_tlvs: &[],
        }
    );
    // First reply: no follow-up known, all zero.
    assert_eq!(
        t[1],
        TlvRepr::FollowUpTelemetry {
            flags: TlvFlags(0),
            seq: 0,
            timestamp: [0; 8],
            mode: 0
        }
    );
    assert_eq!(r.counters().replied, 1);
    assert_eq!(r.counters().received, 1);
}

#[test]
fn ptp_format_sync_and_user_clock_fallback() {
    let mut r = Reflector::new(cfg());
    let req = request(Mode::Unauthenticated, 5, StampTimestampFormat::Ptp, 0, true);
    let mut out = [0u8; 300];
    let mut m = meta(src(1, 40000), NOW - 10);
    m.rx.source = TimestampSource::UserClock;
    m.ttl = None;
    let clock = ClockState {
        synchronized: true,
        sync_source: sync_source::NTP,
        uncertainty_ns: 2_000,
    };
    let Decision::Reply { len, .. } = r.handle(&req, &m, AT_NOW, &clock, &mut out) else {
        panic!()
    };
    let rep = ReflectorRepr::parse(&out[..len], Mode::Unauthenticated).unwrap();
    assert_eq!(rep.error_estimate.format(), StampTimestampFormat::Ptp);
    assert!(rep.error_estimate.synchronized());
    let e = rep.error_estimate.to_ns();
    assert!((2_000..2_100).contains(&e), "{e}");
    assert_eq!(from_wire(rep.timestamp, StampTimestampFormat::Ptp), NOW);
    assert_eq!(
        from_wire(rep.receive_timestamp, StampTimestampFormat::Ptp),
        NOW - 10
    );
    assert_eq!(rep.sender_ttl, 0);
    let TlvRepr::TimestampInformation { info, .. } = tlvs_of(&out[..len], Mode::Unauthenticated)[0]
    else {
        panic!()
    };
    assert_eq!(info.sync_src_in, sync_source::NTP);
    assert_eq!(info.timestamp_in, timestamp_method::CONTROL_PLANE);
    assert_eq!(r.counters().rx_user_clock, 1);
}

#[test]
fn stateful_numbers_per_session() {
    let mut r = Reflector::new(ReflectorConfig {
        stateful: true,
        ..cfg()
    });
    let mut out = [0u8; 300];
    let mut seqs = vec![];
    for (peer, ssid, sender_seq) in [
        (src(1, 1000), 1, 500),
        (src(1, 1000), 1, 900),
        (src(1, 1000), 2, 7),
        (src(1, 1001), 1, 7),
        (src(1, 1000), 1, 3),
    ] {
        let req = request(
            Mode::Unauthenticated,
            sender_seq,
            StampTimestampFormat::Ntp,
            ssid,
            false,
        );
        let Decision::Reply { len, reply_seq } = r.handle(
            &req,
            &meta(peer, NOW),
            AT_NOW,
            &ClockState::FREE_RUNNING,
            &mut out,
        ) else {
            panic!()
        };
        let rep = ReflectorRepr::parse(&out[..len], Mode::Unauthenticated).unwrap();
        assert_eq!(rep.seq, reply_seq);
        assert_eq!(rep.sender_seq, sender_seq);
        seqs.push(reply_seq);
    }
    assert_eq!(seqs, [0, 1, 0, 0, 2]);
    assert_eq!(r.tracked().2, 3);
}

#[test]
fn follow_up_carries_the_previous_reply_and_its_stamp() {
    let mut r = Reflector::new(cfg());
    let mut out = [0u8; 300];
    let a = src(1, 4000);
    let b = src(9, 4000);
    let req = |seq| {
        request(
            Mode::Unauthenticated,
            seq,
            StampTimestampFormat::Ntp,
            0,
            true,
        )
    };
    assert!(matches!(
        r.handle(
            &req(10),
            &meta(a, NOW),
            AT_NOW,
            &ClockState::FREE_RUNNING,
            &mut out
        ),
        Decision::Reply { reply_seq: 10, .. }
    ));
    r.on_tx_stamp(
        a,
        10,
        Instant::from_ns(NOW + 777),
        TimestampSource::KernelSoftware,
    );
    // A stamp for a reply that was not the last one is ignored.
    r.on_tx_stamp(
        a,
        9,
        Instant::from_ns(NOW + 1),
        TimestampSource::KernelSoftware,
    );
    // Another source's state is its own.
    assert!(matches!(
        r.handle(
            &req(50),
            &meta(b, NOW),
            AT_NOW,
            &ClockState::FREE_RUNNING,
            &mut out
        ),
        Decision::Reply { .. }
    ));
    let Decision::Reply { len, .. } = r.handle(
        &req(11),
        &meta(a, NOW + 1000),
        Instant::from_ns(NOW + 2000),
        &ClockState::FREE_RUNNING,
        &mut out,
    ) else {
        panic!()
    };
    let TlvRepr::FollowUpTelemetry {
        seq,
        timestamp,
        mode,
        flags,
    } = tlvs_of(&out[..len], Mode::Unauthenticated)[1]
    else {
        panic!()
    };
    assert_eq!(flags, TlvFlags(0));
    assert_eq!(seq, 10);
    assert_eq!(from_wire(timestamp, StampTimestampFormat::Ntp), NOW + 777);
    assert_eq!(mode, timestamp_method::SW_LOCAL);
    assert_eq!(r.counters().follow_ups, 1);
    assert_eq!(r.counters().tx_stamps, 1);
    // Reply 11's stamp was not reported: the next follow-up is empty.
    // Request 12 has the NIC's RX stamp.
    let nic_rx = RequestMeta {
        rx: Stamp {
            at: Instant::from_ns(NOW),
            source: TimestampSource::NicHardware,
        },
        ..meta(a, NOW)
    };
    let Decision::Reply { len, .. } = r.handle(
        &req(12),
        &nic_rx,
        AT_NOW,
        &ClockState::FREE_RUNNING,
        &mut out,
    ) else {
        panic!()
    };
    let TlvRepr::FollowUpTelemetry { mode, .. } = tlvs_of(&out[..len], Mode::Unauthenticated)[1]
    else {
        panic!()
    };
    assert_eq!(mode, 0);
    // A hardware stamp says HW assist; the kernel's TX stamp of the same
    // send is on another clock than the NIC's RX stamp, and refused.
    assert!(!r.on_tx_stamp(
        a,
        12,
        Instant::from_ns(NOW + 4),
        TimestampSource::KernelSoftware
    ));
    assert!(r.on_tx_stamp(
        a,
        12,
        Instant::from_ns(NOW + 5),
        TimestampSource::NicHardware
    ));
    let Decision::Reply { len, .. } = r.handle(
        &req(13),
        &meta(a, NOW),
        AT_NOW,
        &ClockState::FREE_RUNNING,
        &mut out,
    ) else {
        panic!()
    };
    let TlvRepr::FollowUpTelemetry { mode, seq, .. } =
        tlvs_of(&out[..len], Mode::Unauthenticated)[1]
    else {
        panic!()
    };
    assert_eq!((seq, mode), (12, timestamp_method::HW_ASSIST));
}

mod drops;
mod frames;
