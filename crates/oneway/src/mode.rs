//! What `misura oneway --engine` asks for: the per-frame loop or the frame
//! engine, and engine mode's options (resolved in `loaded`).

use clap::ValueEnum;

/// `misura oneway --engine`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum OnewayEngine {
    /// The loop up to 200 000 frames/s, the frame engine above.
    Auto,
    /// The per-frame loop: every frame windowed and TX-stamped.
    Loop,
    /// Frame engine, sendmmsg.
    Packet,
    /// Frame engine, PACKET_TX_RING.
    Mmap,
    /// Frame engine, AF_XDP.
    Xdp,
}

/// What engine mode needs besides the one-way request.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadOptions {
    pub mode: OnewayEngine,
    pub engine: misura_engine::EngineArgs,
    pub latency_every: Option<u64>,
    /// --cpu: core 0's CPU, the others after it.
    pub cpu: Option<usize>,
}
