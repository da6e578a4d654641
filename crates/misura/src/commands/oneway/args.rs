//! Flags of `misura oneway` and `misura calibrate` (and the frames they send).
//!
//! Clap parses every value once into its type (a malformed one exits 2 with
//! clap's message); [`MeasureArgs::request`] turns the flags into the
//! [`Request`] the measurement works from, and `plan::resolve` checks that
//! against the interfaces and the link.

use crate::shared::common_flags::FrameFormatFlag;
use crate::shared::units::{DurationArg, Ethertype, LinkRate, Load};
use clap::{Args, ValueEnum};
use misura_measure::{Pattern, SizeOrder};
use misura_oneway::mode::{self, OnewayEngine};
use misura_oneway::plan::{Pace, Request};
use misura_oneway::tuning::Tuning;
use misura_oneway::OnewayRequest;
use std::path::PathBuf;

/// Flags shared by every command that sends test frames. The defaults
/// written here (as `--help` shows them) are `Request::new`'s too; a test
/// holds the two together.
#[derive(Args, Debug, Clone)]
pub struct MeasureArgs {
    /// Port that sends the test frames.
    #[arg(long)]
    pub tx: String,
    /// Port that receives them.
    #[arg(long)]
    pub rx: String,
    /// Traffic pattern: periodic, burst:N (N frames back to back each period) or poisson.
    #[arg(long, default_value = "periodic")]
    pub pattern: Pattern,
    /// Sending period, e.g. 500us, 1ms, 0.2ms (one of --period, --rate, --load).
    #[arg(long, value_name = "DURATION", conflicts_with_all = ["rate", "load"])]
    pub period: Option<DurationArg>,
    /// Frames per second (periods per second for bursts).
    #[arg(long, conflicts_with = "load")]
    pub rate: Option<f64>,
    /// Offered load Γ as a share of link capacity: 0.1 or 10%.
    #[arg(long, value_name = "SHARE")]
    pub load: Option<Load>,
    /// Number of frames to measure (default 10000 unless --duration).
    #[arg(long)]
    pub count: Option<u64>,
    /// Measure for this long, e.g. 30s, 5m, 24h (with --count: whichever comes first).
    #[arg(long, value_name = "DURATION")]
    pub duration: Option<DurationArg>,
    /// Payload sizes P in bytes (misura's header included; 40..=MTU), comma separated.
    #[arg(long = "sizes", alias = "size", value_delimiter = ',')]
    pub sizes: Vec<usize>,
    /// Cycle through sizes frame by frame (interleaved) or one block per size (blocks).
    #[arg(long, value_enum, default_value_t = Order::Interleaved)]
    pub order: Order,
    /// A frame not received within this time is lost, e.g. 100ms.
    #[arg(long, value_name = "DURATION", default_value = "100ms")]
    pub timeout: DurationArg,
    /// How late a frame may leave before it is postponed to the start of the
    /// next period (default: until its own period ends, so at most one frame
    /// leaves per period and the schedule never bursts to catch up).
    #[arg(long, value_name = "DURATION")]
    pub late_tolerance: Option<DurationArg>,
    /// Count frames whose latency exceeds this, e.g. 30us.
    #[arg(long, value_name = "DURATION")]
    pub threshold: Option<DurationArg>,
    /// Link rate for the wire time C, e.g. 100M, 1G, 10G (default: read from the RX interface).
    #[arg(long, value_name = "RATE")]
    pub link_speed: Option<LinkRate>,
    /// Every frame carries an 802.1Q tag (adds 4 bytes to the wire time).
    #[arg(long)]
    pub vlan: bool,
    /// Ethertype of the test frames (0x88B5 IEEE local experimental; 0x6006 as the original paper).
    #[arg(long, value_name = "HEX", default_value = "0x88B5")]
    pub ethertype: Ethertype,
    /// Frames sent after enabling timestamping and before measuring.
    #[arg(long, default_value_t = 64)]
    pub warmup: u64,
    /// Pin the measuring loop to this CPU.
    #[arg(long)]
    pub cpu: Option<usize>,
    /// Run the loop with SCHED_FIFO at this priority (1-99).
    #[arg(long, value_parser = clap::value_parser!(i32).range(1..=99))]
    pub rt_priority: Option<i32>,
    /// Do not lock memory (mlockall).
    #[arg(long)]
    pub no_mlock: bool,
    /// Seed for the Poisson pattern.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write one CSV row per frame to this file (its columns: docs/guide/oneway.md).
    #[arg(long, value_name = "FILE.csv")]
    pub frames: Option<PathBuf>,
    /// When the TX and RX ports have different PTP hardware clocks, how to
    /// cross-timestamp them against the system clock: auto takes the best
    /// the driver answers (precise, then extended, then basic PTP_SYS_OFFSET,
    /// then a clock_gettime sandwich); name one to force it.
    #[arg(long, value_enum, default_value_t = PhcCross::Auto)]
    pub phc_cross: PhcCross,
    /// How the probes travel: misura's own frames (--ethertype), or inside
    /// PTPv2 Sync messages (EtherType 0x88F7, payload sizes from 84) for NICs
    /// that stamp only PTP event messages in hardware (82576, 82599, X710:
    /// `ethtool -T` shows ptpv2-event but not all). auto picks PTP exactly then.
    #[arg(long, value_enum, default_value_t = FrameFormatFlag::Auto)]
    pub frame_format: FrameFormatFlag,
    #[command(flatten)]
    pub out: crate::shared::output::OutputArgs,
    #[command(flatten)]
    pub csv: crate::shared::output::CsvArgs,
    #[command(flatten)]
    pub ns: crate::shared::common_flags::NetnsArgs,
}

/// `--phc-cross`: the cross-timestamp method for two PTP clocks.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum PhcCross {
    Auto,
    Precise,
    Extended,
    Basic,
    Sandwich,
}

impl PhcCross {
    /// The methods to try, best first.
    pub fn methods(self) -> Vec<misura_sys::phc_cross::CrossMethod> {
        use misura_sys::phc_cross::CrossMethod as M;
        match self {
            PhcCross::Auto => M::ALL.to_vec(),
            PhcCross::Precise => vec![M::Precise],
            PhcCross::Extended => vec![M::Extended],
            PhcCross::Basic => vec![M::Basic],
            PhcCross::Sandwich => vec![M::UserSandwich],
        }
    }
}

/// `misura oneway --engine`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum EngineMode {
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

impl From<EngineMode> for OnewayEngine {
    fn from(m: EngineMode) -> OnewayEngine {
        match m {
            EngineMode::Auto => OnewayEngine::Auto,
            EngineMode::Loop => OnewayEngine::Loop,
            EngineMode::Packet => OnewayEngine::Packet,
            EngineMode::Mmap => OnewayEngine::Mmap,
            EngineMode::Xdp => OnewayEngine::Xdp,
        }
    }
}

/// `--order`: how a run cycles through its payload sizes.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum Order {
    Interleaved,
    Blocks,
}

impl From<Order> for SizeOrder {
    fn from(o: Order) -> SizeOrder {
        match o {
            Order::Interleaved => SizeOrder::Interleaved,
            Order::Blocks => SizeOrder::Blocks,
        }
    }
}

impl MeasureArgs {
    /// What the flags ask to measure, in numbers. Nothing here can fail:
    /// clap has parsed every value, and the checks that need the
    /// interfaces or the link are `plan::resolve`'s.
    pub fn request(&self) -> Request {
        Request {
            tx: self.tx.clone(),
            rx: self.rx.clone(),
            netns: self.ns.netns.clone(),
            pattern: self.pattern,
            pace: match (&self.period, self.rate, &self.load) {
                (Some(p), _, _) => Pace::Period(p.span()),
                (None, Some(r), _) => Pace::Rate(r),
                (None, None, Some(l)) => Pace::Load(l.share),
                (None, None, None) => Pace::default(),
            },
            count: self.count,
            duration: self.duration.as_ref().map(|d| d.span()),
            sizes: self.sizes.clone(),
            order: self.order.into(),
            timeout: self.timeout.span(),
            late_tolerance: self.late_tolerance.as_ref().map(|t| t.span()),
            threshold: self.threshold.as_ref().map(|t| t.span()),
            link_rate_bps: self.link_speed.as_ref().map(|l| l.bps),
            vlan: self.vlan,
            ethertype: self.ethertype.value,
            warmup: self.warmup,
            seed: self.seed,
            tuning: Tuning {
                cpu: self.cpu,
                rt_priority: self.rt_priority,
                lock_memory: !self.no_mlock,
            },
            frames: self.frames.clone(),
            quiet: self.out.quiet,
            load: None,
            phc_cross: self.phc_cross.methods(),
            frame_format: self.frame_format.into(),
        }
    }
}

#[derive(Args, Debug)]
pub struct OnewayArgs {
    #[command(flatten)]
    pub m: MeasureArgs,
    /// Calibration profile from `misura calibrate`: report SUT latency Msl.
    #[arg(long, value_name = "FILE")]
    pub calibration: Option<PathBuf>,
    /// Use the profile even if it was made on another set-up (warn instead of failing).
    #[arg(long)]
    pub accept_profile_mismatch: bool,
    /// Per-frame loop (loop) or frame engine. auto: the loop up to 200 000
    /// frames/s, the frame engine above (or with --latency-every).
    #[arg(long = "engine", value_enum, default_value_t = EngineMode::Auto)]
    pub engine_mode: EngineMode,
    #[command(flatten)]
    pub engine: crate::shared::engine_flags::EngineFlags,
    /// Engine mode: every N-th frame of the rate is a latency frame, measured
    /// with TX/RX windows and kernel TX stamps (default 1000; 2 to 1000000).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(2..=1_000_000))]
    pub latency_every: Option<u64>,
    #[command(flatten)]
    pub load: crate::shared::common_flags::CpuLoadArgs,
}

impl OnewayArgs {
    /// What the flags ask of the run: the measurement with the engine
    /// mode's options, the profile to read, the busy threads.
    pub fn request(&self) -> OnewayRequest {
        let mut request = self.m.request();
        request.load = Some(mode::LoadOptions {
            mode: self.engine_mode.into(),
            engine: (&self.engine).into(),
            latency_every: self.latency_every,
            cpu: request.tuning.cpu,
        });
        OnewayRequest {
            request,
            calibration: self.calibration.clone(),
            accept_profile_mismatch: self.accept_profile_mismatch,
            cpu_load: (&self.load).into(),
        }
    }
}

#[derive(Args, Debug)]
pub struct CalibrateArgs {
    #[command(flatten)]
    pub m: MeasureArgs,
    /// Where to save the profile (default: the user's data directory).
    #[arg(long, value_name = "FILE")]
    pub profile: Option<PathBuf>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct W {
        #[command(flatten)]
        m: MeasureArgs,
    }

    fn parse(extra: &[&str]) -> Result<MeasureArgs, clap::Error> {
        let argv = ["misura", "--tx", "p1", "--rx", "p2"];
        W::try_parse_from(argv.iter().chain(extra)).map(|w| w.m)
    }

    #[test]
    fn the_flags_defaults_are_the_requests() {
        assert_eq!(parse(&[]).unwrap().request(), Request::new("p1", "p2"));
    }

    #[test]
    fn values_arrive_as_numbers() {
        let r = parse(&[
            "--load",
            "10%",
            "--duration",
            "1.5s",
            "--timeout",
            "50ms",
            "--late-tolerance",
            "10us",
            "--threshold",
            "30us",
            "--link-speed",
            "1G",
            "--ethertype",
            "6006",
            "--pattern",
            "burst:4",
            "--order",
            "blocks",
            "--sizes",
            "46,1500",
            "--no-mlock",
        ])
        .unwrap()
        .request();
        assert_eq!(r.pace, Pace::Load(0.1));
        assert_eq!(r.duration.map(|d| d.as_ns()), Some(1_500_000_000));
        assert_eq!(r.timeout.as_ns(), 50_000_000);
        assert_eq!(r.late_tolerance.map(|t| t.as_ns()), Some(10_000));
        assert_eq!(r.threshold.map(|t| t.as_ns()), Some(30_000));
        assert_eq!(r.link_rate_bps, Some(1_000_000_000));
        assert_eq!(r.ethertype, 0x6006);
        assert_eq!(r.pattern, Pattern::Burst { frames: 4 });
        assert_eq!(r.order, SizeOrder::Blocks);
        assert_eq!(r.sizes, vec![46, 1500]);
        assert!(!r.tuning.lock_memory);
        assert_eq!(
            parse(&["--period", "500us"]).unwrap().request().pace,
            Pace::Period(misura_measure::time::Span::from_ns(500_000))
        );
        assert_eq!(
            parse(&["--rate", "2000"]).unwrap().request().pace,
            Pace::Rate(2000.0)
        );
    }

    #[test]
    fn malformed_values_are_clap_errors_naming_the_fix() {
        for (flag, value, says) in [
            ("--period", "fast", "not a duration"),
            ("--timeout", "3weeks", "unknown time unit"),
            ("--ethertype", "0x0100", "≥ 0x0600"),
            ("--pattern", "bursty", "unknown pattern"),
            ("--order", "random", "interleaved"),
            ("--link-speed", "10X", "unknown rate unit"),
            ("--load", "abc", "not a load"),
        ] {
            let e = parse(&[flag, value]).expect_err(flag);
            assert_eq!(e.exit_code(), 2, "{flag}");
            assert!(e.to_string().contains(says), "{flag}: {e}");
        }
    }

    #[test]
    fn an_out_of_range_value_keeps_its_params_failure() {
        // `main` turns this cause into exit code 5, as before clap parsed it.
        for (flag, value) in [("--load", "150%"), ("--link-speed", "10")] {
            let e = parse(&[flag, value]).expect_err(flag);
            let cause = std::error::Error::source(&e).and_then(|c| c.downcast_ref());
            assert!(
                matches!(cause, Some(crate::shared::exit::Failure::Params(_))),
                "{flag} {value}: {e}"
            );
        }
    }
}
