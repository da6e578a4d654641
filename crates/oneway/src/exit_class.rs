//! The exit class of a one-way run's errors (`misura_cli::exit::Classed`):
//! a request or a loop refused (a usage slip or a parameter), a profile
//! that cannot be written (output) or used (profile); the host's error and
//! the engine's carry their own.

use crate::error::{LoopError, OnewayError, ProfileError, RequestError};
use misura_cli::exit::{Class, Classed};
use std::error::Error;

impl Classed for RequestError {
    /// As the binary words it: a flag's value it cannot take is a usage
    /// slip, a bound of the link, the ports or the sizes a parameter.
    fn class(&self) -> Option<Class> {
        use RequestError as E;
        Some(match self {
            E::TimeoutNotPositive | E::OnePort { .. } | E::NoFrames => Class::Usage,
            E::PtpPayloadTooSmall { .. }
            | E::BelowHeader { .. }
            | E::OverMtu { .. }
            | E::TooFewSizes { .. }
            | E::NoLinkSpeed { .. }
            | E::RateNotPositive { .. }
            | E::PeriodTooShort
            | E::PeriodTooLong { .. }
            | E::OverLink { .. } => Class::Params,
        })
    }
}

impl Classed for LoopError {
    fn class(&self) -> Option<Class> {
        Some(match self {
            LoopError::TooFast { .. } => Class::Params,
            LoopError::LatencyEvery => Class::Usage,
        })
    }
}

impl Classed for ProfileError {
    fn class(&self) -> Option<Class> {
        Some(if self.is_output() {
            Class::Output
        } else {
            Class::Profile
        })
    }
}

impl Classed for OnewayError {
    fn class(&self) -> Option<Class> {
        match self {
            OnewayError::RowLog(w) => w.class(),
            OnewayError::Hardware(h) => h.class(),
            OnewayError::CpuLoad(t) => t.class(),
            OnewayError::Loop(l) => l.class(),
            OnewayError::Profile(p) => p.class(),
            OnewayError::Request(r) => r.class(),
            OnewayError::Engine(e) => e.class(),
            // A step's host error is its source, the next in the chain.
            OnewayError::Sys(_)
            | OnewayError::Plan(_)
            | OnewayError::Step { .. }
            | OnewayError::Frame { .. }
            | OnewayError::Thread(_)
            | OnewayError::AnalysisPanicked => None,
        }
    }

    fn carried(&self) -> Option<&(dyn Error + 'static)> {
        match self {
            OnewayError::Sys(s) => Some(s),
            OnewayError::Engine(e) => Some(e),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use misura_run::stamping::HardwareRequired;

    #[test]
    fn a_oneway_error_has_the_class_of_what_it_carries() {
        let rows = misura_cli::outfile::cannot_write(
            "per-frame log",
            std::path::Path::new("/nonexistent/x.csv"),
            std::io::ErrorKind::NotFound.into(),
        );
        assert_eq!(OnewayError::RowLog(rows).class(), Some(Class::Output));
        let stamps = OnewayError::Hardware(HardwareRequired { why: "no".into() });
        assert_eq!(stamps.class(), Some(Class::Params));
        let fast = LoopError::TooFast {
            rate_fps: 1e7,
            max_fps: 1e6,
            forced: true,
        };
        assert_eq!(OnewayError::Loop(fast).class(), Some(Class::Params));
        assert_eq!(LoopError::LatencyEvery.class(), Some(Class::Usage));
        let path = std::path::PathBuf::from("/p.json");
        let save = ProfileError::Save {
            path: path.clone(),
            error: std::io::ErrorKind::PermissionDenied.into(),
        };
        assert_eq!(OnewayError::Profile(save).class(), Some(Class::Output));
        let other = ProfileError::NotProfile { path };
        assert_eq!(other.class(), Some(Class::Profile));
        let cores = misura_engine::CoresError::OverOnline {
            cores: 9,
            online: 2,
        };
        let engine = OnewayError::Engine(cores.into());
        assert_eq!(engine.class(), Some(Class::Params));
        assert_eq!(OnewayError::AnalysisPanicked.class(), None);
    }

    /// The classes the binary's flag sentences give them
    /// (`shared/oneway_words.rs`).
    #[test]
    fn a_refused_request_is_a_usage_slip_or_a_parameter() {
        use RequestError as E;
        let cases = [
            (E::TimeoutNotPositive, Class::Usage),
            (E::OnePort { port: "p1".into() }, Class::Usage),
            (E::NoFrames, Class::Usage),
            (E::PtpPayloadTooSmall { size: 50, min: 84 }, Class::Params),
            (E::TooFewSizes { got: 2 }, Class::Params),
            (E::NoLinkSpeed { rx: "p2".into() }, Class::Params),
            (E::RateNotPositive { rate: 0.0 }, Class::Params),
            (E::BelowHeader { size: 10 }, Class::Params),
            (E::PeriodTooShort, Class::Params),
        ];
        for (e, class) in cases {
            assert_eq!(OnewayError::Request(e.clone()).class(), Some(class), "{e}");
        }
    }
}
