//! Why a throughput, rr or set-up test, a server or a sweep point stops
//! before its result, typed: a plan's refusal (`Refusal`, naming no flag),
//! misura-cli's refused server address or key file, the control
//! protocol's failures (`ControlError`), an iperf3 peer's
//! (`Iperf3PeerError`), a step on a socket that the host refused. Each
//! prints the words it printed before, its cause as its source, so that
//! `one_line` and the binary's printer give the same `a: b: c`.

use misura_cli::keys::KeyError;
use misura_cli::target::TargetError;
use misura_sys::SysError;
use misura_wire::iperf3::Iperf3Error as Iperf3WireError;
use misura_wire::test_control::FieldError;
use misura_wire::WireError;
use std::io;
use std::net::SocketAddr;

pub use crate::refusal::{Class, Refusal, Side, Timed};

/// Why a test, a server or a sweep point failed.
#[derive(Debug, thiserror::Error)]
pub enum ThroughputError {
    /// The server's address that cannot be parsed or resolved
    /// (misura-cli's).
    #[error(transparent)]
    Target(#[from] TargetError),
    /// The key file that cannot be read or is no key (misura-cli's).
    #[error(transparent)]
    Key(#[from] KeyError),
    /// A plan's bound, or the server's, that the test does not keep.
    #[error(transparent)]
    Refusal(#[from] Refusal),
    /// The control protocol with misura serve, either end.
    #[error(transparent)]
    Control(#[from] ControlError),
    /// The test with an iperf3 peer, either end.
    #[error(transparent)]
    Iperf3(#[from] Iperf3PeerError),
    /// A probe found misura serve where the plan is for an iperf3 server.
    #[error(transparent)]
    MisuraFound(#[from] MisuraFound),
    /// An iperf3 message that could not be read or written.
    #[error(transparent)]
    Iperf3Wire(#[from] Iperf3WireError),
    /// The host refused a socket call, as it said it.
    #[error(transparent)]
    Io(#[from] io::Error),
    /// A step on a socket or a file the host refused; `what` names it.
    #[error("{what}")]
    Step {
        what: &'static str,
        #[source]
        source: io::Error,
    },
    /// The host refused a call of misura's own (`misura_sys`).
    #[error(transparent)]
    Sys(#[from] SysError),
    #[error("connecting the UDP socket to {server}")]
    ConnectUdp {
        server: SocketAddr,
        #[source]
        source: io::Error,
    },
    /// The server's port that could not be listened on.
    #[error("cannot listen on {addr}: is another server on port {port}?")]
    Listen {
        addr: SocketAddr,
        port: u16,
        #[source]
        source: io::Error,
    },
    /// A set-up transaction's probe that no reply answered in time.
    #[error("no reply within {secs} s")]
    NoReply { secs: u64 },
    /// A set-up transaction's reply that could not be received (the
    /// host's words in the message, not as a source).
    #[error("receiving a reply: {error}")]
    Receive { error: io::Error },
}

/// The control protocol (docs/control-protocol.md): a message that could
/// not be read, written or understood, and a server's answers a client
/// cannot go on with.
#[derive(Debug, thiserror::Error)]
pub enum ControlError {
    /// A read that failed (`what`: the header or the message).
    #[error("{what}")]
    Read {
        what: &'static str,
        #[source]
        source: io::Error,
    },
    /// A read that nothing answered within its time limit; the io error
    /// stays the source, for callers that tell timeouts apart by it.
    #[error("{what}: nothing came within the read time limit ({secs} s for a control message, the handshake timeout in a server's handshake)")]
    ReadTimedOut {
        what: &'static str,
        secs: u64,
        #[source]
        source: io::Error,
    },
    #[error("bad control message: its first bytes are not misura's control magic (is the peer a `misura serve` or `misura tcp/udp/rr`?)")]
    BadMagic,
    /// A header or payload that does not parse (its words, not a source).
    #[error("bad control message: {0}")]
    Bad(WireError),
    #[error("cannot encode a control message: {0}")]
    Encode(WireError),
    #[error("sending a control message")]
    Send(#[source] io::Error),
    /// A field the message needs, missing or of the wrong type.
    #[error(transparent)]
    Field(#[from] FieldError),
    #[error("cannot reach misura serve at {addr}: {why}")]
    Unreachable { addr: SocketAddr, why: String },
    #[error("{addr} did not greet like misura serve (no HELLO): is it another service?")]
    NoHello {
        addr: SocketAddr,
        #[source]
        source: Box<ControlError>,
    },
    #[error("{addr} sent message type {typ} instead of HELLO: not misura serve?")]
    NotHello { addr: SocketAddr, typ: u8 },
    #[error("misura serve at {addr} speaks protocol version {version}, this client {ours}: use the same misura version on both ends")]
    Version {
        addr: SocketAddr,
        version: u64,
        ours: u64,
    },
    /// The server refused the test, or this connection.
    #[error(transparent)]
    Refused(#[from] Refused),
    /// An admission refusal that retrying did not get past.
    #[error("still refused after retrying for {secs} s")]
    StillRefused {
        secs: u64,
        #[source]
        source: Refused,
    },
    #[error("sending the request to {addr}")]
    SendRequest {
        addr: SocketAddr,
        #[source]
        source: Box<ControlError>,
    },
    #[error("waiting for {addr} to accept the test")]
    WaitAccept {
        addr: SocketAddr,
        #[source]
        source: Box<ControlError>,
    },
    #[error("{addr} announced data port {port}: not a port to connect to (1 to 65535); a broken or hostile server")]
    DataPort { addr: SocketAddr, port: u64 },
    #[error("{addr} answered the request with message type {typ}")]
    RequestAnswer { addr: SocketAddr, typ: u8 },
    #[error("opening a data connection")]
    OpenData(#[source] Box<ControlError>),
    #[error("waiting for the server's HELLO on a data connection")]
    DataHello(#[source] Box<ControlError>),
    #[error("sending DONE")]
    SendDone(#[source] Box<ControlError>),
    #[error("waiting for the server's RESULT")]
    WaitResult(#[source] Box<ControlError>),
    #[error("the server ended the test: {reason}")]
    Ended { reason: String },
    #[error("the server answered DONE with message type {typ}")]
    DoneAnswer { typ: u8 },
}

/// A test with an iperf3 peer (client or server end) that cannot go on.
#[derive(Debug, thiserror::Error)]
pub enum Iperf3PeerError {
    #[error("stopped by a signal while waiting for {what} from the iperf3 peer")]
    Stopped { what: String },
    #[error(
        "the iperf3 peer stalled: {what} not complete after {secs:.1} s ({got} of {len} bytes)"
    )]
    Stalled {
        what: String,
        secs: f64,
        got: usize,
        len: usize,
    },
    #[error(
        "the iperf3 peer closed the control connection while sending {what} ({got} of {len} bytes)"
    )]
    ClosedWhile {
        what: String,
        got: usize,
        len: usize,
    },
    #[error("reading {what} from the iperf3 peer")]
    Read {
        what: String,
        #[source]
        source: io::Error,
    },
    #[error("the iperf3 peer closed the control connection")]
    Closed,
    #[error("reading a state from the iperf3 peer")]
    ReadState(#[source] io::Error),
    #[error("the iperf3 server refused the test (ACCESS_DENIED: it is busy with another test)")]
    AccessDenied,
    #[error("the iperf3 server failed the test (SERVER_ERROR: iperf3 error {code}, errno {errno}; `iperf3 -s` prints why)")]
    ServerError { code: i32, errno: i32 },
    #[error("the iperf3 peer sent {got} where {want} was due")]
    Unexpected {
        got: &'static str,
        want: &'static str,
    },
    #[error("sending {state} to the iperf3 peer")]
    SendState {
        state: &'static str,
        #[source]
        source: io::Error,
    },
    /// A JSON message's length prefix refused (its words, not a source).
    #[error("{what}: {error}")]
    JsonLength {
        what: String,
        error: Iperf3WireError,
    },
    #[error("sending JSON to the iperf3 peer")]
    SendJson(#[source] io::Error),
    #[error("connecting to the iperf3 server at {addr}")]
    Connect {
        addr: SocketAddr,
        #[source]
        source: io::Error,
    },
    /// A data stream's local port (the client port asked for) that could
    /// not be bound.
    #[error("binding local port {port}")]
    BindCport {
        port: u16,
        #[source]
        source: io::Error,
    },
    #[error("the iperf3 server did not answer the UDP connect message within {secs} s")]
    NoConnectReply { secs: u64 },
    /// A data stream that did not open (`stream`: from 1).
    #[error("opening iperf3 data stream {stream} to {addr}")]
    Stream {
        stream: usize,
        addr: SocketAddr,
        #[source]
        source: Box<ThroughputError>,
    },
    /// A cookie that does not parse (its words, not a source).
    #[error("{0}")]
    Cookie(Iperf3WireError),
    #[error("a data connection beyond the test's {expected} streams: closed")]
    ExtraStream { expected: usize },
    #[error("refused: {why}")]
    Refused { why: String },
    #[error("the iperf3 client opened {opened} of its {streams} data streams within the handshake timeout ({secs} s)")]
    StreamsMissing {
        opened: usize,
        streams: usize,
        secs: u64,
    },
    #[error("no iperf3 UDP connect message within the handshake timeout")]
    NoUdpConnect,
    /// A probe that found no server (`tried`: what each address did).
    #[error("the probe found neither misura serve nor an iperf3 server ({tried}); ask for iperf3, or start `misura serve` there")]
    NoPeer { tried: String },
}

/// The server refused the test; the text is its reason.
#[derive(Debug, thiserror::Error)]
#[error("misura serve at {addr} refused the test: {reason}")]
pub struct Refused {
    pub addr: SocketAddr,
    pub reason: String,
}

/// A probe found misura serve where the plan is for an iperf3 server.
#[derive(Debug, thiserror::Error)]
#[error("the probe found misura serve at {host}, and the plan is for an iperf3 server")]
pub struct MisuraFound {
    pub host: String,
}

impl ThroughputError {
    /// A step's host error, `what` naming the step.
    pub(crate) fn step(what: &'static str) -> impl FnOnce(io::Error) -> ThroughputError {
        move |source| ThroughputError::Step { what, source }
    }
}

/// The io error `e` ended with, wherever it is in its chain (a timeout is
/// told apart by it), a transparent [`ThroughputError::Io`] too.
pub fn io_cause<'a>(e: &'a (dyn std::error::Error + 'static)) -> Option<&'a io::Error> {
    let mut cause = Some(e);
    while let Some(c) = cause {
        if let Some(io) = c.downcast_ref::<io::Error>() {
            return Some(io);
        }
        // A boxed source (an iperf3 data stream's) is seen as its box.
        let typed = c
            .downcast_ref::<ThroughputError>()
            .or_else(|| c.downcast_ref::<Box<ThroughputError>>().map(|b| &**b));
        if let Some(ThroughputError::Io(io)) = typed {
            return Some(io);
        }
        cause = c.source();
    }
    None
}

pub type Result<T, E = ThroughputError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;
    use misura_cli::exit::one_line;

    #[test]
    fn an_iperf3_error_names_no_flag() {
        let bind = Iperf3PeerError::BindCport {
            port: 5000,
            source: io::ErrorKind::AddrInUse.into(),
        };
        let none = Iperf3PeerError::NoPeer { tried: "x".into() };
        for e in [bind, none] {
            assert!(!e.to_string().contains("--"), "{e}");
        }
    }

    #[test]
    fn a_chain_prints_each_step_once_and_keeps_its_io_error() {
        let addr: SocketAddr = ([127, 0, 0, 1], 5862).into();
        let silent = ControlError::ReadTimedOut {
            what: "reading a control message header",
            secs: 10,
            source: io::Error::new(io::ErrorKind::TimedOut, "late"),
        };
        let e = ThroughputError::from(ControlError::NoHello {
            addr,
            source: Box::new(silent),
        });
        assert_eq!(
            one_line(&e),
            "127.0.0.1:5862 did not greet like misura serve (no HELLO): is it another service?: \
             reading a control message header: nothing came within the read time limit (10 s for \
             a control message, the handshake timeout in a server's handshake): late"
        );
        assert_eq!(
            io_cause(&e).map(io::Error::kind),
            Some(io::ErrorKind::TimedOut)
        );
        // A transparent io error, boxed in a data stream's error.
        let reset = ThroughputError::from(io::Error::from(io::ErrorKind::ConnectionReset));
        let stream = ThroughputError::from(Iperf3PeerError::Stream {
            stream: 2,
            addr,
            source: Box::new(reset),
        });
        assert!(one_line(&stream).starts_with("opening iperf3 data stream 2 to 127.0.0.1:5862: "));
        assert_eq!(
            io_cause(&stream).map(io::Error::kind),
            Some(io::ErrorKind::ConnectionReset)
        );
        let still = ControlError::StillRefused {
            secs: 5,
            source: Refused {
                addr,
                reason: "too many connections in their handshake: try again".into(),
            },
        };
        assert_eq!(
            one_line(&still),
            "still refused after retrying for 5 s: misura serve at 127.0.0.1:5862 refused the \
             test: too many connections in their handshake: try again"
        );
        assert!(io_cause(&still).is_none());
    }
}
