use super::*;
use misura_wire::{EthernetRepr, MacAddr, ProbeFlags, ETHERTYPE_MISURA};

const SESSION: u32 = 0x5EED_0001;
const MS: i64 = 1_000_000;

fn plan() -> OnewayPlan {
    OnewayPlan {
        session_id: SESSION,
        ethertype: ETHERTYPE_MISURA,
        sizes: vec![46, 1500],
        order: SizeOrder::Interleaved,
        vlan: false,
        pattern: Pattern::Periodic,
        period: Period::new(MS).unwrap(),
        late_tolerance: Span::from_ns(MS - 1),
        seed: 1,
        start_delay: Span::from_ns(MS),
        count: Some(3),
        duration: None,
        expected_frames: Some(3),
        timeout: Span::from_ns(10 * MS),
        expect_tx_stamp: true,
        ring_capacity: 16,
        tx_stamp_messages: 1,
    }
}

/// A frame as the wire carries it: Ethernet header, probe, padding.
fn frame(ethertype: u16, session_id: u32, stream: u16, seq: u64) -> Vec<u8> {
    let eth = EthernetRepr {
        dst: MacAddr([2, 0, 0, 0, 0, 2]),
        src: MacAddr([2, 0, 0, 0, 0, 1]),
        vlan: None,
        ethertype,
    };
    let probe = ProbeRepr {
        flags: ProbeFlags::SENDER_TIMESTAMP,
        payload_len: 46,
        session_id,
        stream,
        size_index: 0,
        seq,
        sender_timestamp: 0,
        aux_timestamp: 0,
    };
    let mut buf = vec![0xa5; 128];
    let n = misura_wire::emit_frame(&eth, &probe, &mut buf).unwrap();
    buf.truncate(n);
    buf
}

fn probe(seq: u64) -> Vec<u8> {
    frame(ETHERTYPE_MISURA, SESSION, MEASURE_STREAM, seq)
}

fn rx(rx2: i64) -> RxMeta {
    RxMeta {
        rx2: Instant::from_ns(rx2),
        software: Some(Instant::from_ns(rx2 - 5)),
        ..RxMeta::default()
    }
}

/// Send the frame due at `now` with a 100 ns TX window.
fn send_at(s: &mut OnewaySession, now: i64) -> Transmit {
    let t = s
        .poll_transmit(Instant::from_ns(now))
        .expect("a frame is due");
    s.on_sent(t.seq, Instant::from_ns(now), Instant::from_ns(now + 100));
    t
}

#[test]
fn frames_leave_on_the_schedule_with_sizes_in_turn_and_the_count_ends_sending() {
    let mut s = OnewaySession::new(&plan(), Instant::from_ns(0)).unwrap();
    assert_eq!(s.poll_timeout().map(Instant::as_ns), Some(MS));
    assert_eq!(s.poll_transmit(Instant::from_ns(MS - 1)), None);
    let sent: Vec<Transmit> = (1..=3).map(|k| send_at(&mut s, k * MS)).collect();
    assert_eq!(
        sent.iter()
            .map(|t| (t.seq, t.size_index))
            .collect::<Vec<_>>(),
        vec![(0, 0), (1, 1), (2, 0)]
    );
    // The count is reached: the next turn ends sending and starts the drain.
    assert!(!s.is_finished(Instant::from_ns(3 * MS + 200)));
    assert_eq!(s.poll_transmit(Instant::from_ns(4 * MS)), None);
    assert_eq!(s.poll_transmit(Instant::from_ns(5 * MS)), None);
    assert_eq!(s.counters().sent, 3);
    assert!(!s.was_stopped());
    // The oldest frame times out first, the drain only after the last send.
    assert_eq!(
        s.poll_timeout().map(Instant::as_ns),
        Some(MS + 100 + 10 * MS + 1)
    );
}

#[test]
fn a_handed_out_frame_is_handed_out_again_until_sent() {
    let mut s = OnewaySession::new(&plan(), Instant::from_ns(0)).unwrap();
    let t = s.poll_transmit(Instant::from_ns(MS)).unwrap();
    s.on_send_blocked();
    s.on_send_blocked();
    // Polled again before on_sent: the same frame, the schedule untouched.
    assert_eq!(s.poll_transmit(Instant::from_ns(MS + 50)), Some(t));
    assert_eq!(
        s.poll_timeout().map(Instant::as_ns),
        Some(0),
        "a frame is waiting: act now"
    );
    s.on_sent(t.seq, Instant::from_ns(MS + 60), Instant::from_ns(MS + 70));
    assert_eq!(s.poll_transmit(Instant::from_ns(MS + 80)), None);
    let c = s.counters();
    assert_eq!(
        (c.sent, c.send_retries, c.last_send.as_ns()),
        (1, 2, MS + 70)
    );
    assert_eq!(c.postponed, 0);
}

#[test]
#[should_panic(expected = "on_sent must follow")]
fn on_sent_without_poll_transmit_is_a_caller_bug() {
    let mut s = OnewaySession::new(&plan(), Instant::from_ns(0)).unwrap();
    s.on_sent(0, Instant::from_ns(1), Instant::from_ns(2));
}

#[test]
fn rx_window_runs_from_the_last_empty_poll_and_a_complete_frame_leaves() {
    let mut s = OnewaySession::new(&plan(), Instant::from_ns(0)).unwrap();
    send_at(&mut s, MS);
    assert!(s.wants_tx_stamps());
    assert_eq!(
        s.handle_tx_stamp(&probe(0), Some(Instant::from_ns(MS + 50)), None),
        TxStampMatch::First
    );
    s.on_tx_stamps_drained();
    assert!(!s.wants_tx_stamps());
    s.on_empty_poll(Instant::from_ns(MS + 1_000));
    s.on_empty_poll(Instant::from_ns(MS + 2_000));
    let got = s.handle_received(&probe(0), rx(MS + 2_600));
    assert_eq!(got, Received::Probe(Arrival::Matched { reordered: false }));
    let r = s.poll_record(Instant::from_ns(MS + 2_700)).unwrap();
    let at = Instant::from_ns;
    assert_eq!((r.seq, r.tx1, r.tx2), (0, at(MS), at(MS + 100)));
    assert_eq!((r.rx1, r.rx2), (at(MS + 2_000), at(MS + 2_600)));
    assert_eq!(
        (r.tx_kernel, r.rx_kernel),
        (
            Some(Instant::from_ns(MS + 50)),
            Some(Instant::from_ns(MS + 2_595))
        )
    );
    assert_eq!((r.payload_bytes, r.frame_bytes), (46, 64));
    assert!(!r.lost);
    assert_eq!(s.poll_record(Instant::from_ns(MS + 2_700)), None);
}

#[test]
fn foreign_malformed_outgoing_warmup_and_unknown_frames_are_counted_apart() {
    let mut s = OnewaySession::new(&plan(), Instant::from_ns(0)).unwrap();
    send_at(&mut s, MS);
    let m = rx(MS + 500);
    let other_session = frame(ETHERTYPE_MISURA, SESSION + 1, MEASURE_STREAM, 0);
    let other_type = frame(0x0800, SESSION, MEASURE_STREAM, 0);
    let warmup = frame(ETHERTYPE_MISURA, SESSION, WARMUP_STREAM, 0);
    let mut bad_magic = probe(0);
    bad_magic[14] ^= 0xff;
    let cut = &probe(0)[..14 + 20];
    let outgoing = RxMeta {
        outgoing: true,
        ..m
    };
    assert_eq!(s.handle_received(&other_session, m), Received::Foreign);
    assert_eq!(s.handle_received(&other_type, m), Received::Foreign);
    assert_eq!(s.handle_received(&probe(0), outgoing), Received::Foreign);
    assert_eq!(s.handle_received(&warmup, m), Received::OtherStream);
    assert_eq!(s.handle_received(&bad_magic, m), Received::Malformed);
    assert_eq!(s.handle_received(cut, m), Received::Malformed);
    assert_eq!(s.handle_received(&[0u8; 5], m), Received::Malformed);
    assert_eq!(s.handle_received(&[], m), Received::Malformed);
    assert_eq!(
        s.handle_received(&probe(7), m),
        Received::Probe(Arrival::Unknown)
    );
    let c = s.counters();
    // The warm-up stream's frame is foreign too: it was counted nowhere.
    assert_eq!((c.foreign, c.malformed, c.unknown), (4, 4, 1));
    // None of it touched the frame in flight.
    assert_eq!(s.outstanding(), 1);
}

#[test]
fn tx_stamps_again_unmatched_and_errors() {
    let mut s = OnewaySession::new(&plan(), Instant::from_ns(0)).unwrap();
    send_at(&mut s, MS);
    assert_eq!(
        s.on_tx_stamp(0, Some(Instant::from_ns(10)), None),
        TxStampMatch::First
    );
    assert_eq!(
        s.on_tx_stamp(0, Some(Instant::from_ns(20)), None),
        TxStampMatch::Again
    );
    assert_eq!(
        s.handle_tx_stamp(&[1, 2, 3], Some(Instant::from_ns(30)), None),
        TxStampMatch::NotInFlight
    );
    assert_eq!(
        s.handle_tx_stamp(
            &frame(ETHERTYPE_MISURA, SESSION, WARMUP_STREAM, 0),
            None,
            None
        ),
        TxStampMatch::NotInFlight
    );
    // All stamps in, but the queue was not yet read to its end.
    assert!(s.wants_tx_stamps());
    s.on_tx_stamp_error();
    assert!(!s.wants_tx_stamps());
    let c = s.counters();
    assert_eq!(
        (
            c.tx_stamps_read,
            c.tx_stamps_again,
            c.tx_stamps_unmatched,
            c.tx_stamp_errors
        ),
        (4, 1, 2, 1)
    );
}

#[test]
fn without_tx_stamps_the_error_queue_is_never_read_and_received_frames_leave_at_once() {
    let mut p = plan();
    p.expect_tx_stamp = false;
    let mut s = OnewaySession::new(&p, Instant::from_ns(0)).unwrap();
    send_at(&mut s, MS);
    assert!(!s.wants_tx_stamps());
    s.handle_received(&probe(0), rx(MS + 300));
    assert_eq!(
        s.poll_record(Instant::from_ns(MS + 400)).unwrap().tx_kernel,
        None
    );
}

#[test]
fn a_missing_tx_stamp_is_given_up_at_the_timeout_and_stops_being_awaited() {
    let mut s = OnewaySession::new(&plan(), Instant::from_ns(0)).unwrap();
    send_at(&mut s, MS);
    s.on_tx_stamps_drained();
    s.handle_received(&probe(0), rx(MS + 300));
    assert_eq!(
        s.poll_record(Instant::from_ns(MS + 400)),
        None,
        "waits for its TX stamp"
    );
    assert!(s.wants_tx_stamps());
    let deadline = MS + 100 + 10 * MS + 1;
    assert_eq!(
        s.poll_timeout().map(Instant::as_ns),
        Some(MS + MS),
        "next frame due first"
    );
    assert_eq!(s.poll_record(Instant::from_ns(deadline - 1)), None);
    let r = s.poll_record(Instant::from_ns(deadline)).unwrap();
    assert!(!r.lost && r.tx_kernel.is_none());
    assert!(!s.wants_tx_stamps());
}

#[test]
fn stop_drains_frames_in_flight_then_gives_up_at_the_timeout() {
    let mut s = OnewaySession::new(&plan(), Instant::from_ns(0)).unwrap();
    send_at(&mut s, MS);
    send_at(&mut s, 2 * MS);
    s.on_tx_stamps_drained();
    s.stop(Instant::from_ns(2 * MS + 500));
    s.stop(Instant::from_ns(2 * MS + 600)); // a second stop changes nothing
    assert!(s.was_stopped());
    assert_eq!(
        s.poll_transmit(Instant::from_ns(3 * MS)),
        None,
        "nothing more is sent"
    );
    s.on_tx_stamp(0, Some(Instant::from_ns(MS + 50)), None);
    s.handle_received(&probe(0), rx(2 * MS + 700));
    assert_eq!(
        s.poll_record(Instant::from_ns(2 * MS + 800)).map(|r| r.seq),
        Some(0)
    );
    // Frame 1 never arrives: the drain ends 10 ms after the stop.
    let drain_end = 2 * MS + 500 + 10 * MS;
    assert_eq!(
        s.poll_timeout().map(Instant::as_ns),
        Some(2 * MS + 100 + 10 * MS + 1)
    );
    assert!(!s.is_finished(Instant::from_ns(drain_end)));
    assert!(s.is_finished(Instant::from_ns(drain_end + 1)));
    let r = s.poll_record(Instant::from_ns(drain_end + 1)).unwrap();
    assert_eq!((r.seq, r.lost), (1, true));
    assert_eq!(s.counters().ended.as_ns(), 0);
    assert_eq!(s.poll_record(Instant::from_ns(drain_end + 1)), None);
    assert_eq!(s.poll_timeout().map(Instant::as_ns), None);
    assert_eq!(s.poll_record(Instant::from_ns(drain_end + 9)), None);
    let c = s.counters();
    assert_eq!((c.sent, c.ended.as_ns()), (2, drain_end + 1));
}

#[test]
fn stop_after_the_count_is_not_an_interruption() {
    let mut p = plan();
    p.count = Some(1);
    p.expect_tx_stamp = false;
    let mut s = OnewaySession::new(&p, Instant::from_ns(0)).unwrap();
    send_at(&mut s, MS);
    assert_eq!(s.poll_transmit(Instant::from_ns(MS + 200)), None);
    s.stop(Instant::from_ns(MS + 300));
    assert!(!s.was_stopped());
    s.handle_received(&probe(0), rx(MS + 400));
    assert!(s.poll_record(Instant::from_ns(MS + 500)).is_some());
    assert!(s.is_finished(Instant::from_ns(MS + 500)));
}

#[test]
fn the_duration_ends_sending_at_its_instant() {
    let mut p = plan();
    p.count = None;
    p.duration = Some(Span::from_ns(3 * MS));
    p.expect_tx_stamp = false;
    let mut s = OnewaySession::new(&p, Instant::from_ns(0)).unwrap();
    send_at(&mut s, MS);
    send_at(&mut s, 2 * MS);
    assert_eq!(s.poll_timeout().map(Instant::as_ns), Some(3 * MS));
    // The frame due at 3 ms is not sent: the duration is over at 3 ms.
    assert_eq!(s.poll_transmit(Instant::from_ns(3 * MS)), None);
    assert_eq!(s.counters().sent, 2);
    assert!(!s.was_stopped());
}

#[test]
fn a_full_ring_holds_frames_back_and_counts_stalls() {
    let mut p = plan();
    p.ring_capacity = 2;
    p.count = None;
    p.expect_tx_stamp = false;
    let mut s = OnewaySession::new(&p, Instant::from_ns(0)).unwrap();
    send_at(&mut s, MS);
    send_at(&mut s, 2 * MS);
    assert_eq!(s.poll_transmit(Instant::from_ns(3 * MS)), None);
    assert_eq!(s.poll_transmit(Instant::from_ns(3 * MS + 10)), None);
    assert_eq!(s.counters().stalls, 2);
    // Only the oldest frame's timeout can move it on now.
    assert_eq!(
        s.poll_timeout().map(Instant::as_ns),
        Some(MS + 100 + 10 * MS + 1)
    );
    s.handle_received(&probe(0), rx(3 * MS + 20));
    assert_eq!(
        s.poll_record(Instant::from_ns(3 * MS + 30)).map(|r| r.seq),
        Some(0)
    );
    // Within its own period, the held-back frame still leaves.
    assert_eq!(
        s.poll_transmit(Instant::from_ns(3 * MS + 40))
            .map(|t| t.seq),
        Some(2)
    );
    assert_eq!(s.counters().postponed, 0);
}

#[test]
fn plans_the_session_cannot_run_are_refused() {
    let bad = |f: fn(&mut OnewayPlan)| {
        let mut p = plan();
        f(&mut p);
        OnewaySession::new(&p, Instant::from_ns(0)).unwrap_err()
    };
    assert_eq!(bad(|p| p.sizes.clear()), PlanError::NoSizes);
    assert_eq!(bad(|p| p.sizes = vec![46, 12]), PlanError::BadSize(12));
    assert_eq!(
        bad(|p| p.timeout = Span::from_ns(-1)),
        PlanError::BadTimeout(-1)
    );
}

#[test]
fn vlan_frames_are_four_bytes_longer() {
    let mut p = plan();
    p.vlan = true;
    p.expect_tx_stamp = false;
    let mut s = OnewaySession::new(&p, Instant::from_ns(0)).unwrap();
    send_at(&mut s, MS);
    send_at(&mut s, 2 * MS);
    s.stop(Instant::from_ns(2 * MS + 200));
    let sizes: Vec<(u16, u16)> = std::iter::from_fn(|| s.poll_record(Instant::from_ns(i64::MAX)))
        .map(|r| (r.payload_bytes, r.frame_bytes))
        .collect();
    assert_eq!(sizes, vec![(46, 68), (1500, 1522)]);
}
