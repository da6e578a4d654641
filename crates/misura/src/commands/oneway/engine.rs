//! The measuring loop: one thread, busy polling, as seed 000 describes.
//!
//! Read the clock; if a frame is due, patch its sequence number into the
//! pre-built frame, read TX1, send, read TX2 and record the TX window in the
//! in-flight ring; then one non-blocking receive (RX1 is the instant before
//! the last empty poll, RX2 the instant after the receive that returned a
//! frame); release completed frames into a lock-free queue for the analysis
//! thread. Nothing in the loop allocates, formats, locks or logs: buffers
//! are allocated up front and errors are counted, not printed.

use anyhow::{Context, Result};
use crossbeam_queue::ArrayQueue;
use misura_measure::{
    Arrival, FrameRecord, InFlight, Poll, Schedule, SizePlan, TxRecord, TxStampMatch,
};
use misura_sys::clock::realtime_ns;
use misura_sys::packet::PacketSocket;
use misura_wire::probe::{ProbeHeader, ProbeRepr};
use misura_wire::{ethernet, EthernetFrame};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Probe `stream` value of warm-up frames, so a late warm-up frame is never
/// taken for a measured one.
pub const WARMUP_STREAM: u16 = 0xFFFF;
/// Probe `stream` value of measured frames.
pub const MEASURE_STREAM: u16 = 0;
const BUF_LEN: usize = 16 * 1024;

/// The two ports.
pub struct Ports {
    pub tx: PacketSocket,
    pub rx: PacketSocket,
}

/// Pre-built frames, one per payload size, ready to be patched and sent.
pub struct Frames {
    pub bytes: Vec<Vec<u8>>,
    pub payload_bytes: Vec<u16>,
    pub frame_bytes: Vec<u16>,
    pub eth_header_len: usize,
}

impl Frames {
    fn patch(&mut self, si: usize, stream: u16, seq: u64) -> &mut [u8] {
        let h = self.eth_header_len;
        let buf = &mut self.bytes[si];
        let mut probe = ProbeHeader::new_unchecked(&mut buf[h..]);
        probe.set_stream(stream);
        probe.set_seq(seq);
        buf
    }
}

/// Why the loop stopped.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Stop {
    Finished,
    Signal(i32),
}

/// Counters the loop keeps (plain integers, no allocation).
#[derive(Clone, Debug, Default)]
pub struct LoopCounters {
    pub sent: u64,
    pub foreign: u64,
    pub malformed: u64,
    pub send_retries: u64,
    pub stalls: u64,
    pub duplicates: u64,
    pub late: u64,
    pub unknown: u64,
    pub reordered: u64,
    pub postponed: u64,
    pub skipped_slots: u64,
    pub tx_stamp_errors: u64,
    pub tx_stamps_read: u64,
    /// TX stamps that came after their frame's record closed.
    pub tx_stamps_unmatched: u64,
    /// Further TX stamps of a frame already stamped (another device in this
    /// host transmitted the same buffer again, e.g. the SUT's veth).
    pub tx_stamps_again: u64,
    pub started_ns: i64,
    pub last_send_ns: i64,
    pub ended_ns: i64,
}

/// What the loop needs to know.
pub struct LoopPlan {
    pub session_id: u32,
    pub ethertype: u16,
    pub count: Option<u64>,
    pub duration_ns: Option<i64>,
    pub timeout_ns: i64,
    pub expect_tx_stamp: bool,
    pub ring_capacity: usize,
}

/// The outcome of the warm-up.
#[derive(Clone, Debug, Default)]
pub struct Warmup {
    pub sent: u64,
    pub received: u64,
    pub rx_unstamped: u64,
    pub tx_unstamped: u64,
    /// The last frames of the warm-up all had kernel RX / TX stamps.
    pub rx_stamps_settled: bool,
    pub tx_stamps_settled: bool,
}

/// Parse a received frame as one of this session's probes.
enum Classified {
    Probe { stream: u16, seq: u64 },
    Foreign,
    Malformed,
}

fn classify(frame: &[u8], ethertype: u16, session_id: u32) -> Classified {
    let Ok(eth) = EthernetFrame::new_checked(frame) else {
        return Classified::Malformed;
    };
    if eth.ethertype() != ethertype {
        return Classified::Foreign;
    }
    match ProbeRepr::parse(eth.payload()) {
        Ok(p) if p.session_id == session_id => Classified::Probe {
            stream: p.stream,
            seq: p.seq,
        },
        Ok(_) => Classified::Foreign,
        Err(_) => Classified::Malformed,
    }
}

/// Send warm-up frames one at a time until kernel stamps appear steadily
/// (the first frames after a socket enables timestamping can arrive
/// unstamped), at most `max_frames`, waiting up to 50 ms for each.
pub fn warm_up(
    ports: &Ports,
    frames: &mut Frames,
    plan: &LoopPlan,
    want: u64,
    stop: &AtomicUsize,
) -> Result<Warmup> {
    let mut w = Warmup::default();
    let mut buf = vec![0u8; BUF_LEN];
    let settle = 8u64;
    let (mut rx_run, mut tx_run) = (0u64, 0u64);
    let max_frames = want.max(settle) * 4;
    let mut seq = 0u64;
    while seq < max_frames && stop.load(Ordering::Relaxed) == 0 {
        if seq >= want && rx_run >= settle && (tx_run >= settle || !plan.expect_tx_stamp) {
            break;
        }
        let frame = frames.patch(0, WARMUP_STREAM, seq);
        while !ports.tx.send(frame).context("sending a warm-up frame")? {
            std::hint::spin_loop();
        }
        w.sent += 1;
        let deadline = realtime_ns() + 50_000_000;
        let (mut got_rx, mut got_tx) = (false, !plan.expect_tx_stamp);
        let (mut rx_stamped, mut tx_stamped) = (false, false);
        while (!got_rx || !got_tx) && realtime_ns() < deadline {
            if !got_tx {
                if let Some(st) = ports
                    .tx
                    .recv_tx_timestamp(&mut buf)
                    .context("reading the TX timestamp")?
                {
                    got_tx = true;
                    tx_stamped = st.software_ns.is_some() || st.hardware_ns.is_some();
                }
            }
            if !got_rx {
                if let Some(meta) = ports
                    .rx
                    .recv(&mut buf)
                    .context("receiving a warm-up frame")?
                {
                    let n = meta.len.min(buf.len());
                    if let Classified::Probe {
                        stream: WARMUP_STREAM,
                        seq: s,
                    } = classify(&buf[..n], plan.ethertype, plan.session_id)
                    {
                        if s == seq {
                            got_rx = true;
                            rx_stamped = meta.software_ns.is_some();
                        }
                    }
                }
            }
            std::thread::yield_now();
        }
        if got_rx {
            w.received += 1;
            if rx_stamped {
                rx_run += 1;
            } else {
                // The kernel turns RX stamping on through deferred work; give
                // it a moment rather than burning the warm-up budget.
                w.rx_unstamped += 1;
                rx_run = 0;
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        }
        if plan.expect_tx_stamp {
            if tx_stamped {
                tx_run += 1;
            } else {
                w.tx_unstamped += 1;
                tx_run = 0;
            }
        }
        seq += 1;
    }
    w.rx_stamps_settled = rx_run >= settle;
    w.tx_stamps_settled = tx_run >= settle;
    // Anything still queued belongs to the warm-up.
    while ports.rx.recv(&mut buf)?.is_some() {}
    while ports.tx.recv_tx_timestamp(&mut buf)?.is_some() {}
    Ok(w)
}

/// Run the measurement. Completed frame records go to `out`; when it is full
/// the loop waits (counted as a stall) rather than drop a record.
pub fn run(
    ports: &Ports,
    frames: &mut Frames,
    plan: &LoopPlan,
    mut schedule: Schedule,
    sizes: &SizePlan,
    out: &ArrayQueue<FrameRecord>,
    stop: &AtomicUsize,
) -> Result<(LoopCounters, Stop)> {
    let mut ring = InFlight::new(plan.ring_capacity, plan.expect_tx_stamp, 0);
    let mut c = LoopCounters::default();
    let mut rx_buf = vec![0u8; BUF_LEN];
    let mut err_buf = vec![0u8; BUF_LEN];
    let mut stamps_pending = 0u64;
    let mut drain_errqueue = false;
    let mut last_empty = realtime_ns();
    let mut sending = true;
    let mut drain_until = i64::MAX;
    let mut stop_reason = Stop::Finished;
    c.started_ns = realtime_ns();
    let end_ns = plan.duration_ns.map(|d| c.started_ns + d);
    let h = frames.eth_header_len;

    loop {
        let signal = stop.load(Ordering::Relaxed);
        if signal != 0 && sending {
            // Stop sending; drain what is in flight.
            sending = false;
            stop_reason = Stop::Signal(signal as i32);
            drain_until = realtime_ns() + plan.timeout_ns;
        }
        let now = realtime_ns();
        if sending {
            let done = plan.count.is_some_and(|n| c.sent >= n) || end_ns.is_some_and(|e| now >= e);
            if done {
                sending = false;
                drain_until = now + plan.timeout_ns;
            } else if ring.is_full() {
                c.stalls += 1;
            } else if let Poll::Send { .. } = schedule.poll(now) {
                let seq = ring.next_seq();
                let si = sizes.size_index(seq);
                let frame = frames.patch(si, MEASURE_STREAM, seq);
                let (tx1, tx2) = loop {
                    let tx1 = realtime_ns();
                    ProbeHeader::new_unchecked(&mut frame[h..]).set_sender_timestamp(tx1 as u64);
                    let ok = ports.tx.send(frame)?;
                    let tx2 = realtime_ns();
                    if ok {
                        break (tx1, tx2);
                    }
                    c.send_retries += 1;
                };
                ring.on_sent(TxRecord {
                    seq,
                    size_index: si as u16,
                    payload_bytes: frames.payload_bytes[si],
                    frame_bytes: frames.frame_bytes[si],
                    tx1,
                    tx2,
                });
                c.sent += 1;
                c.last_send_ns = tx2;
                if plan.expect_tx_stamp {
                    stamps_pending += 1;
                    drain_errqueue = true;
                }
            }
        }

        // Read the error queue to the end: one frame can yield more than one
        // stamp, and a queue left non-empty would fill the socket's buffer.
        while stamps_pending > 0 || drain_errqueue {
            match ports.tx.recv_tx_timestamp(&mut err_buf) {
                Ok(Some(st)) => {
                    c.tx_stamps_read += 1;
                    let n = st.len.min(err_buf.len());
                    let matched = match classify(&err_buf[..n], plan.ethertype, plan.session_id) {
                        Classified::Probe {
                            stream: MEASURE_STREAM,
                            seq,
                        } => ring.on_tx_stamp(seq, st.software_ns, st.hardware_ns),
                        _ => TxStampMatch::NotInFlight,
                    };
                    match matched {
                        TxStampMatch::First => stamps_pending = stamps_pending.saturating_sub(1),
                        TxStampMatch::Again => c.tx_stamps_again += 1,
                        TxStampMatch::NotInFlight => c.tx_stamps_unmatched += 1,
                    }
                }
                Ok(None) => {
                    drain_errqueue = false;
                    break;
                }
                Err(_) => {
                    c.tx_stamp_errors += 1;
                    drain_errqueue = false;
                    break;
                }
            }
        }

        let t = realtime_ns();
        match ports.rx.recv(&mut rx_buf)? {
            None => last_empty = t,
            Some(meta) => {
                let rx2 = realtime_ns();
                let n = meta.len.min(rx_buf.len());
                if meta.outgoing {
                    c.foreign += 1;
                } else {
                    match classify(&rx_buf[..n], plan.ethertype, plan.session_id) {
                        Classified::Probe {
                            stream: MEASURE_STREAM,
                            seq,
                        } => {
                            // Duplicates, late and unknown arrivals are counted by the ring.
                            let _: Arrival = ring.on_received(
                                seq,
                                last_empty,
                                rx2,
                                meta.software_ns,
                                meta.hardware_ns,
                            );
                        }
                        Classified::Probe { .. } => {} // a late warm-up frame
                        Classified::Foreign => c.foreign += 1,
                        Classified::Malformed => c.malformed += 1,
                    }
                }
            }
        }

        // The instant before the receive serves for the timeouts too: one
        // clock read fewer per loop iteration.
        let now = t;
        while let Some(rec) = ring.pop_complete(now, plan.timeout_ns) {
            if plan.expect_tx_stamp && rec.tx_kernel.is_none() && rec.tx_hw.is_none() {
                stamps_pending = stamps_pending.saturating_sub(1);
            }
            push(out, rec, &mut c);
        }
        if !sending && (ring.outstanding() == 0 || now > drain_until) {
            break;
        }
    }
    while let Some(rec) = ring.pop_any() {
        push(out, rec, &mut c);
    }
    c.ended_ns = realtime_ns();
    c.duplicates = ring.duplicates();
    c.late = ring.late();
    c.unknown = ring.unknown();
    c.reordered = ring.reordered();
    c.postponed = schedule.postponed();
    c.skipped_slots = schedule.skipped_slots();
    Ok((c, stop_reason))
}

fn push(out: &ArrayQueue<FrameRecord>, rec: FrameRecord, c: &mut LoopCounters) {
    let mut rec = rec;
    let mut stalled = false;
    loop {
        match out.push(rec) {
            Ok(()) => break,
            Err(back) => {
                rec = back;
                if !stalled {
                    c.stalls += 1;
                    stalled = true;
                }
                std::hint::spin_loop();
            }
        }
    }
}

/// Build one frame per payload size: Ethernet header to the RX port's MAC,
/// probe header, zero padding.
pub fn build_frames(
    dst: misura_wire::MacAddr,
    src: misura_wire::MacAddr,
    ethertype: u16,
    session_id: u32,
    sizes: &[usize],
    vlan: bool,
) -> Result<Frames> {
    let eth = misura_wire::EthernetRepr {
        dst,
        src,
        vlan: None,
        ethertype,
    };
    let mut f = Frames {
        bytes: Vec::new(),
        payload_bytes: Vec::new(),
        frame_bytes: Vec::new(),
        eth_header_len: eth.header_len(),
    };
    for (i, &p) in sizes.iter().enumerate() {
        let probe = ProbeRepr {
            flags: misura_wire::ProbeFlags::SENDER_TIMESTAMP,
            payload_len: p as u16,
            session_id,
            stream: MEASURE_STREAM,
            size_index: i as u16,
            seq: 0,
            sender_timestamp: 0,
            aux_timestamp: 0,
        };
        let mut buf = vec![0u8; (eth.header_len() + p).max(ethernet::MIN_FRAME_LEN)];
        let n = misura_wire::probe::emit_frame(&eth, &probe, &mut buf)
            .context("building a test frame")?;
        buf.truncate(n);
        f.bytes.push(buf);
        f.payload_bytes.push(p as u16);
        f.frame_bytes
            .push(misura_wire::probe::frame_bytes(p, vlan) as u16);
    }
    Ok(f)
}
