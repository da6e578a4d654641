//! The exit class of a benchmark's errors (`misura_cli::exit::Classed`):
//! figures the trials or a service refuse are parameters; the engine's and
//! the one-way measurement's errors are carried whole, with theirs.

use crate::BenchError;
use misura_cli::exit::{Class, Classed};
use std::error::Error;

impl Classed for BenchError {
    fn class(&self) -> Option<Class> {
        match self {
            BenchError::Service { .. }
            | BenchError::Trials(_)
            | BenchError::LinkSpeedUnknown { .. }
            | BenchError::SizeOverMtu { .. }
            | BenchError::Fit(_) => Some(Class::Params),
            BenchError::SamePort { .. }
            | BenchError::Loopback { .. }
            | BenchError::CpuOffline { .. }
            | BenchError::NoMac { .. } => Some(Class::Usage),
            BenchError::Engine(e) => e.class(),
            BenchError::Oneway(e) => e.class(),
            BenchError::EngineClosed | BenchError::NoLoadStream | BenchError::NoFlow => None,
        }
    }

    fn carried(&self) -> Option<&(dyn Error + 'static)> {
        match self {
            BenchError::Engine(e) => Some(e),
            BenchError::Oneway(e) => Some(e),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refused_figures_are_parameters_and_the_engine_keeps_its_class() {
        let trials = misura_measure::load::LoadError::OutOfRange {
            what: "rate",
            value: 0.0,
            min: 1.0,
            max: 2.0,
        };
        assert_eq!(BenchError::Trials(trials).class(), Some(Class::Params));
        let cores = misura_engine::CoresError::OutOfRange { cores: 99, max: 64 };
        let engine = BenchError::Engine(cores.into());
        assert_eq!(engine.class(), Some(Class::Params));
        let rows = misura_cli::outfile::cannot_write(
            "per-frame log",
            std::path::Path::new("/nonexistent/x.csv"),
            std::io::ErrorKind::NotFound.into(),
        );
        let oneway = BenchError::Oneway(rows.into());
        assert_eq!(oneway.class(), Some(Class::Output));
        assert_eq!(BenchError::EngineClosed.class(), None);
        let same = BenchError::SamePort { port: "p1".into() };
        assert_eq!(same.class(), Some(Class::Usage));
        let unknown = BenchError::LinkSpeedUnknown { port: "p2".into() };
        assert_eq!(unknown.class(), Some(Class::Params));
    }
}
