//! The one check of a period's bounds: [`Period::within`]. Each command
//! keeps its period within its own [`PeriodBounds`] (a schedule's 1 µs,
//! irtt's 15 s, an hour between probes); an error says which bound, with
//! the bound itself, and the caller words it with its flag.

use crate::{Period, Span};

/// The shortest and the longest period a command accepts (both included).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct PeriodBounds {
    pub min: Span,
    pub max: Span,
}

/// An hour between probes is already no measurement; beyond it a run
/// would only wait.
pub const HOUR: Span = Span::from_ns(3_600_000_000_000);

/// A period outside its bounds.
#[derive(Copy, Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PeriodError {
    #[error("a period of {} ns is shorter than the shortest allowed, {} ns", period.as_ns(), min.as_ns())]
    TooShort { period: Span, min: Span },
    #[error("a period of {} ns is longer than the longest allowed, {} ns", period.as_ns(), max.as_ns())]
    TooLong { period: Span, max: Span },
}

impl Period {
    /// `span` as a period within `bounds`: zero and negative periods are
    /// too short whatever the bound (a minimum under 1 ns counts as 1 ns).
    pub fn within(span: Span, bounds: PeriodBounds) -> Result<Period, PeriodError> {
        let ns = span.as_ns();
        let min = bounds.min.as_ns().max(1);
        match Period::new(ns) {
            _ if ns < min => Err(PeriodError::TooShort {
                period: Span::from_ns(ns),
                min: Span::from_ns(min),
            }),
            _ if ns > bounds.max.as_ns() => Err(PeriodError::TooLong {
                period: Span::from_ns(ns),
                max: bounds.max,
            }),
            Some(p) => Ok(p),
            None => Err(PeriodError::TooShort {
                period: Span::from_ns(ns),
                min: Span::from_ns(min),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_checked_once_with_the_bound_named() {
        let b = PeriodBounds {
            min: Span::from_ns(1_000),
            max: Span::from_ns(10_000),
        };
        assert_eq!(
            Period::within(Span::from_ns(1_000), b).unwrap().as_ns(),
            1_000
        );
        assert_eq!(
            Period::within(Span::from_ns(10_000), b).unwrap().as_ns(),
            10_000
        );
        assert_eq!(
            Period::within(Span::from_ns(999), b),
            Err(PeriodError::TooShort {
                period: Span::from_ns(999),
                min: Span::from_ns(1_000)
            })
        );
        assert_eq!(
            Period::within(Span::from_ns(10_001), b),
            Err(PeriodError::TooLong {
                period: Span::from_ns(10_001),
                max: Span::from_ns(10_000)
            })
        );
        let any = PeriodBounds {
            min: Span::ZERO,
            max: Span::MAX,
        };
        for ns in [0, -5] {
            assert!(matches!(
                Period::within(Span::from_ns(ns), any),
                Err(PeriodError::TooShort { min, .. }) if min.as_ns() == 1
            ));
        }
    }
}
