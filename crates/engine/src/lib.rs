//! The frame engine: load at line rate on ordinary Linux, every frame
//! sequenced, counted and kernel-RX-stamped, with an optional latency
//! stream of fully windowed frames inside it. Shared by `misura oneway`
//! (engine mode), `misura rfc2544` and `misura y1564`.
//!
//! The kernel-facing rings are `misura_sys::ring` (TPACKET_V3 receive ring,
//! PACKET_TX_RING, `sendmmsg`) and `misura_sys::xdp` (AF_XDP transmit); the
//! open-loop schedule, the per-stream accounting and every decision about a
//! result are `misura_measure::load`'s. What lives here is the loop that
//! moves frames between them, one per core, and the choice of path:
//!
//! * [`open`]: detect what the kernel and the interfaces offer, open the
//!   forced or the best path, and say why a better one was not used;
//! * [`tx`]: one transmit interface over the three paths;
//! * [`core`]: one core's loop for one trial;
//! * [`trial`]: a trial over all cores, merged exactly;
//! * [`rx_clock`]: the receive ring's hardware branch (NIC RX stamps,
//!   the RX port's PTP clock tracked against system time).
//!
//! It knows no command line: the binary's flags become an [`EngineArgs`],
//! an [`EngineChoice`] and a [`FrameFormat`].
#![forbid(unsafe_code)]

pub mod core;
pub mod error;
mod exit_class;
pub mod flows;
pub mod format;
pub mod open;
pub mod rx_clock;
pub mod streams;
pub mod trial;
pub mod tx;

pub use error::{CoresError, EngineError, HookError};
pub use flows::Flow;
pub use format::FrameFormat;
pub use open::{EngineChoice, EngineRequest};
pub use streams::MAX_FLOWS;
pub use trial::{run_trial, LatencyHook, TrialRun, TrialSpec};

/// How many cores run the engine, and how its frames leave.
#[derive(Debug, Clone, PartialEq)]
pub struct EngineArgs {
    /// Cores (1-16), each with its own transmit path and receive ring;
    /// their counts merge exactly.
    pub cores: u64,
    /// Send with PACKET_QDISC_BYPASS: frames skip the TX port's qdisc
    /// (and taps such as tcpdump).
    pub qdisc_bypass: bool,
}

impl Default for EngineArgs {
    fn default() -> EngineArgs {
        EngineArgs {
            cores: 1,
            qdisc_bypass: false,
        }
    }
}

/// The frames a paced RFC 2544 or Y.1564 trial may send late, back to back,
/// after its loop was descheduled, rather than skip them: below 8 000
/// frames/s that is longer than the 1 ms bound. On the 2-vCPU lab, kworkers
/// held a CPU for 4-11 ms now and then; with the 1 ms bound alone a 305
/// frames/s step lost a frame to each and was reported tester-limited. The
/// price is that up to eight frames can leave back to back after such a
/// pause, a burst far smaller than the committed burst sizes policers are
/// configured with.
pub const CATCH_UP_FRAMES: u64 = 8;

/// How long a device benchmark's trial keeps receiving after its last send
/// (RFC 2544 §23 waits 2 s for stragglers before the next trial; a frame
/// later than this is lost for the tester too).
pub const DRAIN: misura_measure::time::Span = misura_measure::time::Span::from_ns(250_000_000);
