//! The exit class of a clock measurement's errors
//! (`misura_cli::exit::Classed`): a refused plan is a usage slip or a
//! parameter to change (as the binary's flag sentences give them), an NTP
//! server that names no address a parameter, the host's error carried.

use crate::error::{ClockError, MeasureError, PlanError};
use misura_cli::exit::{Class, Classed};
use std::error::Error;

impl Classed for PlanError {
    /// A bound missed is a parameter, a value no run can take a usage
    /// slip; an unmeasurable TSC rate has none (a failed run).
    fn class(&self) -> Option<Class> {
        use PlanError as E;
        match self {
            E::NoReads
            | E::TooShort { .. }
            | E::IntervalOverDuration
            | E::NoTsc
            | E::TooMuchLoad { .. } => Some(Class::Params),
            E::RtPriority { .. }
            | E::CompareWithoutLoad
            | E::NoWindows
            | E::RawRunTooShort { .. }
            | E::NtpIntervalTooShort { .. }
            | E::TooFewExchanges => Some(Class::Usage),
            E::TscRateUnknown => None,
        }
    }
}

impl Classed for MeasureError {
    /// An NTP server that gives no address is a parameter; the host's
    /// error has the class it carries; the others none (a failed run).
    fn class(&self) -> Option<Class> {
        match self {
            MeasureError::NtpNoAddress { .. } | MeasureError::NtpUnresolved { .. } => {
                Some(Class::Params)
            }
            _ => None,
        }
    }

    fn carried(&self) -> Option<&(dyn Error + 'static)> {
        match self {
            MeasureError::Sys(s) => Some(s),
            _ => None,
        }
    }
}

impl Classed for ClockError {
    /// That of the error it carries; `clock tsc`'s refusals, but a build
    /// without a TSC (a parameter), are all usage slips.
    fn class(&self) -> Option<Class> {
        match self {
            ClockError::Plan(p) => p.class(),
            ClockError::Tsc(PlanError::NoTsc) => Some(Class::Params),
            ClockError::Tsc(_) => Some(Class::Usage),
            ClockError::Measure(m) => m.class(),
        }
    }

    fn carried(&self) -> Option<&(dyn Error + 'static)> {
        match self {
            ClockError::Measure(m) => m.carried(),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use misura_measure::time::Span;

    #[test]
    fn refusals_are_classed_as_the_flag_sentences_were() {
        let short = PlanError::TooShort {
            knob: crate::Knob::Budget,
            min: Span::from_ns(1),
        };
        assert_eq!(ClockError::Plan(short).class(), Some(Class::Params));
        assert_eq!(
            ClockError::Plan(PlanError::RtPriority { asked: 0 }).class(),
            Some(Class::Usage)
        );
        assert_eq!(ClockError::Plan(PlanError::TscRateUnknown).class(), None);
        assert_eq!(
            ClockError::Tsc(PlanError::NoTsc).class(),
            Some(Class::Params)
        );
        assert_eq!(
            ClockError::Tsc(PlanError::NoWindows).class(),
            Some(Class::Usage)
        );
        let ntp = MeasureError::NtpNoAddress { server: "x".into() };
        assert_eq!(ClockError::Measure(ntp).class(), Some(Class::Params));
    }
}
