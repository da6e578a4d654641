//! Exit codes (`misura_cli::exit`'s classes) and the one place an error
//! chain becomes one: the binary's, as only the binary exits. It knows
//! every library's typed error that carries a class of its own (the
//! host's, the lab's, a required NIC stamp; misura-cli's target, key file,
//! unwritable file and link rate, which say theirs),
//! and looks inside the libraries' error enums that carry one of those
//! transparently (the chain walk does not see through them).

use misura_bench::BenchError;
pub use misura_cli::exit::*;
use misura_cli::keys::KeyError;
use misura_cli::outfile::CannotWrite;
use misura_cli::target::TargetError;
use misura_cli::units::RateError;
use misura_engine::{CoresError, EngineError};
use misura_lab::LabError;
use misura_load::{LoadError, ProbePlanError};
use misura_oneway::error::{LoopError, OnewayError, ProfileError};
use misura_rtt::RttError;
use misura_run::cpuload::TooManyThreads;
use misura_run::stamping::HardwareRequired;
use misura_sys::SysError;
use misura_throughput::error::{Iperf3PeerError, ThroughputError};
use std::error::Error;

/// The exit code for an error chain: the first classifiable cause wins.
pub fn code_for(err: &anyhow::Error) -> i32 {
    err.chain().find_map(class_of).unwrap_or(ERROR)
}

/// The exit class of one error of a chain, if it has one.
fn class_of(cause: &(dyn Error + 'static)) -> Option<i32> {
    if let Some(f) = cause.downcast_ref::<Failure>() {
        return Some(f.code());
    }
    if let Some(e) = cause.downcast_ref::<TargetError>() {
        return Some(e.class());
    }
    if let Some(e) = cause.downcast_ref::<KeyError>() {
        return Some(e.class());
    }
    if let Some(e) = cause.downcast_ref::<CannotWrite>() {
        return Some(e.class());
    }
    if let Some(e) = cause.downcast_ref::<RateError>() {
        return Some(e.class());
    }
    if let Some(s) = cause.downcast_ref::<SysError>() {
        return Some(match s {
            SysError::NeedCapability { .. } => PRIVILEGE,
            SysError::NoSuchInterface { .. }
            | SysError::InterfaceDown { .. }
            | SysError::NoSuchNetns { .. } => INTERFACE,
            _ => ERROR,
        });
    }
    if cause.downcast_ref::<HardwareRequired>().is_some()
        || cause.downcast_ref::<TooManyThreads>().is_some()
        || cause.downcast_ref::<CoresError>().is_some()
    {
        return Some(PARAMS);
    }
    if let Some(e) = cause.downcast_ref::<LoopError>() {
        return Some(match e {
            LoopError::TooFast { .. } => PARAMS,
            LoopError::LatencyEvery => USAGE,
        });
    }
    if let Some(e) = cause.downcast_ref::<ProfileError>() {
        return Some(if e.is_output() { OUTPUT } else { PROFILE });
    }
    if let Some(e) = cause.downcast_ref::<ProbePlanError>() {
        return Some(match e.error {
            misura_rtt::plan::SessionPlanError::TimeoutNotPositive => USAGE,
            _ => PARAMS,
        });
    }
    if let Some(l) = cause.downcast_ref::<LabError>() {
        return Some(match l {
            LabError::NotPermitted => PRIVILEGE,
            LabError::BadPrefix { .. } => USAGE,
            _ => ERROR,
        });
    }
    if let Some(e) = cause.downcast_ref::<RttError>() {
        return rtt_class(e);
    }
    if let Some(e) = cause.downcast_ref::<LoadError>() {
        return match e {
            LoadError::Target(t) => class_of(t),
            LoadError::Key(k) => class_of(k),
            LoadError::Probe(p) => walk(p.as_ref()),
            LoadError::Plan(misura_load::PlanError::UdpRate(r)) => class_of(r),
            LoadError::Plan(misura_load::PlanError::CpuLoad(t)) => class_of(t),
            LoadError::Plan(misura_load::PlanError::Refusal(r)) => {
                Some(super::throughput_words::class(r))
            }
            LoadError::ProbePlan(p) => class_of(p),
            LoadError::Plan(_)
            | LoadError::ServerMissing { .. }
            | LoadError::ReflectorMissing { .. }
            | LoadError::Panicked { .. } => None,
        };
    }
    if let Some(e) = cause.downcast_ref::<BenchError>() {
        return match e {
            BenchError::Service { .. } | BenchError::Trials(_) => Some(PARAMS),
            BenchError::Engine(e) => walk(e),
            BenchError::Oneway(e) => walk(e),
            BenchError::EngineClosed | BenchError::NoLoadStream | BenchError::NoFlow => None,
        };
    }
    if let Some(e) = cause.downcast_ref::<EngineError>() {
        return match e {
            EngineError::Cores(c) => class_of(c),
            EngineError::Sys(s) => class_of(s),
            EngineError::Latency(b) => walk(b.as_ref()),
            // No path opened: the class of the last one's error.
            EngineError::NoPath { last, .. } => class_of(last.as_ref()),
            EngineError::NoPathTried
            | EngineError::Flow { .. }
            | EngineError::PtpFrameTooSmall { .. }
            | EngineError::Rate { .. }
            | EngineError::Frame(_)
            | EngineError::NoHardwareRx { .. }
            | EngineError::HardwareRx { .. }
            | EngineError::Panicked => None,
        };
    }
    if let Some(e) = cause.downcast_ref::<OnewayError>() {
        return match e {
            OnewayError::RowLog(w) => class_of(w),
            OnewayError::Sys(s) => class_of(s),
            OnewayError::Hardware(h) => class_of(h),
            OnewayError::Loop(l) => class_of(l),
            OnewayError::Profile(p) => class_of(p),
            OnewayError::Engine(e) => walk(e),
            OnewayError::Request(r) => {
                Some(crate::shared::oneway_words::request_sentence(r).code())
            }
            // A step's host error is its source, the next in the chain.
            OnewayError::Plan(_)
            | OnewayError::Step { .. }
            | OnewayError::Frame { .. }
            | OnewayError::Thread(_)
            | OnewayError::AnalysisPanicked => None,
        };
    }
    if let Some(e) = cause.downcast_ref::<ThroughputError>() {
        return throughput_class(e);
    }
    if let Some(Chain(e)) = cause.downcast_ref::<Chain>() {
        return e.chain().find_map(class_of);
    }
    None
}

/// The first class in `e` and its sources.
fn walk(e: &(dyn Error + 'static)) -> Option<i32> {
    let mut cause = Some(e);
    while let Some(c) = cause {
        if let Some(k) = class_of(c) {
            return Some(k);
        }
        cause = c.source();
    }
    None
}

/// An rtt error's class: that of the typed error it carries
/// transparently; the others carry theirs as a source, or have none.
fn rtt_class(e: &RttError) -> Option<i32> {
    match e {
        RttError::Target(t) => class_of(t),
        RttError::RowLog(w) => class_of(w),
        RttError::Sys(s) => class_of(s),
        RttError::Hardware(h) => class_of(h),
        RttError::CpuLoad(t) => class_of(t),
        // The binary words these with the flags (`commands/rtt/args.rs`),
        // in the same classes.
        RttError::Request(_) => Some(USAGE),
        RttError::SessionPlan(p) => Some(session_plan_class(p)),
        RttError::Plan(_)
        | RttError::Setup { .. }
        | RttError::Build { .. }
        | RttError::ShortFrame { .. }
        | RttError::NoReply { .. } => None,
    }
}

/// A session plan's refusal's class, as its flag sentence gives it: a
/// timeout or count of none is a usage error, a bound missed a parameter.
fn session_plan_class(e: &misura_rtt::plan::SessionPlanError) -> i32 {
    use misura_rtt::plan::SessionPlanError as E;
    match e {
        E::TimeoutNotPositive | E::NoProbes => USAGE,
        E::Period { .. }
        | E::RateNotPositive { .. }
        | E::Interval { .. }
        | E::ResponseSmaller { .. }
        | E::Layout { .. }
        | E::PayloadTooLarge => PARAMS,
    }
}

/// A throughput error's class: that of the typed error it carries
/// transparently, or boxed (an iperf3 data stream's: the chain walk sees
/// the box, not the error in it); the others have none.
fn throughput_class(e: &ThroughputError) -> Option<i32> {
    match e {
        ThroughputError::Target(t) => class_of(t),
        ThroughputError::Key(k) => class_of(k),
        ThroughputError::Refusal(r) => Some(crate::shared::throughput_words::class(r)),
        ThroughputError::Sys(s) => class_of(s),
        ThroughputError::Iperf3(Iperf3PeerError::Stream { source, .. }) => throughput_class(source),
        ThroughputError::Control(_)
        | ThroughputError::Iperf3(_)
        | ThroughputError::MisuraFound(_)
        | ThroughputError::Iperf3Wire(_)
        | ThroughputError::Io(_)
        | ThroughputError::Step { .. }
        | ThroughputError::ConnectUdp { .. }
        | ThroughputError::Listen { .. }
        | ThroughputError::NoReply { .. }
        | ThroughputError::Receive { .. } => None,
    }
}

/// A chain of the binary's as a library's boxed error (`misura load`'s
/// probe, an irtt session's error): whole, so that `code_for` still finds
/// its class and main prints it as before.
#[derive(Debug)]
pub struct Chain(pub anyhow::Error);

impl std::fmt::Display for Chain {
    /// The top message only, whatever the flags (`{:#}` would add the
    /// causes, which `source` gives already).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl Error for Chain {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        self.0.source()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use misura_load::LoadError;

    fn nic() -> SysError {
        SysError::NoSuchInterface {
            name: "nosuch0".into(),
        }
    }

    #[test]
    fn the_libraries_enums_keep_the_class_of_what_they_carry() {
        let code = |e: anyhow::Error| code_for(&e);
        assert_eq!(code(RttError::Sys(nic()).into()), INTERFACE);
        let bad = misura_cli::target::split_host_port("h:p", 1).unwrap_err();
        assert_eq!(code(RttError::Target(bad).into()), USAGE);
        let setup = RttError::Setup {
            what: "listening".into(),
            source: nic(),
        };
        assert_eq!(code(setup.into()), INTERFACE);
        let hw = HardwareRequired { why: "no".into() };
        assert_eq!(code(RttError::Hardware(hw).into()), PARAMS);
        use misura_rtt::plan::SessionPlanError as P;
        assert_eq!(code(RttError::SessionPlan(P::NoProbes).into()), USAGE);
        assert_eq!(
            code(RttError::SessionPlan(P::PayloadTooLarge).into()),
            PARAMS
        );
        let no_target = misura_rtt::RequestError::NoTarget;
        assert_eq!(code(RttError::Request(no_target).into()), USAGE);
        assert_eq!(
            code(
                RttError::NoReply {
                    target: "t".into(),
                    why: misura_rtt::NoReplyWhy::PortUnreachable
                }
                .into()
            ),
            ERROR
        );
        let rate = misura_cli::units::link_rate("1k").unwrap_err();
        let rate = misura_load::PlanError::UdpRate(rate);
        assert_eq!(code(LoadError::Plan(rate).into()), PARAMS);
        let probe = LoadError::Probe(Box::new(RttError::Sys(nic())));
        assert_eq!(code(probe.into()), INTERFACE);
        let irtt = anyhow::Error::new(Failure::Params("p".into())).context("the session");
        let probe = LoadError::Probe(Box::new(Chain(irtt)));
        assert_eq!(code(probe.into()), PARAMS);
        let oneway = OnewayError::Step {
            what: "opening the ports",
            source: nic(),
        };
        assert_eq!(code(BenchError::Oneway(oneway).into()), INTERFACE);
        let stamps = OnewayError::Hardware(HardwareRequired { why: "no".into() });
        assert_eq!(code(anyhow::Error::from(stamps)), PARAMS);
        // The engine's: a path that did not open, for a missing interface.
        let engine = EngineError::NoPath {
            forced: None,
            last: Box::new(EngineError::Sys(nic())),
        };
        assert_eq!(code(BenchError::Engine(engine).into()), INTERFACE);
        let cores = EngineError::from(CoresError::OutOfRange { cores: 99, max: 64 });
        assert_eq!(code(anyhow::Error::from(cores).context("oneway")), PARAMS);
        let hook = EngineError::Latency(Box::new(nic()));
        assert_eq!(code(hook.into()), INTERFACE);
        let trials = misura_measure::load::LoadError::OutOfRange {
            what: "rate",
            value: 0.0,
            min: 1.0,
            max: 2.0,
        };
        assert_eq!(code(BenchError::Trials(trials).into()), PARAMS);
        assert_eq!(code(BenchError::EngineClosed.into()), ERROR);
        // Throughput's: a refused flag, the host's, one inside a data
        // stream's error; a server's refusal has none.
        assert_eq!(code(ThroughputError::Sys(nic()).into()), INTERFACE);
        let key = ThroughputError::Key(KeyError::Invalid {
            path: "k".into(),
            why: misura_measure::auth::AuthError::Empty,
        });
        let stream = Iperf3PeerError::Stream {
            stream: 1,
            addr: ([127, 0, 0, 1], 5201).into(),
            source: Box::new(key),
        };
        assert_eq!(code(ThroughputError::from(stream).into()), USAGE);
        let refused = misura_throughput::client::Refused {
            addr: ([127, 0, 0, 1], 5862).into(),
            reason: "server busy".into(),
        };
        let refused = misura_throughput::error::ControlError::from(refused);
        assert_eq!(code(ThroughputError::from(refused).into()), ERROR);
        let listen = ThroughputError::Listen {
            addr: ([0, 0, 0, 0], 5862).into(),
            port: 5862,
            source: std::io::ErrorKind::AddrInUse.into(),
        };
        assert_eq!(code(anyhow::Error::from(listen).context("serve")), ERROR);
    }

    /// misura-cli's typed errors, alone or in each library's enum, keep
    /// the exit code they had as a `Failure::Usage` (a target, a key file)
    /// or `Failure::Output` (a per-row log), and their words.
    #[test]
    fn misura_cli_errors_keep_their_class_in_every_library() {
        let target = || misura_cli::target::resolve(":862", 862).unwrap_err();
        let key = || KeyError::Read {
            path: "/nonexistent".into(),
            error: std::io::ErrorKind::NotFound.into(),
        };
        let rows = || {
            misura_cli::outfile::cannot_write(
                "per-probe log",
                std::path::Path::new("/nonexistent/x.csv"),
                std::io::ErrorKind::NotFound.into(),
            )
        };
        let cases: Vec<(anyhow::Error, i32, String)> = vec![
            (target().into(), USAGE, target().to_string()),
            (key().into(), USAGE, key().to_string()),
            (rows().into(), OUTPUT, rows().to_string()),
            (
                RttError::Target(target()).into(),
                USAGE,
                target().to_string(),
            ),
            (RttError::RowLog(rows()).into(), OUTPUT, rows().to_string()),
            (
                ThroughputError::Target(target()).into(),
                USAGE,
                target().to_string(),
            ),
            (ThroughputError::Key(key()).into(), USAGE, key().to_string()),
            (
                LoadError::Target(target()).into(),
                USAGE,
                target().to_string(),
            ),
            (LoadError::Key(key()).into(), USAGE, key().to_string()),
            (
                LoadError::Probe(Box::new(RttError::Target(target()))).into(),
                USAGE,
                target().to_string(),
            ),
            (
                OnewayError::RowLog(rows()).into(),
                OUTPUT,
                rows().to_string(),
            ),
            (
                BenchError::Oneway(OnewayError::RowLog(rows())).into(),
                OUTPUT,
                rows().to_string(),
            ),
            (
                anyhow::Error::from(ThroughputError::Target(target())).context("the sweep"),
                USAGE,
                "the sweep".into(),
            ),
        ];
        for (e, class, words) in cases {
            assert_eq!(code_for(&e), class, "{e:#}");
            assert_eq!(e.to_string(), words);
        }
    }

    #[test]
    fn a_transparent_variant_prints_its_chain_once() {
        let irtt = anyhow::Error::new(Failure::Params("inner".into())).context("outer");
        let e = anyhow::Error::from(LoadError::Probe(Box::new(Chain(irtt))));
        let chain: Vec<String> = e.chain().map(|c| c.to_string()).collect();
        assert_eq!(chain, ["outer", "inner"]);
    }
}
