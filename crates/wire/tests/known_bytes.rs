//! Parse/emit against hand-written byte literals, error cases, VLAN and
//! MacAddr behaviour. Literals are written out in full (not produced by the
//! code under test) so a layout change cannot silently pass.

use misura_wire::ethernet::{self, MacAddr, VlanTag};
use misura_wire::probe::{self, ProbeFlags, ProbeHeader, ProbeRepr};
use misura_wire::{
    emit_frame, frame_bytes, parse_frame, EthernetFrame, EthernetRepr, WireError, ETHERTYPE_MISURA,
    ETHERTYPE_SEED, ETHERTYPE_VLAN,
};

const DST: MacAddr = MacAddr([0x02, 0x6d, 0x73, 0x00, 0x00, 0x02]);
const SRC: MacAddr = MacAddr([0x02, 0x6d, 0x73, 0x00, 0x00, 0x01]);

fn probe_repr(payload_len: u16) -> ProbeRepr {
    ProbeRepr {
        flags: ProbeFlags::SENDER_TIMESTAMP | ProbeFlags::REPLY,
        payload_len,
        session_id: 0x0102_0304,
        stream: 0x0506,
        size_index: 0x0708,
        seq: 0x1112_1314_1516_1718,
        sender_timestamp: 0x2122_2324_2526_2728,
        aux_timestamp: 0x3132_3334_3536_3738,
    }
}

/// The 40-byte header of `probe_repr(P)`, followed by P-40 zero bytes.
fn probe_bytes(p: u16) -> Vec<u8> {
    let [ph, pl] = p.to_be_bytes();
    let mut v = vec![
        0x4d, 0x53, 0x52, 0x41, // "MSRA"
        0x01, 0x05, ph, pl, // version, flags, P
        0x01, 0x02, 0x03, 0x04, // session
        0x05, 0x06, 0x07, 0x08, // stream, size index
        0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, // seq
        0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28, // sender ts
        0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38, // aux ts
    ];
    v.resize(usize::from(p), 0);
    v
}

#[test]
fn probe_emit_matches_literal_and_leaves_tail() {
    let mut buf = [0xa5u8; 64];
    let n = probe_repr(46).emit(&mut buf).unwrap();
    assert_eq!(n, 46);
    assert_eq!(&buf[..46], &probe_bytes(46)[..]);
    assert!(
        buf[46..].iter().all(|&b| b == 0xa5),
        "wrote past payload_len"
    );
}

#[test]
fn probe_parse_literal_with_trailing_nic_padding() {
    let mut bytes = probe_bytes(40);
    bytes.extend_from_slice(&[0xee; 6]); // NIC padding, not zero on purpose
    assert_eq!(ProbeRepr::parse(&bytes).unwrap(), probe_repr(40));
}

#[test]
fn probe_view_getters_and_hot_path_setters() {
    let mut bytes = probe_bytes(64);
    let mut h = ProbeHeader::new_checked(&mut bytes[..]).unwrap();
    assert_eq!(h.magic(), probe::MAGIC);
    assert_eq!(h.version(), probe::VERSION);
    assert_eq!(h.flags(), ProbeFlags(0x05));
    assert_eq!(h.payload_len(), 64);
    assert_eq!(h.session_id(), 0x0102_0304);
    assert_eq!(h.stream(), 0x0506);
    assert_eq!(h.size_index(), 0x0708);
    assert_eq!(h.seq(), 0x1112_1314_1516_1718);
    assert_eq!(h.sender_timestamp(), 0x2122_2324_2526_2728);
    assert_eq!(h.aux_timestamp(), 0x3132_3334_3536_3738);

    h.set_seq(0xdead_beef_0000_0001);
    h.set_sender_timestamp(1);
    h.set_aux_timestamp(2);
    h.set_flags(ProbeFlags::FOLLOW_UP);
    assert_eq!(&bytes[16..24], &[0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 1]);
    assert_eq!(&bytes[24..32], &[0, 0, 0, 0, 0, 0, 0, 1]);
    assert_eq!(&bytes[32..40], &[0, 0, 0, 0, 0, 0, 0, 2]);
    assert_eq!(bytes[5], 0x08);
    // Everything else is untouched.
    let orig = probe_bytes(64);
    assert_eq!(&bytes[..5], &orig[..5]);
    assert_eq!(&bytes[6..16], &orig[6..16]);
    assert_eq!(&bytes[40..], &orig[40..]);
}

#[test]
fn probe_parse_errors() {
    assert_eq!(
        ProbeRepr::parse(&probe_bytes(46)[..39]),
        Err(WireError::Truncated { need: 40, have: 39 })
    );
    assert_eq!(
        ProbeRepr::parse(&[]),
        Err(WireError::Truncated { need: 40, have: 0 })
    );
    // payload_len says 100 but only 60 bytes arrived.
    let mut b = probe_bytes(100);
    b.truncate(60);
    assert_eq!(
        ProbeRepr::parse(&b),
        Err(WireError::Truncated {
            need: 100,
            have: 60
        })
    );

    let mut b = probe_bytes(46);
    b[0] = b'm';
    assert_eq!(ProbeRepr::parse(&b), Err(WireError::BadMagic));

    let mut b = probe_bytes(46);
    b[4] = 2;
    assert_eq!(ProbeRepr::parse(&b), Err(WireError::UnsupportedVersion(2)));
    b[4] = 0;
    assert_eq!(ProbeRepr::parse(&b), Err(WireError::UnsupportedVersion(0)));

    // payload_len smaller than the header itself.
    let mut b = probe_bytes(46);
    b[6..8].copy_from_slice(&39u16.to_be_bytes());
    assert_eq!(
        ProbeRepr::parse(&b),
        Err(WireError::BadLength {
            field: "payload_len",
            value: 39
        })
    );
    // payload_len above the jumbo limit, even if the bytes are there.
    let mut b = vec![0u8; 9100];
    probe_repr(9000).emit(&mut b).unwrap();
    b[6..8].copy_from_slice(&9001u16.to_be_bytes());
    assert_eq!(
        ProbeRepr::parse(&b),
        Err(WireError::BadLength {
            field: "payload_len",
            value: 9001
        })
    );
}

#[test]
fn probe_emit_errors_leave_buffer_alone() {
    let mut buf = [0xa5u8; 100];
    assert_eq!(
        probe_repr(39).emit(&mut buf),
        Err(WireError::BadLength {
            field: "payload_len",
            value: 39
        })
    );
    assert_eq!(
        probe_repr(9001).emit(&mut buf),
        Err(WireError::BadLength {
            field: "payload_len",
            value: 9001
        })
    );
    assert_eq!(
        probe_repr(101).emit(&mut buf),
        Err(WireError::BufferTooSmall {
            need: 101,
            have: 100
        })
    );
    assert!(buf.iter().all(|&b| b == 0xa5));
    assert_eq!(probe_repr(9000).buffer_len(), 9000);
}

#[test]
fn probe_header_new_checked_checks_length_only() {
    assert_eq!(
        ProbeHeader::new_checked(&[0u8; 39][..]).err(),
        Some(WireError::Truncated { need: 40, have: 39 })
    );
    // Zero magic is fine for the view: it is also used to build headers.
    let h = ProbeHeader::new_checked(&[0u8; 40][..]).unwrap();
    assert_eq!(h.magic(), 0);
}

#[test]
fn flags_helpers() {
    let mut f = ProbeFlags::empty();
    assert!(!f.contains(ProbeFlags::REPLY));
    f.insert(ProbeFlags::REPLY);
    f |= ProbeFlags::AUX_TIMESTAMP;
    assert!(f.contains(ProbeFlags::REPLY | ProbeFlags::AUX_TIMESTAMP));
    assert!(!f.contains(ProbeFlags::REPLY | ProbeFlags::FOLLOW_UP));
    assert_eq!(f.bits(), 0x06);
    f.remove(ProbeFlags::REPLY);
    assert_eq!(f.bits(), 0x02);
    f.set(ProbeFlags::SENDER_TIMESTAMP, true);
    assert_eq!(f.bits(), 0x03);
    assert_eq!(
        format!("{:?}", ProbeFlags(0x45)),
        "ProbeFlags(SENDER_TIMESTAMP | REPLY | 0x40)"
    );
    assert_eq!(format!("{:?}", ProbeFlags::empty()), "ProbeFlags(0x00)");
}

fn untagged_frame_bytes(p: u16) -> Vec<u8> {
    let mut v = vec![
        0x02, 0x6d, 0x73, 0x00, 0x00, 0x02, // dst
        0x02, 0x6d, 0x73, 0x00, 0x00, 0x01, // src
        0x88, 0xb5, // ethertype
    ];
    v.extend(probe_bytes(p));
    v
}

fn tagged_frame_bytes(p: u16) -> Vec<u8> {
    let mut v = vec![
        0x02, 0x6d, 0x73, 0x00, 0x00, 0x02, // dst
        0x02, 0x6d, 0x73, 0x00, 0x00, 0x01, // src
        0x81, 0x00, // TPID
        0xb0, 0x2a, // PCP 5, DEI 1, VID 42
        0x88, 0xb5, // ethertype
    ];
    v.extend(probe_bytes(p));
    v
}

const TAG: VlanTag = VlanTag {
    pcp: 5,
    dei: true,
    vid: 42,
};

fn eth(vlan: Option<VlanTag>) -> EthernetRepr {
    EthernetRepr {
        dst: DST,
        src: SRC,
        vlan,
        ethertype: ETHERTYPE_MISURA,
    }
}

#[test]
fn frame_emit_untagged_literal() {
    let mut buf = [0xa5u8; 128];
    let n = emit_frame(&eth(None), &probe_repr(100), &mut buf).unwrap();
    assert_eq!(n, 114);
    assert_eq!(&buf[..n], &untagged_frame_bytes(100)[..]);
    assert!(buf[n..].iter().all(|&b| b == 0xa5));
    assert_eq!(n + ethernet::FCS_LEN, frame_bytes(100, false));
}

#[test]
fn frame_emit_pads_short_frames_to_minimum() {
    // P = 40 gives 54 bytes; the sender pads to 60 (64 with FCS).
    let mut buf = [0xa5u8; 80];
    let n = emit_frame(&eth(None), &probe_repr(40), &mut buf).unwrap();
    assert_eq!(n, 60);
    let mut want = untagged_frame_bytes(40);
    want.resize(60, 0);
    assert_eq!(&buf[..n], &want[..]);
    assert!(buf[60..].iter().all(|&b| b == 0xa5));
    assert_eq!(frame_bytes(40, false), 64);
    // The padding must not confuse the receiver.
    assert_eq!(
        parse_frame(&buf[..n], ETHERTYPE_MISURA).unwrap(),
        (eth(None), probe_repr(40))
    );
}

#[test]
fn frame_emit_tagged_literal() {
    let mut buf = [0xa5u8; 128];
    let n = emit_frame(&eth(Some(TAG)), &probe_repr(46), &mut buf).unwrap();
    assert_eq!(n, 18 + 46);
    assert_eq!(&buf[..n], &tagged_frame_bytes(46)[..]);
    assert!(buf[n..].iter().all(|&b| b == 0xa5));
    assert_eq!(frame_bytes(46, true), 68);
}

#[test]
fn frame_parse_tagged_and_untagged() {
    assert_eq!(
        parse_frame(&tagged_frame_bytes(46), ETHERTYPE_MISURA).unwrap(),
        (eth(Some(TAG)), probe_repr(46))
    );
    assert_eq!(
        parse_frame(&untagged_frame_bytes(46), ETHERTYPE_MISURA).unwrap(),
        (eth(None), probe_repr(46))
    );
    let bytes = tagged_frame_bytes(46);
    let f = EthernetFrame::new_checked(&bytes[..]).unwrap();
    assert_eq!(f.header_len(), 18);
    assert_eq!(f.vlan(), Some(TAG));
    assert_eq!(f.ethertype(), ETHERTYPE_MISURA);
    assert_eq!(f.dst(), DST);
    assert_eq!(f.src(), SRC);
    assert_eq!(f.payload(), &probe_bytes(46)[..]);
}

#[test]
fn frame_parse_errors() {
    assert_eq!(
        parse_frame(&untagged_frame_bytes(46), ETHERTYPE_SEED),
        Err(WireError::WrongEtherType {
            expected: ETHERTYPE_SEED,
            found: ETHERTYPE_MISURA
        })
    );
    assert_eq!(
        parse_frame(&untagged_frame_bytes(46)[..13], ETHERTYPE_MISURA),
        Err(WireError::Truncated { need: 14, have: 13 })
    );
    // Tag announced but cut off.
    assert_eq!(
        parse_frame(&tagged_frame_bytes(46)[..17], ETHERTYPE_MISURA),
        Err(WireError::Truncated { need: 18, have: 17 })
    );
    // Ethernet fine, probe cut short.
    assert_eq!(
        parse_frame(&tagged_frame_bytes(46)[..18 + 45], ETHERTYPE_MISURA),
        Err(WireError::Truncated { need: 46, have: 45 })
    );
    let mut b = tagged_frame_bytes(46);
    b[18 + 4] = 9;
    assert_eq!(
        parse_frame(&b, ETHERTYPE_MISURA),
        Err(WireError::UnsupportedVersion(9))
    );
}

#[test]
fn frame_emit_errors() {
    let mut buf = [0xa5u8; 59];
    assert_eq!(
        emit_frame(&eth(None), &probe_repr(40), &mut buf),
        Err(WireError::BufferTooSmall { need: 60, have: 59 })
    );
    let mut buf = [0xa5u8; 200];
    let bad_vid = eth(Some(VlanTag {
        pcp: 0,
        dei: false,
        vid: 4096,
    }));
    assert_eq!(
        emit_frame(&bad_vid, &probe_repr(46), &mut buf),
        Err(WireError::BadField {
            field: "vlan.vid",
            value: 4096
        })
    );
    let bad_pcp = eth(Some(VlanTag {
        pcp: 8,
        dei: false,
        vid: 1,
    }));
    assert!(matches!(
        bad_pcp.emit(&mut buf),
        Err(WireError::BadField {
            field: "vlan.pcp",
            value: 8
        })
    ));
    let ambiguous = EthernetRepr {
        ethertype: ETHERTYPE_VLAN,
        ..eth(None)
    };
    assert!(matches!(
        ambiguous.emit(&mut buf),
        Err(WireError::BadField { .. })
    ));
    assert!(buf.iter().all(|&b| b == 0xa5), "failed emit wrote bytes");
    assert_eq!(
        eth(Some(TAG)).emit(&mut buf[..17]),
        Err(WireError::BufferTooSmall { need: 18, have: 17 })
    );
}

#[test]
fn ethernet_view_setters() {
    let mut bytes = tagged_frame_bytes(46);
    let mut f = EthernetFrame::new_checked(&mut bytes[..]).unwrap();
    f.set_dst(MacAddr::BROADCAST);
    f.set_src(DST);
    f.set_ethertype(ETHERTYPE_SEED);
    f.set_vlan(VlanTag {
        pcp: 1,
        dei: false,
        vid: 0xfff,
    })
    .unwrap();
    f.payload_mut()[0] = 0;
    assert_eq!(
        &bytes[..18],
        &[
            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0x6d, 0x73, 0x00, 0x00, 0x02, 0x81, 0x00,
            0x2f, 0xff, 0x60, 0x06,
        ]
    );
    assert_eq!(bytes[18], 0);

    let mut bytes = untagged_frame_bytes(46);
    let mut f = EthernetFrame::new_checked(&mut bytes[..]).unwrap();
    assert!(
        f.set_vlan(TAG).is_err(),
        "adding a tag via the view must be refused"
    );
    f.set_ethertype(ETHERTYPE_SEED);
    assert_eq!(&bytes[12..14], &[0x60, 0x06]);

    // Setting 0x8100 on a 14-byte untagged frame must not make accessors panic.
    let mut short = [0u8; 14];
    let mut f = EthernetFrame::new_checked(&mut short[..]).unwrap();
    f.set_ethertype(ETHERTYPE_VLAN);
    assert_eq!(f.vlan(), None);
    assert_eq!(f.payload(), &[] as &[u8]);
    // ...while the fully validating parse reports the missing tag.
    assert_eq!(
        EthernetRepr::parse(&EthernetFrame::new_unchecked(&short[..])),
        Err(WireError::Truncated { need: 18, have: 14 })
    );
}

#[test]
fn vlan_tci_round_trip() {
    for tci in [0u16, 1, 0x0fff, 0x1000, 0xe000, 0xffff, 0xb02a] {
        assert_eq!(VlanTag::from_tci(tci).to_tci(), Ok(tci));
    }
}

#[test]
fn frame_bytes_accounting() {
    assert_eq!(frame_bytes(46, false), 64);
    assert_eq!(frame_bytes(40, false), 64);
    assert_eq!(frame_bytes(42, true), 64);
    assert_eq!(frame_bytes(1500, false), 1518);
    assert_eq!(frame_bytes(1500, true), 1522);
    assert_eq!(frame_bytes(9000, false), 9018);
}

#[test]
fn mac_parse_and_display() {
    let m: MacAddr = "02:6d:73:00:00:01".parse().unwrap();
    assert_eq!(m, SRC);
    assert_eq!(m.to_string(), "02:6d:73:00:00:01");
    assert_eq!("02-6D-73-00-00-01".parse::<MacAddr>().unwrap(), SRC);
    assert_eq!(MacAddr::BROADCAST.to_string(), "ff:ff:ff:ff:ff:ff");
    for bad in [
        "",
        "02:6d:73:00:00",
        "02:6d:73:00:00:01:02",
        "2:6d:73:00:00:01",
        "02:6d:73:00:00:1",
        "02:6d-73:00:00:01",
        "02.6d.73.00.00.01",
        "02:6d:73:00:00:0g",
        "026d73000001",
        "02:6d:73:00:00:+1",
        "02:6d:73:00:é:1",
    ] {
        let e = bad.parse::<MacAddr>().expect_err(bad);
        let msg = e.to_string();
        assert!(msg.contains("invalid MAC address"), "{msg}");
        assert!(
            msg.contains(&format!("{bad:?}")),
            "message should quote input: {msg}"
        );
    }
}

#[test]
fn mac_classification() {
    assert!(MacAddr::BROADCAST.is_broadcast());
    assert!(MacAddr::BROADCAST.is_multicast());
    let mcast = MacAddr([0x01, 0x00, 0x5e, 0, 0, 1]);
    assert!(mcast.is_multicast() && !mcast.is_broadcast());
    assert!(!SRC.is_multicast() && SRC.is_unicast() && SRC.is_local());
}

#[test]
fn mac_serde_round_trip() {
    let json = serde_json::to_string(&SRC).unwrap();
    assert_eq!(json, "\"02:6d:73:00:00:01\"");
    assert_eq!(serde_json::from_str::<MacAddr>(&json).unwrap(), SRC);
    assert_eq!(
        serde_json::from_str::<MacAddr>("\"02-6d-73-00-00-01\"").unwrap(),
        SRC
    );
    let err = serde_json::from_str::<MacAddr>("\"nope\"").unwrap_err();
    assert!(err.to_string().contains("invalid MAC address"), "{err}");
    assert!(serde_json::from_str::<MacAddr>("[2,109,115,0,0,1]").is_err());
}

#[test]
fn error_messages_name_the_problem() {
    assert_eq!(
        WireError::Truncated { need: 40, have: 3 }.to_string(),
        "truncated input: need 40 bytes, have 3"
    );
    assert_eq!(
        WireError::WrongEtherType {
            expected: 0x88b5,
            found: 0x0800
        }
        .to_string(),
        "wrong EtherType: expected 0x88b5, found 0x0800"
    );
    assert!(WireError::UnsupportedVersion(7)
        .to_string()
        .contains("version 7"));
    assert!(WireError::BadLength {
        field: "payload_len",
        value: 5
    }
    .to_string()
    .contains("payload_len"));
    assert!(WireError::BadMagic.to_string().contains("magic"));
}
