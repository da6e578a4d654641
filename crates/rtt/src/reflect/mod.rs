//! `misura reflect`'s method: the STAMP Session-Reflector (UDP) and the
//! raw-probe reflector.
//!
//! The decisions (checks, limits, the reply's bytes, follow-ups, HMACs) are
//! all in `misura_measure::reflector`; this module is the I/O loop around
//! it: receive with the kernel's RX stamp, read the user clock, let the core
//! decide, send, then read the reply's TX stamp back from the error queue
//! and hand it to the core for the next reply's Follow-Up Telemetry TLV.
//!
//! Nothing a peer sends can stop the loop: every receive, send and
//! error-queue failure is counted and the loop goes on. Only setting the
//! socket up can fail. The caller asks a [`ReflectRequest`] of plain
//! values, and [`serve`] reads its key file and builds the [`ReflectPlan`]
//! once (its bounds checked in [`ReflectRequest::check`], with typed
//! [`PlanError`]s), then [`run`] returns the [`Summary`]; what is announced
//! before the loop goes back to the caller as a [`Ready`].

pub mod clock;
mod l2;
mod turn;
mod udp;

pub use crate::error::PlanError;
use crate::error::Result;
use misura_measure::auth::StampKey;
use misura_measure::reflector::{Reflector, ReflectorConfig};
use misura_report::reflect::{IoCounters, NicClockReport, Summary};
use misura_run::stamping::{FrameFormat, Hardware, Timestamps};
use misura_sys::packet::TimestampingGranted;
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use turn::Loop;

/// Most sources a reflector may be asked to track (its tables grow on
/// demand up to this; issue 13, finding 5).
pub const MAX_SOURCES: usize = 1_000_000;
/// The scheduler slice a sleeping reflector asks for: shorter than the
/// default (3 ms), so a request's wake-up preempts what runs on the CPU.
pub const SLICE_NS: u64 = 100_000;

/// What the reflector listens to.
#[derive(Debug, Clone)]
pub enum Listen {
    /// STAMP over UDP on this address and port.
    Udp { ip: IpAddr, port: u16 },
    /// misura's raw probes on this interface, on misura's `ethertype`,
    /// PTP's, or both (the plan's `frame_format`).
    L2 { interface: String, ethertype: u16 },
}

/// A reflector as asked, plain values before anything is read or
/// checked.
#[derive(Debug, Clone)]
pub struct ReflectRequest {
    pub listen: Listen,
    /// The raw probes answered (meaningful with [`Listen::L2`] only).
    pub frame_format: FrameFormat,
    /// Authenticated mode's key file (hex on the first line, or raw bytes).
    pub key_file: Option<PathBuf>,
    /// Number replies per session (RFC 8762 §4.3.1) instead of echoing.
    pub stateful: bool,
    /// Replies per second allowed per source address.
    pub rate_limit: u64,
    /// Most sources tracked at once.
    pub max_sources: usize,
    /// Stop after this long; `None`: until stopped.
    pub duration: Option<Duration>,
    /// Pin the loop to this CPU.
    pub cpu: Option<usize>,
    /// Spin on the socket instead of sleeping.
    pub busy_poll: bool,
    /// The clock of the reflector's stamps.
    pub timestamps: Timestamps,
    /// The interface whose NIC stamps, when the caller names one.
    pub interface: Option<String>,
    /// The network namespace the run is in (for the host fingerprint).
    pub netns: Option<String>,
}

/// A reflector run, resolved once from the caller's request: the request
/// checked, and its key file's key.
#[derive(Debug, Clone)]
pub struct ReflectPlan {
    pub request: ReflectRequest,
    /// Authenticated mode's key.
    pub key: Option<StampKey>,
}

impl ReflectRequest {
    /// The reflector's plan: the key file read, then the bounds checked.
    pub fn plan(&self) -> Result<ReflectPlan> {
        let key = misura_cli::keys::read_key(&self.key_file)?;
        self.check()?;
        Ok(ReflectPlan {
            request: self.clone(),
            key,
        })
    }

    /// The request's bounds, in the order a caller reports them.
    pub fn check(&self) -> Result<(), PlanError> {
        if self.rate_limit == 0 {
            return Err(PlanError::NoRate);
        }
        let l2 = matches!(self.listen, Listen::L2 { .. });
        if !l2 && self.frame_format == FrameFormat::Ptp {
            return Err(PlanError::PtpOverUdp);
        }
        if l2 && self.timestamps == Timestamps::User {
            return Err(PlanError::UserStampsOnL2);
        }
        if self.max_sources == 0 {
            return Err(PlanError::NoSources);
        }
        if self.max_sources > MAX_SOURCES {
            return Err(PlanError::TooManySources {
                asked: self.max_sources,
                max: MAX_SOURCES,
            });
        }
        Ok(())
    }

    /// The interface whose NIC stamps the reflector's datagrams: the one
    /// named, else the raw probes', else the one holding the listening
    /// address (a wildcard has none).
    fn stamping_interface(&self) -> Option<String> {
        if let Some(i) = &self.interface {
            return Some(i.clone());
        }
        match &self.listen {
            Listen::L2 { interface, .. } => Some(interface.clone()),
            Listen::Udp { ip, .. } if ip.is_unspecified() => None,
            Listen::Udp { ip, .. } => misura_run::stamping::address_interface(*ip),
        }
    }
}

impl ReflectPlan {
    fn config(&self) -> ReflectorConfig {
        ReflectorConfig {
            key: self.key.clone(),
            stateful: self.request.stateful,
            rate_per_s: self.request.rate_limit,
            // A tenth of a second's worth back to back.
            burst: (self.request.rate_limit / 10).max(1),
            max_sources: self.request.max_sources,
            listen_port: match self.request.listen {
                Listen::Udp { port, .. } => Some(port),
                Listen::L2 { .. } => None,
            },
        }
    }
}

/// What the reflector is about to serve, before its loop starts.
pub struct Ready<'a> {
    /// "STAMP over UDP" or "raw Ethernet".
    pub what: &'static str,
    pub listen: &'a str,
    /// "authenticated" or "unauthenticated".
    pub mode: &'static str,
    pub stateful: bool,
    pub granted: &'a TimestampingGranted,
    pub clocks: &'a clock::Clocks,
    pub hardware: &'a Hardware,
    /// The scheduler slice the loop asked for (None: it spins).
    pub slice: Option<Slice>,
}

impl Ready<'_> {
    /// The NIC's stamps are not used because no interface is known: the
    /// address is a wildcard and none was named (`hardware.note` is the
    /// library's words for it; the caller may give its own).
    pub fn wildcard(&self) -> bool {
        self.hardware.interface.is_none() && self.hardware.note.is_some()
    }
}

/// A scheduler slice asked for ([`misura_sys::sched::set_slice`]).
#[derive(Clone, Copy, Debug)]
pub struct Slice {
    pub asked_ns: u64,
    /// What the kernel kept (None: no custom slice, before Linux 6.12).
    pub granted_ns: Option<u64>,
}

/// The sockets a reflector serves: raw probes' (one per EtherType, on
/// misura's EtherType and the interface's MAC) or one UDP socket.
enum Opened {
    L2(
        Vec<misura_sys::packet::PacketSocket>,
        u16,
        misura_wire::MacAddr,
    ),
    Udp(misura_sys::udp::UdpTsSocket),
}

/// Where the RX and TX stamps come from, in words.
pub fn source_names(g: &TimestampingGranted) -> (&'static str, &'static str) {
    let rx = if g.hardware_rx {
        "NIC hardware"
    } else if g.software_rx {
        "kernel software"
    } else {
        "user clock"
    };
    let tx = if g.hardware_tx {
        "NIC hardware"
    } else if g.software_tx {
        "kernel software"
    } else {
        "user clock (no follow-up stamps)"
    };
    (rx, tx)
}

/// Runs the reflector until `stop` is set (to a signal's number) or the
/// plan's duration has passed; `ready` hears of it once the socket is open.
pub fn run(
    plan: &ReflectPlan,
    stop: &AtomicUsize,
    ready: &mut dyn FnMut(&Ready<'_>),
) -> Result<Summary, crate::RttError> {
    plan.request.check()?;
    let config = plan.config();
    let req = &plan.request;
    let deadline = req.duration.map(|d| Instant::now() + d);
    let started_at = misura_cli::meta::now_rfc3339();
    if let Some(cpu) = req.cpu {
        misura_sys::sched::pin_to_cpu(cpu)?;
    }
    // Sleeping between requests, the loop asks for a short slice: on a
    // CPU it shares (with the client, or other work), a request's wake-up
    // then preempts what runs there instead of waiting for it to block.
    // Spinning, it holds its CPU anyway.
    let slice = (!req.busy_poll).then(|| Slice {
        asked_ns: SLICE_NS,
        granted_ns: misura_sys::sched::set_slice(SLICE_NS).ok().flatten(),
    });
    let mode = if config.key.is_some() {
        "authenticated"
    } else {
        "unauthenticated"
    };
    let stateful = config.stateful;
    let iface = req.stamping_interface();
    if iface.is_none() && req.timestamps == Timestamps::Hardware {
        return Err(PlanError::HardwareOnWildcard.into());
    }
    // Raw probes may come PTP-wrapped: a NIC that stamps only PTP event
    // messages then stamps those.
    let ptp = matches!(req.listen, Listen::L2 { .. }) && req.frame_format != FrameFormat::Misura;
    let hw = misura_run::stamping::hardware_for(iface.as_deref(), req.timestamps, ptp)?;
    let mut lp = Loop {
        reflector: Reflector::new(config),
        clocks: clock::Clocks::new(hw.phc_index.filter(|_| hw.enabled)),
        io: IoCounters::default(),
        stop,
        deadline,
        busy_poll: req.busy_poll,
        turnaround_nic: misura_stats::Summary::new(),
        turnaround_kernel: misura_stats::Summary::new(),
    };
    let started = Instant::now();
    let mut busy = req.busy_poll.then(misura_run::busy_poll::raw);
    let (opened, listen, granted) = match &req.listen {
        Listen::L2 {
            interface: ifname,
            ethertype,
        } => {
            let types = l2::ethertypes(req.frame_format, *ethertype);
            let (socks, mac, granted) = l2::open(ifname, &types, hw.enabled)?;
            let names: Vec<String> = types
                .iter()
                .map(|&t| match t {
                    misura_wire::ptp::ETHERTYPE_PTP => "PTP-wrapped 0x88F7".to_string(),
                    t => format!("0x{t:04X}"),
                })
                .collect();
            let listen = format!("{ifname} ({mac}, ethertype {})", names.join(" and "));
            (Opened::L2(socks, *ethertype, mac), listen, granted)
        }
        Listen::Udp { ip, port } => {
            let (sock, granted) = udp::open(*ip, *port, req.timestamps, &hw)?;
            busy = udp::wait_mode(&sock, req.busy_poll)?;
            let listen = sock.local_addr().to_string();
            (Opened::Udp(sock), listen, granted)
        }
    };
    ready(&Ready {
        what: match opened {
            Opened::L2(..) => "raw Ethernet",
            Opened::Udp(_) => "STAMP over UDP",
        },
        listen: &listen,
        mode,
        stateful,
        granted: &granted,
        clocks: &lp.clocks,
        hardware: &hw,
        slice,
    });
    let transport = match &opened {
        Opened::L2(socks, ethertype, mac) => {
            l2::run(&mut lp, socks, *ethertype, *mac, granted.hardware_rx);
            "l2"
        }
        Opened::Udp(sock) => {
            udp::run(&mut lp, sock, &granted);
            "udp"
        }
    };
    let (rx, tx) = source_names(&granted);
    let nic = lp.clocks.nic.as_ref();
    let counters = *lp.reflector.counters();
    // A reflector runs until it is stopped: a signal is its normal end.
    let stop_reason = misura_cli::exit::stop_reason(stop.load(Ordering::Relaxed));
    Ok(Summary {
        meta: misura_cli::meta::meta("misura.reflect", started_at),
        complete: true,
        stop_reason,
        host: misura_run::host::fingerprint(misura_report::LoopTuning {
            netns: req.netns.clone(),
            cpu: req.cpu,
            busy_poll: busy,
            ..Default::default()
        }),
        transport: transport.into(),
        listen,
        mode: mode.into(),
        stateful,
        rx_timestamps: rx.into(),
        tx_timestamps: tx.into(),
        clock_synchronized: lp.clocks.system.synchronized,
        duration_s: started.elapsed().as_secs_f64(),
        counters: counters.into(),
        dropped: counters.dropped(),
        io: lp.io,
        interface: hw.interface.clone(),
        hardware_note: hw.note.clone(),
        nic_clock: nic.map(|n| NicClockReport {
            device: n.device.clone(),
            offset_ns: n.offset.map(|o| o.0),
            offset_uncertainty_ns: n.offset.map(|o| o.1),
            disciplined_by: n.disciplined_by.clone(),
            synchronized: n.state.synchronized,
            error_estimate_ns: n.state.uncertainty_ns,
            error: n.error.clone(),
        }),
        turnaround_nic: lp.turnaround_nic.snapshot_if_any().map(Into::into),
        turnaround_kernel: lp.turnaround_kernel.snapshot_if_any().map(Into::into),
        sched_slice_ns: slice.and_then(|s| s.granted_ns),
    })
}

/// A reflector's run as it ended.
#[derive(Debug)]
pub struct Served {
    pub summary: Summary,
    /// The NIC's stamps were not used because no interface is known: the
    /// address is a wildcard and none was named (the summary's
    /// `hardware_note` is the library's words for it; the caller may
    /// give its own).
    pub wildcard: bool,
}

/// `misura reflect`'s method: the request's plan, then the reflector until
/// `stop` is set or the duration has passed; `ready` hears of it once the
/// socket is open.
pub fn serve(
    request: &ReflectRequest,
    stop: &AtomicUsize,
    ready: &mut dyn FnMut(&Ready<'_>),
) -> Result<Served> {
    let summary = run(&request.plan()?, stop, ready)?;
    let wildcard = summary.interface.is_none() && summary.hardware_note.is_some();
    Ok(Served { summary, wildcard })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RttError;
    use misura_cli::keys::KeyError;

    fn request() -> ReflectRequest {
        ReflectRequest {
            listen: Listen::Udp {
                ip: IpAddr::from([127, 0, 0, 1]),
                port: 8620,
            },
            frame_format: FrameFormat::Auto,
            key_file: None,
            stateful: false,
            rate_limit: 10_000,
            max_sources: 4096,
            duration: None,
            cpu: None,
            busy_poll: false,
            timestamps: Timestamps::Kernel,
            interface: None,
            netns: None,
        }
    }

    #[test]
    fn the_key_file_is_read_before_the_bounds_are_checked() {
        let missing = std::env::temp_dir().join(format!("misura-no-key-{}", std::process::id()));
        let r = ReflectRequest {
            key_file: Some(missing.clone()),
            rate_limit: 0,
            ..request()
        };
        match r.plan() {
            Err(RttError::Key(KeyError::Read { path, .. })) => assert_eq!(path, missing),
            e => panic!("{e:?}"),
        }
        let r = ReflectRequest {
            rate_limit: 0,
            ..request()
        };
        assert!(matches!(r.plan(), Err(RttError::Plan(PlanError::NoRate))));
        let plan = request().plan().unwrap();
        assert!(matches!(
            plan.request.listen,
            Listen::Udp { port: 8620, .. }
        ));
        assert!(plan.key.is_none());
    }
}
