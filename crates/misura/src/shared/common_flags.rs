//! The flags several commands share, as clap groups flattened into each
//! command's flags: the output flags (acted on by `shared::output`),
//! `--cpu-load`, `--netns`, `--timestamps` and `--frame-format` of the raw
//! probes. The libraries take their plain values (`misura_run`'s
//! `CpuLoad`, `Timestamps`, `FrameFormat`; the namespace's name), made
//! from these here with `From`.

use clap::ValueEnum;
use misura_run::cpuload::CpuLoad;
use misura_run::stamping::{FrameFormat, Timestamps};
use std::path::PathBuf;

/// Output flags every measuring command has.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct OutputArgs {
    /// Print the result as JSON on stdout instead of text.
    #[arg(long)]
    pub json: bool,
    /// Also write the JSON result to FILE (checked writable before measuring).
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<PathBuf>,
    /// No progress or interval lines on stderr.
    #[arg(long, short)]
    pub quiet: bool,
}

/// The CSV export, for the commands whose result is a table.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct CsvArgs {
    /// Also write the CSV summary to FILE (checked writable before measuring).
    #[arg(long, value_name = "FILE")]
    pub export_csv: Option<PathBuf>,
}

/// `--cpu-load N`, for the commands that can measure under added load.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct CpuLoadArgs {
    /// Run N busy threads during the measurement, pinned round-robin to the
    /// CPUs after --cpu (the measuring CPU gets one last): RTT against CPU
    /// load (seed 003, Fig. 6). The result's host.load records the load.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub cpu_load: u32,
}

/// `--netns`, for every command that can run inside a network namespace.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct NetnsArgs {
    /// Run inside this network namespace (e.g. one `misura lab up` made).
    #[arg(long, value_name = "NS")]
    pub netns: Option<String>,
}

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

/// `--frame-format`: how misura's frames travel, for every command that
/// sends them (`oneway`, `calibrate`, `rfc2544`, `y1564`, and the raw
/// probes of `rtt --l2` and `reflect --l2`); each flag's help says what
/// `auto` weighs for its command.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum FrameFormatFlag {
    /// PTP where the RX port stamps only PTP event messages in hardware
    /// (and the frames can carry the envelope), misura's own frames
    /// otherwise.
    #[default]
    Auto,
    /// misura's frames as the Ethernet payload under --ethertype (NIC RX
    /// stamps only on ports that stamp every frame).
    Misura,
    /// misura's frames after a PTPv2 Sync header (EtherType 0x88F7,
    /// domain 127), so that a NIC that stamps only PTP event messages
    /// stamps them: payloads of 84 bytes or more.
    Ptp,
}

impl From<&CpuLoadArgs> for CpuLoad {
    fn from(a: &CpuLoadArgs) -> CpuLoad {
        CpuLoad {
            threads: a.cpu_load,
        }
    }
}

impl From<TimestampsFlag> for Timestamps {
    fn from(f: TimestampsFlag) -> Timestamps {
        match f {
            TimestampsFlag::Kernel => Timestamps::Kernel,
            TimestampsFlag::Hardware => Timestamps::Hardware,
            TimestampsFlag::Software => Timestamps::Software,
            TimestampsFlag::User => Timestamps::User,
        }
    }
}

impl From<FrameFormatFlag> for FrameFormat {
    fn from(f: FrameFormatFlag) -> FrameFormat {
        match f {
            FrameFormatFlag::Auto => FrameFormat::Auto,
            FrameFormatFlag::Misura => FrameFormat::Misura,
            FrameFormatFlag::Ptp => FrameFormat::Ptp,
        }
    }
}
