use super::*;
use crate::auth::verify16;
use crate::auth::StampKey;
use crate::reflector::{
    ClockState, Decision, Peer, Reflector, ReflectorConfig, RequestMeta, Stamp,
};
use crate::schedule::Pattern;
use crate::stamp_client::ReplyMatch;
use crate::time::{Period, Span, TimestampSource};
use misura_wire::stamp::{self as wire_stamp, SenderRepr, StampTimestampFormat};
use proptest::prelude::*;

const T0: i64 = 1_790_000_000_000_000_000;
const MS: i64 = 1_000_000;

fn inst(ns: i64) -> Instant {
    Instant::from_ns(ns)
}

fn config(sizes: &[usize], key: Option<StampKey>) -> SenderConfig {
    let mode = if key.is_some() {
        Mode::Authenticated
    } else {
        Mode::Unauthenticated
    };
    SenderConfig {
        key,
        ssid: 0x0101,
        layouts: sizes
            .iter()
            .map(|&s| RequestLayout::new(s, mode).unwrap())
            .collect(),
        pattern: Pattern::Periodic,
        period: Period::new(10 * MS).unwrap(),
        seed: 1,
        count: Some(5),
        duration: None,
        timeout: Span::from_ns(50 * MS),
        warmup_probes: 0,
        warmup_wait: Span::from_ns(WARMUP_WAIT_NS),
        expect_tx_stamp: false,
    }
}

/// A stateless `misura reflect`, answering at `now` on its own clock.
struct Peer1 {
    reflector: Reflector,
    out: Vec<u8>,
}

const FROM: Peer = Peer::Udp(std::net::SocketAddr::V4(std::net::SocketAddrV4::new(
    std::net::Ipv4Addr::new(198, 18, 0, 1),
    40_000,
)));

impl Peer1 {
    fn new(key: Option<StampKey>) -> Peer1 {
        Peer1 {
            reflector: Reflector::new(ReflectorConfig {
                key,
                stateful: false,
                rate_per_s: 1_000_000,
                burst: 1_000_000,
                max_sources: 4,
                listen_port: Some(862),
            }),
            out: vec![0; 2048],
        }
    }

    fn reply(&mut self, request: &[u8], rx: i64, now: i64) -> Vec<u8> {
        let meta = RequestMeta {
            src: FROM,
            dst: None,
            ttl: Some(64),
            rx: Stamp {
                at: inst(rx),
                source: TimestampSource::KernelSoftware,
            },
            truncated: false,
        };
        match self.reflector.handle(
            request,
            &meta,
            inst(now),
            &ClockState::FREE_RUNNING,
            &mut self.out,
        ) {
            Decision::Reply { len, .. } => self.out[..len].to_vec(),
            Decision::Drop(r) => panic!("reflector dropped the request: {r:?}"),
        }
    }

    fn sent(&mut self, reply_seq: u32, tx: i64) {
        self.reflector
            .on_tx_stamp(FROM, reply_seq, inst(tx), TimestampSource::KernelSoftware);
    }
}

/// Starts a session without warm-up: the first probe is due at the result.
fn started(s: &mut SessionSender, now: i64) -> i64 {
    let mut buf = vec![0; s.max_request_len()];
    assert_eq!(s.poll_transmit(inst(now), &mut buf), None);
    assert_eq!(
        s.measurement_start().map(Instant::as_ns),
        Some(now + START_DELAY_NS)
    );
    now + START_DELAY_NS
}

#[test]
fn warm_up_sends_one_request_at_a_time_and_settles_two_step() {
    let mut c = config(&[72], None);
    c.warmup_probes = 3;
    let mut s = SessionSender::new(c).unwrap();
    let mut peer = Peer1::new(None);
    let mut buf = vec![0; 72];
    assert!(s.is_warming_up());
    let t = s.poll_transmit(inst(T0), &mut buf).unwrap();
    assert_eq!((t.seq, t.size_index, t.len, t.warm_up), (0, 0, 72, true));
    assert!(s.on_sent(0, inst(T0), inst(T0 + 10)));
    assert_eq!(
        s.poll_transmit(inst(T0 + MS), &mut buf),
        None,
        "waits for the reply"
    );
    assert_eq!(
        s.poll_timeout().map(Instant::as_ns),
        Some(T0 + 10 + WARMUP_WAIT_NS)
    );
    let reply = peer.reply(&buf[..72], T0 + 100, T0 + 200);
    peer.sent(0, T0 + 250);
    assert_eq!(
        s.handle_reply(&reply, inst(T0 + 500), None, None),
        ReplyOutcome::WarmUp
    );
    assert_eq!(
        s.poll_timeout().map(Instant::as_ns),
        Some(T0 + 500),
        "the next request may go at once"
    );
    // Request 1 gets no reply in time; its late reply is ignored.
    let t = s.poll_transmit(inst(T0 + 600), &mut buf).unwrap();
    assert_eq!(t.seq, 1);
    s.on_sent(1, inst(T0 + 600), inst(T0 + 610));
    let late = peer.reply(&buf[..72], T0 + 700, T0 + 800);
    peer.sent(1, T0 + 850);
    let deadline = T0 + 610 + WARMUP_WAIT_NS;
    assert_eq!(s.poll_transmit(inst(deadline - 1), &mut buf), None);
    let t = s.poll_transmit(inst(deadline), &mut buf).unwrap();
    assert_eq!(t.seq, 2);
    s.on_sent(2, inst(deadline), inst(deadline + 10));
    assert_eq!(
        s.handle_reply(&late, inst(deadline + 20), Some(inst(deadline + 15)), None),
        ReplyOutcome::Ignored
    );
    // Reply 2 carries the follow-up of reply 1: the reflector does two-step.
    let reply = peer.reply(&buf[..72], deadline + 100, deadline + 200);
    assert_eq!(
        s.handle_reply(
            &reply,
            inst(deadline + 300),
            Some(inst(deadline + 290)),
            None
        ),
        ReplyOutcome::WarmUp
    );
    assert!(!s.is_warming_up());
    assert_eq!(
        *s.warm_up(),
        WarmUpSummary {
            sent: 3,
            replies: 2,
            unstamped: 1,
            follow_up_supported: Some(true),
            follow_up_filled: true,
        }
    );
    assert!(s.expects_follow_up());
    assert!(s.timestamp_info().is_some());
    // Measured probes start 1 ms after the session is started, numbered on.
    let now = deadline + 5 * MS;
    let start = started(&mut s, now);
    assert_eq!(s.poll_transmit(inst(start - 1), &mut buf), None);
    let t = s.poll_transmit(inst(start), &mut buf).unwrap();
    assert_eq!((t.seq, t.warm_up), (3, false));
}

#[test]
fn a_small_request_never_waits_for_follow_ups() {
    let mut c = config(&[44, 72], None);
    c.warmup_probes = 2;
    let mut s = SessionSender::new(c).unwrap();
    let mut peer = Peer1::new(None);
    let mut buf = vec![0; 72];
    for w in 0..2 {
        let now = T0 + w * MS;
        let t = s.poll_transmit(inst(now), &mut buf).unwrap();
        assert_eq!(t.len, 44, "the warm-up uses the first size");
        s.on_sent(t.seq, inst(now), inst(now + 1));
        let reply = peer.reply(&buf[..44], now + 100, now + 200);
        peer.sent(t.seq, now + 300);
        s.handle_reply(&reply, inst(now + 400), None, None);
    }
    assert!(!s.is_warming_up());
    assert_eq!(s.warm_up().follow_up_supported, None);
    assert!(!s.expects_follow_up());
}

#[test]
fn a_failed_send_leaves_sequence_and_size_to_the_next_probe() {
    let mut s = SessionSender::new(config(&[72, 100], None)).unwrap();
    let mut buf = vec![0; 100];
    let start = started(&mut s, T0);
    let t = s.poll_transmit(inst(start), &mut buf).unwrap();
    assert_eq!((t.seq, t.size_index, t.len), (0, 0, 72));
    // The socket's queue was full: no on_sent.
    let t = s.poll_transmit(inst(start + 10 * MS), &mut buf).unwrap();
    assert_eq!((t.seq, t.size_index), (0, 0));
    assert!(
        !s.on_sent(1, inst(start), inst(start)),
        "not the request just written"
    );
    assert!(s.on_sent(0, inst(start + 10 * MS), inst(start + 10 * MS + 5)));
    assert!(!s.on_sent(0, inst(start), inst(start)), "reported once");
    let t = s.poll_transmit(inst(start + 20 * MS), &mut buf).unwrap();
    assert_eq!((t.seq, t.size_index, t.len), (1, 1, 100));
    assert_eq!(s.counters().sent, 1);
}

#[test]
fn late_probes_are_postponed_not_bunched() {
    let mut s = SessionSender::new(config(&[72], None)).unwrap();
    let mut buf = vec![0; 72];
    let start = started(&mut s, T0);
    let t = s.poll_transmit(inst(start), &mut buf).unwrap();
    s.on_sent(t.seq, inst(start), inst(start + 1));
    // The loop came back 2.5 periods later: one probe in the current
    // period's slot, none to catch up.
    assert_eq!(s.poll_transmit(inst(start + 25 * MS), &mut buf), None);
    assert_eq!(s.poll_timeout().map(Instant::as_ns), Some(start + 30 * MS));
    assert!(s.poll_transmit(inst(start + 30 * MS), &mut buf).is_some());
}

#[test]
fn request_bytes_carry_seq_timestamp_and_hmac() {
    let key = StampKey::new(b"0123456789abcdef").unwrap();
    let mut s = SessionSender::new(config(&[140], Some(key.clone()))).unwrap();
    let mut buf = vec![0xa5; 200];
    let start = started(&mut s, T0);
    let t = s.poll_transmit(inst(start + 7), &mut buf).unwrap();
    assert_eq!(t.len, 140);
    let r = SenderRepr::parse(&buf[..140], Mode::Authenticated).unwrap();
    assert_eq!((r.seq, r.ssid), (0, 0x0101));
    assert_eq!(
        wire_stamp::from_wire(r.timestamp, StampTimestampFormat::Ntp),
        start + 7
    );
    assert!(verify16(&key, &[&buf[..96]], &buf[96..112]));
    assert!(
        buf[140..].iter().all(|&b| b == 0xa5),
        "nothing written past len"
    );
}

#[test]
fn count_reached_drains_then_releases_the_unanswered_as_lost() {
    let mut c = config(&[72], None);
    c.count = Some(2);
    let mut s = SessionSender::new(c).unwrap();
    let mut peer = Peer1::new(None);
    let mut buf = vec![0; 72];
    let start = started(&mut s, T0);
    s.poll_transmit(inst(start), &mut buf).unwrap();
    s.on_sent(0, inst(start), inst(start + 10));
    let reply = peer.reply(&buf[..72], start + 100, start + 200);
    s.poll_transmit(inst(start + 10 * MS), &mut buf).unwrap();
    s.on_sent(1, inst(start + 10 * MS), inst(start + 10 * MS + 10));
    assert_eq!(
        s.handle_reply(
            &reply,
            inst(start + 10 * MS + 50),
            Some(inst(start + 10 * MS + 40)),
            None
        ),
        ReplyOutcome::Probe(ReplyMatch::Matched { reordered: false })
    );
    // Neither TX stamps nor follow-ups are awaited: released at once.
    let r = s.poll_record(inst(start + 10 * MS + 60)).unwrap();
    assert_eq!(
        (r.seq, r.lost, r.tx1, r.tx2),
        (0, false, inst(start), inst(start + 10))
    );
    assert_eq!(
        (r.reflector_rx, r.reflector_tx),
        (Some(inst(start + 100)), Some(inst(start + 200)))
    );
    assert_eq!(s.poll_record(inst(start + 10 * MS + 60)), None);
    // The count is noticed at the next poll, which starts the drain.
    let now = start + 12 * MS;
    assert_eq!(s.poll_transmit(inst(now), &mut buf), None);
    assert!(!s.is_finished(inst(now)));
    let expiry = start + 10 * MS + 10 + 50 * MS + 1;
    assert_eq!(
        s.poll_timeout().map(Instant::as_ns),
        Some(expiry.min(now + 50 * MS + 1))
    );
    assert_eq!(s.poll_record(inst(expiry - 1)), None);
    let r = s.poll_record(inst(expiry)).unwrap();
    assert!(r.lost && r.seq == 1);
    assert!(s.is_finished(inst(expiry)));
    assert_eq!(s.poll_timeout().map(Instant::as_ns), None);
    let c = s.counters();
    assert_eq!((c.sent, c.received, c.lost), (2, 1, 1));
    assert_eq!((c.tx_stamp_missing, c.rx_stamp_missing), (1, 0));
}

#[test]
fn duration_ends_sending() {
    let mut c = config(&[72], None);
    c.count = None;
    c.duration = Some(Span::from_ns(25 * MS));
    let mut s = SessionSender::new(c).unwrap();
    let mut buf = vec![0; 72];
    let start = started(&mut s, T0);
    for k in 0..3 {
        let t = s
            .poll_transmit(inst(start + k * 10 * MS), &mut buf)
            .unwrap();
        s.on_sent(
            t.seq,
            inst(start + k * 10 * MS),
            inst(start + k * 10 * MS + 1),
        );
    }
    assert_eq!(s.poll_transmit(inst(start + 25 * MS), &mut buf), None);
    assert!(!s.is_finished(inst(start + 25 * MS)));
    assert!(
        s.is_finished(inst(start + 75 * MS + 1)),
        "the drain is over"
    );
    let lost: Vec<u32> = std::iter::from_fn(|| s.poll_record(inst(start + 75 * MS + 1)))
        .map(|r| {
            assert!(r.lost);
            r.seq
        })
        .collect();
    assert_eq!(lost, vec![0, 1, 2]);
    assert_eq!(s.counters().sent, 3);
}

#[test]
fn stop_drains_for_at_most_a_second() {
    let mut c = config(&[72], None);
    c.timeout = Span::from_ns(5_000 * MS);
    let mut s = SessionSender::new(c).unwrap();
    let mut buf = vec![0; 72];
    let start = started(&mut s, T0);
    s.poll_transmit(inst(start), &mut buf).unwrap();
    s.on_sent(0, inst(start), inst(start + 1));
    assert!(s.stop(inst(start + 5)));
    assert!(!s.stop(inst(start + 6)), "already draining");
    assert_eq!(s.poll_transmit(inst(start + 10 * MS), &mut buf), None);
    assert!(!s.is_finished(inst(start + 5 + STOP_DRAIN_MAX_NS)));
    assert_eq!(
        s.poll_timeout().map(Instant::as_ns),
        Some(start + 5 + STOP_DRAIN_MAX_NS + 1)
    );
    assert!(s.is_finished(inst(start + 6 + STOP_DRAIN_MAX_NS)));
    assert!(
        s.poll_record(inst(start + 6 + STOP_DRAIN_MAX_NS))
            .unwrap()
            .lost
    );
    // Stopped in the warm-up: nothing measured, finished at once.
    let mut c = config(&[72], None);
    c.warmup_probes = 8;
    let mut s = SessionSender::new(c).unwrap();
    s.poll_transmit(inst(T0), &mut buf).unwrap();
    assert!(s.stop(inst(T0 + 1)));
    assert!(!s.is_warming_up() && s.is_finished(inst(T0 + 1)));
    assert_eq!(s.poll_transmit(inst(T0 + 2), &mut buf), None);
    assert_eq!(s.counters(), SenderCounters::default());
}

#[test]
fn kernel_tx_stamps_are_awaited_until_the_timeout() {
    let mut c = config(&[72], None);
    c.expect_tx_stamp = true;
    let mut s = SessionSender::new(c).unwrap();
    let mut peer = Peer1::new(None);
    let mut buf = vec![0; 72];
    let start = started(&mut s, T0);
    for k in 0..2 {
        let at = start + k * 10 * MS;
        let t = s.poll_transmit(inst(at), &mut buf).unwrap();
        s.on_sent(t.seq, inst(at), inst(at + 10));
        let reply = peer.reply(&buf[..72], at + 100, at + 200);
        s.handle_reply(&reply, inst(at + 300), Some(inst(at + 290)), None);
    }
    assert_eq!(
        s.poll_record(inst(start + 11 * MS)),
        None,
        "probe 0 awaits its stamp"
    );
    assert!(s.on_tx_stamp(0, Some(inst(start + 5)), None));
    assert!(
        !s.on_tx_stamp(0, Some(inst(start + 6)), None),
        "the first stamp counts"
    );
    assert!(!s.on_tx_stamp(99, Some(inst(start + 6)), None));
    let r = s.poll_record(inst(start + 11 * MS)).unwrap();
    assert_eq!((r.seq, r.tx_kernel), (0, Some(inst(start + 5))));
    // Probe 1's stamp never comes: released a timeout after its reply.
    let expiry = start + 10 * MS + 300 + 50 * MS + 1;
    assert_eq!(s.poll_record(inst(expiry - 1)), None);
    let r = s.poll_record(inst(expiry)).unwrap();
    assert_eq!((r.seq, r.lost, r.tx_kernel), (1, false, None));
    assert_eq!(s.counters().tx_stamp_missing, 1);
}

#[test]
fn replies_are_checked_and_counted() {
    let key = StampKey::new(b"k").unwrap();
    let mut s = SessionSender::new(config(&[140], Some(key.clone()))).unwrap();
    let mut peer = Peer1::new(Some(key));
    let mut buf = vec![0; 140];
    let start = started(&mut s, T0);
    s.poll_transmit(inst(start), &mut buf).unwrap();
    s.on_sent(0, inst(start), inst(start + 1));
    let reply = peer.reply(&buf[..140], start + 100, start + 200);
    let mut forged = reply.clone();
    forged[20] ^= 0x40;
    assert_eq!(
        s.handle_reply(&forged, inst(start + 300), None, None),
        ReplyOutcome::AuthFailed
    );
    assert_eq!(
        s.handle_reply(&reply[..60], inst(start + 300), None, None),
        ReplyOutcome::AuthFailed
    );
    let matched = ReplyOutcome::Probe(ReplyMatch::Matched { reordered: false });
    assert_eq!(
        s.handle_reply(&reply, inst(start + 300), None, None),
        matched
    );
    assert_eq!(
        s.handle_reply(&reply, inst(start + 310), None, None),
        ReplyOutcome::Probe(ReplyMatch::Duplicate)
    );
    let c = s.counters();
    assert_eq!((c.auth_failed, c.duplicates, c.malformed), (2, 1, 0));

    let mut s = SessionSender::new(config(&[72], None)).unwrap();
    started(&mut s, T0);
    assert_eq!(
        s.handle_reply(&[0; 43], inst(T0), None, None),
        ReplyOutcome::Malformed
    );
    assert_eq!(
        s.handle_reply(&[0; 44], inst(T0), None, None),
        ReplyOutcome::Probe(ReplyMatch::Unknown)
    );
    assert_eq!((s.counters().malformed, s.counters().unknown), (1, 1));
}

proptest! {
    /// Any bytes: no panic, and each datagram lands in exactly one counter
    /// (or matches a probe).
    #[test]
    fn any_bytes_are_counted_once(
        datagrams in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..160), 1..20),
        authenticated in any::<bool>(),
    ) {
        let key = authenticated.then(|| StampKey::new(b"k").unwrap());
        let size = if authenticated { 140 } else { 72 };
        let mut s = SessionSender::new(config(&[size], key)).unwrap();
        let mut buf = vec![0; size];
        let start = started(&mut s, T0);
        for k in 0..3 {
            let t = s.poll_transmit(inst(start + k * 10 * MS), &mut buf).unwrap();
            s.on_sent(t.seq, inst(start + k * 10 * MS), inst(start + k * 10 * MS + 1));
        }
        let mut matched = 0;
        for d in &datagrams {
            if let ReplyOutcome::Probe(ReplyMatch::Matched { .. }) =
                s.handle_reply(d, inst(start + 30 * MS), None, None)
            {
                matched += 1;
            }
        }
        let c = s.counters();
        prop_assert_eq!(
            c.malformed + c.auth_failed + c.unknown + c.late + c.duplicates + matched,
            datagrams.len() as u64
        );
        while s.poll_record(inst(start + 30 * MS)).is_some() {}
    }
}

/// A driver that grants the NIC's stamps but delivers none: probes are
/// held for the NIC's TX stamp until the session has seen
/// [`HW_TX_GIVE_UP`] without one, then released at once; every one is
/// counted missing.
#[test]
fn hardware_tx_stamps_are_awaited_until_a_driver_shows_it_delivers_none() {
    let mut c = config(&[72], None);
    c.expect_tx_stamp = true;
    c.count = Some(20);
    let mut s = SessionSender::new(c).unwrap();
    s.expect_hardware_stamps(true);
    let mut peer = Peer1::new(None);
    let mut buf = vec![0; 72];
    let mut now = started(&mut s, T0);
    let mut released = Vec::new();
    for k in 0..20u32 {
        let t = s.poll_transmit(inst(now), &mut buf).unwrap();
        s.on_sent(t.seq, inst(now), inst(now + 10));
        s.on_tx_stamp(t.seq, Some(inst(now + 20)), None);
        let reply = peer.reply(&buf[..72], now + 100, now + 200);
        peer.sent(t.seq, now + 250);
        s.handle_reply(&reply, inst(now + 500), Some(inst(now + 450)), None);
        // Right after the reply: complete only with its NIC TX stamp, or
        // once the session gave up on them.
        if let Some(r) = s.poll_record(inst(now + 600)) {
            released.push((k, r));
        }
        now += 10 * MS;
        while let Some(r) = s.poll_record(inst(now)) {
            released.push((k, r));
        }
    }
    while let Some(r) = s.poll_record(inst(now + 100 * MS)) {
        released.push((20, r));
    }
    let n = s.counters();
    assert_eq!(n.received, 20);
    assert_eq!(n.hw_tx_stamp_missing, 20);
    assert_eq!(n.hw_rx_stamp_missing, 20);
    assert_eq!(released[0].1.tx_hw, None);
    assert_eq!(
        released[0].1.tx_kernel,
        Some(inst(T0 + START_DELAY_NS + 20))
    );
    // Probes waited for the timeout (50 ms: released five periods later)
    // until HW_TX_GIVE_UP probes without one were in, then at once again.
    let at = |seq: u32| released.iter().find(|(_, r)| r.seq == seq).unwrap().0;
    assert_eq!(at(0), 5, "held for its NIC TX stamp until the timeout");
    let when: Vec<(u32, u32)> = released.iter().map(|(k, r)| (r.seq, *k)).collect();
    assert_eq!(
        at(15),
        15,
        "released right after its reply once given up: {when:?}"
    );
}
