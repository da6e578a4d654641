//! What a clock measurement's plan refuses, typed: each variant says which
//! knob and which bound, never a flag's name (the binary writes the
//! sentence, `misura clock`'s flags in it).

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
    /// A duration under the method's minimum (`min_ns`).
    #[error("{knob:?} is under {min_ns} ns")]
    TooShort { knob: Knob, min_ns: i64 },
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
    /// `tsc`: a MONOTONIC_RAW run under `min_ns`.
    #[error("a MONOTONIC_RAW run under {min_ns} ns")]
    RawRunTooShort { min_ns: i64 },
    /// `tsc --ntp`: requests closer than `min_ns`.
    #[error("NTP requests closer than {min_ns} ns")]
    NtpIntervalTooShort { min_ns: i64 },
    /// `tsc --ntp`: fewer than two exchanges.
    #[error("fewer than two NTP exchanges")]
    TooFewExchanges,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::SourcesPlan;
    use crate::timer::{TimerPlan, TimerRequest};

    #[test]
    fn plans_refuse_in_the_order_the_flags_were_checked() {
        assert_eq!(SourcesPlan::new(0, 1).unwrap_err(), PlanError::NoReads);
        assert_eq!(
            SourcesPlan::new(1, 1).unwrap_err(),
            PlanError::TooShort {
                knob: Knob::Budget,
                min_ns: 10_000_000
            }
        );
        let timer = |duration_ns, interval_ns, rt_priority| {
            TimerPlan::new(TimerRequest {
                duration_ns,
                interval_ns,
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
                min_ns: 1_000_000
            }
        );
        assert_eq!(
            timer(1_000_000_000, 1, Some(0)).unwrap_err(),
            PlanError::TooShort {
                knob: Knob::Interval,
                min_ns: 1_000
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
            duration_ns: 1_000_000_000,
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
        let plan = |server, d, w, i, c| TscPlan::new(server, d, w, i, c).map(|_| ());
        assert_eq!(plan(None, 1, 0, 1, 0), Err(PlanError::NoWindows));
        assert_eq!(
            plan(None, 1, 1, 1, 0),
            Err(PlanError::RawRunTooShort { min_ns: 10_000_000 })
        );
        let ntp = Some("192.0.2.1");
        assert_eq!(
            plan(ntp, 1, 1, 1, 0),
            Err(PlanError::NtpIntervalTooShort { min_ns: 1_000_000 })
        );
        assert_eq!(
            plan(ntp, 1, 1, 1_000_000, 1),
            Err(PlanError::TooFewExchanges)
        );
        assert!(plan(ntp, 1, 1, 1_000_000, 2).is_ok());
    }
}
