//! How a run spaced and sized its frames, as its result records it: the
//! traffic pattern, the order of the payload sizes and the link the wire
//! time was computed for. The report's own copies of `measure`'s types,
//! converted with `From`, so that a change inside the method cannot change
//! the JSON.

use serde::{Deserialize, Serialize};

/// The traffic pattern.
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Pattern {
    /// One frame every period.
    Periodic,
    /// `frames` back to back at the start of every period.
    Burst { frames: u32 },
    /// Exponential gaps with the period as their mean.
    Poisson,
}

impl From<misura_measure::Pattern> for Pattern {
    fn from(p: misura_measure::Pattern) -> Pattern {
        match p {
            misura_measure::Pattern::Periodic => Pattern::Periodic,
            misura_measure::Pattern::Burst { frames } => Pattern::Burst { frames },
            misura_measure::Pattern::Poisson => Pattern::Poisson,
        }
    }
}

/// The pattern a result records, as the method's input again (what it
/// means for the frames per period).
impl From<Pattern> for misura_measure::Pattern {
    fn from(p: Pattern) -> misura_measure::Pattern {
        match p {
            Pattern::Periodic => misura_measure::Pattern::Periodic,
            Pattern::Burst { frames } => misura_measure::Pattern::Burst { frames },
            Pattern::Poisson => misura_measure::Pattern::Poisson,
        }
    }
}

/// The order in which a run cycles through its payload sizes.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SizeOrder {
    /// Size 0, 1, 2, …, 0, 1, 2, … frame by frame.
    Interleaved,
    /// All frames of size 0, then all of size 1, …
    Blocks,
}

impl From<misura_measure::SizeOrder> for SizeOrder {
    fn from(o: misura_measure::SizeOrder) -> SizeOrder {
        match o {
            misura_measure::SizeOrder::Interleaved => SizeOrder::Interleaved,
            misura_measure::SizeOrder::Blocks => SizeOrder::Blocks,
        }
    }
}

/// The order a result records, as the method's input again.
impl From<SizeOrder> for misura_measure::SizeOrder {
    fn from(o: SizeOrder) -> misura_measure::SizeOrder {
        match o {
            SizeOrder::Interleaved => misura_measure::SizeOrder::Interleaved,
            SizeOrder::Blocks => misura_measure::SizeOrder::Blocks,
        }
    }
}

/// A link of a given rate, with or without an 802.1Q tag on every frame:
/// what the wire time `C` of each frame was computed for.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkModel {
    /// Line rate in bit/s (10 Mb/s … 400 Gb/s).
    pub rate_bps: u64,
    /// Whether every frame carries a 4-byte 802.1Q tag.
    pub vlan: bool,
}

// The link a result or profile records, and back as the method's input
// again (its frame lengths and wire times).
same_fields!(LinkModel both misura_measure::LinkModel { rate_bps, vlan });
