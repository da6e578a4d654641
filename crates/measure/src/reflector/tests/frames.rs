//! Raw frames and PTP-wrapped probes.

use super::*;

fn l2_request(flags: ProbeFlags, stamp_req: &[u8], src_mac: [u8; 6]) -> Vec<u8> {
    let eth = EthernetRepr {
        dst: MacAddr([2, 0, 0, 0, 0, 2]),
        src: MacAddr(src_mac),
        vlan: None,
        ethertype: 0x88b5,
    };
    let p = ProbeRepr {
        flags,
        payload_len: (probe::HEADER_LEN + stamp_req.len()) as u16,
        session_id: 42,
        stream: 0,
        size_index: 0,
        seq: 99,
        sender_timestamp: 0,
        aux_timestamp: 0,
    };
    let mut f = vec![0u8; 2000];
    let n = probe::emit_frame(&eth, &p, &mut f).unwrap();
    f.truncate(n);
    f[l2::STAMP_OFFSET..l2::STAMP_OFFSET + stamp_req.len()].copy_from_slice(stamp_req);
    f
}

/// A raw-frame reflector (no UDP port), a free-running clock, its MAC.
fn l2_reflector() -> (Reflector, ClockState, MacAddr) {
    let r = Reflector::new(ReflectorConfig {
        listen_port: None,
        ..cfg()
    });
    (r, ClockState::FREE_RUNNING, MacAddr([2, 0, 0, 0, 0, 2]))
}

#[test]
fn l2_frames() {
    let (mut r, c, ours) = l2_reflector();
    let req = request(Mode::Unauthenticated, 8, StampTimestampFormat::Ntp, 0, true);
    let f = l2_request(ProbeFlags::empty(), &req, [2, 0, 0, 0, 0, 1]);
    let mut out = [0xa5u8; 2000];
    let m = meta(src(1, 1), NOW);
    let Decision::Reply { len, reply_seq } =
        r.handle_l2_frame(&f, 0x88b5, ours, &m, AT_NOW, &c, &mut out)
    else {
        panic!("{:?}", r.counters())
    };
    assert_eq!((len, reply_seq), (f.len(), 8));
    let (eth, p) = probe::parse_frame(&out[..len], 0x88b5).unwrap();
    assert_eq!(eth.dst, MacAddr([2, 0, 0, 0, 0, 1]));
    assert_eq!(eth.src, ours);
    assert!(p.flags.contains(ProbeFlags::REPLY));
    assert_eq!(
        (p.seq, p.session_id, p.payload_len),
        (99, 42, f.len() as u16 - 14)
    );
    let rep = ReflectorRepr::parse(&out[l2::STAMP_OFFSET..len], Mode::Unauthenticated).unwrap();
    assert_eq!(rep.sender_seq, 8);
    // Follow-up state is per MAC.
    r.on_tx_stamp(
        Peer::L2(MacAddr([2, 0, 0, 0, 0, 1])),
        8,
        Instant::from_ns(NOW + 3),
        TimestampSource::KernelSoftware,
    );
    let Decision::Reply { len, .. } = r.handle_l2_frame(&f, 0x88b5, ours, &m, AT_NOW, &c, &mut out)
    else {
        panic!()
    };
    let TlvRepr::FollowUpTelemetry { seq, mode, .. } =
        tlvs_of(&out[l2::STAMP_OFFSET..len], Mode::Unauthenticated)[1]
    else {
        panic!()
    };
    assert_eq!((seq, mode), (8, timestamp_method::SW_LOCAL));
    // Drops: a reply, a group source, a bad magic, a short frame.
    let reply = l2_request(ProbeFlags::REPLY, &req, [2, 0, 0, 0, 0, 1]);
    assert_eq!(
        r.handle_l2_frame(&reply, 0x88b5, ours, &m, AT_NOW, &c, &mut out),
        Decision::Drop(DropReason::LooksLikeReply)
    );
    let group = l2_request(ProbeFlags::empty(), &req, [3, 0, 0, 0, 0, 1]);
    assert_eq!(
        r.handle_l2_frame(&group, 0x88b5, ours, &m, AT_NOW, &c, &mut out),
        Decision::Drop(DropReason::GroupSource)
    );
    let mut bad = f.clone();
    bad[14] = b'X';
    assert_eq!(
        r.handle_l2_frame(&bad, 0x88b5, ours, &m, AT_NOW, &c, &mut out),
        Decision::Drop(DropReason::Malformed)
    );
    assert_eq!(
        r.handle_l2_frame(&f[..20], 0x88b5, ours, &m, AT_NOW, &c, &mut out),
        Decision::Drop(DropReason::TooShort)
    );
    // A short STAMP body inside a padded frame: the body's length counts.
    let short = l2_request(ProbeFlags::empty(), &req[..10], [2, 0, 0, 0, 0, 1]);
    assert_eq!(
        r.handle_l2_frame(&short, 0x88b5, ours, &m, AT_NOW, &c, &mut out),
        Decision::Drop(DropReason::TooShort)
    );
    let k = r.counters();
    assert_eq!(k.received, 7);
    assert_eq!(k.replied + k.dropped(), k.received);
}

/// A PTP-wrapped request: the probe frame with misura's Sync header
/// between Ethernet and the probe header.
fn ptp_request(stamp_req: &[u8], src_mac: [u8; 6]) -> Vec<u8> {
    let plain = l2_request(ProbeFlags::empty(), stamp_req, src_mac);
    let mut f = plain[..12].to_vec();
    f.extend_from_slice(&ptp::ETHERTYPE_PTP.to_be_bytes());
    let mut sync = [0u8; ptp::SYNC_LEN];
    ptp::emit_sync(&mut sync, 99, ptp::clock_identity(src_mac)).unwrap();
    f.extend_from_slice(&sync);
    let p_len = probe::HEADER_LEN + stamp_req.len();
    f.extend_from_slice(&plain[14..14 + p_len]);
    f.resize(f.len().max(l2::MIN_FRAME_NO_FCS), 0);
    f
}

#[test]
fn ptp_wrapped_request_gets_a_ptp_wrapped_reply_of_its_size() {
    let (mut r, c, ours) = l2_reflector();
    let req = request(Mode::Unauthenticated, 8, StampTimestampFormat::Ntp, 0, true);
    let f = ptp_request(&req, [2, 0, 0, 0, 0, 1]);
    let m = meta(src(1, 1), NOW);
    let mut out = [0xa5u8; 2000];
    let Decision::Reply { len, reply_seq } =
        r.handle_l2_frame(&f, 0x88b5, ours, &m, AT_NOW, &c, &mut out)
    else {
        panic!("{:?}", r.counters())
    };
    assert_eq!((len, reply_seq), (f.len(), 8), "the request's size");
    let eth = EthernetFrame::new_checked(&out[..len]).unwrap();
    assert_eq!(eth.ethertype(), ptp::ETHERTYPE_PTP);
    assert_eq!((eth.dst(), eth.src()), (MacAddr([2, 0, 0, 0, 0, 1]), ours));
    let sync = eth.payload();
    assert_eq!(&sync[..2], &[0x00, 0x02], "a PTPv2 Sync: NICs stamp it");
    assert_eq!(&sync[30..32], &[0, 99], "the request's sequenceId");
    assert_eq!(&sync[20..28], &ptp::clock_identity(ours.0), "our port");
    let inner = ptp::strip_misura_sync(sync).unwrap();
    let p = ProbeRepr::parse(inner).unwrap();
    assert!(p.flags.contains(ProbeFlags::REPLY));
    assert_eq!(
        (p.seq, p.session_id, usize::from(p.payload_len)),
        (99, 42, probe::HEADER_LEN + req.len())
    );
    let at = l2::STAMP_OFFSET + ptp::SYNC_LEN;
    let rep = ReflectorRepr::parse(&out[at..at + req.len()], Mode::Unauthenticated).unwrap();
    assert_eq!(rep.sender_seq, 8);
    // Its own reply coming back is not answered.
    assert_eq!(
        r.handle_l2_frame(&out[..len], 0x88b5, ours, &m, AT_NOW, &c, &mut [0u8; 2000]),
        Decision::Drop(DropReason::LooksLikeReply)
    );
}

/// The reflector's stamp source travels in a raw (here PTP-wrapped)
/// reply as over UDP, and the sender's decoder reads it out of the reply's
/// STAMP packet: the Timestamp Information TLV names each request's RX
/// stamp (HW assist for a NIC-stamped one, SW local for a kernel-stamped
/// one), and the follow-up carries the previous reply's TX stamp on the
/// clock of that reply's RX stamp, with its mode: of a send's two TX
/// reports the one on the other clock is refused. Every reply is as long
/// as its request.
#[test]
fn raw_replies_carry_the_reflectors_stamp_source_to_the_sender() {
    use crate::stamp_sender::{decode_reply, stamp_request, RequestLayout};
    let (mut r, c, ours) = l2_reflector();
    let mode = Mode::Unauthenticated;
    let peer = Peer::L2(MacAddr([2, 0, 0, 0, 0, 1]));
    let layout = RequestLayout::new(RequestLayout::default_size(mode), mode).unwrap();
    assert!(layout.follow_up && layout.timestamp_info);
    let template = layout.template(7).unwrap();
    // (the request's RX stamp source, the TX reports of its reply's send)
    let sends = [
        (TimestampSource::NicHardware, NOW + 1_000),
        (TimestampSource::KernelSoftware, NOW + 2_000),
        (TimestampSource::NicHardware, NOW + 3_000),
    ];
    let mut decoded = Vec::new();
    for (seq, &(source, t)) in sends.iter().enumerate() {
        let mut req = template.clone();
        stamp_request(&mut req, mode, seq as u32, Instant::from_ns(t - 500), None);
        let f = ptp_request(&req, [2, 0, 0, 0, 0, 1]);
        let m = RequestMeta {
            rx: Stamp {
                at: Instant::from_ns(t),
                source,
            },
            ..meta(src(1, 1), t)
        };
        let mut out = [0xa5u8; 2000];
        let Decision::Reply { len, reply_seq } = r.handle_l2_frame(
            &f,
            0x88b5,
            ours,
            &m,
            Instant::from_ns(t + 100),
            &c,
            &mut out,
        ) else {
            panic!("{:?}", r.counters())
        };
        assert_eq!(len, f.len(), "a reply as long as its request");
        let at = l2::STAMP_OFFSET + ptp::SYNC_LEN;
        let rx_kernel = Some(Instant::from_ns(t + 800));
        let (reply, _) = decode_reply(
            &out[at..at + req.len()],
            mode,
            Instant::from_ns(t + 900),
            rx_kernel,
            None,
        )
        .expect("the sender decodes the raw reply's STAMP packet");
        decoded.push(reply);
        // The kernel's TX report, then the NIC's: one is on the RX clock.
        let kernel = r.on_tx_stamp(
            peer,
            reply_seq,
            Instant::from_ns(t + 200),
            TimestampSource::KernelSoftware,
        );
        let nic = r.on_tx_stamp(
            peer,
            reply_seq,
            Instant::from_ns(t + 250),
            TimestampSource::NicHardware,
        );
        assert_eq!(
            (kernel, nic),
            if source == TimestampSource::NicHardware {
                (false, true)
            } else {
                (true, false)
            },
            "request {seq}: only the TX stamp on its RX stamp's clock"
        );
    }
    let rx: Vec<u8> = decoded.iter().map(|d| d.reflector_rx_method).collect();
    assert_eq!(
        rx,
        [
            timestamp_method::HW_ASSIST,
            timestamp_method::SW_LOCAL,
            timestamp_method::HW_ASSIST
        ]
    );
    // Replies 1 and 2 follow up 0 (the NIC's stamp) and 1 (the kernel's).
    assert_eq!(decoded[0].follow_up, None);
    assert_eq!(
        (decoded[1].follow_up, decoded[1].follow_up_method),
        (
            Some((0, Instant::from_ns(NOW + 1_250))),
            timestamp_method::HW_ASSIST
        )
    );
    assert_eq!(
        (decoded[2].follow_up, decoded[2].follow_up_method),
        (
            Some((1, Instant::from_ns(NOW + 2_200))),
            timestamp_method::SW_LOCAL
        )
    );
}

#[test]
fn foreign_ptp_frames_are_counted_and_never_answered() {
    let mut r = Reflector::new(cfg());
    let c = ClockState::FREE_RUNNING;
    let ours = MacAddr([2, 0, 0, 0, 0, 2]);
    let m = meta(src(1, 1), NOW);
    let req = plain(8);
    let good = ptp_request(&req, [2, 0, 0, 0, 0, 1]);
    // ptp4l's Announce (messageType 0xB, domain 0), a Sync of domain 0
    // with nothing after it, a v1 header, a Sync in our domain carrying
    // no probe, and a header cut short.
    let mut announce = good.clone();
    announce[14] = 0x0b;
    announce[18] = 0;
    let mut sync0 = good[..14 + ptp::SYNC_LEN].to_vec();
    sync0[18] = 0;
    sync0.resize(60, 0);
    let mut v1 = good.clone();
    v1[15] = 1;
    let mut no_probe = good.clone();
    no_probe[14 + ptp::SYNC_LEN] = b'X';
    let short = good[..14 + 30].to_vec();
    let mut out = [0u8; 2000];
    for (what, f) in [
        ("announce", announce),
        ("sync of domain 0", sync0),
        ("v1", v1),
        ("no probe", no_probe),
        ("short", short),
    ] {
        assert_eq!(
            r.handle_l2_frame(&f, 0x88b5, ours, &m, AT_NOW, &c, &mut out),
            Decision::Drop(DropReason::ForeignPtp),
            "{what}"
        );
    }
    let k = r.counters();
    assert_eq!((k.received, k.foreign_ptp, k.replied), (5, 5, 0));
    assert_eq!(k.dropped(), 5);
}

proptest! {
    #[test]
    fn reply_never_longer_than_request(len in 0usize..=300, fill in any::<u8>(), tlv_area in proptest::collection::vec(any::<u8>(), 0..300), l2 in any::<bool>()) {
        let mut req = plain(1);
        req.extend_from_slice(&tlv_area);
        req.resize(len, fill);
        let mut r = Reflector::new(cfg());
        let mut out = [0u8; 700];
        let c = ClockState::FREE_RUNNING;
        if l2 {
            let f = l2_request(ProbeFlags::empty(), &req, [2, 0, 0, 0, 0, 1]);
            let d = r.handle_l2_frame(&f, 0x88b5, MacAddr([2, 0, 0, 0, 0, 2]), &meta(src(1, 1), NOW), AT_NOW, &c, &mut out);
            match d {
                Decision::Reply { len: n, .. } => prop_assert!(n <= f.len()),
                Decision::Drop(why) => prop_assert!(len < UNAUTH_LEN && why == DropReason::TooShort),
            }
        } else {
            let d = r.handle(&req, &meta(src(1, 1000), NOW), AT_NOW, &c, &mut out);
            match d {
                Decision::Reply { len: n, .. } => prop_assert_eq!(n, len),
                Decision::Drop(why) => prop_assert!(len < UNAUTH_LEN && why == DropReason::TooShort),
            }
        }
    }

    #[test]
    fn authenticated_reply_never_longer(len in 0usize..=300, fill in any::<u8>()) {
        let key = StampKey::new(b"key").unwrap();
        let mut req = request(Mode::Authenticated, 1, StampTimestampFormat::Ntp, 0, false);
        req.resize(len, fill);
        if len >= AUTH_LEN {
            sign(&key, &mut req);
        }
        let mut r = Reflector::new(ReflectorConfig { key: Some(key), ..cfg() });
        let mut out = [0u8; 300];
        match r.handle(&req, &meta(src(1, 1000), NOW), AT_NOW, &ClockState::FREE_RUNNING, &mut out) {
            Decision::Reply { len: n, .. } => prop_assert_eq!(n, len),
            Decision::Drop(why) => prop_assert!(len < AUTH_LEN && why == DropReason::AuthFailed),
        }
    }
}
