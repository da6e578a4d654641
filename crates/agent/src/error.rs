//! Why the agent cannot start, typed. The binary gives each its exit class
//! and words the ones that come from the command line with its flags.

use crate::config::ConfigError;

/// Why [`crate::run`] stopped before it served.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// The local configuration is not valid (already phrased "FILE:LINE: …").
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The host refused: the network namespace to enter.
    #[error(transparent)]
    Sys(#[from] misura_sys::SysError),
    /// The endpoint's address is taken or not ours.
    #[error("cannot listen on {addr}: is another agent running there?")]
    Listen {
        addr: std::net::SocketAddr,
        #[source]
        source: std::io::Error,
    },
    /// Sinks are configured but the store is off: results reach the sinks
    /// only through the store's outbox.
    #[error("results reach the sinks through the store (the outbox), which is off")]
    SinksWithoutStore,
    /// The results store cannot be opened or written.
    #[error(transparent)]
    Store(#[from] misura_store::StoreError),
    /// What the process needs from the system (its own path, a signal
    /// handler, a thread); `what` says which.
    #[error("{what}")]
    Process {
        what: &'static str,
        #[source]
        source: std::io::Error,
    },
}

impl AgentError {
    pub(crate) fn process(what: &'static str) -> impl FnOnce(std::io::Error) -> AgentError {
        move |source| AgentError::Process { what, source }
    }
}
