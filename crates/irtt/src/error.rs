//! The irtt client's and reflector's errors, typed: what went wrong, with
//! the values (their exit class is `exit_class.rs`'s). No message names a
//! command-line flag; the binary adds those.

use misura_cli::target::TargetError;
use misura_measure::time::Span;
use misura_sys::SysError;
use misura_wire::irtt::IrttError;
use std::net::SocketAddr;

/// A session's length as `std` prints it; one past the timescale (probes
/// times period beyond `Span::MAX`) as what it is.
fn lasting(d: &Span) -> String {
    if *d == Span::MAX {
        "more than 292 years".into()
    } else {
        format!("{:?}", d.to_std())
    }
}

/// An irtt client session or reflector that could not run, or not to the end.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("the probe period {:?} is out of irtt's range: give 1 ns to {:?} (an irtt server may raise it; irtt's own minimum is 10 ms)", .period.to_std(), .max.to_std())]
    PeriodOutOfRange { period: Span, max: Span },
    #[error("the irtt session would last {}: ask for at least one probe and at most {} days", lasting(.duration), max.to_std().as_secs() / 86_400)]
    DurationOutOfRange { duration: Span, max: Span },
    #[error("an irtt packet of {length} bytes is over the limit here of {max} bytes")]
    PacketTooLong { length: usize, max: usize },
    #[error("the irtt HMAC key has {len} bytes; give 1 to {max}")]
    KeyLength { len: usize, max: usize },
    /// The grant is outside the request (the grant module says what may be granted).
    #[error("the irtt server at {target} granted {param} {granted}, outside the {requested} asked for ({why}): the session is ended, nothing measured")]
    Grant {
        target: SocketAddr,
        param: &'static str,
        requested: String,
        granted: String,
        why: &'static str,
    },
    #[error("the irtt server at {target} refused the session (close flag in its open reply; it speaks protocol version {version}, misura {ours}): it is full, limits opens from this address, or speaks another version")]
    Refused {
        target: SocketAddr,
        version: i64,
        ours: i64,
    },
    #[error("no irtt open reply from {target} within {waited_s} s ({sent} open requests sent): is `irtt server` running there and UDP port {} open?{hint}", target.port())]
    NoOpenReply {
        target: SocketAddr,
        waited_s: u64,
        sent: usize,
        hint: String,
    },
    #[error("stopped during the irtt open handshake with {target}")]
    Stopped { target: SocketAddr },
    #[error("irtt open request to {target}: {source} (is `irtt server` running there?)")]
    Unreachable {
        target: SocketAddr,
        source: SysError,
    },
    #[error("{what}: {source}")]
    Socket {
        what: &'static str,
        source: SysError,
    },
    /// STAMP's options asked of the irtt reflector (raw probes, a STAMP
    /// key file, stateful mode): it answers irtt over UDP only.
    #[error("the irtt reflector answers irtt over UDP: it takes no raw probes, STAMP key file or stateful mode (irtt's own HMAC key authenticates)")]
    StampOptions,
    #[error("irtt reflector bounds: {rate_limit} replies per second per session (at least 1) and {max_sessions} sessions (1 to {most})")]
    ReflectBounds {
        rate_limit: u64,
        max_sessions: usize,
        most: usize,
    },
    #[error("listening on UDP {addr}")]
    Listen {
        addr: SocketAddr,
        #[source]
        source: SysError,
    },
    #[error("enabling kernel stamps on UDP {addr}")]
    Stamps {
        addr: SocketAddr,
        #[source]
        source: SysError,
    },
    /// The target that cannot be parsed or resolved (misura-cli's).
    #[error(transparent)]
    Target(#[from] TargetError),
    #[error("building an irtt packet: {0}")]
    Wire(#[from] IrttError),
}

/// `Result::map_err` for a socket call: names what was being done.
pub(crate) fn socket(what: &'static str) -> impl FnOnce(SysError) -> Error {
    move |source| Error::Socket { what, source }
}
