//! Choosing and opening the engine's paths. Receive is always a TPACKET_V3
//! ring: it is the path on which every frame carries a kernel RX stamp at
//! no extra cost (AF_XDP frames have no skb and so no kernel stamp).
//! Transmit is the forced path (`--engine`), or the best one that opens:
//! AF_XDP (xdp; on a NIC only in zero-copy mode), then `PACKET_TX_RING`
//! (mmap) and `sendmmsg` (packet) — these two in the other order on veth,
//! where the ring's frames are copied again on their way. A forced
//! path that cannot open is an error naming why and what to use instead; a
//! best path that cannot open is a note in the result, never a silent
//! fall-back.

use super::rx_clock::RxClock;
use super::streams::MAX_CORES;
use super::tx::{MmsgPath, TxPath, MMSG_BATCH};
use crate::error::{CoresError, EngineError};
use misura_cli::exit::one_line;
use misura_sys::ring::{Fanout, FanoutMode, MmsgTx, RxRing, RxRingConfig, TxRing, TxRingConfig};
use misura_sys::xdp::{XdpConfig, XdpSocket};
use serde::Serialize;

/// Which transmit path to open: a forced one, or the best that opens.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EngineChoice {
    /// XDP first, then the ring and sendmmsg (sendmmsg before the ring on veth).
    Auto,
    Packet,
    Mmap,
    Xdp,
}

/// The transmit path a run used.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EngineKind {
    Packet,
    Mmap,
    Xdp,
}

impl EngineKind {
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Packet => "packet (sendmmsg)",
            EngineKind::Mmap => "mmap (PACKET_TX_RING)",
            EngineKind::Xdp => "xdp (AF_XDP)",
        }
    }
}

/// What to open.
#[derive(Clone, Debug)]
pub struct EngineRequest {
    pub tx: String,
    pub rx: String,
    pub ethertype: u16,
    pub choice: EngineChoice,
    /// Cores to spread over (1..=MAX_CORES).
    pub cores: usize,
    /// Largest frame any trial will send, FCS excluded.
    pub max_frame: usize,
    pub qdisc_bypass: bool,
    /// NIC RX stamps on the ring (the RX port's clock tracked against
    /// system time); kept as kernel stamps, with a note, where the port
    /// cannot give them.
    pub hardware_stamps: bool,
}

/// One core's transmit path and receive ring.
pub struct CoreIo {
    pub tx: TxPath,
    pub rx: RxRing,
}

/// The opened engine.
pub struct Engine {
    pub kind: EngineKind,
    pub cores: Vec<CoreIo>,
    /// Why a better path was not used, or what was changed from the request.
    pub notes: Vec<String>,
    pub qdisc_bypass: bool,
    /// The RX port's PTP clock, when the rings take NIC stamps.
    pub rx_clock: Option<RxClock>,
    /// The nice value each core's thread takes for a trial (0: left as it
    /// was, when the host refused a higher weight).
    pub nice: i32,
}

/// Whether this process may give its engine threads
/// [`ENGINE_NICE`](misura_sys::sched::ENGINE_NICE), tried on a thread of
/// its own, and the note that says what was chosen. On a host with one busy
/// loop per CPU, nice -20 took RFC 2544's 1518-byte NDR through a shaper
/// from 0 of 3 runs found to 3 of 3 (scripts/verdicts.sh, issue 37): the
/// fair scheduler then wakes the sender in time for its slots.
fn engine_nice() -> (i32, String) {
    use misura_sys::sched::{set_nice, ENGINE_NICE};
    let tried = std::thread::spawn(|| set_nice(ENGINE_NICE))
        .join()
        .unwrap_or(Ok(false));
    match tried {
        Ok(true) => (
            ENGINE_NICE,
            format!("engine threads at nice {ENGINE_NICE}, the fair scheduler's highest weight, so that other work on their CPUs delays them less"),
        ),
        Ok(false) => (
            0,
            format!("engine threads at the process's nice value: nice {ENGINE_NICE} needs CAP_SYS_NICE (or `ulimit -e`), and without it other work on the tester's CPUs can make it fall short of the rate"),
        ),
        Err(e) => (0, format!("engine threads at the process's nice value: {e}")),
    }
}

/// Open the engine for `req`.
pub fn open(req: &EngineRequest) -> Result<Engine, EngineError> {
    // A core count the host cannot give is a parameter it cannot run
    // (exit 5), not a failure of the run (issue 29 item 12).
    if req.cores == 0 || req.cores > MAX_CORES {
        return Err(CoresError::OutOfRange {
            cores: req.cores,
            max: MAX_CORES,
        }
        .into());
    }
    let online = misura_sys::sched::online_cpus();
    if req.cores > online {
        return Err(CoresError::OverOnline {
            cores: req.cores,
            online,
        }
        .into());
    }
    let mut notes = Vec::new();
    let (nice, why) = engine_nice();
    notes.push(why);
    let rx_clock = if req.hardware_stamps {
        let ptp = req.ethertype == misura_wire::ptp::ETHERTYPE_PTP;
        match super::rx_clock::open(&req.rx, ptp) {
            Ok(c) => Some(c),
            Err(e) => {
                notes.push(format!(
                    "no NIC RX stamps on the load frames ({}): kernel software stamps used",
                    one_line(&e)
                ));
                None
            }
        }
    } else {
        None
    };
    let req = &EngineRequest {
        hardware_stamps: rx_clock.is_some(),
        ..req.clone()
    };
    if req.cores > 1 {
        let caps = misura_sys::ring::probe(&req.rx);
        let queues = caps.rx_queues.unwrap_or(1);
        if (queues as usize) < req.cores {
            notes.push(format!(
                "{} has {queues} receive queue(s) for {} cores: reception is spread over the cores' rings by the CPU that receives each frame (PACKET_FANOUT_CPU), not by queue",
                req.rx, req.cores
            ));
        }
    }
    // Measured on the lab's veth, 64-byte frames sent and received on one
    // core (scripts/bench-oneway.sh): AF_XDP in copy mode 0.79 M frames/s,
    // sendmmsg 0.58, PACKET_TX_RING 0.51 (its frames are copied again into
    // a new page on their way to the peer, skb_copy_ubufs). On a NIC, AF_XDP
    // is taken first only where its driver binds zero-copy; otherwise the
    // ring's zero-copy frames come first.
    let veth = misura_sys::iface::interface_info(&req.tx)
        .ok()
        .and_then(|i| i.driver)
        .is_some_and(|d| d == "veth");
    let order: &[EngineKind] = match req.choice {
        EngineChoice::Auto if veth => &[EngineKind::Xdp, EngineKind::Packet, EngineKind::Mmap],
        EngineChoice::Auto => &[EngineKind::Xdp, EngineKind::Mmap, EngineKind::Packet],
        EngineChoice::Mmap => &[EngineKind::Mmap],
        EngineChoice::Packet => &[EngineKind::Packet],
        EngineChoice::Xdp => &[EngineKind::Xdp],
    };
    let mut last_err = None;
    for &kind in order {
        // Auto on a NIC takes AF_XDP only in zero-copy mode.
        let zero_copy = (req.choice == EngineChoice::Auto && !veth).then_some(true);
        match open_with(kind, req, zero_copy) {
            Ok(cores) => {
                if let Some(CoreIo {
                    tx: TxPath::Xdp(x), ..
                }) = cores.first()
                {
                    notes.push(if x.mode().zero_copy {
                        "AF_XDP bound in zero-copy mode".to_string()
                    } else {
                        "AF_XDP bound in copy mode: the driver offers no zero-copy, the kernel copies each frame into an skb".to_string()
                    });
                }
                return Ok(Engine {
                    kind,
                    cores,
                    notes,
                    qdisc_bypass: req.qdisc_bypass,
                    rx_clock,
                    nice,
                });
            }
            Err(e) => {
                if req.choice == EngineChoice::Auto {
                    notes.push(format!(
                        "{} could not be used: {}",
                        kind.name(),
                        one_line(&e)
                    ));
                }
                last_err = Some(e);
            }
        }
    }
    let last = Box::new(last_err.unwrap_or(EngineError::NoPathTried));
    Err(EngineError::NoPath {
        forced: (req.choice != EngineChoice::Auto).then_some(req.choice),
        last,
    })
}

fn open_with(
    kind: EngineKind,
    req: &EngineRequest,
    zero_copy: Option<bool>,
) -> Result<Vec<CoreIo>, EngineError> {
    let group = (std::process::id() & 0xFFFF) as u16;
    let mut cores = Vec::with_capacity(req.cores);
    for c in 0..req.cores {
        let tx = match kind {
            EngineKind::Mmap => TxPath::Mmap(TxRing::open(
                &req.tx,
                req.ethertype,
                &TxRingConfig {
                    qdisc_bypass: req.qdisc_bypass,
                    ..TxRingConfig::default()
                },
            )?),
            EngineKind::Packet => TxPath::Packet(MmsgPath::new(MmsgTx::open(
                &req.tx,
                req.ethertype,
                MMSG_BATCH,
                req.max_frame,
                req.qdisc_bypass,
            )?)),
            EngineKind::Xdp => TxPath::Xdp(Box::new(XdpSocket::open(
                &req.tx,
                &XdpConfig {
                    queue: c as u32,
                    zero_copy,
                    ..XdpConfig::default()
                },
            )?)),
        };
        let rx = RxRing::open(
            &req.rx,
            req.ethertype,
            &RxRingConfig {
                hardware_stamps: req.hardware_stamps,
                fanout: (req.cores > 1).then_some(Fanout {
                    group,
                    mode: FanoutMode::Cpu,
                }),
                ..RxRingConfig::default()
            },
        )?;
        cores.push(CoreIo { tx, rx });
    }
    Ok(cores)
}

impl Engine {
    /// The engine as a result names it.
    pub fn facts(&self) -> misura_report::load::EngineFacts {
        let hardware = self
            .cores
            .first()
            .is_some_and(|c| c.rx.timestamping() == misura_sys::ring::StampSource::Hardware);
        misura_report::load::EngineFacts {
            engine: match self.kind {
                EngineKind::Packet => "packet",
                EngineKind::Mmap => "mmap",
                EngineKind::Xdp => "xdp",
            }
            .into(),
            rx_path: "tpacket_v3".into(),
            cores: self.cores.len(),
            qdisc_bypass: self.qdisc_bypass,
            rx_stamps: if hardware {
                "nic_hardware"
            } else {
                "kernel_software"
            }
            .into(),
            tx_time: "user_clock".into(),
            notes: self.notes.clone(),
            rx_clock: self
                .rx_clock
                .as_ref()
                .map(|c| c.facts(misura_sys::clock::realtime(), None)),
        }
    }
}
