//! What `misura oneway --engine` asks for: the per-frame loop or the frame
//! engine, and engine mode's options (resolved in `loaded`).

/// Which sender measures: the per-frame loop, or the frame engine on one
/// of its transmit paths (`Auto`: by the rate, in `loaded`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum OnewayEngine {
    Auto,
    /// Every frame windowed and TX-stamped.
    Loop,
    Packet,
    Mmap,
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
