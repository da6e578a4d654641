//! What a clock measurement's plan refuses, typed: each variant says which
//! knob and which bound, never a flag's name (the binary writes the
//! sentence, `misura clock`'s flags in it).

use misura_measure::time::Span;

/// A duration knob of a plan, for [`PlanError::TooShort`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Knob {
    /// The length of a run.
    Duration,
    /// The period of the timer's wake-ups.
    Interval,
    /// The time allowed for the whole sources table.
    Budget,
}

/// Why a plan cannot run.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum PlanError {
    /// `sources`: zero reads per source.
    #[error("no reads per source")]
    NoReads,
    /// A duration under the method's minimum (`min`).
    #[error("{knob:?} is under {} ns", min.as_ns())]
    TooShort { knob: Knob, min: Span },
    /// `timer`: the period is longer than the run.
    #[error("the interval is longer than the run")]
    IntervalOverDuration,
    /// `timer`: a SCHED_FIFO priority outside 1..=99.
    #[error("SCHED_FIFO priority {asked} is outside 1..=99")]
    RtPriority { asked: i32 },
    /// The TSC was asked for and this build has none (not x86-64).
    #[error("this build has no TSC")]
    NoTsc,
    /// `interference --clock tsc`: CLOCK_MONOTONIC_RAW did not advance, so
    /// the TSC's rate is unknown.
    #[error("cannot measure the TSC rate: CLOCK_MONOTONIC_RAW did not advance")]
    TscRateUnknown,
    /// `interference`: more busy threads than the host can run usefully.
    #[error("{asked} busy threads is over the limit of {max}")]
    TooMuchLoad { asked: u32, max: u32 },
    /// `interference`: an idle-versus-loaded comparison without load.
    #[error("a comparison needs load")]
    CompareWithoutLoad,
    /// `tsc`: zero windows.
    #[error("no windows")]
    NoWindows,
    /// `tsc`: a MONOTONIC_RAW run under `min`.
    #[error("a MONOTONIC_RAW run under {} ns", min.as_ns())]
    RawRunTooShort { min: Span },
    /// `tsc --ntp`: requests closer than `min`.
    #[error("NTP requests closer than {} ns", min.as_ns())]
    NtpIntervalTooShort { min: Span },
    /// `tsc --ntp`: fewer than two exchanges.
    #[error("fewer than two NTP exchanges")]
    TooFewExchanges,
}

/// Why a measurement that had a valid plan could not run, typed. The
/// binary gives each its exit class: `Sys` by the host error it carries
/// (a capability missing, an interface), `NtpServer` as a parameter to
/// change, the others as a failed run.
#[derive(Debug, thiserror::Error)]
pub enum MeasureError {
    /// The host refused what the plan needs (pinning to a CPU, a SCHED_FIFO
    /// priority, an absolute sleep).
    #[error(transparent)]
    Sys(#[from] misura_sys::SysError),
    /// The NTP server's name gives no address to send to.
    #[error("NTP server `{server}` resolves to no address")]
    NtpNoAddress { server: String },
    /// The NTP server's name cannot be resolved.
    #[error("cannot resolve NTP server `{server}` ({why}): give an IP address or a resolvable host name")]
    NtpUnresolved { server: String, why: String },
    /// An SNTP request could not be written (never, with the header-sized
    /// buffer the client uses).
    #[error(transparent)]
    Wire(#[from] misura_wire::WireError),
    /// A socket operation towards the NTP server failed (`what` says which;
    /// the message carries the system's error, as one line).
    #[error("{what}: {error}")]
    Socket { what: String, error: std::io::Error },
}

impl MeasureError {
    /// A socket error, `what` naming the operation and its peer.
    pub(crate) fn socket(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> MeasureError {
        let what = what.into();
        move |error| MeasureError::Socket { what, error }
    }
}

/// Why one `misura clock` subcommand did not give its report: its plan
/// refused (`clock tsc`'s apart, worded its own way), or its measurement
/// failed.
#[derive(Debug, thiserror::Error)]
pub enum ClockError {
    /// `sources`, `interference` or `timer` refused its request.
    #[error(transparent)]
    Plan(PlanError),
    /// `tsc` refused its request.
    #[error(transparent)]
    Tsc(PlanError),
    /// The measurement failed.
    #[error(transparent)]
    Measure(MeasureError),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::SourcesPlan;
    use crate::timer::{TimerPlan, TimerRequest};

    #[test]
    fn plans_refuse_in_the_order_the_flags_were_checked() {
        assert_eq!(
            SourcesPlan::new(0, Span::from_ns(1)).unwrap_err(),
            PlanError::NoReads
        );
        assert_eq!(
            SourcesPlan::new(1, Span::from_ns(1)).unwrap_err(),
            PlanError::TooShort {
                knob: Knob::Budget,
                min: Span::from_ns(10_000_000)
            }
        );
        let timer = |d, i, rt_priority| {
            TimerPlan::new(TimerRequest {
                duration: Span::from_ns(d),
                interval: Span::from_ns(i),
                rt_priority,
                cpu: None,
                limit_idle: true,
                bins_per_decade: 5,
            })
            .map(|_| ())
        };
        assert_eq!(
            timer(1, 1, Some(0)).unwrap_err(),
            PlanError::TooShort {
                knob: Knob::Duration,
                min: Span::from_ns(1_000_000)
            }
        );
        assert_eq!(
            timer(1_000_000_000, 1, Some(0)).unwrap_err(),
            PlanError::TooShort {
                knob: Knob::Interval,
                min: Span::from_ns(1_000)
            }
        );
        assert_eq!(
            timer(1_000_000, 2_000_000, Some(0)).unwrap_err(),
            PlanError::IntervalOverDuration
        );
        assert_eq!(
            timer(1_000_000_000, 1_000_000, Some(100)).unwrap_err(),
            PlanError::RtPriority { asked: 100 }
        );
        assert!(timer(1_000_000_000, 1_000_000, Some(99)).is_ok());
    }

    #[test]
    fn interference_refuses_a_comparison_without_load_and_too_much_load() {
        use crate::interference::{InterferencePlan, InterferenceRequest};
        let req = |load, compare| InterferenceRequest {
            duration: Span::from_ns(1_000_000_000),
            clock: misura_sys::clocks::POSIX_CLOCKS.first().copied(),
            load,
            compare,
            cpu: None,
            gaps: 10,
            bins_per_decade: 3,
        };
        let check = |r| InterferencePlan::new(&r).map(|_| ());
        assert_eq!(check(req(0, true)), Err(PlanError::CompareWithoutLoad));
        let max = misura_run::cpuload::max_busy_threads();
        assert_eq!(
            check(req(max + 1, false)),
            Err(PlanError::TooMuchLoad {
                asked: max + 1,
                max
            })
        );
        assert!(check(req(1, true)).is_ok());
    }

    #[test]
    fn a_tsc_plan_needs_windows_and_two_exchanges() {
        use crate::tsc::TscPlan;
        if !misura_sys::tsc::AVAILABLE {
            return;
        }
        let plan = |server, d, w, i, c| {
            TscPlan::new(server, Span::from_ns(d), w, Span::from_ns(i), c).map(|_| ())
        };
        assert_eq!(plan(None, 1, 0, 1, 0), Err(PlanError::NoWindows));
        assert_eq!(
            plan(None, 1, 1, 1, 0),
            Err(PlanError::RawRunTooShort {
                min: Span::from_ns(10_000_000)
            })
        );
        let ntp = Some("192.0.2.1");
        assert_eq!(
            plan(ntp, 1, 1, 1, 0),
            Err(PlanError::NtpIntervalTooShort {
                min: Span::from_ns(1_000_000)
            })
        );
        assert_eq!(
            plan(ntp, 1, 1, 1_000_000, 1),
            Err(PlanError::TooFewExchanges)
        );
        assert!(plan(ntp, 1, 1, 1_000_000, 2).is_ok());
    }
}
