//! What one session is asked ([`RttRequest`], plain values): where the
//! reflector is and how to reach it, the plan's input, how the client runs
//! and what it prints. The command line's flags become one in the binary
//! (`commands/rtt/args.rs`); `misura load` builds one per phase. A request
//! that cannot run is refused with a typed [`RequestError`] that names no
//! flag.

use crate::plan::PlanInput;
use misura_run::cpuload::CpuLoad;
use misura_run::stamping::{FrameFormat, Timestamps};
use misura_wire::MacAddr;
use std::path::PathBuf;

/// The STAMP port.
pub const DEFAULT_PORT: u16 = 862;
/// The EtherType of misura's raw probes.
pub const DEFAULT_ETHERTYPE: u16 = 0x88B5;

/// The reflector of raw probes: its MAC address, or an `irtt server`
/// (answered by the binary's irtt client, not by this session).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Peer {
    Mac(MacAddr),
    Irtt,
}

impl Peer {
    pub fn mac(self) -> Option<MacAddr> {
        match self {
            Peer::Mac(m) => Some(m),
            Peer::Irtt => None,
        }
    }
}

/// One session, as asked.
#[derive(Debug, Clone)]
pub struct RttRequest {
    /// The reflector: HOST or HOST:PORT; none with raw probes.
    pub target: Option<String>,
    /// The reflector's UDP port when `target` names none.
    pub port: u16,
    /// Raw Ethernet probes (on `interface`, to `peer`) instead of UDP.
    pub l2: bool,
    pub interface: Option<String>,
    pub peer: Option<Peer>,
    /// An irtt server's HMAC-MD5 key (for the irtt client).
    pub irtt_hmac: Option<String>,
    /// EtherType of raw probes.
    pub ethertype: u16,
    pub frame_format: FrameFormat,
    /// The plan's part: pace, count, sizes, key, timeout.
    pub plan: PlanInput,
    /// The clock offset (reflector − client, ns) given, not estimated.
    pub clock_offset_ns: Option<f64>,
    /// The link rate for the ideal RTT, bit/s; none: the interface's.
    pub link_speed_bps: Option<u64>,
    /// Pin the client to this CPU.
    pub cpu: Option<usize>,
    /// Spin on the socket instead of sleeping.
    pub busy_poll: bool,
    pub timestamps: Timestamps,
    /// Busy threads beside the session.
    pub load: CpuLoad,
    /// The per-probe log (CSV).
    pub frames: Option<PathBuf>,
    /// No progress and no interval lines.
    pub quiet: bool,
    /// The result goes out as JSON (no progress line).
    pub json: bool,
    /// The network namespace it runs in (recorded in the result).
    pub netns: Option<String>,
}

impl Default for RttRequest {
    /// `misura rtt`'s defaults, with no reflector.
    fn default() -> RttRequest {
        RttRequest {
            target: None,
            port: DEFAULT_PORT,
            l2: false,
            interface: None,
            peer: None,
            irtt_hmac: None,
            ethertype: DEFAULT_ETHERTYPE,
            frame_format: FrameFormat::Auto,
            plan: PlanInput::default(),
            clock_offset_ns: None,
            link_speed_bps: None,
            cpu: None,
            busy_poll: false,
            timestamps: Timestamps::Kernel,
            load: CpuLoad::default(),
            frames: None,
            quiet: false,
            json: false,
            netns: None,
        }
    }
}

/// Why a request cannot run as a STAMP session, before its plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RequestError {
    #[error("an irtt server is probed by the irtt client, not by a STAMP session")]
    IrttPeer,
    #[error("a reflector HOST and raw probes were both asked; give one")]
    TargetWithRawProbes,
    #[error("PTP-wrapped probes are for raw probes; STAMP over UDP has no PTP form")]
    PtpOverUdp,
    #[error(
        "the user clock's stamps are for STAMP over UDP; raw probes always take kernel stamps"
    )]
    UserStampsOnRawProbes,
    #[error("raw probes need the reflector's MAC address")]
    NoPeerMac,
    #[error("no reflector was given")]
    NoTarget,
}

impl RttRequest {
    /// The checks a session makes before its plan: what the transport
    /// asked cannot be, together.
    pub fn check(&self) -> Result<(), RequestError> {
        if self.peer == Some(Peer::Irtt) && !self.l2 {
            return Err(RequestError::IrttPeer);
        }
        if self.l2 && self.target.is_some() {
            return Err(RequestError::TargetWithRawProbes);
        }
        if !self.l2 && self.frame_format == FrameFormat::Ptp {
            return Err(RequestError::PtpOverUdp);
        }
        Ok(())
    }
}
