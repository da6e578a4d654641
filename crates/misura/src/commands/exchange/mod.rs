//! `misura exchange`: seed 002's sequence on raw frames. The initiator sends
//! a trigger (S1 bytes) and its own data frame (S2); the responder answers
//! each trigger with its data frame; the initiator times the phases.
//!
//! Frames are misura probes: Ethernet + the 40-byte probe header, whose
//! `stream` says what the frame is (1 trigger, 2 initiator data, 3 responder
//! data) and whose `seq` is the cycle number; padded to the frame size.

pub mod args;
pub use args::ExchangeArgs;

use crate::shared::exit::Failure;
use crate::shared::meta::{meta, now_rfc3339};
use crate::shared::output::{Finished, Report};
use crate::shared::warnings::Warn;
use anyhow::{Context, Result};
use misura_report::exchange::*;
use misura_report::Warning;
use misura_report::{LoopTuning, StopReason};
use misura_stats::Summary;
use misura_sys::clock::realtime_ns;
use misura_sys::iface::InterfaceInfo;
use misura_sys::packet::{PacketSocket, TimestampingGranted};
use misura_wire::probe::{ProbeHeader, ProbeRepr};
use misura_wire::{EthernetFrame, EthernetRepr, MacAddr, ProbeFlags};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

const TRIGGER: u16 = 1;
const INITIATOR_DATA: u16 = 2;
const RESPONDER_DATA: u16 = 3;
const ETH: usize = misura_wire::ethernet::HEADER_LEN;

fn frame(
    dst: MacAddr,
    src: MacAddr,
    ethertype: u16,
    session: u32,
    stream: u16,
    frame_bytes: usize,
) -> Result<Vec<u8>> {
    let payload = frame_bytes - ETH - misura_wire::ethernet::FCS_LEN;
    let eth = EthernetRepr {
        dst,
        src,
        vlan: None,
        ethertype,
    };
    let probe = ProbeRepr {
        flags: ProbeFlags::empty(),
        payload_len: payload as u16,
        session_id: session,
        stream,
        size_index: 0,
        seq: 0,
        sender_timestamp: 0,
        aux_timestamp: 0,
    };
    let mut buf = vec![0u8; ETH + payload];
    let n = misura_wire::probe::emit_frame(&eth, &probe, &mut buf).context("building a frame")?;
    buf.truncate(n);
    Ok(buf)
}

fn set_seq(buf: &mut [u8], seq: u64) {
    ProbeHeader::new_unchecked(&mut buf[ETH..]).set_seq(seq);
}

/// (stream, seq, session) of a frame from `peer`, if it is one of ours.
fn classify(buf: &[u8], peer: MacAddr, ethertype: u16) -> Option<(u16, u64, u32)> {
    let eth = EthernetFrame::new_checked(buf).ok()?;
    if eth.src() != peer || eth.ethertype() != ethertype {
        return None;
    }
    let p = ProbeRepr::parse(eth.payload()).ok()?;
    Some((p.stream, p.seq, p.session_id))
}

fn send_all(sock: &PacketSocket, buf: &[u8], deadline: i64) -> Result<bool> {
    loop {
        if sock.send(buf)? {
            return Ok(true);
        }
        if realtime_ns() > deadline {
            return Ok(false);
        }
        std::hint::spin_loop();
    }
}

/// This end of the exchange: the raw socket on the interface that faces
/// the peer, and what the host granted it.
struct Port {
    sock: PacketSocket,
    info: InterfaceInfo,
    mine: MacAddr,
    peer: MacAddr,
    ethertype: u16,
    granted: TimestampingGranted,
    /// The NIC's stamps on this port (or why not).
    hw: crate::shared::stamping::Hardware,
    tuning: LoopTuning,
}

/// A frame's stamps: the kernel's and the NIC's.
type Stamps = (Option<i64>, Option<i64>);

impl Port {
    /// Check the frame sizes against the interface's MTU, open the socket
    /// with kernel stamps (and the NIC's where the port has them), pin the
    /// loop.
    fn open(a: &ExchangeArgs) -> Result<Port> {
        let info = misura_sys::iface::interface_info(&a.interface)?;
        let max_frame = info.mtu as usize + ETH + misura_wire::ethernet::FCS_LEN;
        for (name, s) in [("--trigger", a.trigger), ("--data", a.data)] {
            if s < 64 || s > max_frame {
                return Err(Failure::Params(format!(
                    "{name} {s}: frame sizes run from 64 bytes to {max_frame} (the MTU of {} plus header and FCS)",
                    a.interface
                ))
                .into());
            }
        }
        let hw = crate::shared::stamping::hardware(
            Some(&a.interface),
            crate::shared::stamping::Timestamps::Kernel,
        )?;
        let sock = PacketSocket::open(&a.interface, a.ethertype.value)?;
        let granted = sock.enable_timestamping(hw.enabled)?;
        let mut tuning = LoopTuning {
            netns: a.ns.netns.clone(),
            ..Default::default()
        };
        if let Some(cpu) = a.cpu {
            misura_sys::sched::pin_to_cpu(cpu)?;
            tuning.cpu = Some(cpu);
        }
        Ok(Port {
            sock,
            mine: MacAddr(info.mac),
            info,
            peer: a.peer,
            ethertype: a.ethertype.value,
            granted,
            hw,
            tuning,
        })
    }

    fn frame(&self, session: u32, stream: u16, bytes: usize) -> Result<Vec<u8>> {
        frame(self.peer, self.mine, self.ethertype, session, stream, bytes)
    }

    /// Read the error queue's TX stamps; those of trigger `k` go to `tx`
    /// (the kernel's and the NIC's come in two reports).
    fn trigger_stamps(&self, k: u64, buf: &mut [u8], tx: &mut Stamps) -> Result<()> {
        while let Some(st) = self.sock.recv_tx_timestamp(buf)? {
            let n = st.len.min(buf.len());
            if let Some((TRIGGER, seq, _)) = classify(&buf[..n], self.mine, self.ethertype) {
                if seq == k {
                    tx.0 = tx.0.or(st.software_ns);
                    tx.1 = tx.1.or(st.hardware_ns);
                }
            }
        }
        Ok(())
    }

    /// Wait until `deadline` for the peer's data frame of cycle `k`:
    /// (user-clock receive time, its RX stamps) when it came, and the
    /// trigger's TX stamps.
    fn await_data(
        &self,
        k: u64,
        deadline: i64,
        buf: &mut [u8],
    ) -> Result<(Option<(i64, Stamps)>, Stamps)> {
        let mut trigger_tx = (None, None);
        let mut got = None;
        while got.is_none() && realtime_ns() < deadline {
            self.trigger_stamps(k, buf, &mut trigger_tx)?;
            if let Some(m) = self.sock.recv(buf)? {
                let rx2 = realtime_ns();
                let n = m.len.min(buf.len());
                if let Some((RESPONDER_DATA, seq, _)) =
                    classify(&buf[..n], self.peer, self.ethertype)
                {
                    if seq == k {
                        got = Some((rx2, (m.software_ns, m.hardware_ns)));
                    }
                }
            }
        }
        // The trigger's TX stamp may come after the reply on a real NIC
        // (the NIC's always does).
        if trigger_tx.0.is_none() || (self.granted.hardware_tx && trigger_tx.1.is_none()) {
            self.trigger_stamps(k, buf, &mut trigger_tx)?;
        }
        Ok((got, trigger_tx))
    }
}

/// The initiator's timings: each phase from just before the trigger's send().
struct Phases {
    t1: Summary,
    t2: Summary,
    t3: Summary,
    t3_kernel: Summary,
    t3_hardware: Summary,
    /// Completed cycles without the NIC's stamps (while they are on).
    hw_missing: u64,
    cycles: u64,
    completed: u64,
    timeouts: u64,
}

/// The initiator's two frames, renumbered each cycle.
struct Frames {
    trigger: Vec<u8>,
    data: Vec<u8>,
}

/// One cycle: the trigger and this end's data frame back to back, then the
/// wait for the peer's data frame. False when the trigger could not be
/// sent before the timeout (the cycle is not counted, the schedule not
/// advanced).
fn cycle(
    port: &Port,
    frames: &mut Frames,
    k: u64,
    timeout_ns: i64,
    buf: &mut [u8],
    p: &mut Phases,
) -> Result<bool> {
    set_seq(&mut frames.trigger, k);
    set_seq(&mut frames.data, k);
    let start = realtime_ns();
    let deadline = start + timeout_ns;
    if !send_all(&port.sock, &frames.trigger, deadline)? {
        p.timeouts += 1;
        return Ok(false);
    }
    let a1 = realtime_ns();
    send_all(&port.sock, &frames.data, deadline)?;
    let a2 = realtime_ns();
    p.cycles += 1;
    match port.await_data(k, deadline, buf)? {
        (Some((rx2, rx)), tx) => {
            p.completed += 1;
            p.t1.record(a1 - start);
            p.t2.record(a2 - start);
            p.t3.record(rx2 - start);
            if let (Some(tx), Some(rx)) = (tx.0, rx.0) {
                p.t3_kernel.record(rx - tx);
            }
            match (tx.1, rx.1) {
                (Some(tx), Some(rx)) => p.t3_hardware.record(rx - tx),
                _ if port.hw.enabled => p.hw_missing += 1,
                _ => {}
            }
        }
        (None, _) => p.timeouts += 1,
    }
    Ok(true)
}

/// The initiator's cycle timing, checked.
struct Timing {
    period_ns: i64,
    timeout_ns: i64,
}

impl Timing {
    fn new(a: &ExchangeArgs) -> Result<Timing> {
        Ok(Timing {
            period_ns: a.period.at_least("--period", 1_000)?,
            timeout_ns: a.timeout.at_least("--timeout", 1_000)?,
        })
    }
}

/// The initiator: `--count` cycles every `--period`, late cycles postponed
/// to the next period (no catch-up). Returns the phases and the stop reason.
fn initiate(
    a: &ExchangeArgs,
    &Timing {
        period_ns,
        timeout_ns,
    }: &Timing,
    port: &Port,
    stop: &AtomicUsize,
) -> Result<(Phases, StopReason)> {
    let session = (realtime_ns() as u64 ^ std::process::id() as u64) as u32;
    let mut frames = Frames {
        trigger: port.frame(session, TRIGGER, a.trigger)?,
        data: port.frame(session, INITIATOR_DATA, a.data)?,
    };
    let s = || Summary::with_threshold(Some(a.threshold.ns));
    let mut p = Phases {
        t1: s(),
        t2: s(),
        t3: s(),
        t3_kernel: s(),
        t3_hardware: s(),
        hw_missing: 0,
        cycles: 0,
        completed: 0,
        timeouts: 0,
    };
    let mut buf = vec![0u8; 16 * 1024];
    // Drain anything left over, then warm the RX stamps up.
    while port.sock.recv(&mut buf)?.is_some() {}
    let mut due = realtime_ns() + 1_000_000;
    for k in 0..a.count {
        let sig = stop.load(Ordering::Relaxed);
        if sig != 0 {
            return Ok((p, crate::shared::output::signal_reason(sig)));
        }
        while realtime_ns() < due {
            std::hint::spin_loop();
        }
        if !cycle(port, &mut frames, k, timeout_ns, &mut buf, &mut p)? {
            continue;
        }
        due += period_ns;
        let now = realtime_ns();
        if due < now {
            due = now + period_ns - (now - due) % period_ns;
        }
    }
    Ok((p, StopReason::Finished))
}

/// The initiator's report: the phases, the wire time of the two frames and
/// the warnings.
fn initiator_report(
    a: &ExchangeArgs,
    port: &Port,
    p: &Phases,
    started_at: String,
    stop_reason: StopReason,
) -> ExchangeReport {
    let link = port
        .info
        .speed_mbps
        .filter(|&m| m > 0)
        .map(|m| misura_measure::LinkModel::new(m * 1_000_000, false));
    let wire = link.map(|l| {
        let p = |f: usize| f - 18;
        l.wire_time_ns(p(a.trigger)) + l.wire_time_ns(p(a.data)) + 12.0 * l.byte_time_ns()
    });
    let mut warnings = Vec::new();
    if !port.granted.software_rx {
        warnings.push(Warning::from(Warn::NoKernelRxStamps));
    }
    if p.hw_missing > 0 {
        warnings.push(
            Warn::HardwareStampsMissing {
                interface: a.interface.clone(),
                tx: p.hw_missing,
                rx: p.hw_missing,
                of: p.completed,
            }
            .into(),
        );
    }
    if port.info.driver.as_deref() == Some("veth") {
        warnings.push(Warn::VethWireTimeModel.into());
    }
    let phase = |meaning: &str, s: &Summary| Phase {
        meaning: meaning.into(),
        summary: s.snapshot(),
        hdr: s.hdr_buckets(),
    };
    ExchangeReport {
        meta: meta("misura.exchange", started_at),
        complete: stop_reason.is_finished(),
        stop_reason,
        host: crate::shared::host::fingerprint(port.tuning.clone()),
        config: ExchangeConfig {
            interface: a.interface.clone(),
            peer: port.peer.to_string(),
            netns: a.ns.netns.clone(),
            ethertype: port.ethertype,
            trigger_bytes: a.trigger,
            data_bytes: a.data,
            period_ns: a.period.ns,
            count: a.count,
            timeout_ns: a.timeout.ns,
            threshold_ns: a.threshold.ns,
        },
        body: ExchangeFigures {
            cycles: p.cycles,
            completed: p.completed,
            timeouts: p.timeouts,
            t1: phase("trigger send() returned", &p.t1),
            t2: phase("own data frame send() returned", &p.t2),
            t3: phase("peer's data frame received (user clock)", &p.t3),
            t3_kernel: (p.t3_kernel.count() > 0).then(|| {
                phase(
                    "peer's data RX stamp − trigger TX stamp (kernel)",
                    &p.t3_kernel,
                )
            }),
            t3_hardware: (p.t3_hardware.count() > 0).then(|| {
                phase(
                    "peer's data RX stamp − trigger TX stamp (NIC hardware, one PTP clock)",
                    &p.t3_hardware,
                )
            }),
            phc: port
                .hw
                .phc_index
                .filter(|_| port.hw.enabled)
                .map(|i| format!("/dev/ptp{i}")),
            hardware_note: port.hw.note.clone(),
            hw_stamp_missing: p.hw_missing,
            wire_time_ns: wire,
        },
        warnings,
    }
}

pub fn run(a: &ExchangeArgs, stop: &Arc<AtomicUsize>) -> Result<Finished> {
    let timing = Timing::new(a)?;
    let port = Port::open(a)?;
    if a.respond {
        return respond(a, &port, stop);
    }
    let started_at = now_rfc3339();
    let (phases, stop_reason) = initiate(a, &timing, &port, stop)?;
    let report = Report::new(
        initiator_report(a, &port, &phases, started_at, stop_reason),
        "exchange",
        format!("{} {}", a.interface, port.peer),
        write_text,
    );
    let (cycles, peer, mine) = (phases.cycles, port.peer, port.mine);
    if phases.completed == 0 && cycles > 0 {
        eprintln!(
            "misura: error: no data frame came back from {peer} in {cycles} cycles: is `misura exchange --respond --peer {mine}` running on the peer?"
        );
        return Ok(Finished::with_code(report, crate::shared::exit::ERROR));
    }
    Ok(Finished::ok(report))
}

/// The responder: answer each trigger from the peer with a data frame.
fn respond(a: &ExchangeArgs, port: &Port, stop: &Arc<AtomicUsize>) -> Result<Finished> {
    let end = a.duration.as_ref().map(|d| realtime_ns() + d.ns);
    let started_at = now_rfc3339();
    let mut buf = vec![0u8; 16 * 1024];
    let mut data: Option<(u32, Vec<u8>)> = None;
    let (mut triggers, mut answered, mut peer_data, mut other) = (0u64, 0u64, 0u64, 0u64);
    eprintln!(
        "misura exchange: responding on {} to triggers from {} with {}-byte data frames",
        a.interface, port.peer, a.data
    );
    while stop.load(Ordering::Relaxed) == 0 && end.is_none_or(|e| realtime_ns() < e) {
        while port.sock.recv_tx_timestamp(&mut buf)?.is_some() {}
        let Some(m) = port.sock.recv(&mut buf)? else {
            // Sleep in the kernel until a frame comes (as the seed's blocking
            // recvfrom did), unless asked to busy-poll.
            if !a.busy_poll {
                port.sock
                    .wait_readable(std::time::Duration::from_millis(100))?;
            }
            continue;
        };
        let n = m.len.min(buf.len());
        match classify(&buf[..n], port.peer, port.ethertype) {
            Some((TRIGGER, seq, session)) => {
                triggers += 1;
                if data.as_ref().is_none_or(|(s, _)| *s != session) {
                    data = Some((session, port.frame(session, RESPONDER_DATA, a.data)?));
                }
                let d = &mut data.as_mut().unwrap().1;
                set_seq(d, seq);
                if send_all(&port.sock, d, realtime_ns() + 1_000_000)? {
                    answered += 1;
                }
            }
            Some((INITIATOR_DATA, _, _)) => peer_data += 1,
            _ => other += 1,
        }
    }
    let (complete, stop_reason) = crate::shared::output::completion(stop);
    let report = ResponderReport {
        meta: meta("misura.exchange-responder", started_at),
        complete,
        stop_reason,
        host: crate::shared::host::fingerprint(port.tuning.clone()),
        interface: a.interface.clone(),
        peer: port.peer.to_string(),
        data_bytes: a.data,
        triggers,
        answered,
        peer_data_frames: peer_data,
        other_frames: other,
    };
    let target = format!("{} {}", a.interface, port.peer);
    Ok(Finished::ok(Report::new(
        report,
        "exchange-responder",
        target,
        write_responder_text,
    )))
}
