//! `misura rfc2544` flags.

use crate::shared::engine_flags::EnginePorts;
use crate::shared::units::{DurationArg, LinkRate, Load};
use clap::{Args, ValueEnum};
use misura_bench::rfc2544::request::Request;
use misura_bench::rfc2544::{Tests, Trials};
use misura_bench::BenchError;
use misura_time::Span;
use std::path::PathBuf;

/// One of the four tests.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, ValueEnum)]
pub enum Test {
    /// §26.1: the highest rate without loss (NDR) and with at most --pdr loss (PDR).
    Throughput,
    /// §26.2: latency of tagged frames at the throughput rate.
    Latency,
    /// §26.3: frame loss rate from 100 % of the link down in 10 % steps.
    Loss,
    /// §26.4: the longest burst at line rate without loss (RFC 9004).
    B2b,
}

#[derive(Args, Debug)]
#[command(after_help = "\
Examples:
  misura lab up --topology switch --shape 100M      # an SUT with a known limit
  misura rfc2544 --netns misura-tester --tx p1 --rx p2 --link-speed 1G \\
      --sizes 64,512,1518 --trial 10s --short-trial 1s --latency-trial 10s --b2b-trials 5
  misura rfc2544 ... --tests throughput --sizes imix

RFC 2544 asks for 60 s trials (--trial), 120 s latency trials and 50 back-to-back
trials per size: the defaults, which make a full run take hours (the first example
takes minutes). Rates above what the tester itself can send are reported as the
tester's limit, never as SUT loss; a figure that rests on it is INCONCLUSIVE (exit 8).")]
pub struct Rfc2544Args {
    /// Frame sizes on the wire in bytes, FCS included (64 to 9018), comma
    /// separated, or `imix` (64:570:1518 frames 7:4:1).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "64,128,256,512,1024,1280,1518"
    )]
    pub sizes: Vec<String>,
    /// Tests to run, comma separated.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "throughput,latency,loss,b2b"
    )]
    pub tests: Vec<Test>,
    #[command(flatten)]
    pub trial: crate::shared::engine_flags::TrialArgs,
    /// Length of the search's short trials, which bracket the rate first.
    #[arg(long, value_name = "DURATION", default_value = "1s")]
    pub short_trial: DurationArg,
    /// The search stops when its pass/fail bounds are this close (relative).
    #[arg(long, value_name = "SHARE", default_value = "1%")]
    pub resolution: Load,
    /// Loss ratio the partial drop rate (PDR) may have.
    #[arg(long, value_name = "SHARE", default_value = "0.5%")]
    pub pdr: Load,
    /// Length of the latency trial at the throughput rate; RFC 2544 asks 120 s.
    #[arg(long, value_name = "DURATION", default_value = "120s")]
    pub latency_trial: DurationArg,
    /// Back-to-back trials per size (RFC 2544: 50).
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub b2b_trials: u32,
    /// Longest burst tried, as time at the burst rate (RFC 2544: at least 2 s).
    #[arg(long, value_name = "DURATION", default_value = "2s")]
    pub b2b_max_burst: DurationArg,
    /// Search trials per size at most.
    #[arg(long, default_value_t = 40, value_parser = clap::value_parser!(u32).range(2..=1000))]
    pub max_trials: u32,
    /// Link rate for the line rate, e.g. 1G (default: read from the RX port).
    #[arg(long, value_name = "RATE")]
    pub link_speed: Option<LinkRate>,
    /// Calibration profile from `misura calibrate`: latency reports the SUT latency Msl.
    #[arg(long, value_name = "FILE")]
    pub calibration: Option<PathBuf>,
    /// Use the profile even if it was made on another set-up.
    #[arg(long)]
    pub accept_profile_mismatch: bool,
    #[command(flatten)]
    pub p: EnginePorts,
    #[command(flatten)]
    pub out: crate::shared::output::OutputArgs,
    #[command(flatten)]
    pub ns: crate::shared::common_flags::NetnsArgs,
}

impl Rfc2544Args {
    /// The run these flags ask, checked as far as the flags alone can be
    /// (the sizes' syntax first, then the durations), a refusal in the
    /// flags' words.
    pub fn request(&self) -> Result<Request, crate::shared::exit::Failure> {
        let sizes = super::sizes::parse(&self.sizes)?;
        let Durations {
            trial,
            short,
            latency_trial,
            b2b_max_burst,
        } = self.durations()?;
        Ok(Request {
            ports: self.p.ports(),
            netns: self.ns.netns.clone(),
            sizes,
            tests: Tests {
                throughput: self.tests.contains(&Test::Throughput),
                latency: self.tests.contains(&Test::Latency),
                loss: self.tests.contains(&Test::Loss),
                b2b: self.tests.contains(&Test::B2b),
            },
            link_speed_bps: self.link_speed.as_ref().map(|l| l.bps),
            trials: Trials {
                trial,
                short,
                resolution: self.resolution.share,
                pdr: self.pdr.share,
                max_trials: self.max_trials,
                latency_trial,
                b2b_trials: self.b2b_trials,
                b2b_max_burst,
            },
            calibration: self.calibration.clone(),
            accept_profile_mismatch: self.accept_profile_mismatch,
        })
    }

    /// A run's error, its typed refusals in the flags' words.
    pub fn refusal(&self, e: BenchError) -> anyhow::Error {
        match e {
            BenchError::LinkSpeedUnknown { port } => crate::shared::exit::Failure::Params(format!(
                "cannot read the link speed of {port} (the driver does not report it): give it with --link-speed, e.g. --link-speed 1G"
            ))
            .into(),
            BenchError::SizeOverMtu {
                size,
                frame,
                max,
                mtu,
            } => super::sizes::over_mtu(&size, frame, max, mtu).into(),
            e => crate::shared::engine_flags::port_refusal(e),
        }
    }

    /// The trial lengths and the longest back-to-back burst, every
    /// duration checked against its bounds.
    pub fn durations(&self) -> Result<Durations, crate::shared::exit::Failure> {
        let trial = self.trial.span()?;
        let short = self
            .short_trial
            .at_least("--short-trial", Span::from_millis(10))?;
        for (flag, d) in [
            ("--short-trial", &self.short_trial),
            ("--latency-trial", &self.latency_trial),
            ("--b2b-max-burst", &self.b2b_max_burst),
        ] {
            at_most(flag, d)?;
        }
        let latency_trial = self
            .latency_trial
            .at_least("--latency-trial", Span::from_millis(100))?;
        let b2b_max_burst = self
            .b2b_max_burst
            .at_least("--b2b-max-burst", Span::from_ns(1_000))?;
        // A resolution finer than a millionth asks for more trials than any
        // run can make (and would print with hundreds of digits); coarser
        // than a half is no search at all.
        for (flag, share) in [
            ("--resolution", self.resolution.share),
            ("--pdr", self.pdr.share),
        ] {
            if !(MIN_SHARE..=MAX_SHARE).contains(&share) {
                let shown = if (1e-6..=10.0).contains(&share) {
                    format!("{}%", share * 100.0)
                } else {
                    format!("{share:.1e}")
                };
                return Err(crate::shared::exit::Failure::Usage(format!(
                    "{flag} {shown} is out of range: use 0.0001% to 50% (e.g. 1% or 0.01)"
                )));
            }
        }
        if short > trial {
            return Err(crate::shared::exit::Failure::Usage(format!(
                "--short-trial {} is longer than --trial {}: short trials bracket the rate before full-length ones",
                self.short_trial, self.trial.trial
            )));
        }
        Ok(Durations {
            trial,
            short,
            latency_trial,
            b2b_max_burst,
        })
    }
}

/// The run's durations, checked.
pub struct Durations {
    /// A full-length trial.
    pub trial: Span,
    /// A short trial of the search.
    pub short: Span,
    /// The latency trial.
    pub latency_trial: Span,
    /// The longest back-to-back burst.
    pub b2b_max_burst: Span,
}

/// Finest --resolution and --pdr accepted (a millionth).
pub const MIN_SHARE: f64 = 1e-6;
/// Coarsest --resolution and --pdr accepted.
pub const MAX_SHARE: f64 = 0.5;

/// Longest trial, step or burst accepted: a day (RFC 2544 asks 60 s; a
/// longer trial only delays the result).
pub const MAX_TRIAL: i64 = 86_400_000_000_000;

/// Refuse a duration over [`MAX_TRIAL`], naming the flag and the bound.
pub fn at_most(flag: &str, d: &DurationArg) -> Result<i64, crate::shared::exit::Failure> {
    if d.ns > MAX_TRIAL {
        return Err(crate::shared::exit::Failure::Usage(format!(
            "{flag} {d} is too long: at most 24h"
        )));
    }
    Ok(d.ns)
}
