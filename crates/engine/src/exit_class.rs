//! The exit class of the engine's errors (`misura_cli::exit::Classed`): a
//! core count the host cannot run is a parameter; the host's error, the
//! latency hook's and the last path's carry their own.

use crate::error::{CoresError, EngineError};
use misura_cli::exit::{Class, Classed};
use std::error::Error;

impl Classed for CoresError {
    fn class(&self) -> Option<Class> {
        Some(Class::Params)
    }
}

impl Classed for EngineError {
    fn class(&self) -> Option<Class> {
        match self {
            EngineError::Cores(c) => c.class(),
            // No path opened: the class of the last one's error.
            EngineError::NoPath { last, .. } => last.class(),
            EngineError::Sys(_)
            | EngineError::Latency(_)
            | EngineError::NoPathTried
            | EngineError::Flow { .. }
            | EngineError::PtpFrameTooSmall { .. }
            | EngineError::Rate { .. }
            | EngineError::Frame(_)
            | EngineError::NoHardwareRx { .. }
            | EngineError::HardwareRx { .. }
            | EngineError::Panicked => None,
        }
    }

    fn carried(&self) -> Option<&(dyn Error + 'static)> {
        match self {
            EngineError::Sys(s) => Some(s),
            EngineError::Latency(b) => Some(b.as_ref()),
            EngineError::NoPath { last, .. } => Some(last.as_ref()),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_core_count_is_a_parameter_and_a_path_has_its_last_errors_class() {
        let cores = EngineError::from(CoresError::OutOfRange { cores: 99, max: 64 });
        assert_eq!(cores.class(), Some(Class::Params));
        let last = EngineError::NoPath {
            forced: None,
            last: Box::new(cores),
        };
        assert_eq!(last.class(), Some(Class::Params));
        // The host's error is the binary's to class: carried, whole.
        let sys = EngineError::Sys(misura_sys::SysError::NoSuchInterface {
            name: "nosuch0".into(),
        });
        assert_eq!(sys.class(), None);
        assert!(sys.carried().is_some());
        assert_eq!(EngineError::Panicked.class(), None);
    }
}
