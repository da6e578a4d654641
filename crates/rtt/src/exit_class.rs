//! The exit class of an rtt run's errors (`misura_cli::exit::Classed`): a
//! request or a session plan refused (a usage slip or a parameter, as the
//! binary's flag sentences give them); misura-cli's and misura-run's errors
//! keep theirs, the host's is carried.

use crate::error::RttError;
use crate::plan::SessionPlanError;
use crate::request::RequestError;
use misura_cli::exit::{Class, Classed};
use std::error::Error;

impl Classed for RequestError {
    /// A usage slip, whichever (the binary words it with the flags,
    /// `commands/rtt/args.rs`).
    fn class(&self) -> Option<Class> {
        Some(Class::Usage)
    }
}

impl Classed for SessionPlanError {
    /// A timeout or count of none is a usage slip, a bound missed a
    /// parameter.
    fn class(&self) -> Option<Class> {
        use SessionPlanError as E;
        Some(match self {
            E::TimeoutNotPositive | E::NoProbes => Class::Usage,
            E::Period { .. }
            | E::RateNotPositive { .. }
            | E::Interval { .. }
            | E::ResponseSmaller { .. }
            | E::Layout { .. }
            | E::PayloadTooLarge => Class::Params,
        })
    }
}

impl Classed for RttError {
    /// That of the typed error it carries transparently; the others carry
    /// theirs as a source, or have none.
    fn class(&self) -> Option<Class> {
        match self {
            RttError::Target(t) => t.class(),
            RttError::RowLog(w) => w.class(),
            RttError::Key(k) => k.class(),
            RttError::Hardware(h) => h.class(),
            RttError::CpuLoad(t) => t.class(),
            RttError::Request(r) => r.class(),
            RttError::SessionPlan(p) => p.class(),
            RttError::Sys(_)
            | RttError::Plan(_)
            | RttError::Setup { .. }
            | RttError::Build { .. }
            | RttError::ShortFrame { .. }
            | RttError::NoReply { .. } => None,
        }
    }

    fn carried(&self) -> Option<&(dyn Error + 'static)> {
        match self {
            RttError::Sys(s) => Some(s),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use misura_run::stamping::HardwareRequired;

    #[test]
    fn an_rtt_error_has_the_class_of_what_it_carries() {
        let bad = misura_cli::target::split_host_port("h:p", 1).unwrap_err();
        assert_eq!(RttError::Target(bad).class(), Some(Class::Usage));
        let hw = HardwareRequired { why: "no".into() };
        assert_eq!(RttError::Hardware(hw).class(), Some(Class::Params));
        let threads = misura_run::cpuload::TooManyThreads { threads: 9, max: 8 };
        assert_eq!(RttError::CpuLoad(threads).class(), Some(Class::Params));
        let rows = misura_cli::outfile::cannot_write(
            "per-probe log",
            std::path::Path::new("/nonexistent/x.csv"),
            std::io::ErrorKind::NotFound.into(),
        );
        assert_eq!(RttError::RowLog(rows).class(), Some(Class::Output));
        let key = misura_cli::keys::read_key(&Some("/nonexistent/x.key".into())).unwrap_err();
        assert_eq!(RttError::Key(key).class(), Some(Class::Usage));
        use SessionPlanError as P;
        assert_eq!(
            RttError::SessionPlan(P::NoProbes).class(),
            Some(Class::Usage)
        );
        assert_eq!(
            RttError::SessionPlan(P::TimeoutNotPositive).class(),
            Some(Class::Usage)
        );
        assert_eq!(
            RttError::SessionPlan(P::PayloadTooLarge).class(),
            Some(Class::Params)
        );
        let no_target = RttError::Request(RequestError::NoTarget);
        assert_eq!(no_target.class(), Some(Class::Usage));
        let silent = RttError::NoReply {
            target: "t".into(),
            why: crate::NoReplyWhy::PortUnreachable,
        };
        assert_eq!(silent.class(), None);
        // The host's error is the binary's to class: carried, whole.
        let sys = RttError::Sys(misura_sys::SysError::NoSuchInterface {
            name: "nosuch0".into(),
        });
        assert_eq!(sys.class(), None);
        assert!(sys.carried().is_some());
    }
}
