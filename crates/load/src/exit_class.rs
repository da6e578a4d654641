//! The exit class of a `misura load` run's errors
//! (`misura_cli::exit::Classed`): the plan's and the probes' plan's
//! refusals, misura-cli's address or key file, in theirs; the probes'
//! own error is carried, boxed.

use crate::error::{LoadError, PlanError, ProbePlanError};
use misura_cli::exit::{Class, Classed};
use std::error::Error;

impl Classed for PlanError {
    /// That of the typed error it carries; the plan's own refusals have
    /// none.
    fn class(&self) -> Option<Class> {
        match self {
            PlanError::UdpRate(r) => r.class(),
            PlanError::CpuLoad(t) => t.class(),
            PlanError::Refusal(r) => Some(r.class().into()),
            PlanError::LoadedPhase { .. }
            | PlanError::IdlePhase { .. }
            | PlanError::Streams { .. }
            | PlanError::NoLoad
            | PlanError::FewIdleProbes { .. }
            | PlanError::ServerUrl { .. }
            | PlanError::Iperf3NoLoad
            | PlanError::Flow { .. }
            | PlanError::Transactions { .. } => None,
        }
    }
}

impl Classed for ProbePlanError {
    /// A timeout of none is a usage slip, any other refusal a parameter.
    fn class(&self) -> Option<Class> {
        Some(match self.error {
            misura_rtt::plan::SessionPlanError::TimeoutNotPositive => Class::Usage,
            _ => Class::Params,
        })
    }
}

impl Classed for LoadError {
    fn class(&self) -> Option<Class> {
        match self {
            LoadError::Target(t) => t.class(),
            LoadError::Key(k) => k.class(),
            LoadError::Plan(p) => p.class(),
            LoadError::ProbePlan(p) => p.class(),
            LoadError::Probe(_)
            | LoadError::ServerMissing { .. }
            | LoadError::ReflectorMissing { .. }
            | LoadError::Panicked { .. } => None,
        }
    }

    /// The probes' error, whole: the caller's probe classes it by its own
    /// type.
    fn carried(&self) -> Option<&(dyn Error + 'static)> {
        match self {
            LoadError::Probe(p) => Some(p.as_ref()),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use misura_rtt::plan::SessionPlanError;

    #[test]
    fn a_load_error_has_the_class_of_what_it_carries() {
        let rate = misura_cli::units::link_rate("1k").unwrap_err();
        let rate = LoadError::Plan(PlanError::UdpRate(rate));
        assert_eq!(rate.class(), Some(Class::Params));
        let threads = misura_run::cpuload::TooManyThreads { threads: 9, max: 8 };
        let threads = LoadError::Plan(PlanError::CpuLoad(threads));
        assert_eq!(threads.class(), Some(Class::Params));
        let refusal = misura_throughput::error::Refusal::ConnectNeedsTcp;
        let refusal = LoadError::Plan(PlanError::Refusal(refusal));
        assert_eq!(refusal.class(), Some(Class::Usage));
        assert_eq!(LoadError::Plan(PlanError::NoLoad).class(), None);
        let target = misura_cli::target::resolve(":862", 862).unwrap_err();
        assert_eq!(LoadError::Target(target).class(), Some(Class::Usage));
        let plan = |error| {
            LoadError::ProbePlan(ProbePlanError {
                period: "1ns".parse().unwrap(),
                error,
            })
        };
        assert_eq!(
            plan(SessionPlanError::TimeoutNotPositive).class(),
            Some(Class::Usage)
        );
        // Any other refusal is a parameter here, none probes too (a usage
        // slip in rtt's own `SessionPlanError` class).
        assert_eq!(
            plan(SessionPlanError::NoProbes).class(),
            Some(Class::Params)
        );
        let probe = LoadError::Probe(Box::new(LoadError::Panicked { what: "probe" }));
        assert_eq!(probe.class(), None);
        assert!(probe.carried().is_some());
    }
}
