//! The reflector core against packets built with the codec.

use super::*;
use misura_wire::irtt::{emit_close, emit_echo, emit_open, parse, parse_echo};
use misura_wire::irtt_params::{Clock, ReceivedStats, StampAt};

fn cfg(key: Option<&[u8]>) -> Config {
    Config {
        opens_per_s: 1000,
        ..Config::new(key.map(<[u8]>::to_vec), 2, 1000)
    }
}

fn want() -> Params {
    Params {
        protocol_version: 1,
        duration_ns: 1_000_000_000,
        interval_ns: 10_000_000,
        length: 0,
        received_stats: ReceivedStats::Both,
        stamp_at: StampAt::Both,
        clock: Clock::Both,
        dscp: 46,
        server_fill: "rand".into(),
    }
}

fn addr(p: u16) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], p))
}

const RX: Time = Time {
    wall_ns: 1_000,
    mono_ns: 10,
};
const TX: Time = Time {
    wall_ns: 1_400,
    mono_ns: 410,
};

/// `ns` on the reflector's (monotonic) timescale.
fn at(ns: i64) -> Instant {
    Instant::from_ns(ns)
}

/// Opens a session; returns its token and the granted parameters.
fn open(r: &mut Reflector, key: Option<&[u8]>, p: &Params, now: i64) -> (u64, Params, bool) {
    let mut b = [0u8; 256];
    let mut out = [0u8; 256];
    let n = emit_open(None, p, false, key, &mut b).unwrap();
    let Decision::Reply { len } =
        r.handle(&b[..n], addr(1), RX, TX, at(now), 77 + now as u64, &mut out)
    else {
        panic!("no open reply")
    };
    match parse(&out[..len], key, true).unwrap() {
        Packet::Open {
            token: Some(t),
            params,
            close,
        } => (t, params, close),
        other => panic!("{other:?}"),
    }
}

/// A plain echo request of session `token` (no HMAC, no stats asked),
/// padded to `length` bytes, written to `b`; its length.
fn plain_echo(layout: &Layout, token: u64, length: usize, b: &mut [u8]) -> usize {
    let echo = Echo {
        token,
        ..Echo::default()
    };
    emit_echo(layout, &echo, false, length, None, b).unwrap()
}

#[test]
fn echoes_with_the_stamps_and_stats_asked_for_never_longer_than_the_request() {
    for key in [None, Some(&b"k"[..])] {
        let mut r = Reflector::new(cfg(key));
        let (t, granted, close) = open(&mut r, key, &want(), 0);
        assert!(!close);
        assert_eq!((granted.dscp, granted.server_fill.as_str()), (0, ""));
        let layout = Layout::new(&granted, key.is_some());
        let mut b = [0u8; 256];
        let mut out = [0u8; 256];
        for (i, seq) in [0u32, 1, 3, 3].into_iter().enumerate() {
            let e = Echo {
                token: t,
                seqno: seq,
                ..Echo::default()
            };
            let n = emit_echo(&layout, &e, false, 0, key, &mut b).unwrap();
            let now = 20_000_000 * (i as i64 + 1);
            let d = r.handle(&b[..n], addr(1), RX, TX, at(now), 0, &mut out);
            let Decision::Reply { len } = d else {
                panic!("{d:?}")
            };
            assert_eq!(len, n, "reply as long as the request");
            parse(&out[..len], key, true).unwrap();
            let got = parse_echo(&out[..len], &layout).unwrap();
            assert_eq!((got.seqno, got.receive, got.send), (seq, RX, TX));
            assert_eq!(got.received_count, Some(i as u32 + 1));
            let want_window = [0b1, 0b11, 0b1101, 0b1101][i];
            assert_eq!(got.received_window, Some(want_window));
        }
        // A request cut short gets no reply.
        let e = Echo {
            token: t,
            seqno: 9,
            ..Echo::default()
        };
        let n = emit_echo(&layout, &e, false, 0, key, &mut b).unwrap();
        assert_eq!(
            r.handle(&b[..n - 1], addr(1), RX, TX, at(1_000_000_000), 0, &mut out),
            Decision::Drop
        );
        // From another address: dropped.
        assert_eq!(
            r.handle(&b[..n], addr(2), RX, TX, at(1_000_000_000), 0, &mut out),
            Decision::Drop
        );
        let n = emit_close(t, key, &mut b).unwrap();
        assert_eq!(
            r.handle(&b[..n], addr(1), RX, TX, at(1_000_000_000), 0, &mut out),
            Decision::Drop
        );
        let c = r.counters();
        // Cut short, a signed request fails its HMAC first.
        let short = c.short_request + c.hmac_failures;
        assert_eq!(
            (c.replies, short, c.address_mismatch, c.closed),
            (4, 1, 1, 1)
        );
        assert_eq!(r.sessions(), 0);
    }
}

#[test]
fn midpoint_and_single_clock_stamps() {
    let mut r = Reflector::new(cfg(None));
    let mut p = want();
    p.stamp_at = StampAt::Midpoint;
    p.clock = Clock::Monotonic;
    p.length = 100;
    let (t, granted, _) = open(&mut r, None, &p, 0);
    let layout = Layout::new(&granted, false);
    let mut b = [0u8; 256];
    let mut out = [0u8; 256];
    let n = plain_echo(&layout, t, 100, &mut b);
    let Decision::Reply { len } = r.handle(&b[..n], addr(1), RX, TX, at(1), 0, &mut out) else {
        panic!()
    };
    assert_eq!(len, 100);
    let got = parse_echo(&out[..len], &layout).unwrap();
    let mid = Time {
        wall_ns: 0,
        mono_ns: 210,
    };
    assert_eq!((got.receive, got.send), (mid, mid));
}

#[test]
fn bounds_refuse_and_count_instead_of_growing() {
    let mut r = Reflector::new(cfg(None));
    let mut p = want();
    p.interval_ns = 1;
    p.length = 1 << 30;
    let (_, g, _) = open(&mut r, None, &p, 0);
    assert_eq!((g.interval_ns, g.length), (1_000_000, 9216));
    open(&mut r, None, &want(), 1);
    // The table holds 2: the third is refused with the close flag.
    let (t, _, close) = open(&mut r, None, &want(), 2);
    assert!(close && t == 0);
    // Another protocol version: refused.
    let mut v = want();
    v.protocol_version = 2;
    let (_, g, close) = open(&mut r, None, &v, IDLE_TIMEOUT.as_ns() + 10);
    assert!(close);
    assert_eq!(g.protocol_version, 1);
    // After the idle timeout the old sessions are gone and a new one fits.
    let (_, _, close) = open(&mut r, None, &want(), IDLE_TIMEOUT.as_ns() + 20);
    assert!(!close);
    let mut out = [0u8; 256];
    for bad in [
        &b"\x14\xa7\x5b"[..],
        b"junkjunk",
        b"\x14\xa7\x5b\x02abcdefgh",
    ] {
        assert_eq!(
            r.handle(bad, addr(1), RX, TX, at(0), 0, &mut out),
            Decision::Drop
        );
    }
    let mut with_hmac = [0u8; 64];
    let n = emit_open(None, &want(), false, Some(b"x"), &mut with_hmac).unwrap();
    assert_eq!(
        r.handle(&with_hmac[..n], addr(1), RX, TX, at(0), 1, &mut out),
        Decision::Drop
    );
    let c = r.counters();
    assert_eq!(
        (c.refused, c.expired, c.malformed, c.hmac_failures),
        (2, 2, 3, 1)
    );
}

#[test]
fn rate_limit_drops_a_flood_on_one_session() {
    let mut r = Reflector::new(Config {
        rate_per_s: 100,
        ..cfg(None)
    });
    let (t, g, _) = open(&mut r, None, &want(), 0);
    let layout = Layout::new(&g, false);
    let mut b = [0u8; 256];
    let mut out = [0u8; 256];
    let n = plain_echo(&layout, t, 0, &mut b);
    let replies = (0..100)
        .filter(|_| r.handle(&b[..n], addr(1), RX, TX, at(5), 0, &mut out) != Decision::Drop)
        .count();
    // The burst is a tenth of a second's worth: 10.
    assert_eq!(replies, 10);
    assert_eq!(r.counters().rate_limited, 90);
}

/// An open request for `p` from `src` at `now`: the reflector's answer
/// (its length) and the request's length.
fn try_open(
    r: &mut Reflector,
    src: SocketAddr,
    p: &Params,
    now: i64,
    token: u64,
) -> (Decision, usize) {
    let mut b = [0u8; 256];
    let mut out = [0u8; 256];
    let n = emit_open(None, p, false, None, &mut b).unwrap();
    (r.handle(&b[..n], src, RX, TX, at(now), token, &mut out), n)
}

#[test]
fn one_source_flooding_opens_cannot_fill_the_table() {
    // Issue 33 item 3: 4096 opens from one address in 0.7 s filled the
    // table and every real client was refused for 60 s.
    let mut r = Reflector::new(Config::new(None, 4096, 10_000));
    let flood = SocketAddr::from(([10, 0, 0, 1], 40_000));
    let mut answered = 0;
    for i in 0..4096i64 {
        let now = i * 700_000_000 / 4096;
        let (d, _) = try_open(&mut r, flood, &want(), now, 1000 + i as u64);
        answered += usize::from(d != Decision::Drop);
    }
    assert_eq!(r.sessions(), SESSIONS_PER_SOURCE, "one source's sessions");
    let c = *r.counters();
    // The burst and 0.7 s of the per-source rate: 10 + 7 answers.
    assert!(answered <= 17, "{answered} answers to the flood: {c:?}");
    assert_eq!(c.opened, SESSIONS_PER_SOURCE as u64);
    assert_eq!(c.refused_source_cap, answered as u64 - c.opened, "{c:?}");
    assert_eq!(c.open_rate_limited, 4096 - answered as u64, "{c:?}");
    // A real client from another address is served at once.
    let (d, _) = try_open(&mut r, addr(9), &want(), 700_000_000, 7);
    assert!(matches!(d, Decision::Reply { .. }));
    assert_eq!(r.sessions(), SESSIONS_PER_SOURCE + 1);
    // Opens that never echo are forgotten 5 s later, and the source may
    // open again.
    r.sweep(at(700_000_000) + UNUSED_TIMEOUT + Span::from_ns(1));
    assert_eq!(r.sessions(), 0);
    let (d, _) = try_open(&mut r, flood, &want(), 7_000_000_000, 9);
    assert!(matches!(d, Decision::Reply { .. }), "{d:?}");
}

#[test]
fn spoofed_sources_open_at_most_the_overall_rate() {
    // 100 000 opens a second from 100 000 addresses for a second: the
    // overall budget (a tenth of the table a second) answers 409 + 409.
    let mut r = Reflector::new(Config::new(None, 4096, 10_000));
    let mut answered = 0u64;
    for i in 0..100_000u32 {
        let src = SocketAddr::from((i.to_be_bytes(), 7));
        let (d, _) = try_open(&mut r, src, &want(), i as i64 * 10_000, u64::from(i) + 1);
        answered += u64::from(d != Decision::Drop);
    }
    assert!(answered <= 2 * 409 + 1, "{answered}");
    assert!(r.sessions() <= 2 * 409 + 1);
    // The rest: over the rate, or new sources beyond the 65 536 tracked.
    let c = r.counters();
    assert_eq!(c.open_rate_limited + c.open_unanswered, 100_000 - answered);
    assert!(c.open_unanswered > 0, "{c:?}");
}

#[test]
fn no_open_answer_is_longer_than_the_open_and_its_token() {
    // A header-only open got a 20-byte refusal: nothing now.
    let mut r = Reflector::new(cfg(None));
    let mut out = [0u8; 256];
    for req in [&b"\x14\xa7\x5b\x01"[..], b"\x14\xa7\x5b\x05"] {
        assert_eq!(
            r.handle(req, addr(3), RX, TX, at(0), 5, &mut out),
            Decision::Drop
        );
    }
    assert_eq!(r.counters().open_unanswered, 2);
    // A refusal (another version) is answered only with no more bytes than
    // came in; a grant with at most the token's 8 more.
    let mut v = want();
    v.protocol_version = 2;
    let (d, n) = try_open(&mut r, addr(3), &v, 1, 5);
    let Decision::Reply { len } = d else {
        panic!("{d:?}")
    };
    assert!(len <= n, "refusal {len} bytes to {n}");
    let bare = Params {
        protocol_version: 1,
        clock: Clock::Both,
        interval_ns: 1,
        duration_ns: 1,
        ..Params::default()
    };
    for (p, now) in [(want(), 2), (bare, 3)] {
        let (d, n) = try_open(&mut r, addr(3), &p, now, 10 + now as u64);
        match d {
            Decision::Reply { len } => assert!(len <= n + TOKEN_LEN, "{len} to {n}"),
            Decision::Drop => assert!(r.counters().open_unanswered > 2),
        }
    }
    // `bare` asks for a 1 ns interval: the grant's (1 ms) encodes longer,
    // so the answer would exceed the open plus its token: none.
    assert_eq!(r.counters().open_unanswered, 3, "{:?}", r.counters());
}
