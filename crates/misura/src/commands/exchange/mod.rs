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
use anyhow::{Context, Result};
use misura_report::exchange::*;
use misura_report::LoopTuning;
use misura_stats::Summary;
use misura_sys::clock::realtime_ns;
use misura_sys::packet::PacketSocket;
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

pub fn run(a: &ExchangeArgs, stop: &Arc<AtomicUsize>) -> Result<Finished> {
    let peer: MacAddr = a
        .peer
        .parse()
        .map_err(|e| Failure::Usage(format!("--peer: {e}")))?;
    let ethertype = a.ethertype.value;
    let period_ns = a.period.at_least("--period", 1_000)?;
    let timeout_ns = a.timeout.at_least("--timeout", 1_000)?;
    let threshold_ns = a.threshold.ns;
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
    let sock = PacketSocket::open(&a.interface, ethertype)?;
    let granted = sock.enable_timestamping(false)?;
    let mine = MacAddr(info.mac);
    let mut tuning = LoopTuning {
        netns: a.ns.netns.clone(),
        ..Default::default()
    };
    if let Some(cpu) = a.cpu {
        misura_sys::sched::pin_to_cpu(cpu)?;
        tuning.cpu = Some(cpu);
    }
    let mut buf = vec![0u8; 16 * 1024];
    if a.respond {
        return respond(a, &sock, peer, mine, ethertype, stop, &mut buf, &tuning);
    }

    let session = (realtime_ns() as u64 ^ std::process::id() as u64) as u32;
    let mut trigger = frame(peer, mine, ethertype, session, TRIGGER, a.trigger)?;
    let mut data = frame(peer, mine, ethertype, session, INITIATOR_DATA, a.data)?;
    let started_at = now_rfc3339();
    let s = || Summary::with_threshold(Some(threshold_ns));
    let (mut t1, mut t2, mut t3, mut t3k) = (s(), s(), s(), s());
    let (mut cycles, mut completed, mut timeouts) = (0u64, 0u64, 0u64);
    let mut stop_reason = "finished".to_string();
    // Drain anything left over, then warm the RX stamps up.
    while sock.recv(&mut buf)?.is_some() {}
    let mut due = realtime_ns() + 1_000_000;
    for k in 0..a.count {
        let sig = stop.load(Ordering::Relaxed);
        if sig != 0 {
            stop_reason = format!("interrupted by signal {sig}; partial results");
            break;
        }
        while realtime_ns() < due {
            std::hint::spin_loop();
        }
        set_seq(&mut trigger, k);
        set_seq(&mut data, k);
        let start = realtime_ns();
        let deadline = start + timeout_ns;
        if !send_all(&sock, &trigger, deadline)? {
            timeouts += 1;
            continue;
        }
        let a1 = realtime_ns();
        send_all(&sock, &data, deadline)?;
        let a2 = realtime_ns();
        cycles += 1;
        let mut trigger_tx = None;
        let mut got = None;
        while got.is_none() && realtime_ns() < deadline {
            while let Some(st) = sock.recv_tx_timestamp(&mut buf)? {
                let n = st.len.min(buf.len());
                if let Ok(eth) = EthernetFrame::new_checked(&buf[..n]) {
                    if let Ok(p) = ProbeRepr::parse(eth.payload()) {
                        if p.stream == TRIGGER && p.seq == k {
                            trigger_tx = st.software_ns;
                        }
                    }
                }
            }
            if let Some(m) = sock.recv(&mut buf)? {
                let rx2 = realtime_ns();
                let n = m.len.min(buf.len());
                if let Some((RESPONDER_DATA, seq, _)) = classify(&buf[..n], peer, ethertype) {
                    if seq == k {
                        got = Some((rx2, m.software_ns));
                    }
                }
            }
        }
        // The trigger's TX stamp may come after the reply on a real NIC.
        if trigger_tx.is_none() {
            while let Some(st) = sock.recv_tx_timestamp(&mut buf)? {
                let n = st.len.min(buf.len());
                if let Some((TRIGGER, seq, _)) = classify_own(&buf[..n], mine, ethertype) {
                    if seq == k {
                        trigger_tx = st.software_ns;
                    }
                }
            }
        }
        match got {
            Some((rx2, rxk)) => {
                completed += 1;
                t1.record(a1 - start);
                t2.record(a2 - start);
                t3.record(rx2 - start);
                if let (Some(tx), Some(rx)) = (trigger_tx, rxk) {
                    t3k.record(rx - tx);
                }
            }
            None => timeouts += 1,
        }
        due += period_ns;
        let now = realtime_ns();
        if due < now {
            due = now + period_ns - (now - due) % period_ns;
        }
    }
    let link = info
        .speed_mbps
        .filter(|&m| m > 0)
        .map(|m| misura_measure::LinkModel::new(m * 1_000_000, false));
    let wire = link.map(|l| {
        let p = |f: usize| f - 18;
        l.wire_time_ns(p(a.trigger)) + l.wire_time_ns(p(a.data)) + 12.0 * l.byte_time_ns()
    });
    let mut warnings = Vec::new();
    if !granted.software_rx {
        warnings.push("no kernel RX stamps: t3 kernel not available".into());
    }
    if info.driver.as_deref() == Some("veth") {
        warnings.push("veth: the wire time is a model (veth serialises nothing)".into());
    }
    let phase = |meaning: &str, s: &Summary| Phase {
        meaning: meaning.into(),
        summary: s.snapshot(),
    };
    let report = ExchangeReport {
        meta: meta("misura.exchange", started_at),
        complete: stop_reason == "finished",
        stop_reason,
        host: crate::shared::host::fingerprint(tuning),
        config: ExchangeConfig {
            interface: a.interface.clone(),
            peer: peer.to_string(),
            netns: a.ns.netns.clone(),
            ethertype,
            trigger_bytes: a.trigger,
            data_bytes: a.data,
            period_ns,
            count: a.count,
            timeout_ns,
            threshold_ns,
        },
        cycles,
        completed,
        timeouts,
        t1: phase("trigger send() returned", &t1),
        t2: phase("own data frame send() returned", &t2),
        t3: phase("peer's data frame received (user clock)", &t3),
        t3_kernel: (t3k.count() > 0)
            .then(|| phase("peer's data RX stamp − trigger TX stamp (kernel)", &t3k)),
        wire_time_ns: wire,
        warnings,
    };
    let report = Report::new(
        report,
        "exchange",
        format!("{} {}", a.interface, peer),
        write_text,
    );
    if completed == 0 && cycles > 0 {
        eprintln!(
            "misura: error: no data frame came back from {peer} in {cycles} cycles: is `misura exchange --respond --peer {mine}` running on the peer?"
        );
        return Ok(Finished::with_code(report, crate::shared::exit::ERROR));
    }
    Ok(Finished::ok(report))
}

fn classify_own(buf: &[u8], mine: MacAddr, ethertype: u16) -> Option<(u16, u64, u32)> {
    classify(buf, mine, ethertype)
}

/// The responder: answer each trigger from `peer` with a data frame.
fn respond(
    a: &ExchangeArgs,
    sock: &PacketSocket,
    peer: MacAddr,
    mine: MacAddr,
    ethertype: u16,
    stop: &Arc<AtomicUsize>,
    buf: &mut [u8],
    tuning: &LoopTuning,
) -> Result<Finished> {
    let end = a.duration.as_ref().map(|d| realtime_ns() + d.ns);
    let started_at = now_rfc3339();
    let mut data: Option<(u32, Vec<u8>)> = None;
    let (mut triggers, mut answered, mut peer_data, mut other) = (0u64, 0u64, 0u64, 0u64);
    eprintln!(
        "misura exchange: responding on {} to triggers from {peer} with {}-byte data frames",
        a.interface, a.data
    );
    while stop.load(Ordering::Relaxed) == 0 && end.is_none_or(|e| realtime_ns() < e) {
        while sock.recv_tx_timestamp(buf)?.is_some() {}
        let Some(m) = sock.recv(buf)? else {
            // Sleep in the kernel until a frame comes (as the seed's blocking
            // recvfrom did), unless asked to busy-poll.
            if !a.busy_poll {
                sock.wait_readable(std::time::Duration::from_millis(100))?;
            }
            continue;
        };
        let n = m.len.min(buf.len());
        match classify(&buf[..n], peer, ethertype) {
            Some((TRIGGER, seq, session)) => {
                triggers += 1;
                if data.as_ref().is_none_or(|(s, _)| *s != session) {
                    data = Some((
                        session,
                        frame(peer, mine, ethertype, session, RESPONDER_DATA, a.data)?,
                    ));
                }
                let d = &mut data.as_mut().unwrap().1;
                set_seq(d, seq);
                if send_all(sock, d, realtime_ns() + 1_000_000)? {
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
        host: crate::shared::host::fingerprint(tuning.clone()),
        interface: a.interface.clone(),
        peer: peer.to_string(),
        data_bytes: a.data,
        triggers,
        answered,
        peer_data_frames: peer_data,
        other_frames: other,
    };
    let target = format!("{} {}", a.interface, peer);
    Ok(Finished::ok(Report::new(
        report,
        "exchange-responder",
        target,
        write_responder_text,
    )))
}
