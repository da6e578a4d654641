//! Every drop reason, authentication and the bounded tables.

use super::*;

#[test]
fn every_drop_reason_is_triggered_and_counted() {
    let mut out = [0u8; 300];
    let ok = plain(1);
    let c = ClockState::FREE_RUNNING;
    let mut r = Reflector::new(cfg());
    let mut cases: Vec<(Vec<u8>, RequestMeta, DropReason)> = vec![
        (
            ok[..43].to_vec(),
            meta(src(1, 5000), NOW),
            DropReason::TooShort,
        ),
        (vec![], meta(src(1, 5000), NOW), DropReason::TooShort),
        (
            ok.clone(),
            RequestMeta {
                truncated: true,
                ..meta(src(1, 5000), NOW)
            },
            DropReason::Malformed,
        ),
        (ok.clone(), meta(src(1, 0), NOW), DropReason::GroupSource),
        (
            ok.clone(),
            meta(src(1, 862), NOW),
            DropReason::LooksLikeReply,
        ),
    ];
    // Group, broadcast and unspecified sources: never answered.
    let groups = [
        "224.0.0.1:5000",
        "255.255.255.255:5000",
        "[ff02::1]:5000",
        "[::ffff:239.1.1.1]:5000",
        "0.0.0.0:5000",
    ];
    cases.extend(groups.map(|a| {
        let m = meta(Peer::Udp(a.parse().unwrap()), NOW);
        (ok.clone(), m, DropReason::GroupSource)
    }));
    for (req, m, want) in &cases {
        assert_eq!(
            r.handle(req, m, AT_NOW, &c, &mut out),
            Decision::Drop(*want),
            "{want:?}"
        );
    }
    // Output buffer shorter than the request: refused, not truncated.
    assert_eq!(
        r.handle(&ok, &meta(src(1, 5000), NOW), AT_NOW, &c, &mut out[..43]),
        Decision::Drop(DropReason::Malformed)
    );
    let k = r.counters();
    assert_eq!(
        (k.too_short, k.malformed, k.group_source, k.looks_like_reply),
        (2, 2, 6, 1)
    );
    assert_eq!(k.received, 11);
    assert_eq!(k.replied, 0);

    // Auth: short, wrong HMAC.
    let key = StampKey::new(b"k").unwrap();
    let mut r = Reflector::new(ReflectorConfig {
        key: Some(key.clone()),
        ..cfg()
    });
    assert_eq!(
        r.handle(&ok, &meta(src(1, 5000), NOW), AT_NOW, &c, &mut out),
        Decision::Drop(DropReason::AuthFailed)
    );
    let mut a = request(Mode::Authenticated, 1, StampTimestampFormat::Ntp, 0, false);
    sign(&StampKey::new(b"wrong").unwrap(), &mut a);
    assert_eq!(
        r.handle(&a, &meta(src(1, 5000), NOW), AT_NOW, &c, &mut out),
        Decision::Drop(DropReason::AuthFailed)
    );
    assert_eq!(r.counters().auth_failed, 2);

    // Rate limit: a burst of 3 at 10/s.
    let mut r = Reflector::new(ReflectorConfig {
        rate_per_s: 10,
        burst: 3,
        ..cfg()
    });
    let d: Vec<Decision> = (0..5)
        .map(|_| r.handle(&ok, &meta(src(1, 5000), NOW), AT_NOW, &c, &mut out))
        .collect();
    assert!(matches!(d[2], Decision::Reply { .. }));
    assert_eq!(d[3], Decision::Drop(DropReason::RateLimited));
    // Another port of the same host shares the budget.
    assert_eq!(
        r.handle(&ok, &meta(src(1, 5001), NOW), AT_NOW, &c, &mut out),
        Decision::Drop(DropReason::RateLimited)
    );
    assert_eq!(r.counters().rate_limited, 3);

    // Table full.
    let mut r = Reflector::new(ReflectorConfig {
        max_sources: 2,
        ..cfg()
    });
    // Two sources that keep talking (seen twice: off probation) fill
    // the table; a third is refused until one has been idle.
    for n in 1..=2 {
        for _ in 0..2 {
            assert!(matches!(
                r.handle(&ok, &meta(src(n, 5000), NOW), AT_NOW, &c, &mut out),
                Decision::Reply { .. }
            ));
        }
    }
    assert_eq!(
        r.handle(&ok, &meta(src(3, 5000), NOW), AT_NOW, &c, &mut out),
        Decision::Drop(DropReason::TableFull)
    );
    // Same host, new port: new follow-up peer, table full too.
    assert_eq!(
        r.handle(&ok, &meta(src(1, 5001), NOW), AT_NOW, &c, &mut out),
        Decision::Drop(DropReason::TableFull)
    );
    assert_eq!(r.counters().table_full, 2);
    assert_eq!(r.counters().dropped(), 2);
}

#[test]
fn hmac_verified_and_reply_signed() {
    let key = StampKey::new(b"0123456789abcdef").unwrap();
    let mut r = Reflector::new(ReflectorConfig {
        key: Some(key.clone()),
        ..cfg()
    });
    let c = ClockState::FREE_RUNNING;
    let mut out = [0u8; 400];
    // With an HMAC TLV after the Timestamp Information TLV.
    let mut req = request(Mode::Authenticated, 3, StampTimestampFormat::Ntp, 0, true);
    let mut t = [0u8; 20];
    emit_tlvs(
        &[TlvRepr::Hmac {
            flags: TlvFlags::SENDER,
            hmac: [0; 16],
        }],
        &mut t,
    )
    .unwrap();
    req.extend_from_slice(&t);
    sign(&key, &mut req);
    let Decision::Reply { len, .. } =
        r.handle(&req, &meta(src(1, 5000), NOW), AT_NOW, &c, &mut out)
    else {
        panic!("{:?}", r.counters())
    };
    assert_eq!(len, req.len());
    let reply = &out[..len];
    assert!(verify16(&key, &[&reply[..96]], &reply[96..112]));
    let cov = tlv_hmac_covered(reply, Mode::Authenticated).unwrap();
    assert!(verify16(
        &key,
        &[&reply[cov.seq.clone()], &reply[cov.tlvs.clone()]],
        &reply[cov.hmac.clone()]
    ));
    assert!(tlvs_of(reply, Mode::Authenticated)
        .iter()
        .all(|t| !t.flags().contains(TlvFlags::I)));
    assert_eq!(
        ReflectorRepr::parse(reply, Mode::Authenticated)
            .unwrap()
            .sender_seq,
        3
    );

    // A bad HMAC TLV with a good base HMAC: replied, I set on every TLV.
    let mut bad = req.clone();
    let n = bad.len();
    sign(&key, &mut bad);
    bad[n - 1] ^= 0xff;
    let Decision::Reply { len, .. } =
        r.handle(&bad, &meta(src(1, 5000), NOW), AT_NOW, &c, &mut out)
    else {
        panic!()
    };
    assert!(tlvs_of(&out[..len], Mode::Authenticated)
        .iter()
        .all(|t| t.flags().contains(TlvFlags::I)));
    assert_eq!(r.counters().tlv_integrity_failed, 1);

    // Tampered base: dropped.
    let mut tampered = req.clone();
    tampered[0] ^= 1;
    assert_eq!(
        r.handle(&tampered, &meta(src(1, 5000), NOW), AT_NOW, &c, &mut out),
        Decision::Drop(DropReason::AuthFailed)
    );
    // Without TLVs, exactly 112 bytes.
    let mut plain = request(Mode::Authenticated, 4, StampTimestampFormat::Ptp, 9, false);
    sign(&key, &mut plain);
    let Decision::Reply { len, .. } =
        r.handle(&plain, &meta(src(1, 5000), NOW), AT_NOW, &c, &mut out)
    else {
        panic!()
    };
    assert_eq!(len, AUTH_LEN);
    assert!(verify16(&key, &[&out[..96]], &out[96..112]));
}

#[test]
fn bounded_tables_under_a_flood_of_sources() {
    let mut r = Reflector::new(ReflectorConfig {
        max_sources: 64,
        stateful: true,
        ..cfg()
    });
    let c = ClockState::FREE_RUNNING;
    let mut out = [0u8; 300];
    let ok = plain(1);
    for i in 0..20_000u32 {
        let ip = IpAddr::from((0x0a00_0000u32 + i).to_be_bytes());
        let m = meta(
            Peer::Udp(SocketAddr::new(ip, 1024 + (i % 60000) as u16)),
            NOW + i64::from(i),
        );
        let _ = r.handle(&ok, &m, Instant::from_ns(NOW + i64::from(i)), &c, &mut out);
    }
    let (l, p, s) = r.tracked();
    assert!(l <= 64 && p <= 64 && s <= 64, "{l} {p} {s}");
    // Issue 13, finding 1: one-shot sources take turns on probation;
    // none is refused and the tables stay bounded.
    assert_eq!(r.counters().replied, 20_000);
    assert_eq!(r.counters().table_full, 0);
    // A real source that keeps talking is served all through a flood.
    let mut served = 0;
    for i in 0..20_000u32 {
        let t = NOW + 30_000 + i64::from(i) * 1_000;
        if i % 100 == 0 {
            let m = meta(src(200, 5000), t);
            if matches!(
                r.handle(&ok, &m, Instant::from_ns(t), &c, &mut out),
                Decision::Reply { .. }
            ) {
                served += 1;
            }
        }
        let ip = IpAddr::from((0x0b00_0000u32 + i).to_be_bytes());
        let m = meta(Peer::Udp(SocketAddr::new(ip, 2000)), t);
        let _ = r.handle(&ok, &m, Instant::from_ns(t), &c, &mut out);
    }
    assert_eq!(served, 200, "the real source lost replies during the flood");
    assert_eq!(r.counters().table_full, 0);
}

#[test]
fn one_address_cycling_ports_holds_at_most_its_share_of_the_peer_table() {
    // Issue 13, finding 1: one real address cycling 4 200 source ports
    // (each talking twice, so promoted) locked new sources out.
    let mut r = Reflector::new(ReflectorConfig {
        max_sources: 1024,
        rate_per_s: 1_000_000,
        burst: 1_000_000,
        ..cfg()
    });
    let c = ClockState::FREE_RUNNING;
    let mut out = [0u8; 300];
    let ok = plain(1);
    let mut t = NOW;
    for port in 0..4_200u16 {
        for _ in 0..2 {
            t += 200_000;
            let _ = r.handle(
                &ok,
                &meta(src(9, 1024 + port), t),
                Instant::from_ns(t),
                &c,
                &mut out,
            );
        }
    }
    let a = src(9, 1).source_addr();
    assert_eq!(r.ports.keys_of(&a), PORTS_PER_ADDRESS);
    assert!(r.tracked().1 <= PORTS_PER_ADDRESS, "{:?}", r.tracked());
    assert_eq!(r.counters().table_full, 0);
    // New sources from other addresses all get in and stay.
    for host in 20..220u8 {
        for _ in 0..2 {
            t += 200_000;
            let d = r.handle(
                &ok,
                &meta(src(host, 5000), t),
                Instant::from_ns(t),
                &c,
                &mut out,
            );
            assert!(matches!(d, Decision::Reply { .. }), "host {host}: {d:?}");
        }
    }
    assert!(r.tracked().1 >= 200 + PORTS_PER_ADDRESS - 1);
}
