//! Exit codes (`misura_cli::exit`'s classes, each mapped to its code
//! here) and the one place an error chain becomes one: the binary's, as
//! only the binary exits. Each library's error enum says its own class
//! (`misura_cli::exit::Classed`, in its crate), that of the error it
//! carries transparently included; what this module knows is which types
//! to ask, as Rust cannot downcast to a trait object. The host's errors
//! (`misura-sys`) and the lab's (`misura-lab`) are classed here: those
//! crates sit below misura-cli and do not depend on it, so they cannot
//! implement its trait.

use misura_bench::BenchError;
pub use misura_cli::exit::*;
use misura_cli::keys::KeyError;
use misura_cli::outfile::CannotWrite;
use misura_cli::report_page::ReportError;
use misura_cli::target::TargetError;
use misura_cli::units::RateError;
use misura_clock::ClockError;
use misura_engine::{CoresError, EngineError};
use misura_exchange::ExchangeError;
use misura_lab::LabError;
use misura_load::{LoadError, ProbePlanError};
use misura_oneway::error::{LoopError, OnewayError, ProfileError};
use misura_rtt::RttError;
use misura_run::cpuload::TooManyThreads;
use misura_run::stamping::HardwareRequired;
use misura_sys::SysError;
use misura_throughput::error::ThroughputError;
use std::error::Error;

/// The exit code for an error chain: the first classifiable cause wins.
pub fn code_for(err: &anyhow::Error) -> i32 {
    err.chain().find_map(class_of).map_or(ERROR, code)
}

/// A class's exit code.
pub fn code(class: Class) -> i32 {
    match class {
        Class::Error => ERROR,
        Class::Usage => USAGE,
        Class::Privilege => PRIVILEGE,
        Class::Interface => INTERFACE,
        Class::Params => PARAMS,
        Class::Output => OUTPUT,
        Class::Profile => PROFILE,
    }
}

/// The exit class of one error of a chain, if it has one.
fn class_of(cause: &(dyn Error + 'static)) -> Option<Class> {
    if let Some(f) = cause.downcast_ref::<Failure>() {
        return Some(f.class());
    }
    if let Some(Chain(e)) = cause.downcast_ref::<Chain>() {
        return e.chain().find_map(class_of);
    }
    if let Some(s) = cause.downcast_ref::<SysError>() {
        return Some(sys_class(s));
    }
    if let Some(l) = cause.downcast_ref::<LabError>() {
        return Some(lab_class(l));
    }
    classed::<TargetError>(cause)
        .or_else(|| classed::<KeyError>(cause))
        .or_else(|| classed::<CannotWrite>(cause))
        .or_else(|| classed::<RateError>(cause))
        .or_else(|| classed::<HardwareRequired>(cause))
        .or_else(|| classed::<TooManyThreads>(cause))
        .or_else(|| classed::<CoresError>(cause))
        .or_else(|| classed::<LoopError>(cause))
        .or_else(|| classed::<ProfileError>(cause))
        .or_else(|| classed::<ProbePlanError>(cause))
        .or_else(|| classed::<RttError>(cause))
        .or_else(|| classed::<misura_irtt::error::Error>(cause))
        .or_else(|| classed::<LoadError>(cause))
        .or_else(|| classed::<BenchError>(cause))
        .or_else(|| classed::<EngineError>(cause))
        .or_else(|| classed::<OnewayError>(cause))
        .or_else(|| classed::<ThroughputError>(cause))
        .or_else(|| classed::<ReportError>(cause))
        .or_else(|| classed::<ClockError>(cause))
        .or_else(|| classed::<ExchangeError>(cause))
}

/// `cause`'s class if it is a `T`: its own, or that of the error it
/// carries (the chain walk does not see that one: a transparent variant's
/// source is the inner error's source).
fn classed<T: Classed + 'static>(cause: &(dyn Error + 'static)) -> Option<Class> {
    let e = cause.downcast_ref::<T>()?;
    e.class().or_else(|| e.carried().and_then(walk))
}

/// The host's error's class: a capability missing, an interface or a
/// namespace missing or down.
fn sys_class(s: &SysError) -> Class {
    match s {
        SysError::NeedCapability { .. } | SysError::PrivilegedPort { .. } => Class::Privilege,
        SysError::NoSuchInterface { .. }
        | SysError::InterfaceDown { .. }
        | SysError::NoSuchNetns { .. } => Class::Interface,
        _ => Class::Error,
    }
}

/// The lab's error's class: not permitted, or a prefix that is no prefix.
fn lab_class(l: &LabError) -> Class {
    match l {
        LabError::NotPermitted => Class::Privilege,
        LabError::BadPrefix { .. } => Class::Usage,
        _ => Class::Error,
    }
}

/// The first class in `e` and its sources.
fn walk(e: &(dyn Error + 'static)) -> Option<Class> {
    let mut cause = Some(e);
    while let Some(c) = cause {
        if let Some(k) = class_of(c) {
            return Some(k);
        }
        cause = c.source();
    }
    None
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
    use misura_throughput::error::Iperf3PeerError;

    fn nic() -> SysError {
        SysError::NoSuchInterface {
            name: "nosuch0".into(),
        }
    }

    /// The chain walk: the host's error, carried by a library's enum
    /// (transparently, boxed, or as the last path's), or a source, or a
    /// chain of the binary's in a box, keeps its class; one with none
    /// ends with 1. Each enum's own classes are tested in its crate.
    #[test]
    fn the_libraries_enums_keep_the_class_of_what_they_carry() {
        let code = |e: anyhow::Error| code_for(&e);
        assert_eq!(code(RttError::Sys(nic()).into()), INTERFACE);
        let setup = RttError::Setup {
            what: "listening".into(),
            source: nic(),
        };
        assert_eq!(code(setup.into()), INTERFACE);
        let hw = HardwareRequired { why: "no".into() };
        assert_eq!(code(RttError::Hardware(hw).into()), PARAMS);
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
        assert_eq!(code(BenchError::EngineClosed.into()), ERROR);
        // Throughput's: the host's, one inside a data stream's error; a
        // server's refusal has none, nor a port in use (its source).
        assert_eq!(code(ThroughputError::Sys(nic()).into()), INTERFACE);
        let stream = Iperf3PeerError::Stream {
            stream: 1,
            addr: ([127, 0, 0, 1], 5201).into(),
            source: Box::new(ThroughputError::Sys(nic())),
        };
        assert_eq!(code(ThroughputError::from(stream).into()), INTERFACE);
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

    /// Each class's code, as the binary exits with it.
    #[test]
    fn each_class_has_its_code() {
        let codes = [
            (Class::Error, 1),
            (Class::Usage, 2),
            (Class::Privilege, 3),
            (Class::Interface, 4),
            (Class::Params, 5),
            (Class::Output, 6),
            (Class::Profile, 7),
        ];
        for (class, c) in codes {
            assert_eq!(code(class), c, "{class:?}");
        }
        let code = |e: anyhow::Error| code_for(&e);
        let privilege = SysError::NeedCapability {
            what: "x".into(),
            cap: "CAP_NET_RAW",
        };
        assert_eq!(code(privilege.into()), PRIVILEGE);
        // A port below 1024 without CAP_NET_BIND_SERVICE, alone or as
        // rtt's setup failure (`reflect --port 862` as a user).
        let port = || SysError::PrivilegedPort { port: 862 };
        assert_eq!(code(port().into()), PRIVILEGE);
        assert_eq!(code(misura_rtt::RttError::Sys(port()).into()), PRIVILEGE);
        assert_eq!(code(LabError::NotPermitted.into()), PRIVILEGE);
        let profile = ProfileError::NotProfile {
            path: "/p.json".into(),
        };
        assert_eq!(code(OnewayError::Profile(profile).into()), PROFILE);
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
