//! `misura rtt`: the STAMP Session-Sender (UDP), with kernel timestamps at
//! both ends, the reflector's turnaround removed, and one-way delays from an
//! offset estimated on the minimum-RTT probes.
//!
//! The session itself (requests, replies, follow-ups, loss and drain rules)
//! is `misura_measure::stamp_sender::SessionSender`; here are what a
//! session is asked ([`request`], plain values: the binary's flags become
//! one) and its plan ([`plan`]), the sockets ([`transport`]), the
//! loop that joins them ([`session`]), the summaries ([`collect`]) and the
//! result ([`assemble`]): [`measure`] runs one session and returns its
//! report. The binary (`commands/rtt`) prints, exports, stores and exits;
//! `misura load` runs one session per phase. [`reflect`] is the other end,
//! `misura reflect`'s STAMP Session-Reflector and raw-probe reflector.
#![forbid(unsafe_code)]

mod assemble;
mod collect;
mod error;
mod exit_class;
pub use collect::IntervalPoint;
pub use error::{BuildError, NoReplyWhy, RttError};
pub mod plan;
pub mod reflect;
pub mod request;
pub use request::{Peer, RequestError, RttRequest};
mod session;
pub mod transport;

use crate::transport::Transport;
use assemble::RunFacts;
use collect::Collector;
use error::Result;
use misura_cli::meta::now_rfc3339;
use misura_cli::warnings::Warn;
use misura_measure::stamp_sender::{SessionSender, WARMUP_PROBES};
use misura_report::rtt::*;
use misura_report::LoopTuning;
use misura_run::stamping::{FrameFormat, Hardware, Timestamps};
use misura_sys::clock::realtime_ns;
use misura_sys::packet::TimestampingGranted;
use misura_sys::udp::{ReceiveInfo, UdpTsSocket};
use plan::RttPlan;
use session::{Intervals, Link};
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The link rate for the ideal RTT: the one given, or the speed of the
/// interface the route to the target leaves by.
fn link_rate(a: &RttRequest, target: IpAddr) -> Result<(Option<u64>, String)> {
    if let Some(bps) = a.link_speed_bps {
        return Ok((Some(bps), "--link-speed".into()));
    }
    if let Some(dev) = misura_run::stamping::route_interface(target) {
        if let Ok(info) = misura_sys::iface::interface_info(&dev) {
            if let Some(mbps) = info.speed_mbps.filter(|&m| m > 0) {
                return Ok((Some(mbps * 1_000_000), format!("interface {dev}")));
            }
        }
    }
    Ok((None, "unknown".into()))
}

fn link_rate_of(a: &RttRequest, interface: &str) -> Result<(Option<u64>, String)> {
    if let Some(bps) = a.link_speed_bps {
        return Ok((Some(bps), "--link-speed".into()));
    }
    let info = misura_sys::iface::interface_info(interface)?;
    Ok(match info.speed_mbps.filter(|&m| m > 0) {
        Some(m) => (Some(m * 1_000_000), format!("interface {interface}")),
        None => (None, "unknown".into()),
    })
}

/// The socket, UDP to HOST or raw frames, with kernel timestamps, and
/// the NIC's where the interface towards the peer has them.
fn open_transport(a: &RttRequest) -> Result<(Transport, TimestampingGranted, Hardware)> {
    if a.l2 {
        if a.timestamps == Timestamps::User {
            return Err(RequestError::UserStampsOnRawProbes.into());
        }
        let iface = a.interface.as_deref().unwrap_or_default();
        let peer = a
            .peer
            .and_then(|p| p.mac())
            .ok_or(RequestError::NoPeerMac)?;
        let ethertype = a.ethertype;
        let session = (realtime_ns() as u64 ^ (std::process::id() as u64) << 20) as u32;
        let ptp = a.frame_format.settle(iface, a.timestamps) == FrameFormat::Ptp;
        let hw = misura_run::stamping::hardware_for(Some(iface), a.timestamps, ptp)?;
        let t = Transport::l2(iface, peer, ethertype, session, ptp)?;
        let g = match &t {
            Transport::L2(l) => l.sock.enable_timestamping(hw.enabled)?,
            Transport::Udp(_) => unreachable!(),
        };
        return Ok((t, g, hw));
    }
    let Some(target_s) = &a.target else {
        return Err(RequestError::NoTarget.into());
    };
    let target = misura_cli::target::resolve(target_s, a.port)?;
    let local_bind: SocketAddr = match target {
        SocketAddr::V4(_) => "0.0.0.0:0".parse().unwrap(),
        SocketAddr::V6(_) => "[::]:0".parse().unwrap(),
    };
    let mut sock = UdpTsSocket::bind(local_bind)?;
    // Connected: no route lookup per probe, and the kernel drops datagrams
    // from anyone but the reflector.
    sock.connect(target)?;
    let dev = misura_run::stamping::route_interface(target.ip());
    let hw = misura_run::stamping::hardware(dev.as_deref(), a.timestamps)?;
    // The client reads neither the reply's TTL nor the address it came to.
    let g = misura_run::stamping::enable(&sock, a.timestamps, &hw, ReceiveInfo::NONE)?;
    Ok((Transport::udp(sock, target), g, hw))
}

/// What one STAMP session gives.
pub struct Measured {
    pub report: RttReport,
    /// The per-probe log's write error, if any.
    pub frames_error: Option<String>,
    /// The reflector's name.
    pub target_name: String,
    /// One point per --interval.
    pub series: Vec<collect::IntervalPoint>,
}

/// One STAMP session as asked (`misura load` runs one per phase).
pub fn measure(a: &RttRequest, stop: &Arc<AtomicUsize>) -> Result<Measured, RttError> {
    a.check()?;
    let plan = RttPlan::new(a.plan.clone())?;
    a.load.check()?;
    // The per-probe log is opened (so checked writable) before anything is sent.
    let frames = misura_cli::outfile::open_rows(&a.frames, "per-probe log")?;

    // Transport and timestamping.
    let ssid = (realtime_ns() as u64 ^ std::process::id() as u64) as u16 | 1;
    let (mut tr, granted, hw) = open_transport(a)?;
    let mut sender = SessionSender::new(plan.sender_config(ssid, granted.any_tx()))
        .map_err(RttError::build("building the STAMP requests"))?;
    let hw_stamps = granted.hardware_tx && granted.hardware_rx;
    sender.expect_hardware_stamps(hw_stamps);
    let (link_bps, link_source) = match &tr {
        Transport::Udp(u) => link_rate(a, u.target.ip())?,
        Transport::L2(l) => link_rate_of(a, &l.interface)?,
    };
    let target_name = tr.target();
    let started_at = now_rfc3339();
    let mut tuning = LoopTuning {
        netns: a.netns.clone(),
        ..Default::default()
    };
    if let Some(cpu) = a.cpu {
        misura_sys::sched::pin_to_cpu(cpu)?;
        tuning.cpu = Some(cpu);
    }

    // Warm-up: the first datagrams after enabling timestamps may come back
    // unstamped, and the first replies tell what the reflector supports.
    if a.busy_poll {
        tuning.busy_poll = Some(tr.busy_poll());
    }
    // With the NIC's stamps, each send has two TX stamps (kernel, NIC).
    let tx_stamps_per_send = usize::from(granted.software_tx) + usize::from(granted.hardware_tx);
    let mut link = Link::new(
        &mut tr,
        sender.max_request_len(),
        a.busy_poll,
        tx_stamps_per_send,
    )?;
    link.warm_up(&mut sender, stop)?;
    if sender.warm_up().replies == 0 && stop.load(Ordering::Relaxed) == 0 {
        let why = if link.icmp > 0 {
            NoReplyWhy::PortUnreachable
        } else {
            NoReplyWhy::Silent {
                wait_ms: plan
                    .timeout
                    .as_ns()
                    .max(misura_measure::stamp_sender::WARMUP_WAIT_NS)
                    as f64
                    / 1e6,
                probes: WARMUP_PROBES as usize,
                target: target_name.clone(),
            }
        };
        return Err(RttError::NoReply {
            target: target_name,
            why,
        });
    }

    // Measurement, under the busy threads of --cpu-load (stopped when the
    // guard drops, after the result's host load was taken).
    let busy = a.load.start(a.cpu);
    let mut collect = Collector::new(plan.sizes.len(), plan.threshold, frames)?;
    collect.fixed_offset_ns = a.clock_offset_ns;
    let t_start = misura_sys::clock::realtime();
    let mut progress = misura_cli::progress::Progress::new(
        a.quiet || a.json,
        plan.planned_s().map(Duration::from_secs_f64),
    );
    let intervals = plan.interval.map(|every| Intervals {
        every,
        print: !a.quiet,
        lag: plan.timeout,
    });
    let stop_reason = link.measure(
        &mut sender,
        stop,
        &mut collect,
        &mut progress,
        intervals,
        t_start,
    )?;
    let elapsed_s = (misura_sys::clock::realtime() - t_start).as_secs_f64();
    collect.finish();
    let icmp = link.icmp;

    let mut report = assemble::report(RunFacts {
        a,
        plan: &plan,
        tr: &tr,
        granted,
        hw: &hw,
        sender: &sender,
        collect: &collect,
        started_at,
        stop_reason,
        elapsed_s,
        icmp,
        ssid,
        link_bps,
        link_source,
        tuning,
    });
    for e in busy.iter().flat_map(|b| &b.pin_errors) {
        report
            .warnings
            .push(Warn::LoadThreadNotPinned { error: e.clone() }.into());
    }
    drop(busy);
    Ok(Measured {
        report,
        frames_error: collect.frames_error.clone(),
        target_name,
        series: std::mem::take(&mut collect.series),
    })
}
