//! The initiator: `count` cycles every period, each a trigger and this
//! end's data frame back to back, then the wait for the peer's data frame;
//! the phases timed from just before the trigger's send(), and the report.

use crate::error::ExchangeError;
use crate::frames::{send_all, set_seq, INITIATOR_DATA, TRIGGER};
use crate::plan::ExchangePlan;
use crate::port::Port;
use misura_measure::time::Span;

type Result<T, E = ExchangeError> = std::result::Result<T, E>;
use misura_cli::meta::{meta, now_rfc3339};
use misura_cli::warnings::Warn;
use misura_report::exchange::*;
use misura_report::{StopReason, Warning};
use misura_stats::Summary;
use misura_sys::clock::{realtime, realtime_ns};
use misura_wire::MacAddr;
use std::sync::atomic::{AtomicUsize, Ordering};

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
    timeout: Span,
    buf: &mut [u8],
    p: &mut Phases,
) -> Result<bool> {
    set_seq(&mut frames.trigger, k);
    set_seq(&mut frames.data, k);
    let start = realtime();
    let deadline = start + timeout;
    if !send_all(&port.sock, &frames.trigger, deadline)? {
        p.timeouts += 1;
        return Ok(false);
    }
    let a1 = realtime();
    send_all(&port.sock, &frames.data, deadline)?;
    let a2 = realtime();
    p.cycles += 1;
    match port.await_data(k, deadline, buf)? {
        (Some((rx2, rx)), tx) => {
            p.completed += 1;
            p.t1.record((a1 - start).as_ns());
            p.t2.record((a2 - start).as_ns());
            p.t3.record((rx2 - start).as_ns());
            if let (Some(tx), Some(rx)) = (tx.0, rx.0) {
                p.t3_kernel.record((rx - tx).as_ns());
            }
            match (tx.1, rx.1) {
                (Some(tx), Some(rx)) => p.t3_hardware.record((rx - tx).as_ns()),
                _ if port.hw.enabled => p.hw_missing += 1,
                _ => {}
            }
        }
        (None, _) => p.timeouts += 1,
    }
    Ok(true)
}

/// The initiator's loop: `count` cycles every period, late cycles
/// postponed to the next period (no catch-up). Returns the phases and the
/// stop reason.
fn cycles(a: &ExchangePlan, port: &Port, stop: &AtomicUsize) -> Result<(Phases, StopReason)> {
    let period_ns = a.period.as_ns();
    let session = (realtime_ns() as u64 ^ std::process::id() as u64) as u32;
    let mut frames = Frames {
        trigger: port.frame(session, TRIGGER, a.trigger)?,
        data: port.frame(session, INITIATOR_DATA, a.data)?,
    };
    let s = || Summary::with_threshold(Some(a.threshold.as_ns()));
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
            return Ok((p, misura_cli::exit::signal_reason(sig)));
        }
        while realtime_ns() < due {
            std::hint::spin_loop();
        }
        if !cycle(port, &mut frames, k, a.timeout, &mut buf, &mut p)? {
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
    a: &ExchangePlan,
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
        summary: s.snapshot().into(),
        hdr: misura_report::model::summary::buckets(s.hdr_buckets()),
    };
    ExchangeReport {
        meta: meta("misura.exchange", started_at),
        complete: stop_reason.is_finished(),
        stop_reason,
        host: misura_run::host::fingerprint(port.tuning.clone()),
        config: ExchangeConfig {
            interface: a.interface.clone(),
            peer: port.peer.to_string(),
            netns: a.netns.clone(),
            ethertype: port.ethertype,
            trigger_bytes: a.trigger,
            data_bytes: a.data,
            period_ns: a.period.as_ns(),
            count: a.count,
            timeout_ns: a.timeout.as_ns(),
            threshold_ns: a.threshold.as_ns(),
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

/// A finished initiator: its report, and what the binary needs to say
/// when no data frame came back (cycles run and completed, both ends' MAC
/// addresses).
pub struct Initiated {
    pub report: ExchangeReport,
    pub cycles: u64,
    pub completed: u64,
    pub peer: MacAddr,
    pub mine: MacAddr,
}

/// Open the port, run the initiator's cycles and make its report.
pub fn initiate(plan: &ExchangePlan, stop: &AtomicUsize) -> Result<Initiated> {
    plan.check()?;
    let port = Port::open(plan)?;
    let started_at = now_rfc3339();
    let (phases, stop_reason) = cycles(plan, &port, stop)?;
    Ok(Initiated {
        report: initiator_report(plan, &port, &phases, started_at, stop_reason),
        cycles: phases.cycles,
        completed: phases.completed,
        peer: port.peer,
        mine: port.mine,
    })
}
