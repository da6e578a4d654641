//! `misura clock`'s flags: the four subcommands, their long help, the
//! clock names `interference --clock` takes, each subcommand's request
//! and its refusals in the flags' words. The method is `misura-clock`'s.

use crate::shared::exit::Failure;
use crate::shared::units::DurationArg;
use clap::Subcommand;
use misura_clock::{ClockError, InterferenceRequest, Knob, MeasureError, PlanError};
use misura_clock::{SourcesRequest, TimerRequest, TscRequest};
use misura_time::Span;

#[derive(Subcommand, Debug)]
pub enum ClockCommand {
    /// Every usable time source: read cost, resolution, smallest step, monotonicity.
    #[command(long_about = SOURCES_ABOUT)]
    Sources(SourcesArgs),
    /// The interference test of Cena, Cibrario Bertolotti and Valenzano: histogram of the steps between consecutive clock reads.
    #[command(long_about = INTERFERENCE_ABOUT)]
    Interference(InterferenceArgs),
    /// The TSC's frequency and stability, against CLOCK_MONOTONIC_RAW or an NTP server.
    #[command(long_about = TSC_ABOUT)]
    Tsc(TscArgs),
    /// Wake-up latency of periodic absolute sleeps, as cyclictest measures it.
    #[command(long_about = TIMER_ABOUT)]
    Timer(TimerArgs),
}

/// Long help for the subcommand (shown by `--help`).
pub const SOURCES_ABOUT: &str = "\
Every usable time source of this machine, with what it costs to read and how
finely it resolves: CLOCK_MONOTONIC, _RAW, _COARSE, CLOCK_REALTIME, _COARSE,
CLOCK_TAI, CLOCK_BOOTTIME, gettimeofday(), the TSC (RDTSC and RDTSCP, with
the CPU's TSC flags and its rate measured against CLOCK_MONOTONIC_RAW), the
kernel's clocksource, and each NIC hardware clock /dev/ptpN with its interface:
its read cost, its offset and drift against CLOCK_REALTIME (nine rounds of
cross-timestamps 25 ms apart, PTP_SYS_OFFSET_PRECISE/_EXTENDED/PTP_SYS_OFFSET
as the driver answers, fitted to a line), and whether ptp4l or phc2sys run
and name it. A clock that cannot be read is listed with why.

Table 1 of Li, Zhang, Xie and Yang (2006) for today's machine (2011: TSC 37 ns a read, gettimeofday
430 ns). Per source: read cost (batches of 32 back-to-back reads timed with
CLOCK_MONOTONIC_RAW, the empty bracket subtracted; median and p99 of the
per-read cost), resolution (clock_getres), smallest non-zero step between
consecutive reads, reads that returned the same value, and monotonicity
violations (a read lower than the one before). About 2 s at most (--budget).

Examples:
  misura clock sources
  misura clock sources --reads 200000 --json";

#[derive(clap::Args, Debug, Clone)]
pub struct SourcesArgs {
    /// Reads per source (rounded up to whole batches of 32).
    #[arg(long, default_value_t = 1_000_000, value_name = "N")]
    pub reads: u64,
    /// Time allowed for the whole table; each source gets an equal share.
    #[arg(long, default_value = "2s", value_name = "DURATION")]
    pub budget: DurationArg,
    #[command(flatten)]
    pub out: crate::shared::output::OutputArgs,
}

/// Long help for the subcommand (shown by `--help`).
pub const INTERFERENCE_ABOUT: &str = "\
The interference test of Cena, Cibrario Bertolotti and Valenzano: a tight loop reads a clock as fast as it can
for --duration; every non-zero step between consecutive reads goes into a log
histogram (buckets from the resolution up to seconds), and the longest steps
are kept with their offsets from the start. A step of a few tens of ns is the
read itself; anything longer is time the loop did not run: interrupts, the
scheduler, the hypervisor, SMIs. Memory is bounded (no per-read storage).

--load N starts N busy threads for the run, pinned round-robin to all online
CPUs starting with the CPU after the measuring one (so the measuring CPU gets
a load thread last, when N reaches the number of CPUs), and stops them after.
--compare (with --load) runs idle first, then loaded, and shows both side by side.

Examples:
  misura clock interference --duration 5s
  misura clock interference --duration 5s --load 2 --compare --cpu 1
  misura clock interference --clock tsc --json";

#[derive(clap::Args, Debug, Clone)]
pub struct InterferenceArgs {
    /// Length of each run (e.g. 5s, 500ms).
    #[arg(long, default_value = "5s", value_name = "DURATION")]
    pub duration: DurationArg,
    /// Busy threads to run beside the loop (0: idle).
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub load: u32,
    /// Run idle, then with --load N, and show both side by side.
    #[arg(long, requires = "load")]
    pub compare: bool,
    /// The clock to read.
    #[arg(
        long,
        value_enum,
        ignore_case = true,
        default_value = "monotonic",
        value_name = "NAME"
    )]
    pub clock: ClockName,
    /// Pin the reading loop to this CPU.
    #[arg(long, value_name = "N")]
    pub cpu: Option<usize>,
    /// How many of the longest gaps to report.
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub gaps: usize,
    /// Histogram buckets per decade (log scale).
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub bins_per_decade: u32,
    #[command(flatten)]
    pub out: crate::shared::output::OutputArgs,
}

/// The clocks the loop can read: the POSIX clocks by their `<time.h>` names
/// without `CLOCK_` (which may be written too), and the TSC.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClockName {
    #[value(name = "monotonic", alias = "clock_monotonic")]
    Monotonic,
    #[value(name = "monotonic_raw", alias = "clock_monotonic_raw")]
    MonotonicRaw,
    #[value(name = "monotonic_coarse", alias = "clock_monotonic_coarse")]
    MonotonicCoarse,
    #[value(name = "realtime", alias = "clock_realtime")]
    Realtime,
    #[value(name = "realtime_coarse", alias = "clock_realtime_coarse")]
    RealtimeCoarse,
    #[value(name = "tai", alias = "clock_tai")]
    Tai,
    #[value(name = "boottime", alias = "clock_boottime")]
    Boottime,
    /// The CPU's time-stamp counter (x86-64), scaled by its measured rate.
    #[value(name = "tsc")]
    Tsc,
}

impl ClockName {
    /// The POSIX clock, `None` for the TSC.
    pub fn posix(self) -> Option<misura_sys::clocks::PosixClock> {
        let short = match self {
            ClockName::Monotonic => "monotonic",
            ClockName::MonotonicRaw => "monotonic_raw",
            ClockName::MonotonicCoarse => "monotonic_coarse",
            ClockName::Realtime => "realtime",
            ClockName::RealtimeCoarse => "realtime_coarse",
            ClockName::Tai => "tai",
            ClockName::Boottime => "boottime",
            ClockName::Tsc => return None,
        };
        misura_sys::clocks::POSIX_CLOCKS
            .iter()
            .copied()
            .find(|c| c.short == short)
    }
}

/// Long help for the subcommand (shown by `--help`).
pub const TIMER_ABOUT: &str = "\
Wake-up latency of periodic absolute sleeps, measured as cyclictest does:
clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME) to next = start + k·interval,
then latency = wake time − next. A wake-up later than the following target
skips the periods it missed (counted), as cyclictest does. Memory is locked
(mlockall, like cyclictest -m) and, as cyclictest does, /dev/cpu_dma_latency
is held at 0 µs so the CPUs stay out of deep idle states (--allow-deep-idle:
not, like cyclictest --laptop); --rt-priority runs the loop under SCHED_FIFO
(needs CAP_SYS_NICE) and --cpu pins it. Reports min / mean / percentiles / max,
where the worst wake-up happened, and a log histogram. Memory is bounded.

The same measurement with cyclictest, for comparison (scripts/bench-timer.sh):
  cyclictest -m -q -D 10 -i 1000 -p 80 -a 1 -t 1 -h 1000

Examples:
  misura clock timer
  misura clock timer --duration 60s --interval 200us --rt-priority 80 --cpu 1 --json";

#[derive(clap::Args, Debug, Clone)]
pub struct TimerArgs {
    /// Length of the run (e.g. 10s, 1m).
    #[arg(long, default_value = "10s", value_name = "DURATION")]
    pub duration: DurationArg,
    /// Period of the wake-ups (e.g. 1ms, 200us).
    #[arg(long, default_value = "1ms", value_name = "DURATION")]
    pub interval: DurationArg,
    /// Run the loop under SCHED_FIFO at this priority (1..=99); needs CAP_SYS_NICE.
    #[arg(long, value_name = "P")]
    pub rt_priority: Option<i32>,
    /// Pin the loop to this CPU.
    #[arg(long, value_name = "N")]
    pub cpu: Option<usize>,
    /// Do not hold /dev/cpu_dma_latency at 0 µs during the run (cyclictest --laptop).
    #[arg(long)]
    pub allow_deep_idle: bool,
    /// Histogram buckets per decade (log scale).
    #[arg(long, default_value_t = 5, value_name = "N")]
    pub bins_per_decade: u32,
    #[command(flatten)]
    pub out: crate::shared::output::OutputArgs,
}

/// Long help for the subcommand (shown by `--help`).
pub const TSC_ABOUT: &str = "Measure the frequency of the CPU's time-stamp counter (TSC).

Against CLOCK_MONOTONIC_RAW (default): misura reads the TSC, then the raw clock, then \
the TSC again, many times; the raw reading lies inside the TSC bracket, so each read \
ties the two clocks together within half a bracket. The tightest bracket of each short \
time bin is kept. Reported: ΔTSC/ΔRAW over the run with a bound from the bracket widths, \
the least-squares slope of TSC against RAW with its 95 % interval, the frequency in each \
of --windows windows and their spread (stability, ppm), the kernel's own calibration \
where it says (and how far the measurement is from it), and the TSC flags with what \
they mean.

With --ntp SERVER (Li, Zhang, Xie and Yang, 2006): an SNTP request about every --interval; \
the TSC is read at send (s) and at receive (r), the server's Receive Timestamp (ts) \
is taken from the reply. Exchanges with the minimum round trip have the same one-way \
delay, so f = (s_j − s_i)/(ts_j − ts_i) for two of them far apart. misura keeps the \
fastest exchange of each window and picks the pair with the tightest bound: each \
one-way delay is known to within RTT/2, plus the server's stated precision. The result \
is compared with the MONOTONIC_RAW estimate over the same period. The NTP figure is \
against the server's clock: a server whose clock is off in rate shifts it by as much.

Examples:
  misura clock tsc --duration 30s --windows 10
  misura clock tsc --ntp pool.ntp.org --interval 1s --count 300 --export-json tsc.json
  misura clock tsc --netns misura-h1 --ntp 198.18.0.2 --interval 200ms --count 40";

#[derive(clap::Args, Debug, Clone)]
pub struct TscArgs {
    /// Length of a MONOTONIC_RAW run (e.g. 2s, 1m). Ignored with --ntp,
    /// whose length is --count × --interval.
    #[arg(long, default_value = "10s")]
    pub duration: DurationArg,
    /// Number of windows for the stability figure (and, with --ntp, for
    /// picking the fastest exchange of each).
    #[arg(long, default_value_t = 10)]
    pub windows: u32,
    /// NTP server (name or address, optional :PORT, default 123): estimate
    /// the frequency by the method of Li, Zhang, Xie and Yang (2006).
    #[arg(long, value_name = "SERVER[:PORT]")]
    pub ntp: Option<String>,
    /// Time between SNTP requests. Public servers ask for no more than one
    /// request every few seconds; use a server of your own for short intervals.
    #[arg(long, default_value = "1s")]
    pub interval: DurationArg,
    /// Number of SNTP requests.
    #[arg(long, default_value_t = 60)]
    pub count: u64,
    #[command(flatten)]
    pub out: crate::shared::output::OutputArgs,
    #[command(flatten)]
    pub ns: crate::shared::common_flags::NetnsArgs,
}

impl SourcesArgs {
    /// The table's request.
    pub fn request(&self) -> SourcesRequest {
        SourcesRequest {
            reads: self.reads,
            budget: Span::from_ns(self.budget.ns),
        }
    }
}

impl InterferenceArgs {
    /// The loop's request.
    pub fn request(&self) -> InterferenceRequest {
        InterferenceRequest {
            duration: Span::from_ns(self.duration.ns),
            clock: self.clock.posix(),
            load: self.load,
            compare: self.compare,
            cpu: self.cpu,
            gaps: self.gaps,
            bins_per_decade: self.bins_per_decade,
        }
    }
}

impl TimerArgs {
    /// The wake-ups' request.
    pub fn request(&self) -> TimerRequest {
        TimerRequest {
            duration: Span::from_ns(self.duration.ns),
            interval: Span::from_ns(self.interval.ns),
            rt_priority: self.rt_priority,
            cpu: self.cpu,
            limit_idle: !self.allow_deep_idle,
            bins_per_decade: self.bins_per_decade,
        }
    }
}

impl TscArgs {
    /// The TSC run's request.
    pub fn request(&self) -> TscRequest {
        TscRequest {
            ntp: self.ntp.clone(),
            duration: Span::from_ns(self.duration.ns),
            windows: self.windows,
            interval: Span::from_ns(self.interval.ns),
            count: self.count,
            netns: self.ns.netns.clone(),
        }
    }
}

impl ClockCommand {
    /// A subcommand's error: a refused plan in the words of its flags (each
    /// duration knob's flag and value), the host's error as it is (its
    /// sentence and class are its own), the others with the class they
    /// carry (`misura_clock`'s `exit_class.rs`).
    pub fn refusal(&self, e: ClockError) -> anyhow::Error {
        let (duration, interval) = (Knob::Duration, Knob::Interval);
        let d = match self {
            ClockCommand::Sources(a) => vec![(Knob::Budget, "--budget", &a.budget)],
            ClockCommand::Interference(a) => vec![(duration, "--duration", &a.duration)],
            ClockCommand::Timer(TimerArgs {
                duration: d,
                interval: i,
                ..
            })
            | ClockCommand::Tsc(TscArgs {
                duration: d,
                interval: i,
                ..
            }) => vec![(duration, "--duration", d), (interval, "--interval", i)],
        };
        match e {
            ClockError::Plan(p) => flag_sentence(p, &d),
            ClockError::Tsc(p) => tsc_sentence(p, &d),
            ClockError::Measure(MeasureError::Sys(s)) => s.into(),
            e => e.into(),
        }
    }
}

/// What a plan refused, in the flags' words; `durations` names the flag and
/// its value for each duration knob of the command. Every refusal is a
/// [`Failure`] but an unmeasurable TSC rate, which was always an error.
fn flag_sentence(e: PlanError, durations: &[(Knob, &str, &DurationArg)]) -> anyhow::Error {
    let usage = |m: String| Failure::Usage(m).into();
    let params = |m: String| Failure::Params(m).into();
    let arg = |k: Knob| durations.iter().find(|d| d.0 == k).map(|d| d.2);
    match e {
        PlanError::NoReads => params("--reads 0: give at least one read per source".into()),
        PlanError::TooShort { knob, min } => match durations.iter().find(|d| d.0 == knob) {
            Some((_, flag, value)) => value.too_short(flag, min).into(),
            None => params(e.to_string()),
        },
        PlanError::IntervalOverDuration => match (arg(Knob::Interval), arg(Knob::Duration)) {
            (Some(i), Some(d)) => params(format!("--interval {i} is longer than --duration {d}")),
            _ => params(e.to_string()),
        },
        PlanError::RtPriority { asked } => usage(format!(
            "--rt-priority {asked}: SCHED_FIFO priorities are 1..=99"
        )),
        PlanError::NoTsc => params("--clock tsc: this build has no TSC (x86-64 only)".into()),
        PlanError::TscRateUnknown => anyhow::anyhow!("{e}"),
        PlanError::TooMuchLoad { asked, max } => params(format!(
            "--load {asked} is more than this host can run usefully: at most {max} busy threads (4 per online CPU); more only queue behind each other"
        )),
        PlanError::CompareWithoutLoad => usage("--compare needs --load N with N ≥ 1".into()),
        e => tsc_sentence(e, durations),
    }
}

/// `clock tsc`'s refusals.
fn tsc_sentence(e: PlanError, durations: &[(Knob, &str, &DurationArg)]) -> anyhow::Error {
    let usage = |m: String| Failure::Usage(m).into();
    let arg = |k: Knob| durations.iter().find(|d| d.0 == k).map(|d| d.2);
    match (&e, arg(Knob::Duration), arg(Knob::Interval)) {
        (PlanError::NoTsc, ..) => {
            Failure::Params("this build has no TSC to read (not x86-64)".into()).into()
        }
        (PlanError::NoWindows, ..) => usage("--windows must be at least 1".into()),
        (PlanError::RawRunTooShort { .. }, Some(d), _) => {
            usage(format!("--duration {d} is too short: give at least 10ms"))
        }
        (PlanError::NtpIntervalTooShort { .. }, _, Some(i)) => {
            usage(format!("--interval {i} is below 1 ms"))
        }
        (PlanError::TooFewExchanges, ..) => {
            usage("--count must be at least 2: the method needs two exchanges".into())
        }
        _ => Failure::Usage(e.to_string()).into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum;

    #[test]
    fn clock_names_are_the_posix_short_names_or_tsc() {
        for c in ClockName::value_variants() {
            let name = c.to_possible_value().unwrap().get_name().to_string();
            match c.posix() {
                Some(p) => assert_eq!(p.short, name),
                None => assert_eq!(name, "tsc"),
            }
        }
        // As `misura_sys::clocks::by_name` took them: any case, with CLOCK_.
        assert_eq!(
            ClockName::from_str("CLOCK_MONOTONIC_RAW", true),
            Ok(ClockName::MonotonicRaw)
        );
        assert_eq!(ClockName::from_str("Tai", true), Ok(ClockName::Tai));
        assert!(ClockName::from_str("sundial", true).is_err());
    }
}
