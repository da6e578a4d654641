//! Why an exchange stops before its end, typed: the plan it refused, or
//! what the host or the frames' encoding refused. The binary words a
//! refused plan with the flags' names and classes the host's errors by
//! what they carry (a capability, an interface).

use crate::plan::PlanError;

/// Why `initiate` or `respond` failed.
#[derive(Debug, thiserror::Error)]
pub enum ExchangeError {
    /// The plan cannot run on this port (its sizes against the MTU, its
    /// periods).
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// The host refused: the interface, the raw socket, its stamps, the
    /// pinning.
    #[error(transparent)]
    Sys(#[from] misura_sys::SysError),
    /// A frame could not be encoded (a size the plan let through that the
    /// probe format cannot carry).
    #[error("building a frame")]
    Frame(#[from] misura_wire::WireError),
    /// The NIC's stamps were required and cannot be had.
    #[error(transparent)]
    Hardware(#[from] misura_run::stamping::HardwareRequired),
}
