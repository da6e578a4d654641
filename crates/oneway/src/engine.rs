//! The measuring loop: one thread, busy polling, as seed 000 describes.
//!
//! The loop moves bytes and time between the two raw ports and the
//! one-way session (`misura_measure::oneway_session`), which decides the
//! rest: when a frame is due and which sequence number and size it carries,
//! the TX and RX windows, matching frames and TX stamps, the counters and
//! when to stop. Each turn: read the clock; if the session hands out a
//! frame, patch its sequence number into the pre-built frame, read TX1,
//! send, read TX2; read the TX port's error queue while the session wants
//! stamps; read the clock and try one non-blocking receive; release completed
//! frame records into a lock-free queue for the analysis thread. Nothing in
//! the loop allocates, formats, locks or logs: buffers are allocated up front
//! and errors are counted, not printed.

use crate::error::{OnewayError, Result};
use crossbeam_queue::ArrayQueue;
use misura_measure::oneway_session::{
    OnewayCounters, OnewayPlan, OnewaySession, RxMeta, MEASURE_STREAM,
};
use misura_measure::time::Instant;
use misura_measure::FrameRecord;
use misura_sys::clock::realtime;
use misura_sys::packet::PacketSocket;
use misura_sys::SysError;
use misura_wire::ethernet;
use misura_wire::probe::{ProbeHeader, ProbeRepr};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Room for any frame the ports can deliver, jumbo frames included.
pub(super) const BUF_LEN: usize = 16 * 1024;

/// The two ports.
pub struct Ports {
    pub tx: PacketSocket,
    pub rx: PacketSocket,
}

/// Pre-built frames, one per payload size, ready to be patched and sent.
pub struct Frames {
    pub bytes: Vec<Vec<u8>>,
    /// Where the probe header starts: after Ethernet, and after the PTP
    /// Sync header when the probes travel inside PTP.
    pub eth_header_len: usize,
    /// The PTP Sync header's offset, when there is one.
    pub ptp_at: Option<usize>,
}

impl Frames {
    pub(super) fn patch(&mut self, si: usize, stream: u16, seq: u64) -> &mut [u8] {
        let h = self.eth_header_len;
        let buf = &mut self.bytes[si];
        if let Some(at) = self.ptp_at {
            misura_wire::ptp::set_sequence(&mut buf[at..h], seq);
        }
        let mut probe = ProbeHeader::new_unchecked(&mut buf[h..]);
        probe.set_stream(stream);
        probe.set_seq(seq);
        buf
    }
}

/// Why the loop stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stop {
    Finished,
    Signal(i32),
    /// The loop failed mid-run; the counters and records up to then stand.
    Error(String),
}

/// One turn of the loop, shared by `run` and the frame engine's latency
/// stream (`loaded`): the session, its ports and buffers.
pub struct Turn<'a> {
    pub ports: &'a Ports,
    pub frames: &'a mut Frames,
    pub out: &'a ArrayQueue<FrameRecord>,
    pub session: OnewaySession,
    rx_buf: Vec<u8>,
    err_buf: Vec<u8>,
    pub output_stalls: u64,
    rx_link_down: u64,
    tx_link_down: u64,
}

impl<'a> Turn<'a> {
    pub fn new(
        ports: &'a Ports,
        frames: &'a mut Frames,
        plan: &OnewayPlan,
        out: &'a ArrayQueue<FrameRecord>,
    ) -> Result<Turn<'a>> {
        Ok(Turn {
            ports,
            frames,
            out,
            session: OnewaySession::new(plan, realtime())?,
            rx_buf: vec![0u8; BUF_LEN],
            err_buf: vec![0u8; BUF_LEN],
            output_stalls: 0,
            rx_link_down: 0,
            tx_link_down: 0,
        })
    }

    /// Send a frame if one is due, read the TX stamps the session wants,
    /// try one receive, release completed records. Returns the clock read
    /// taken before the receive (RX1 if it found nothing).
    pub fn step(&mut self) -> Result<Instant> {
        let h = self.frames.eth_header_len;
        let session = &mut self.session;
        if let Some(t) = session.poll_transmit(realtime()) {
            let frame = self.frames.patch(t.size_index, MEASURE_STREAM, t.seq);
            let (tx1, tx2) = loop {
                let tx1 = realtime();
                ProbeHeader::new_unchecked(&mut frame[h..])
                    .set_sender_timestamp(tx1.as_ns() as u64);
                // A TX link that went down: the frame cannot leave; it
                // counts as sent (and lost), and the run goes on.
                let ok = match self.ports.tx.send(frame) {
                    Err(SysError::InterfaceDown { .. }) => {
                        self.tx_link_down += 1;
                        true
                    }
                    r => r?,
                };
                let tx2 = realtime();
                if ok {
                    break (tx1, tx2);
                }
                session.on_send_blocked();
            };
            session.on_sent(t.seq, tx1, tx2);
        }

        while session.wants_tx_stamps() {
            match self.ports.tx.recv_tx_timestamp(&mut self.err_buf) {
                Ok(Some(st)) => {
                    let n = st.len.min(self.err_buf.len());
                    let (sw, hw) = (st.software, st.hardware);
                    session.handle_tx_stamp(&self.err_buf[..n], sw, hw);
                }
                Ok(None) => {
                    session.on_tx_stamps_drained();
                    break;
                }
                Err(_) => {
                    session.on_tx_stamp_error();
                    break;
                }
            }
        }

        // The instant before the receive is RX1 if it finds nothing, and
        // serves for the timeouts too: one clock read fewer per turn.
        let t = realtime();
        // The RX port's link went down (reported once per transition): the
        // frames in flight will be lost; the run goes on.
        let got = match self.ports.rx.recv(&mut self.rx_buf) {
            Err(SysError::InterfaceDown { .. }) => {
                self.rx_link_down += 1;
                None
            }
            r => r?,
        };
        if let Some(meta) = got {
            let rx2 = realtime();
            let n = meta.len.min(self.rx_buf.len());
            let meta = RxMeta {
                rx2,
                software: meta.software,
                hardware: meta.hardware,
                outgoing: meta.outgoing,
            };
            session.handle_received(&self.rx_buf[..n], meta);
        } else {
            session.on_empty_poll(t);
        }

        while let Some(rec) = session.poll_record(t) {
            push(self.out, rec, &mut self.output_stalls);
        }
        Ok(t)
    }

    /// The counters, the loop's output stalls included.
    pub fn counters(&self) -> OnewayCounters {
        let mut c = self.session.counters();
        c.stalls += self.output_stalls;
        c.rx_link_down = self.rx_link_down;
        c.tx_link_down = self.tx_link_down;
        c
    }

    /// After a failure: every frame still in flight leaves now, lost if it
    /// had not arrived, so the figures up to the failure stand.
    fn release_all(&mut self) {
        while let Some(rec) = self.session.poll_record(Instant::from_ns(i64::MAX / 4)) {
            push(self.out, rec, &mut self.output_stalls);
        }
    }
}

/// Run the measurement. Completed frame records go to `out`; when it is full
/// the loop waits (counted as a stall) rather than drop a record.
pub fn run(
    ports: &Ports,
    frames: &mut Frames,
    plan: &OnewayPlan,
    out: &ArrayQueue<FrameRecord>,
    stop: &AtomicUsize,
) -> Result<(OnewayCounters, Stop)> {
    let mut turn = Turn::new(ports, frames, plan, out)?;
    let mut signal = 0;
    loop {
        if signal == 0 {
            signal = stop.load(Ordering::Relaxed);
            if signal != 0 {
                // Stop sending; drain what is in flight.
                turn.session.stop(realtime());
            }
        }
        let t = match turn.step() {
            Ok(t) => t,
            Err(e) => {
                turn.release_all();
                return Ok((turn.counters(), Stop::Error(misura_cli::exit::one_line(&e))));
            }
        };
        if turn.session.is_finished(t) {
            break;
        }
    }
    let reason = if turn.session.was_stopped() {
        Stop::Signal(signal as i32)
    } else {
        Stop::Finished
    };
    Ok((turn.counters(), reason))
}

/// Hand a record to the analysis thread, waiting while its queue is full
/// (one stall per record held up).
fn push(out: &ArrayQueue<FrameRecord>, rec: FrameRecord, stalls: &mut u64) {
    let mut rec = rec;
    let mut stalled = false;
    loop {
        match out.push(rec) {
            Ok(()) => break,
            Err(back) => {
                rec = back;
                if !stalled {
                    *stalls += 1;
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
) -> Result<Frames> {
    let ptp = ethertype == misura_wire::ptp::ETHERTYPE_PTP;
    let eth = misura_wire::EthernetRepr {
        dst,
        src,
        vlan: None,
        ethertype,
    };
    let envelope = if ptp { misura_wire::ptp::SYNC_LEN } else { 0 };
    let mut f = Frames {
        bytes: Vec::new(),
        eth_header_len: eth.header_len() + envelope,
        ptp_at: ptp.then(|| eth.header_len()),
    };
    for (i, &p) in sizes.iter().enumerate() {
        if ptp {
            let mut buf = vec![0u8; (eth.header_len() + p).max(ethernet::MIN_FRAME_LEN)];
            let n = misura_wire::ptp::emit_ptp_frame(
                &eth,
                &probe_repr(p - envelope, session_id, i),
                &mut buf,
            )
            .map_err(OnewayError::frame("building a PTP-wrapped test frame"))?;
            buf.truncate(n);
            f.bytes.push(buf);
            continue;
        }
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
            .map_err(OnewayError::frame("building a test frame"))?;
        buf.truncate(n);
        f.bytes.push(buf);
    }
    Ok(f)
}

/// The probe header of a test frame of payload `p` (after any envelope).
fn probe_repr(p: usize, session_id: u32, size_index: usize) -> ProbeRepr {
    ProbeRepr {
        flags: misura_wire::ProbeFlags::SENDER_TIMESTAMP,
        payload_len: p as u16,
        session_id,
        stream: MEASURE_STREAM,
        size_index: size_index as u16,
        seq: 0,
        sender_timestamp: 0,
        aux_timestamp: 0,
    }
}
