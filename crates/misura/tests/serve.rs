//! `misura serve` against hostile and legitimate clients on loopback (no
//! root needed). The tests speak the control protocol themselves
//! (docs/control-protocol.md), so they check the server, not a client.

mod common;

use common::{control_read as read, control_send as send, free_port, misura};
use misura_measure::auth::{hmac16, StampKey};
use misura_wire::control::{Message, Value};
use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream, UdpSocket};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

// Message types and field ids (crates/wire/src/test_control.rs).
const HELLO: u8 = 1;
const REQUEST: u8 = 2;
const ACCEPT: u8 = 3;
const REFUSE: u8 = 4;
const DONE: u8 = 5;
const RESULT: u8 = 6;
const DATA: u8 = 8;
const F_NONCE: u16 = 2;
const F_KIND: u16 = 3;
const F_STREAMS: u16 = 4;
const F_DURATION_NS: u16 = 5;
const F_DIRECTION: u16 = 6;
const F_MSG_SIZE: u16 = 7;
const F_RATE_BPS: u16 = 11;
const F_REQUEST_SIZE: u16 = 13;
const F_RESPONSE_SIZE: u16 = 14;
const F_TIMESTAMP: u16 = 16;
const F_MAC: u16 = 17;
const F_TEST_ID: u16 = 18;
const F_DATA_PORT: u16 = 19;
const F_REASON: u16 = 20;
const F_CLIENT_NAME: u16 = 21;
const F_BYTES: u16 = 30;
const F_PACKETS: u16 = 31;
const F_ELAPSED_NS: u16 = 32;
const F_LOST: u16 = 33;
const F_TRANSACTIONS: u16 = 39;
const F_PARTIAL: u16 = 40;
const F_STREAM_BYTES: u16 = 41;
const F_BYTES_SENT: u16 = 44;
const F_PACKETS_SENT: u16 = 45;
const F_STREAM_INDEX: u16 = 48;

struct Server {
    child: Child,
    port: u16,
}

impl Server {
    fn start(extra: &[&str]) -> Server {
        let port = free_port();
        let child = misura()
            .args([
                "serve",
                "--listen",
                "127.0.0.1",
                "--port",
                &port.to_string(),
            ])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("starting misura serve");
        let s = Server { child, port };
        let t = Instant::now();
        loop {
            if let Ok(mut c) = TcpStream::connect(("127.0.0.1", port)) {
                c.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
                if read(&mut c).map(|m| m.typ) == Some(HELLO) {
                    break;
                }
            }
            assert!(
                t.elapsed() < Duration::from_secs(10),
                "misura serve did not come up on port {port}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        s
    }

    fn connect(&self) -> (TcpStream, Message) {
        let mut c =
            TcpStream::connect(("127.0.0.1", self.port)).expect("connecting to misura serve");
        c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let hello = read(&mut c).expect("HELLO");
        assert_eq!(hello.typ, HELLO);
        (c, hello)
    }

    fn alive(&self) {
        let (_c, _h) = self.connect();
    }

    /// SIGTERM; returns exit code, time to exit, stdout.
    fn terminate(mut self) -> (Option<i32>, Duration, String) {
        let kill = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(kill.success());
        let t = Instant::now();
        let status = loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                break st;
            }
            assert!(
                t.elapsed() < Duration::from_secs(10),
                "misura serve did not exit after SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(5));
        };
        let took = t.elapsed();
        let mut out = String::new();
        self.child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut out)
            .unwrap();
        (status.code(), took, out)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn closed_within(s: &mut TcpStream, d: Duration) -> bool {
    s.set_read_timeout(Some(d)).unwrap();
    let mut b = [0u8; 256];
    loop {
        match s.read(&mut b) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return false
            }
            Err(_) => return true,
        }
    }
}

fn tcp_request(streams: u64, duration: Duration) -> Message {
    Message::new(REQUEST)
        .with(F_KIND, Value::Str("tcp".into()))
        .with(F_STREAMS, Value::U64(streams))
        .with(F_DURATION_NS, Value::U64(duration.as_nanos() as u64))
        .with(F_DIRECTION, Value::Str("forward".into()))
        .with(F_MSG_SIZE, Value::U64(64 * 1024))
        .with(F_CLIENT_NAME, Value::Str("test-client".into()))
}

fn sign(m: &mut Message, key: &StampKey, nonce: &[u8]) {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    m.fields
        .retain(|(id, _)| *id != F_MAC && *id != F_TIMESTAMP);
    m.fields.push((F_TIMESTAMP, Value::U64(now)));
    let mut input = nonce.to_vec();
    m.emit(&mut input).unwrap();
    let mac = hmac16(key, &[&input]);
    m.fields.push((F_MAC, Value::Bytes(mac.to_vec())));
}

fn nonce(hello: &Message) -> Vec<u8> {
    match hello.get(F_NONCE) {
        Some(Value::Bytes(b)) => b.clone(),
        other => panic!("HELLO without a nonce: {other:?}"),
    }
}

/// Send a REQUEST for a `kind` test of `duration` with `fields` on `c`;
/// the answer, which must be ACCEPT.
fn accepted(c: &mut TcpStream, kind: &str, duration: Duration, fields: &[(u16, u64)]) -> Message {
    let mut req = Message::new(REQUEST)
        .with(F_KIND, Value::Str(kind.into()))
        .with(F_DURATION_NS, Value::U64(duration.as_nanos() as u64));
    for &(id, v) in fields {
        req = req.with(id, Value::U64(v));
    }
    accepts(c, &req)
}

/// Send `req` on `c`; the answer, which must be ACCEPT.
fn accepts(c: &mut TcpStream, req: &Message) -> Message {
    send(c, req);
    let acc = read(c).expect("an answer to REQUEST");
    assert_eq!(acc.typ, ACCEPT, "refused: {:?}", acc.str(F_REASON));
    acc
}

/// Send `done` on `c`; the answer, which must be RESULT.
fn result(c: &mut TcpStream, done: Message) -> Message {
    send(c, &done);
    let r = read(c).expect("RESULT");
    assert_eq!(r.typ, RESULT);
    r
}

/// A data connection of test `id` to the server on `port`: its HELLO read
/// and DATA sent.
fn data_connection(port: u16, id: u64) -> TcpStream {
    let mut d = TcpStream::connect(("127.0.0.1", port)).unwrap();
    d.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    assert_eq!(read(&mut d).unwrap().typ, HELLO);
    send(&mut d, &Message::new(DATA).with(F_TEST_ID, Value::U64(id)));
    d
}

/// [`data_connection`] whose DATA says which of the client's streams it
/// is (`F_STREAM_INDEX`), when `stream` is given.
fn numbered_data_connection(port: u16, id: u64, stream: Option<u64>) -> TcpStream {
    let mut d = TcpStream::connect(("127.0.0.1", port)).unwrap();
    d.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    assert_eq!(read(&mut d).unwrap().typ, HELLO);
    let mut data = Message::new(DATA).with(F_TEST_ID, Value::U64(id));
    if let Some(k) = stream {
        data = data.with(F_STREAM_INDEX, Value::U64(k));
    }
    send(&mut d, &data);
    d
}

/// Ask `server` for a 1 s TCP test every `every` until one is accepted (a
/// slot is free), for at most `within`: how long after the first ask that
/// was, or None.
fn slot_back_within(server: &Server, within: Duration, every: Duration) -> Option<Duration> {
    let t = Instant::now();
    loop {
        let (mut c, _) = server.connect();
        send(&mut c, &tcp_request(1, Duration::from_secs(1)));
        if read(&mut c).unwrap().typ == ACCEPT {
            return Some(t.elapsed());
        }
        if t.elapsed() >= within {
            return None;
        }
        std::thread::sleep(every);
    }
}

/// Drive a whole forward TCP test; returns (bytes written, RESULT).
fn tcp_forward(server: &Server, streams: u64, duration: Duration) -> (u64, Message) {
    let (mut c, _hello) = server.connect();
    let acc = accepts(&mut c, &tcp_request(streams, duration));
    let id = acc.u64(F_TEST_ID).unwrap();
    assert_eq!(acc.u64(F_DATA_PORT), Some(server.port as u64));
    let until = Instant::now() + duration;
    let writers: Vec<_> = (0..streams)
        .map(|_| {
            let port = server.port;
            std::thread::spawn(move || {
                let mut d = data_connection(port, id);
                let buf = vec![0x5au8; 64 * 1024];
                let mut n = 0u64;
                while Instant::now() < until {
                    d.write_all(&buf).unwrap();
                    n += buf.len() as u64;
                }
                d.shutdown(Shutdown::Write).unwrap();
                n
            })
        })
        .collect();
    let written: u64 = writers.into_iter().map(|w| w.join().unwrap()).sum();
    let result = result(
        &mut c,
        Message::new(DONE)
            .with(F_BYTES, Value::U64(0))
            .with(F_BYTES_SENT, Value::U64(written))
            .with(F_ELAPSED_NS, Value::U64(duration.as_nanos() as u64))
            .with(F_PARTIAL, Value::Bool(false)),
    );
    (written, result)
}

fn check_result(written: u64, r: &Message, streams: usize) {
    assert_eq!(
        r.u64(F_BYTES),
        Some(written),
        "the server received what the test wrote"
    );
    let Some(Value::Bytes(per)) = r.get(F_STREAM_BYTES) else {
        panic!("no per-stream bytes")
    };
    assert_eq!(per.len(), 8 * streams);
    let sum: u64 = per
        .chunks(8)
        .map(|c| u64::from_be_bytes(c.try_into().unwrap()))
        .sum();
    assert_eq!(sum, written);
    assert!(
        per.chunks(8)
            .all(|c| u64::from_be_bytes(c.try_into().unwrap()) > 0),
        "every stream carried data"
    );
    assert_eq!(
        r.get(F_PARTIAL),
        Some(&Value::Bool(false)),
        "reason: {:?}",
        r.str(F_REASON)
    );
    assert!(r.u64(F_ELAPSED_NS).unwrap() > 500_000_000);
}

#[test]
fn handshake_timeout_drops_a_silent_client() {
    let server = Server::start(&["--handshake-timeout", "1s", "--quiet"]);
    let (mut c, _) = server.connect();
    let t = Instant::now();
    assert!(
        closed_within(&mut c, Duration::from_secs(4)),
        "a silent client was kept"
    );
    let took = t.elapsed();
    assert!(
        took >= Duration::from_millis(800) && took < Duration::from_millis(2500),
        "dropped after {took:?}"
    );
    server.alive();
}

#[test]
fn slow_drip_does_not_block_a_valid_test() {
    let server = Server::start(&["--handshake-timeout", "3s", "--quiet"]);
    let port = server.port;
    let drip = std::thread::spawn(move || {
        let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        assert_eq!(read(&mut c).unwrap().typ, HELLO);
        let mut m = Vec::new();
        tcp_request(1, Duration::from_secs(1)).emit(&mut m).unwrap();
        let t = Instant::now();
        // One byte a second: each read is quick, the whole message never is.
        for b in m {
            if c.write_all(&[b]).is_err() {
                break;
            }
            std::thread::sleep(Duration::from_secs(1));
            if t.elapsed() > Duration::from_secs(8) {
                break;
            }
        }
        let dropped = closed_within(&mut c, Duration::from_millis(100));
        (dropped, t.elapsed())
    });
    std::thread::sleep(Duration::from_millis(200));
    let t = Instant::now();
    let (written, result) = tcp_forward(&server, 2, Duration::from_secs(1));
    assert!(
        t.elapsed() < Duration::from_secs(3),
        "the valid test waited for the slow one: {:?}",
        t.elapsed()
    );
    check_result(written, &result, 2);
    let (dropped, after) = drip.join().unwrap();
    assert!(dropped, "the slow-drip client was not dropped");
    assert!(
        after < Duration::from_secs(6),
        "slow-drip client dropped only after {after:?}"
    );
}

#[test]
fn an_idle_connection_flood_does_not_block_a_test() {
    // A handshake timeout far longer than the test: the flood must be dealt
    // with by the connection caps, not by waiting it out.
    let server = Server::start(&["--handshake-timeout", "60s", "--quiet"]);
    let idle: Vec<TcpStream> = (0..300)
        .filter_map(|_| TcpStream::connect(("127.0.0.1", server.port)).ok())
        .collect();
    assert!(idle.len() >= 290);
    std::thread::sleep(Duration::from_millis(300));
    let t = Instant::now();
    let (written, result) = tcp_forward(&server, 2, Duration::from_secs(1));
    check_result(written, &result, 2);
    assert!(
        t.elapsed() < Duration::from_secs(4),
        "test took {:?}",
        t.elapsed()
    );
    drop(idle);
}

#[test]
fn hostile_headers_close_the_connection_and_the_server_lives() {
    let server = Server::start(&["--quiet"]);
    let valid = {
        let mut b = Vec::new();
        tcp_request(1, Duration::from_secs(1)).emit(&mut b).unwrap();
        b
    };
    let mut huge = valid.clone();
    huge[8..12].copy_from_slice(&u32::MAX.to_be_bytes());
    let mut magic = valid.clone();
    magic[0] = b'X';
    let mut version = valid.clone();
    version[4] = 99;
    let mut fields = valid.clone();
    fields[6..8].copy_from_slice(&u16::MAX.to_be_bytes());
    let mut unknown_type = valid.clone();
    unknown_type[5] = 200;
    for (what, bytes) in [
        ("huge length", huge),
        ("wrong magic", magic),
        ("wrong version", version),
        ("field count", fields),
        ("unknown type", unknown_type),
    ] {
        let (mut c, _) = server.connect();
        c.write_all(&bytes).unwrap();
        let t = Instant::now();
        assert!(
            closed_within(&mut c, Duration::from_secs(3)),
            "{what}: connection kept open"
        );
        assert!(
            t.elapsed() < Duration::from_secs(1),
            "{what}: closed only after {:?}",
            t.elapsed()
        );
        server.alive();
    }
    let (written, result) = tcp_forward(&server, 1, Duration::from_secs(1));
    check_result(written, &result, 1);
}

#[test]
fn max_tests_refuses_the_second_with_a_reason() {
    let server = Server::start(&["--max-tests", "1", "--quiet"]);
    let (mut a, _) = server.connect();
    send(&mut a, &tcp_request(1, Duration::from_secs(5)));
    assert_eq!(read(&mut a).unwrap().typ, ACCEPT);
    let (mut b, _) = server.connect();
    send(&mut b, &tcp_request(1, Duration::from_secs(5)));
    let r = read(&mut b).unwrap();
    assert_eq!(r.typ, REFUSE);
    let why = r.str(F_REASON).unwrap();
    assert!(why.contains("busy") && why.contains("limit 1"), "{why}");
    // The first test's client vanishes: its slot comes back.
    drop(a);
    slot_back_within(&server, Duration::from_secs(3), Duration::from_millis(50))
        .expect("the vanished client's test slot did not come back");
}

#[test]
fn limits_on_duration_streams_rate_and_sizes() {
    let server = Server::start(&[
        "--max-duration",
        "5s",
        "--max-streams",
        "4",
        "--max-rate",
        "100M",
        "--quiet",
    ]);
    let cases = [
        (
            tcp_request(1, Duration::from_secs(600)),
            "duration 600 s above the limit of 5 s",
        ),
        (tcp_request(5, Duration::from_secs(1)), "streams"),
        (
            tcp_request(1, Duration::from_secs(1)).with(F_RATE_BPS, Value::U64(1_000_000_000)),
            "rate",
        ),
        (
            Message::new(REQUEST)
                .with(F_KIND, Value::Str("udp".into()))
                .with(F_MSG_SIZE, Value::U64(100_000)),
            "datagram size",
        ),
        (
            Message::new(REQUEST).with(F_KIND, Value::Str("nuke".into())),
            "unknown test kind",
        ),
    ];
    for (req, expect) in cases {
        let (mut c, _) = server.connect();
        send(&mut c, &req);
        let r = read(&mut c).unwrap();
        assert_eq!(r.typ, REFUSE);
        let why = r.str(F_REASON).unwrap();
        assert!(why.contains(expect), "`{why}` does not say `{expect}`");
    }
}

#[test]
fn authentication() {
    let dir = std::env::temp_dir().join(format!("misura-serve-auth-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let key_file = dir.join("key");
    std::fs::write(
        &key_file,
        "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n",
    )
    .unwrap();
    let key = StampKey::from_file_contents(
        b"00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff",
    )
    .unwrap();
    let wrong = StampKey::from_file_contents(
        b"ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100",
    )
    .unwrap();
    let server = Server::start(&["--key-file", key_file.to_str().unwrap(), "--quiet"]);

    let (mut c, _) = server.connect();
    send(&mut c, &tcp_request(1, Duration::from_secs(1)));
    let r = read(&mut c).unwrap();
    assert_eq!(r.typ, REFUSE);
    assert!(
        r.str(F_REASON).unwrap().contains("authentication required"),
        "{:?}",
        r.str(F_REASON)
    );

    let (mut c, hello) = server.connect();
    let mut req = tcp_request(1, Duration::from_secs(1));
    sign(&mut req, &wrong, &nonce(&hello));
    send(&mut c, &req);
    let r = read(&mut c).unwrap();
    assert_eq!(r.typ, REFUSE);
    assert!(
        r.str(F_REASON).unwrap().contains("wrong key"),
        "{:?}",
        r.str(F_REASON)
    );

    // Signed for another connection's nonce: a replay.
    let (mut c, _) = server.connect();
    send(&mut c, &req);
    assert_eq!(read(&mut c).unwrap().typ, REFUSE);

    let (mut c, hello) = server.connect();
    let mut req = tcp_request(1, Duration::from_secs(1));
    sign(&mut req, &key, &nonce(&hello));
    send(&mut c, &req);
    let r = read(&mut c).unwrap();
    assert_eq!(r.typ, ACCEPT, "{:?}", r.str(F_REASON));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn udp_forward_and_rr_tcp() {
    let server = Server::start(&["--quiet"]);
    // UDP: 0.5 s at 1000 datagrams/s.
    let (mut c, _) = server.connect();
    let acc = accepted(
        &mut c,
        "udp",
        Duration::from_millis(500),
        &[(F_MSG_SIZE, 200), (F_RATE_BPS, 1_600_000)],
    );
    let id = acc.u64(F_TEST_ID).unwrap();
    let port = acc.u64(F_DATA_PORT).unwrap() as u16;
    let u = UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut sent = 0u64;
    for seq in 0..500u64 {
        let mut d = vec![0u8; 200];
        d[..8].copy_from_slice(&id.to_be_bytes());
        d[8..16].copy_from_slice(&seq.to_be_bytes());
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as i64;
        d[16..24].copy_from_slice(&now.to_be_bytes());
        if seq != 100 {
            // One datagram "lost".
            u.send_to(&d, ("127.0.0.1", port)).unwrap();
        }
        sent += 1;
        std::thread::sleep(Duration::from_millis(1));
    }
    let r = result(
        &mut c,
        Message::new(DONE)
            .with(F_PACKETS_SENT, Value::U64(sent))
            .with(F_BYTES_SENT, Value::U64(sent * 200)),
    );
    assert_eq!(r.u64(F_PACKETS), Some(499));
    assert_eq!(r.u64(F_BYTES), Some(499 * 200));
    assert_eq!(r.u64(F_LOST), Some(1));

    // rr-tcp: 200 transactions of 10 → 20 bytes.
    let (mut c, _) = server.connect();
    let acc = accepted(
        &mut c,
        "rr-tcp",
        Duration::from_secs(1),
        &[(F_REQUEST_SIZE, 10), (F_RESPONSE_SIZE, 20)],
    );
    let mut d = data_connection(server.port, acc.u64(F_TEST_ID).unwrap());
    let mut resp = [0u8; 20];
    for _ in 0..200 {
        d.write_all(&[1u8; 10]).unwrap();
        d.read_exact(&mut resp).unwrap();
    }
    drop(d);
    let r = result(
        &mut c,
        Message::new(DONE).with(F_TRANSACTIONS, Value::U64(200)),
    );
    assert_eq!(r.u64(F_TRANSACTIONS), Some(200));
    assert_eq!(r.u64(F_BYTES), Some(2000));
}

#[test]
fn sigterm_exits_promptly_and_writes_the_report() {
    let dir = std::env::temp_dir().join(format!("misura-serve-term-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("serve.json");
    let server = Server::start(&["--report-json", json.to_str().unwrap()]);
    let (written, result) = tcp_forward(&server, 2, Duration::from_secs(1));
    check_result(written, &result, 2);
    // A test still running at the stop, and an idle connection.
    let (mut running, _) = server.connect();
    send(&mut running, &tcp_request(1, Duration::from_secs(30)));
    assert_eq!(read(&mut running).unwrap().typ, ACCEPT);
    let _idle = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    let (code, took, stdout) = server.terminate();
    assert_eq!(code, Some(143));
    assert!(took < Duration::from_millis(2000), "exit took {took:?}");
    assert!(stdout.contains("test-client"), "{stdout}");
    assert!(stdout.contains("aggregate"), "{stdout}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["format"], "misura.serve");
    assert_eq!(v["format_version"], 2);
    assert_eq!(v["config"]["busy_poll_ns"], 5000, "the default --busy-poll");
    assert!(v["host"]["online_cpus"].as_u64().unwrap() > 0);
    let tests = v["tests"].as_array().unwrap();
    assert_eq!(tests.len(), 2, "{tests:?}");
    let done = tests
        .iter()
        .find(|t| !t["partial"].as_bool().unwrap())
        .expect("the finished test");
    assert_eq!(done["bytes_received"].as_u64(), Some(written));
    assert!(done["throughput_bps"].as_f64().unwrap() > 0.0);
    assert!(
        tests.iter().any(|t| t["partial"].as_bool().unwrap()),
        "the running test is marked partial"
    );
    assert_eq!(v["clients"].as_array().unwrap().len(), 1);
    assert!(v["aggregate_throughput_bps"].as_f64().unwrap() > 0.0);
    assert_eq!(v["complete"], false);
    std::fs::remove_dir_all(&dir).ok();
}

/// Open file descriptors of a process (Linux).
fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| d.count())
        .unwrap_or(0)
}

#[test]
fn crr_back_to_back_connections_are_not_refused_and_fds_do_not_grow() {
    // crr with burst 1: the client opens its next connection as soon as it
    // has closed the previous one, before the server's handler of that one
    // has ended. None may be refused (reset), and the server closes each
    // connection when its transaction is over instead of holding it until
    // the test's end.
    let server = Server::start(&["--quiet"]);
    let pid = server.child.id();
    let (mut c, _) = server.connect();
    let fds0 = open_fds(pid);
    let duration = Duration::from_secs(2);
    let acc = accepted(
        &mut c,
        "crr",
        duration,
        &[(F_REQUEST_SIZE, 1), (F_RESPONSE_SIZE, 1)],
    );
    let id = acc.u64(F_TEST_ID).unwrap();
    let until = Instant::now() + duration;
    let (mut done, mut failed, mut max_fds) = (0u64, Vec::new(), 0usize);
    while Instant::now() < until {
        let mut d = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
        d.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        d.set_nodelay(true).unwrap();
        let ok = (|| {
            if read(&mut d)?.typ != HELLO {
                return None;
            }
            let mut b = Vec::new();
            Message::new(DATA)
                .with(F_TEST_ID, Value::U64(id))
                .emit(&mut b)
                .ok()?;
            b.push(1);
            d.write_all(&b).ok()?;
            let mut resp = [0u8; 1];
            d.read_exact(&mut resp).ok()
        })();
        match ok {
            Some(()) => done += 1,
            None => failed.push(done),
        }
        drop(d);
        if done % 100 == 0 {
            max_fds = max_fds.max(open_fds(pid));
        }
    }
    let r = result(
        &mut c,
        Message::new(DONE).with(F_TRANSACTIONS, Value::U64(done)),
    );
    assert!(done > 200, "only {done} transactions in {duration:?}");
    assert!(
        failed.is_empty(),
        "{} of {} connections refused or reset (after transactions {:?})",
        failed.len(),
        done + failed.len() as u64,
        &failed[..failed.len().min(10)]
    );
    assert_eq!(r.u64(F_TRANSACTIONS), Some(done));
    assert_eq!(
        r.get(F_PARTIAL),
        Some(&Value::Bool(false)),
        "{:?}",
        r.str(F_REASON)
    );
    // A few in passing (a handler ending while the next is accepted),
    // whatever the number of transactions; holding them made thousands.
    assert!(
        max_fds <= fds0 + 32,
        "server fds grew from {fds0} to {max_fds} over {done} transactions"
    );
}

/// A server with one test slot, an idle timeout of 1 s and tests of up to
/// 30 s.
fn one_slot_server() -> Server {
    Server::start(&[
        "--max-tests",
        "1",
        "--idle-timeout",
        "1s",
        "--max-duration",
        "30s",
        "--quiet",
    ])
}

/// Issue 13, finding 3: an accepted test whose client never sends data is
/// ended after the idle timeout, not held for its whole duration, so its
/// slot comes back for real clients.
#[test]
fn an_accepted_then_silent_test_frees_its_slot_after_the_idle_timeout() {
    let server = one_slot_server();
    let (mut silent, _) = server.connect();
    send(&mut silent, &tcp_request(1, Duration::from_secs(15)));
    assert_eq!(read(&mut silent).unwrap().typ, ACCEPT);
    let back = slot_back_within(&server, Duration::from_secs(4), Duration::from_millis(100))
        .expect("a silent 15 s test still held the only slot after 4 s");
    assert!(
        back >= Duration::from_millis(500),
        "the slot came back before the idle timeout"
    );
}

/// Issue 13, finding 4: the client's own address churning idle connections
/// (new ones arriving all through the test) must not push out the real
/// client's data connections, which are younger than the churn's oldest.
#[test]
fn own_address_churn_does_not_evict_the_real_clients_data_connections() {
    let server = Server::start(&["--handshake-timeout", "60s", "--quiet"]);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (port, stop2) = (server.port, stop.clone());
    let churn = std::thread::spawn(move || {
        let mut held = std::collections::VecDeque::new();
        let t = Instant::now();
        while !stop2.load(std::sync::atomic::Ordering::Relaxed)
            && t.elapsed() < Duration::from_secs(20)
        {
            if let Ok(c) = TcpStream::connect(("127.0.0.1", port)) {
                held.push_back(c);
            }
            if held.len() > 200 {
                held.pop_front();
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    });
    std::thread::sleep(Duration::from_millis(500));
    for _ in 0..3 {
        let (written, result) = tcp_forward(&server, 4, Duration::from_secs(1));
        check_result(written, &result, 4);
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    churn.join().unwrap();
}

/// The campaign's form of finding 3: a real client stopped (SIGSTOP) in the
/// middle of its test holds its data and control connections open but
/// sends nothing; the test is ended an idle timeout after its last data,
/// not held until its duration and the idle timeout have passed.
#[test]
fn a_client_stopped_mid_test_frees_its_slot_after_the_idle_timeout() {
    let server = one_slot_server();
    let mut client = misura()
        .args(["--no-store", "tcp", &format!("127.0.0.1:{}", server.port)])
        .args(["--duration", "20s", "-q"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    let stop = |sig: &str| {
        let _ = std::process::Command::new("kill")
            .args([sig, &client.id().to_string()])
            .status();
    };
    stop("-STOP");
    let freed = slot_back_within(&server, Duration::from_secs(8), Duration::from_millis(100));
    stop("-KILL");
    stop("-CONT");
    let _ = client.wait();
    let freed = freed.expect("a stopped client held the only slot for 8 s");
    assert!(
        freed < Duration::from_millis(3500),
        "the slot came back only after {freed:?}"
    );
}

/// `--busy-poll`: with a window (and with none) the reader still reads
/// every byte of every stream, and the report says which window ran; a
/// window past the bound is refused before anything starts.
#[test]
fn busy_poll_window_reads_every_byte_and_is_reported() {
    let dir = std::env::temp_dir().join(format!("misura-serve-busy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (window, ns) in [("200us", 200_000), ("0", 0)] {
        let json = dir.join(format!("serve-{ns}.json"));
        let server = Server::start(&[
            "--busy-poll",
            window,
            "--export-json",
            json.to_str().unwrap(),
        ]);
        let (written, result) = tcp_forward(&server, 2, Duration::from_secs(1));
        check_result(written, &result, 2);
        let (code, _, _) = server.terminate();
        assert_eq!(code, Some(143));
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        assert_eq!(v["config"]["busy_poll_ns"], ns, "--busy-poll {window}");
        assert_eq!(v["tests"][0]["bytes_received"].as_u64(), Some(written));
    }
    std::fs::remove_dir_all(&dir).ok();
    let out = misura()
        .args([
            "serve",
            "--listen",
            "127.0.0.1",
            "--port",
            &free_port().to_string(),
        ])
        .args(["--busy-poll", "2ms"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--busy-poll 2ms") && err.contains("1ms"),
        "{err}"
    );
}

/// Issue 29, item 9: 300 idle connections from the client's own address,
/// each reopened as soon as the server closes it (a fast churn). The real
/// `misura tcp --streams 4` from that address still gets its test: the
/// server admits by progress (a connection that sent nothing makes room,
/// whatever its age; one whose first message is arriving does not), and
/// the client retries a "try again" refusal for a bounded time.
#[test]
fn a_fast_idle_churn_from_the_clients_own_address_does_not_lock_it_out() {
    let server = Server::start(&["--handshake-timeout", "20s", "--quiet"]);
    let port = server.port;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let churn = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let open = || {
                let c = TcpStream::connect(("127.0.0.1", port)).ok()?;
                c.set_nonblocking(true).ok()?;
                Some(c)
            };
            let mut conns: Vec<Option<TcpStream>> = (0..300).map(|_| open()).collect();
            let (mut reopened, t) = (0u64, Instant::now());
            while !stop.load(std::sync::atomic::Ordering::Relaxed)
                && t.elapsed() < Duration::from_secs(60)
            {
                for c in conns.iter_mut() {
                    let mut b = [0u8; 512];
                    let closed = match c.as_mut().map(|s| s.read(&mut b)) {
                        None | Some(Ok(0)) => true,
                        Some(Ok(_)) => false,
                        Some(Err(e)) => e.kind() != std::io::ErrorKind::WouldBlock,
                    };
                    if closed {
                        *c = open();
                        reopened += 1;
                    }
                }
            }
            reopened
        })
    };
    std::thread::sleep(Duration::from_secs(1));
    let mut outcomes = Vec::new();
    for _ in 0..3 {
        let t = Instant::now();
        let o = misura()
            .args(["--no-store", "tcp", &format!("127.0.0.1:{port}")])
            .args(["--streams", "4", "--duration", "1s", "--json"])
            .output()
            .unwrap();
        let out = String::from_utf8_lossy(&o.stdout);
        let warnings = match o.status.code() {
            Some(0) => String::new(),
            _ => out.chars().take(3000).collect::<String>(),
        };
        outcomes.push((
            o.status.code(),
            t.elapsed(),
            format!("{}{warnings}", String::from_utf8_lossy(&o.stderr)),
        ));
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let reopened = churn.join().unwrap();
    eprintln!("{reopened} idle connections reopened; the real tests: {outcomes:?}");
    assert!(reopened > 300, "the churn did not churn: {reopened}");
    for (code, took, err) in &outcomes {
        assert_eq!(*code, Some(0), "locked out after {took:?}: {err}");
        assert!(*took < Duration::from_secs(12), "{took:?}");
    }
}

/// A forward test of 3 streams whose data connections reach the server one
/// by one (each handled before the next is opened), numbered by the client
/// as `asked`, each writing its own byte count: the server's per-stream
/// bytes, in its order.
fn stream_bytes_filed(server: &Server, asked: [Option<u64>; 3]) -> Vec<u64> {
    let (mut c, _hello) = server.connect();
    let acc = accepts(&mut c, &tcp_request(3, Duration::from_secs(2)));
    let id = acc.u64(F_TEST_ID).unwrap();
    let mut written = 0;
    for (k, stream) in asked.iter().enumerate() {
        let mut d = numbered_data_connection(server.port, id, *stream);
        let n = 1000 * (k + 1);
        d.write_all(&vec![0x5a; n]).unwrap();
        d.shutdown(Shutdown::Write).unwrap();
        written += n as u64;
        // The server's handler takes its stream number before the next
        // connection is opened.
        std::thread::sleep(Duration::from_millis(300));
    }
    let r = result(
        &mut c,
        Message::new(DONE)
            .with(F_BYTES, Value::U64(0))
            .with(F_BYTES_SENT, Value::U64(written))
            .with(F_PARTIAL, Value::Bool(false)),
    );
    assert_eq!(r.u64(F_BYTES), Some(written));
    let Some(Value::Bytes(per)) = r.get(F_STREAM_BYTES) else {
        panic!("no per-stream bytes")
    };
    per.chunks(8)
        .map(|c| u64::from_be_bytes(c.try_into().unwrap()))
        .collect()
}

#[test]
fn per_stream_bytes_follow_the_clients_numbering_not_the_arrival_order() {
    let server = Server::start(&[]);
    // The client's streams 2, 0, 1 arrive in that order.
    assert_eq!(
        stream_bytes_filed(&server, [Some(2), Some(0), Some(1)]),
        vec![2000, 3000, 1000]
    );
    // A client that numbers none (older ones) gets arrival order; a number
    // out of range or already taken gets the lowest free one.
    assert_eq!(
        stream_bytes_filed(&server, [None, None, None]),
        vec![1000, 2000, 3000]
    );
    assert_eq!(
        stream_bytes_filed(&server, [Some(1), Some(1), Some(9)]),
        vec![2000, 1000, 3000]
    );
}
