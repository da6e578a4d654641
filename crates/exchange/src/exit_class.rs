//! The exit class of an exchange's errors (`misura_cli::exit::Classed`):
//! a refused plan is a parameter to change (as the binary's flag sentences
//! give it), the NIC's stamps required keep their class, the host's error
//! is carried.

use crate::error::ExchangeError;
use crate::plan::PlanError;
use misura_cli::exit::{Class, Classed};
use std::error::Error;

impl Classed for PlanError {
    /// A period, a timeout or a frame size out of bounds: a parameter.
    fn class(&self) -> Option<Class> {
        Some(Class::Params)
    }
}

impl Classed for ExchangeError {
    /// That of the typed error it carries; a frame not encoded has none.
    fn class(&self) -> Option<Class> {
        match self {
            ExchangeError::Plan(p) => p.class(),
            ExchangeError::Hardware(h) => h.class(),
            ExchangeError::Sys(_) | ExchangeError::Frame(_) => None,
        }
    }

    fn carried(&self) -> Option<&(dyn Error + 'static)> {
        match self {
            ExchangeError::Sys(s) => Some(s),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Knob;
    use misura_measure::time::Span;

    #[test]
    fn a_refused_plan_is_a_parameter_and_the_hosts_error_is_carried() {
        let short = PlanError::TooShort {
            knob: Knob::Period,
            min: Span::from_ns(1_000),
        };
        assert_eq!(ExchangeError::Plan(short).class(), Some(Class::Params));
        let sys = ExchangeError::Sys(misura_sys::SysError::NoSuchInterface { name: "p9".into() });
        assert_eq!(sys.class(), None);
        assert!(sys.carried().is_some());
    }
}
