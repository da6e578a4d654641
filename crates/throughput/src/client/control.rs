//! The control connection of one client test (docs/control-protocol.md):
//! HELLO and the limits it announces, REQUEST → ACCEPT/REFUSE, DONE →
//! RESULT and the server's figures in it.

use super::base::{Server, CONNECT_TIMEOUT};
use crate::error::Refusal;
use crate::error::{ControlError, Result, ThroughputError};
use crate::proto::{self, Fields};
use misura_measure::auth::StampKey;
use misura_report::throughput::{CpuUse, ServerFigures};
use misura_wire::control::{Message, Value};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// What the server announced in HELLO.
#[derive(Clone, Debug)]
pub struct Hello {
    pub nonce: Vec<u8>,
    pub max_duration_ns: Option<u64>,
    pub max_streams: Option<u64>,
    pub max_rate_bps: Option<u64>,
    pub auth_required: bool,
}

/// The server's answer to a REQUEST.
#[derive(Clone, Copy, Debug)]
pub struct Accept {
    pub test_id: u64,
    pub data_port: u16,
}

pub use crate::error::Refused;

/// One test's control connection.
pub struct Control {
    pub stream: TcpStream,
    pub addr: SocketAddr,
    pub hello: Hello,
}

pub(super) fn connect_error(addr: SocketAddr, e: &std::io::Error) -> ControlError {
    use std::io::ErrorKind::*;
    let why = match e.kind() {
        ConnectionRefused => {
            "connection refused: is `misura serve` running there, on this port?".to_string()
        }
        TimedOut | WouldBlock => format!(
            "no answer within {} s: host down, or a firewall drops the connection",
            CONNECT_TIMEOUT.as_secs()
        ),
        _ => e.to_string(),
    };
    ControlError::Unreachable { addr, why }
}

/// How long a client keeps retrying a server's "try again" refusal (too
/// many connections from its address in their handshake).
pub const RETRY_FOR: std::time::Duration = std::time::Duration::from_secs(5);

/// Run `attempt` again while the server refuses it with "try again", for
/// at most [`RETRY_FOR`] (20 ms, doubling to 500 ms, between attempts).
pub(super) fn retrying<T>(mut attempt: impl FnMut() -> Result<T>) -> Result<T> {
    let start = std::time::Instant::now();
    let mut pause = std::time::Duration::from_millis(20);
    loop {
        match attempt() {
            Err(ThroughputError::Control(ControlError::Refused(r)))
                if start.elapsed() < RETRY_FOR && admission_refusal(&r) =>
            {
                std::thread::sleep(pause);
                pause = (pause * 2).min(std::time::Duration::from_millis(500));
            }
            Err(ThroughputError::Control(ControlError::Refused(r))) if admission_refusal(&r) => {
                return Err(ControlError::StillRefused {
                    secs: RETRY_FOR.as_secs(),
                    source: r,
                }
                .into())
            }
            r => return r,
        }
    }
}

/// A refusal of admission, not of the test: too many connections from
/// this address in their handshake ("try again"), or this connection
/// closed to make room for newer ones before its request arrived.
fn admission_refusal(r: &Refused) -> bool {
    r.reason.ends_with("try again") || r.reason.contains("the oldest make room")
}

impl Control {
    /// Connect and read the server's HELLO; a "try again" refusal is
    /// retried for at most [`RETRY_FOR`].
    pub fn connect(addr: SocketAddr) -> Result<Control> {
        retrying(|| Control::connect_once(addr))
    }

    fn connect_once(addr: SocketAddr) -> Result<Control> {
        let stream = TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT)
            .map_err(|e| connect_error(addr, &e))?;
        stream.set_nodelay(true).ok();
        stream.set_read_timeout(Some(proto::MESSAGE_TIMEOUT)).ok();
        stream.set_write_timeout(Some(proto::MESSAGE_TIMEOUT)).ok();
        let s = stream;
        let m = proto::read_message_within(&s, proto::MESSAGE_TIMEOUT).map_err(|e| {
            ControlError::NoHello {
                addr,
                source: Box::new(e),
            }
        })?;
        if m.typ == proto::REFUSE {
            let reason = m
                .need_str(proto::F_REASON, "reason")
                .unwrap_or("no reason given")
                .to_string();
            return Err(ControlError::from(Refused { addr, reason }).into());
        }
        if m.typ != proto::HELLO {
            return Err(ControlError::NotHello { addr, typ: m.typ }.into());
        }
        let version = m
            .need_u64(proto::F_VERSION, "version")
            .map_err(ControlError::from)?;
        if version != proto::PROTOCOL_VERSION {
            return Err(ControlError::Version {
                addr,
                version,
                ours: proto::PROTOCOL_VERSION,
            }
            .into());
        }
        let hello = Hello {
            nonce: m.opt_bytes(proto::F_NONCE).unwrap_or_default().to_vec(),
            max_duration_ns: m.opt_u64(proto::F_MAX_DURATION_NS),
            max_streams: m.opt_u64(proto::F_MAX_STREAMS),
            max_rate_bps: m.opt_u64(proto::F_MAX_RATE_BPS),
            auth_required: m.opt_bool(proto::F_AUTH_REQUIRED).unwrap_or(false),
        };
        Ok(Control {
            stream: s,
            addr,
            hello,
        })
    }

    /// Check a test's size against the limits the server announced, so a
    /// test it would refuse fails here with exit code 5 and the limit named.
    pub fn check_limits(
        &self,
        duration_ns: u64,
        streams: u64,
        rate_bps: u64,
    ) -> Result<(), Refusal> {
        let h = &self.hello;
        if let Some(m) = h.max_duration_ns.filter(|m| duration_ns > *m) {
            return Err(Refusal::ServerDuration {
                asked_ns: duration_ns,
                limit_ns: m,
            });
        }
        if let Some(m) = h.max_streams.filter(|m| streams > *m) {
            return Err(Refusal::ServerStreams { streams, limit: m });
        }
        if let Some(m) = h.max_rate_bps.filter(|m| rate_bps > *m) {
            return Err(Refusal::ServerRate {
                rate_bps,
                limit_bps: m,
            });
        }
        Ok(())
    }

    /// Send a REQUEST (signed when a key is given) and read ACCEPT or REFUSE.
    /// Send the test's request; when the server closed this connection to
    /// make room (or says "try again"), connect again and resend, for at
    /// most [`RETRY_FOR`].
    pub fn request(&mut self, req: Message, key: Option<&StampKey>) -> Result<Accept> {
        let mut again = false;
        retrying(|| {
            if std::mem::replace(&mut again, true) {
                *self = Control::connect_once(self.addr)?;
            }
            self.request_once(req.clone(), key)
        })
    }

    fn request_once(&mut self, mut req: Message, key: Option<&StampKey>) -> Result<Accept> {
        if let Some(k) = key {
            proto::sign(
                &mut req,
                k,
                &self.hello.nonce,
                misura_sys::clock::realtime_ns().max(0) as u64,
            );
        } else if self.hello.auth_required {
            return Err(Refusal::AuthRequired { addr: self.addr }.into());
        }
        let addr = self.addr;
        proto::write_message(&mut self.stream, &req).map_err(|e| ControlError::SendRequest {
            addr,
            source: Box::new(e),
        })?;
        let m = proto::read_message_within(&self.stream, proto::MESSAGE_TIMEOUT).map_err(|e| {
            ControlError::WaitAccept {
                addr,
                source: Box::new(e),
            }
        })?;
        match m.typ {
            proto::ACCEPT => Ok(Accept {
                test_id: m
                    .need_u64(proto::F_TEST_ID, "test id")
                    .map_err(ControlError::from)?,
                data_port: match m
                    .need_u64(proto::F_DATA_PORT, "data port")
                    .map_err(ControlError::from)?
                {
                    p @ 1..=65_535 => p as u16,
                    port => return Err(ControlError::DataPort { addr, port }.into()),
                },
            }),
            proto::REFUSE | proto::ERROR => {
                let reason = m
                    .need_str(proto::F_REASON, "reason")
                    .unwrap_or("no reason given")
                    .to_string();
                Err(ControlError::from(Refused { addr, reason }).into())
            }
            typ => Err(ControlError::RequestAnswer { addr, typ }.into()),
        }
    }

    /// Send DONE with this side's figures and wait up to `wait` for RESULT.
    pub fn done(&mut self, done: &Message, wait: Duration) -> Result<ServerFigures> {
        proto::write_message(&mut self.stream, done)
            .map_err(|e| ControlError::SendDone(Box::new(e)))?;
        let m = proto::read_message_within(&self.stream, wait.max(Duration::from_millis(100)))
            .map_err(|e| ControlError::WaitResult(Box::new(e)))?;
        match m.typ {
            proto::RESULT => Ok(server_figures(&m)),
            proto::ERROR | proto::REFUSE => Err(ControlError::Ended {
                reason: m
                    .need_str(proto::F_REASON, "reason")
                    .unwrap_or("no reason given")
                    .to_string(),
            }
            .into()),
            typ => Err(ControlError::DoneAnswer { typ }.into()),
        }
    }

    /// Tell the server the test is being abandoned (best effort).
    pub fn error(&mut self, reason: &str) {
        let m = Message::new(proto::ERROR).with(proto::F_REASON, Value::Str(reason.into()));
        self.stream
            .set_write_timeout(Some(Duration::from_millis(500)))
            .ok();
        let _ = proto::write_message(&mut self.stream, &m);
    }

    /// `r` as it is, the server told (ERROR `reason`) when it failed: for
    /// the data side of a test the client could not open.
    pub fn told<T>(&mut self, r: Result<T>, reason: &str) -> Result<T> {
        if r.is_err() {
            self.error(reason);
        }
        r
    }
}

/// A test the server accepted: its control connection, id and data address.
pub struct Opened {
    pub ctl: Control,
    pub test_id: u64,
    pub data: SocketAddr,
}

/// HELLO from `server`, the test checked against the limits it announced
/// (`connections` data connections at `rate_bps`, 0 for none, for
/// `duration_ns`), then `req` (a [`request`] with the test's fields) sent,
/// signed with the server's key when it has one, and its ACCEPT read.
pub fn open_test(
    server: &Server,
    req: Message,
    duration_ns: u64,
    connections: u64,
    rate_bps: u64,
) -> Result<Opened> {
    let mut ctl = Control::connect(server.addr)?;
    ctl.check_limits(duration_ns, connections, rate_bps)?;
    let acc = ctl.request(req, server.key.as_ref())?;
    Ok(Opened {
        ctl,
        test_id: acc.test_id,
        data: SocketAddr::new(server.addr.ip(), acc.data_port),
    })
}

/// The common head of a REQUEST.
pub fn request(kind: &str, duration_ns: u64, client: u32) -> Message {
    let name = format!(
        "{} client {client}",
        misura_sys::host::host_facts()
            .hostname
            .unwrap_or_else(|| "misura".into())
    );
    Message::new(proto::REQUEST)
        .with(proto::F_KIND, Value::Str(kind.into()))
        .with(proto::F_DURATION_NS, Value::U64(duration_ns))
        .with(proto::F_CLIENT_NAME, Value::Str(name))
}

/// This side's figures for DONE.
#[derive(Clone, Copy, Debug, Default)]
pub struct DoneFigures {
    /// What the client received, and what it sent.
    pub bytes: u64,
    pub packets: u64,
    pub bytes_sent: u64,
    pub packets_sent: u64,
    pub elapsed_ns: u64,
    pub cpu: CpuUse,
    pub transactions: u64,
    pub partial: bool,
}

pub fn done_message(d: &DoneFigures) -> Message {
    Message::new(proto::DONE)
        .with(proto::F_BYTES, Value::U64(d.bytes))
        .with(proto::F_PACKETS, Value::U64(d.packets))
        .with(proto::F_BYTES_SENT, Value::U64(d.bytes_sent))
        .with(proto::F_PACKETS_SENT, Value::U64(d.packets_sent))
        .with(proto::F_ELAPSED_NS, Value::U64(d.elapsed_ns))
        .with(proto::F_CPU_USER_NS, Value::U64(d.cpu.user_ns))
        .with(proto::F_CPU_SYSTEM_NS, Value::U64(d.cpu.system_ns))
        .with(proto::F_TRANSACTIONS, Value::U64(d.transactions))
        .with(proto::F_PARTIAL, Value::Bool(d.partial))
}

pub fn server_figures(m: &Message) -> ServerFigures {
    let stream_bytes = m
        .opt_bytes(proto::F_STREAM_BYTES)
        .map(|b| {
            b.chunks_exact(8)
                .map(|c| u64::from_be_bytes(c.try_into().unwrap()))
                .collect()
        })
        .unwrap_or_default();
    ServerFigures {
        bytes: m.opt_u64(proto::F_BYTES),
        packets: m.opt_u64(proto::F_PACKETS),
        bytes_sent: m.opt_u64(proto::F_BYTES_SENT),
        packets_sent: m.opt_u64(proto::F_PACKETS_SENT),
        elapsed_ns: m.opt_u64(proto::F_ELAPSED_NS),
        lost: m.opt_u64(proto::F_LOST),
        duplicates: m.opt_u64(proto::F_DUPLICATES),
        reordered: m.opt_u64(proto::F_REORDERED),
        jitter_ns: m.opt_u64(proto::F_JITTER_NS),
        owd_min_ns: signed(m, proto::F_OWD_MIN_NS),
        owd_max_ns: signed(m, proto::F_OWD_MAX_NS),
        stream_bytes,
        cpu_user_ns: m.opt_u64(proto::F_CPU_USER_NS),
        cpu_system_ns: m.opt_u64(proto::F_CPU_SYSTEM_NS),
        transactions: m.opt_u64(proto::F_TRANSACTIONS),
        partial: m.opt_bool(proto::F_PARTIAL),
        reason: m.str(proto::F_REASON).map(String::from),
        // A server that does not report it, or a figure this client cannot
        // read, leaves it out: the figures are the server's account, not
        // something the test needs.
        pacing: m
            .str(proto::F_PACING)
            .and_then(|j| serde_json::from_str(j).ok()),
    }
}

fn signed(m: &Message, id: u16) -> Option<i64> {
    match m.get(id)? {
        Value::I64(v) => Some(*v),
        Value::U64(v) => i64::try_from(*v).ok(),
        _ => None,
    }
}

/// The server's CPU use over its elapsed time, if it sent both.
pub fn remote_cpu(s: &ServerFigures, fallback_elapsed_ns: u64) -> Option<CpuUse> {
    let (u, sys) = (s.cpu_user_ns?, s.cpu_system_ns?);
    Some(CpuUse::new(
        u,
        sys,
        s.elapsed_ns
            .filter(|e| *e > 0)
            .unwrap_or(fallback_elapsed_ns),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use misura_cli::exit::one_line;

    #[test]
    fn result_figures_and_packed_stream_bytes() {
        let mut packed = Vec::new();
        for v in [5u64, 7] {
            packed.extend_from_slice(&v.to_be_bytes());
        }
        let m = Message::new(proto::RESULT)
            .with(proto::F_BYTES, Value::U64(12))
            .with(proto::F_STREAM_BYTES, Value::Bytes(packed))
            .with(proto::F_CPU_USER_NS, Value::U64(1_000))
            .with(proto::F_CPU_SYSTEM_NS, Value::U64(1_000))
            .with(proto::F_ELAPSED_NS, Value::U64(4_000));
        let f = server_figures(&m);
        assert_eq!(f.bytes, Some(12));
        assert_eq!(f.stream_bytes, vec![5, 7]);
        assert_eq!(f.lost, None);
        assert!((remote_cpu(&f, 1).unwrap().utilisation_pct - 50.0).abs() < 1e-9);
    }

    #[test]
    fn unreachable_server_is_one_clear_line() {
        // A port nobody listens on, on loopback: refused at once.
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        drop(l);
        let e = Control::connect(addr).err().unwrap().to_string();
        assert!(
            e.contains("cannot reach misura serve") && e.contains("connection refused"),
            "{e}"
        );
    }

    #[test]
    fn hello_refuse_and_limits_against_a_scripted_server() {
        let (addr, srv) = scripted(Message::new(proto::REFUSE).with(
            proto::F_REASON,
            Value::Str("server busy: 8 tests running (limit 8)".into()),
        ));
        let mut c = Control::connect(addr).unwrap();
        assert!(c
            .check_limits(120_000_000_000, 1, 0)
            .unwrap_err()
            .to_string()
            .contains("limit of 60.0 s"));
        assert!(c.check_limits(1_000_000_000, 17, 0).is_err());
        c.check_limits(1_000_000_000, 4, 1_000_000_000_000).unwrap();
        let e = c
            .request(request("tcp", 1_000_000_000, 0), None)
            .unwrap_err();
        assert!(matches!(
            e,
            ThroughputError::Control(ControlError::Refused(Refused { .. }))
        ));
        assert_eq!(
            e.to_string(),
            format!(
                "misura serve at {addr} refused the test: server busy: 8 tests running (limit 8)"
            )
        );
        srv.join().unwrap();
    }

    /// A one-connection server that greets, reads the request and answers
    /// `answer`.
    fn scripted(answer: Message) -> (SocketAddr, std::thread::JoinHandle<()>) {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let srv = std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            let hello = Message::new(proto::HELLO)
                .with(proto::F_VERSION, Value::U64(1))
                .with(proto::F_NONCE, Value::Bytes(vec![1; 16]))
                .with(proto::F_MAX_DURATION_NS, Value::U64(60_000_000_000))
                .with(proto::F_MAX_STREAMS, Value::U64(16))
                .with(proto::F_AUTH_REQUIRED, Value::Bool(false));
            proto::write_message(&mut s, &hello).unwrap();
            let req = proto::read_message(&mut s).unwrap();
            assert_eq!(req.typ, proto::REQUEST);
            proto::write_message(&mut s, &answer).unwrap();
        });
        (addr, srv)
    }

    #[test]
    fn data_port_0_a_wrong_magic_and_a_silent_server_are_named() {
        let (addr, srv) = scripted(
            Message::new(proto::ACCEPT)
                .with(proto::F_TEST_ID, Value::U64(7))
                .with(proto::F_DATA_PORT, Value::U64(0)),
        );
        let mut c = Control::connect(addr).unwrap();
        let e = c
            .request(request("tcp", 1_000_000_000, 0), None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("data port 0") && e.contains("1 to 65535"), "{e}");
        srv.join().unwrap();
        // A peer that is not misura: its first bytes are not the magic.
        let e = proto::read_message(&mut &b"HTTP/1.1 400 Bad Request\r\n\r\n"[..]).unwrap_err();
        assert!(one_line(&e).contains("control magic"), "{}", one_line(&e));
        // Nothing within the read timeout: the bound is named.
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let mut s = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        s.set_read_timeout(Some(std::time::Duration::from_millis(50)))
            .unwrap();
        let e = proto::read_message(&mut s).unwrap_err();
        assert!(
            one_line(&e).contains("10 s for a control message"),
            "{}",
            one_line(&e)
        );
    }
}
