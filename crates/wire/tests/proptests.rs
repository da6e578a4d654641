//! Property tests: emit-then-parse is the identity, and no parser panics
//! on arbitrary input.

use misura_wire::ethernet::{MacAddr, VlanTag};
use misura_wire::probe::{self, ProbeFlags, ProbeHeader, ProbeRepr};
use misura_wire::{
    emit_frame, frame_bytes, parse_frame, EthernetFrame, EthernetRepr, ETHERTYPE_MISURA,
    ETHERTYPE_VLAN,
};
use proptest::prelude::*;

fn arb_probe() -> impl Strategy<Value = ProbeRepr> {
    (
        any::<u8>(),
        probe::HEADER_LEN as u16..=probe::MAX_PAYLOAD as u16,
        any::<u32>(),
        any::<(u16, u16)>(),
        any::<(u64, u64, u64)>(),
    )
        .prop_map(
            |(flags, payload_len, session_id, (stream, size_index), (seq, s, a))| ProbeRepr {
                flags: ProbeFlags(flags),
                payload_len,
                session_id,
                stream,
                size_index,
                seq,
                sender_timestamp: s,
                aux_timestamp: a,
            },
        )
}

fn arb_vlan() -> impl Strategy<Value = Option<VlanTag>> {
    proptest::option::of(
        (0u8..=7, any::<bool>(), 0u16..=0x0fff).prop_map(|(pcp, dei, vid)| VlanTag {
            pcp,
            dei,
            vid,
        }),
    )
}

fn arb_eth() -> impl Strategy<Value = EthernetRepr> {
    (any::<[u8; 6]>(), any::<[u8; 6]>(), arb_vlan(), any::<u16>()).prop_map(
        |(d, s, vlan, ethertype)| {
            // Untagged 0x8100 is unrepresentable (it would read back as a tag).
            let ethertype = if vlan.is_none() && ethertype == ETHERTYPE_VLAN {
                ETHERTYPE_MISURA
            } else {
                ethertype
            };
            EthernetRepr {
                dst: MacAddr(d),
                src: MacAddr(s),
                vlan,
                ethertype,
            }
        },
    )
}

proptest! {
    #[test]
    fn probe_round_trip(p in arb_probe(), extra in 0usize..16) {
        let mut buf = vec![0xa5u8; p.buffer_len() + extra];
        prop_assert_eq!(p.emit(&mut buf).unwrap(), usize::from(p.payload_len));
        prop_assert!(buf[usize::from(p.payload_len)..].iter().all(|&b| b == 0xa5));
        prop_assert_eq!(ProbeRepr::parse(&buf).unwrap(), p);
    }

    #[test]
    fn ethernet_round_trip(e in arb_eth()) {
        let mut buf = [0xa5u8; 32];
        let n = e.emit(&mut buf).unwrap();
        prop_assert_eq!(n, e.header_len());
        let f = EthernetFrame::new_checked(&buf[..n]).unwrap();
        prop_assert_eq!(f.header_len(), n);
        prop_assert_eq!(EthernetRepr::parse(&f).unwrap(), e);
    }

    #[test]
    fn frame_round_trip(mut e in arb_eth(), p in arb_probe()) {
        e.ethertype = ETHERTYPE_MISURA;
        let mut buf = vec![0xa5u8; 9100];
        let n = emit_frame(&e, &p, &mut buf).unwrap();
        prop_assert_eq!(n + 4, frame_bytes(p.buffer_len(), e.vlan.is_some()));
        prop_assert_eq!(parse_frame(&buf[..n], ETHERTYPE_MISURA).unwrap(), (e, p));
    }

    #[test]
    fn parsers_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = ProbeRepr::parse(&bytes);
        let _ = parse_frame(&bytes, ETHERTYPE_MISURA);
        if let Ok(f) = EthernetFrame::new_checked(&bytes[..]) {
            let _ = (f.dst(), f.src(), f.ethertype(), f.vlan(), f.payload());
            prop_assert!(EthernetRepr::parse(&f).is_ok());
        }
        if let Ok(h) = ProbeHeader::new_checked(&bytes[..]) {
            let _ = (h.magic(), h.version(), h.flags(), h.payload_len(), h.session_id());
            let _ = (h.stream(), h.size_index(), h.seq(), h.sender_timestamp(), h.aux_timestamp());
        }
    }

    /// Random bytes almost never carry the magic; this starts from a valid
    /// frame and corrupts it so the deeper checks are exercised too.
    #[test]
    fn corrupted_frames_never_panic(
        e in arb_eth(), p in arb_probe(),
        flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..6),
        cut in any::<usize>(),
    ) {
        let mut buf = vec![0u8; 9100];
        let mut e = e;
        e.ethertype = ETHERTYPE_MISURA;
        let n = emit_frame(&e, &p, &mut buf).unwrap();
        buf.truncate(n);
        for (i, v) in flips {
            let i = i % n;
            buf[i] = v;
        }
        buf.truncate(cut % (n + 1));
        if let Ok((e2, p2)) = parse_frame(&buf, ETHERTYPE_MISURA) {
            // Whatever parses must re-emit to something that parses the same.
            let mut out = vec![0u8; 9100];
            let m = emit_frame(&e2, &p2, &mut out).unwrap();
            prop_assert_eq!(parse_frame(&out[..m], ETHERTYPE_MISURA).unwrap(), (e2, p2));
        }
    }
}
