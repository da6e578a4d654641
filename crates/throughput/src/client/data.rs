//! The data connections of the TCP tests: socket options set before
//! connect(), the server's greeting taken off, the test id sent.

use super::base::CONNECT_TIMEOUT;
use super::control::{connect_error, Refused};
use crate::error::{ControlError, Result, ThroughputError};
use crate::proto::{self, Fields};
use misura_wire::control::{Message, Value};
use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::time::Instant;

/// Socket options of a TCP data connection.
#[derive(Clone, Copy, Debug, Default)]
pub struct TcpOpts {
    pub sndbuf: Option<usize>,
    pub rcvbuf: Option<usize>,
    pub nodelay: bool,
}

/// Open data connection `stream` (this client's number for it, 0-based) of
/// test `test_id`: buffers are set before connect() (the receive buffer
/// fixes the window scale in the SYN), then `DATA {test id, stream}` is
/// sent, so that the server's per-stream figures follow this numbering.
pub fn data_connection(
    addr: SocketAddr,
    test_id: u64,
    stream: u32,
    o: &TcpOpts,
) -> Result<TcpStream> {
    super::control::retrying(|| data_connection_once(addr, test_id, Some(stream), o))
        .map(|(s, _)| s)
}

/// A data connection of a crr or setup test (one per transaction, so no
/// stream number), also returning how long connect() took (the TCP
/// handshake, user clock), ns. A "try again" refusal is retried for at
/// most `control::RETRY_FOR`.
pub fn data_connection_timed(
    addr: SocketAddr,
    test_id: u64,
    o: &TcpOpts,
) -> Result<(TcpStream, u64)> {
    super::control::retrying(|| data_connection_once(addr, test_id, None, o))
}

fn data_connection_once(
    addr: SocketAddr,
    test_id: u64,
    stream: Option<u32>,
    o: &TcpOpts,
) -> Result<(TcpStream, u64)> {
    let s = socket2::Socket::new(
        socket2::Domain::for_address(addr),
        socket2::Type::STREAM,
        Some(socket2::Protocol::TCP),
    )
    .map_err(ThroughputError::step("creating a TCP socket"))?;
    if let Some(b) = o.sndbuf {
        s.set_send_buffer_size(b)
            .map_err(ThroughputError::step("setting SO_SNDBUF"))?;
    }
    if let Some(b) = o.rcvbuf {
        s.set_recv_buffer_size(b)
            .map_err(ThroughputError::step("setting SO_RCVBUF"))?;
    }
    s.set_tcp_nodelay(o.nodelay)
        .map_err(ThroughputError::step("setting TCP_NODELAY"))?;
    let t0 = Instant::now();
    s.connect_timeout(&addr.into(), CONNECT_TIMEOUT)
        .map_err(|e| connect_error(addr, &e))?;
    let connect_ns = t0.elapsed().as_nanos() as u64;
    let mut t: TcpStream = s.into();
    t.set_write_timeout(Some(proto::MESSAGE_TIMEOUT)).ok();
    // DATA first, at once: a server admits by progress, and a connection
    // whose first message has arrived is not closed to make room for newer
    // idle ones from this address (the server reads it after its HELLO).
    let mut data = Message::new(proto::DATA).with(proto::F_TEST_ID, Value::U64(test_id));
    if let Some(k) = stream {
        data = data.with(proto::F_STREAM_INDEX, Value::U64(k as u64));
    }
    proto::write_message(&mut t, &data).map_err(|e| ControlError::OpenData(Box::new(e)))?;
    // The server greets every connection, data connections too: take the
    // HELLO off the stream so it is not counted as test data.
    let hello = proto::read_message_within(&t, proto::MESSAGE_TIMEOUT)
        .map_err(|e| ControlError::DataHello(Box::new(e)))?;
    if hello.typ == proto::REFUSE {
        let reason = hello
            .need_str(proto::F_REASON, "reason")
            .unwrap_or("no reason given")
            .to_string();
        return Err(ControlError::from(Refused { addr, reason }).into());
    }
    t.set_read_timeout(None).ok();
    Ok((t, connect_ns))
}

/// Socket buffers the kernel granted.
pub fn granted_buffers(t: &TcpStream) -> (u64, u64) {
    let s = socket2::SockRef::from(t);
    (
        s.send_buffer_size().unwrap_or(0) as u64,
        s.recv_buffer_size().unwrap_or(0) as u64,
    )
}

/// A UDP socket on an ephemeral port of the wildcard address of `data`'s
/// family, connected to `data`: the data socket of `rr --proto udp` and
/// `setup`.
pub fn connected_udp(data: SocketAddr) -> Result<UdpSocket> {
    let bind = if data.is_ipv6() {
        "[::]:0"
    } else {
        "0.0.0.0:0"
    };
    let sock = UdpSocket::bind(bind).map_err(ThroughputError::step("binding a UDP socket"))?;
    sock.connect(data)
        .map_err(ThroughputError::step("connecting the UDP socket"))?;
    Ok(sock)
}
