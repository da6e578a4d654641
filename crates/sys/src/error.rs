//! The one error type of this crate: every message names the problem and the fix.

/// An error from the Linux edge.  The `Display` text names the problem and
/// what to do about it, so the binary can print it as is.
#[derive(Debug, thiserror::Error)]
pub enum SysError {
    /// The operation needs a capability the process does not have.
    #[error("{what} needs {cap}: run as root or grant it with `setcap {setcap}+ep $(which misura)`", setcap = cap.to_ascii_lowercase())]
    NeedCapability {
        /// e.g. `"CAP_NET_RAW"`.
        cap: &'static str,
        /// What was being attempted (may carry an extra hint).
        what: String,
    },
    /// Binding a privileged UDP port (below the kernel's
    /// `ip_unprivileged_port_start`) without CAP_NET_BIND_SERVICE. The
    /// binary words it with the flag that chose the port.
    #[error("binding UDP port {port} (a privileged port; or choose a port >= 1024) needs CAP_NET_BIND_SERVICE: run as root or grant it with `setcap cap_net_bind_service+ep $(which misura)`")]
    PrivilegedPort {
        /// The port asked for.
        port: u16,
    },
    /// Another socket holds the address (EADDRINUSE). The binary words it
    /// with the flag that chose the port.
    #[error(
        "binding {addr}: the port is in use (see `ss -uanp`), or choose another port: {source}"
    )]
    PortInUse {
        /// The address asked for.
        addr: std::net::SocketAddr,
        /// The OS error (EADDRINUSE).
        #[source]
        source: std::io::Error,
    },
    /// No interface of that name in the calling thread's network namespace.
    #[error("interface `{name}` does not exist in this network namespace (see `ip link`, or `ip netns exec NS ip link` for a namespace)")]
    NoSuchInterface {
        /// The name asked for.
        name: String,
    },
    /// The interface exists but is administratively or operationally down.
    #[error(
        "interface `{name}` is down: `ip link set {name} up` (and check the cable or the peer)"
    )]
    InterfaceDown {
        /// The interface name.
        name: String,
    },
    /// No such named network namespace.
    #[error("network namespace `{name}` not found in /run/netns (see `ip netns list`, or `misura lab up`)")]
    NoSuchNetns {
        /// The name or path asked for.
        name: String,
    },
    /// A kernel or driver feature is missing.
    #[error("{what} is not supported: {why}")]
    Unsupported {
        /// What was attempted.
        what: String,
        /// Why it cannot be done (the driver's or kernel's answer).
        why: String,
    },
    /// Any other failure of a system call.
    #[error("{what}: {source}")]
    Io {
        /// What was being attempted, with a hint where one helps.
        what: String,
        /// The underlying OS error.
        #[source]
        source: std::io::Error,
    },
}

impl SysError {
    /// An [`SysError::Io`] from the current `errno`.
    pub(crate) fn last_os(what: impl Into<String>) -> SysError {
        SysError::Io {
            what: what.into(),
            source: std::io::Error::last_os_error(),
        }
    }

    /// An [`SysError::Io`] from an explicit error.
    pub(crate) fn io(what: impl Into<String>, source: std::io::Error) -> SysError {
        SysError::Io {
            what: what.into(),
            source,
        }
    }

    /// An [`SysError::Io`] for an invalid argument, with a message.
    pub(crate) fn invalid(what: impl Into<String>) -> SysError {
        SysError::Io {
            what: what.into(),
            source: std::io::Error::from_raw_os_error(libc::EINVAL),
        }
    }
}

/// True when the error is a permission error (EPERM or EACCES).
pub(crate) fn is_perm(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EPERM) | Some(libc::EACCES))
}
