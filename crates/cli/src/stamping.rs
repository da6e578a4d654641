//! `--timestamps kernel|hardware|software|user` of `misura rtt` and
//! `misura reflect`, and `--frame-format` of their raw probes, as flags.
//! What each value does (the kernel's and the NIC's stamps, the NIC's
//! stamping switched on) is `misura_run::stamping`'s, whose `Timestamps`
//! and `FrameFormat` these convert to with `From`.

use clap::ValueEnum;

/// Which clock stamps a UDP socket's datagrams.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum TimestampsFlag {
    /// The kernel's software RX and TX stamps, and the NIC's hardware
    /// stamps too where the interface offers them.
    #[default]
    Kernel,
    /// The NIC's hardware stamps (and the kernel's beside them): fails
    /// when the interface has no hardware timestamping.
    Hardware,
    /// The kernel's software stamps only, never the NIC's.
    Software,
    /// The user clock only: no kernel stamps, no follow-ups.
    User,
}

/// `--frame-format` of raw probes (`rtt --l2`, `reflect --l2`): how they
/// travel, as `misura oneway`'s.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum FrameFormatFlag {
    /// PTP where the interface stamps only PTP event messages in hardware,
    /// misura's own frames otherwise (a reflector answers both, each in
    /// its own format).
    #[default]
    Auto,
    /// misura's probe as the Ethernet payload (`--ethertype`).
    Misura,
    /// The probe after a PTPv2 Sync header, EtherType 0x88F7, so that a
    /// NIC that stamps only PTP event messages stamps it.
    Ptp,
}
