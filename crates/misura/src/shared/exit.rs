//! Exit codes (`misura_run::exit`'s classes, which libraries name in their
//! `Failure`s) and the one place an error chain becomes one: the binary's,
//! as only the binary exits. It knows every library's typed error that
//! carries a class of its own (the host's, the lab's, a required NIC stamp).

use misura_lab::LabError;
pub use misura_run::exit::*;
use misura_run::stamping::HardwareRequired;
use misura_sys::SysError;

/// The exit code for an error chain: the first classifiable cause wins.
pub fn code_for(err: &anyhow::Error) -> i32 {
    for cause in err.chain() {
        if let Some(f) = cause.downcast_ref::<Failure>() {
            return match f {
                Failure::Usage(_) => USAGE,
                Failure::Params(_) => PARAMS,
                Failure::Output(_) => OUTPUT,
                Failure::Profile(_) => PROFILE,
                Failure::Privilege(_) => PRIVILEGE,
            };
        }
        if let Some(s) = cause.downcast_ref::<SysError>() {
            return match s {
                SysError::NeedCapability { .. } => PRIVILEGE,
                SysError::NoSuchInterface { .. }
                | SysError::InterfaceDown { .. }
                | SysError::NoSuchNetns { .. } => INTERFACE,
                _ => ERROR,
            };
        }
        if cause.downcast_ref::<HardwareRequired>().is_some() {
            return PARAMS;
        }
        if let Some(l) = cause.downcast_ref::<LabError>() {
            return match l {
                LabError::NotPermitted => PRIVILEGE,
                LabError::BadPrefix { .. } => USAGE,
                _ => ERROR,
            };
        }
    }
    ERROR
}
