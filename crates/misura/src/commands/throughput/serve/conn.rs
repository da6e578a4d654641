//! `misura serve`: admitting connections, the handshake, and checking a
//! request against the limits and the key.

use crate::commands::throughput::proto::{self, Fields};
use crate::commands::throughput::serve::handlers::{self, Test};
use crate::commands::throughput::serve::Limits;
use misura_measure::auth::StampKey;
use misura_report::serve::{ServeCounters, ServedTest};
use misura_wire::control::{Message, Value};
use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::net::{IpAddr, Shutdown, SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Connections from one source that may wait in the handshake at once;
/// beyond it the source's oldest waiting connection is closed.
const MAX_PENDING_PER_SOURCE: usize = 64;
/// Stack of a connection thread: the loops keep their buffers on the heap.
const THREAD_STACK: usize = 256 * 1024;

/// Largest message a TCP test may write at once, and largest rr request or
/// response (seed 001 goes up to 500 000 bytes).
pub const MAX_MSG_SIZE: u64 = 1 << 20;
/// Largest UDP payload (IPv4).
pub const MAX_DATAGRAM: u64 = 65_507;
/// Largest socket buffer a test may ask for.
pub const MAX_SOCKET_BUFFER: u64 = 256 << 20;

#[derive(Default)]
struct Table {
    total: usize,
    /// Connections that have not yet sent their first message, oldest first.
    pending: BTreeMap<u64, (IpAddr, TcpStream)>,
    pending_by_source: HashMap<IpAddr, usize>,
    running: usize,
    tests_by_source: HashMap<IpAddr, usize>,
}

impl Table {
    fn unpend(&mut self, id: u64) -> Option<TcpStream> {
        let (ip, s) = self.pending.remove(&id)?;
        if let Some(n) = self.pending_by_source.get_mut(&ip) {
            *n -= 1;
            if *n == 0 {
                self.pending_by_source.remove(&ip);
            }
        }
        Some(s)
    }

    /// Close the oldest pending connection (of `source`, if given).
    fn evict_oldest(&mut self, source: Option<IpAddr>) -> bool {
        let id = self
            .pending
            .iter()
            .find(|(_, (ip, _))| source.is_none_or(|s| *ip == s))
            .map(|(id, _)| *id);
        match id.and_then(|id| self.unpend(id)) {
            Some(s) => {
                // Wakes the connection's thread, which then ends and gives
                // its slot back.
                let _ = s.shutdown(Shutdown::Both);
                true
            }
            None => false,
        }
    }
}

/// State shared by the accept loop and every connection thread.
pub struct Shared {
    pub limits: Limits,
    pub key: Option<StampKey>,
    pub quiet: bool,
    pub shutting_down: AtomicBool,
    table: Mutex<Table>,
    tests: Mutex<HashMap<u64, Arc<Test>>>,
    pub results: Mutex<Vec<ServedTest>>,
    counters: Mutex<ServeCounters>,
    next_conn: AtomicU64,
}

impl Shared {
    pub fn new(limits: Limits, key: Option<StampKey>, quiet: bool) -> Shared {
        Shared {
            limits,
            key,
            quiet,
            shutting_down: AtomicBool::new(false),
            table: Mutex::new(Table::default()),
            tests: Mutex::new(HashMap::new()),
            results: Mutex::new(Vec::new()),
            counters: Mutex::new(ServeCounters::default()),
            next_conn: AtomicU64::new(1),
        }
    }

    pub fn count(&self, f: impl FnOnce(&mut ServeCounters)) {
        f(&mut self.counters.lock().unwrap());
    }

    pub fn counters_snapshot(&self) -> ServeCounters {
        self.counters.lock().unwrap().clone()
    }

    pub fn active_tests(&self) -> usize {
        self.table.lock().unwrap().running
    }

    pub fn test(&self, id: u64) -> Option<Arc<Test>> {
        self.tests.lock().unwrap().get(&id).cloned()
    }

    /// End every running test now; returns how many there were.
    pub fn stop_all_tests(&self) -> usize {
        let tests: Vec<Arc<Test>> = self.tests.lock().unwrap().values().cloned().collect();
        for t in &tests {
            t.end("server stopped");
        }
        tests.len()
    }

    /// Take a test slot, or say why not.
    pub fn register_test(&self, test: Arc<Test>) -> Result<(), String> {
        let l = &self.limits;
        let mut table = self.table.lock().unwrap();
        if self.shutting_down.load(Ordering::Relaxed) {
            return Err("server shutting down".into());
        }
        if table.running >= l.max_tests {
            return Err(format!(
                "server busy: {} tests running (limit {})",
                table.running, l.max_tests
            ));
        }
        let from = table
            .tests_by_source
            .get(&test.peer_ip)
            .copied()
            .unwrap_or(0);
        if from >= l.max_per_source {
            return Err(format!(
                "too many tests from {}: {from} running (limit {} per source)",
                test.peer_ip, l.max_per_source
            ));
        }
        table.running += 1;
        *table.tests_by_source.entry(test.peer_ip).or_default() += 1;
        let mut tests = self.tests.lock().unwrap();
        if !tests.is_empty() {
            test.cpu_shared.store(true, Ordering::Relaxed);
            for t in tests.values() {
                t.cpu_shared.store(true, Ordering::Relaxed);
            }
        }
        tests.insert(test.id, test);
        Ok(())
    }

    pub fn unregister_test(&self, test: &Test) {
        let mut table = self.table.lock().unwrap();
        if self.tests.lock().unwrap().remove(&test.id).is_some() {
            table.running -= 1;
            if let Some(n) = table.tests_by_source.get_mut(&test.peer_ip) {
                *n -= 1;
                if *n == 0 {
                    table.tests_by_source.remove(&test.peer_ip);
                }
            }
        }
    }

    pub fn refused(&self, reason: &str) {
        let key = reason.split(':').next().unwrap_or(reason).to_string();
        self.count(|c| {
            c.tests_refused += 1;
            *c.refusals.entry(key).or_default() += 1;
        });
    }
}

/// Gives a connection's slot back when its thread ends.
struct Slot<'a> {
    shared: &'a Shared,
    id: u64,
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        let mut t = self.shared.table.lock().unwrap();
        t.unpend(self.id);
        t.total -= 1;
    }
}

/// Take a new connection: within the caps it gets a thread; beyond them the
/// oldest connection still in its handshake makes room, and if none is,
/// the newcomer is refused. Never blocks on the peer.
pub fn admit(shared: &Arc<Shared>, stream: TcpStream, peer: SocketAddr) {
    let ip = peer.ip().to_canonical();
    let id = shared.next_conn.fetch_add(1, Ordering::Relaxed);
    {
        let mut t = shared.table.lock().unwrap();
        let mut evicted = 0;
        if t.pending_by_source.get(&ip).copied().unwrap_or(0) >= MAX_PENDING_PER_SOURCE
            && t.evict_oldest(Some(ip))
        {
            evicted += 1;
        }
        // Evicted connections still hold their slot until their thread
        // notices; count them as leaving.
        if t.total >= shared.limits.max_connections
            && !t.evict_oldest(Some(ip))
            && !t.evict_oldest(None)
        {
            drop(t);
            shared.count(|c| c.connections_refused_full += 1);
            let reason = format!(
                "server full: {} connections (limit {})",
                shared.limits.max_connections, shared.limits.max_connections
            );
            let _ = stream.set_write_timeout(Some(Duration::from_millis(100)));
            let _ = proto::write_message(
                &mut &stream,
                &Message::new(proto::REFUSE).with(proto::F_REASON, Value::Str(reason)),
            );
            return;
        } else if t.total >= shared.limits.max_connections {
            evicted += 1;
        }
        let clone = match stream.try_clone() {
            Ok(c) => c,
            Err(_) => return,
        };
        t.total += 1;
        t.pending.insert(id, (ip, clone));
        *t.pending_by_source.entry(ip).or_default() += 1;
        drop(t);
        shared.count(|c| {
            c.connections_accepted += 1;
            c.connections_evicted += evicted;
        });
    }
    let sh = shared.clone();
    let spawned = std::thread::Builder::new()
        .name("misura-conn".into())
        .stack_size(THREAD_STACK)
        .spawn(move || {
            let _slot = Slot { shared: &sh, id };
            handle(&sh, stream, peer, id);
        });
    if spawned.is_err() {
        let mut t = shared.table.lock().unwrap();
        if let Some(s) = t.unpend(id) {
            let _ = s.shutdown(Shutdown::Both);
        }
        t.total -= 1;
    }
}

/// Reads that all end by one instant, however the peer drips its bytes.
pub struct DeadlineReader<'a> {
    pub stream: &'a TcpStream,
    pub until: Instant,
}

impl Read for DeadlineReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let left = self.until.saturating_duration_since(Instant::now());
        if left < Duration::from_millis(1) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "deadline passed",
            ));
        }
        self.stream.set_read_timeout(Some(left))?;
        (&mut &*self.stream).read(buf)
    }
}

/// Was this read failure a timeout?
pub fn timed_out(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>().is_some_and(|io| {
            matches!(
                io.kind(),
                std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock
            )
        })
    })
}

pub fn random_bytes<const N: usize>() -> [u8; N] {
    let mut b = [0u8; N];
    if let Ok(mut f) = std::fs::File::open("/dev/urandom") {
        if f.read_exact(&mut b).is_ok() {
            return b;
        }
    }
    // No /dev/urandom (a bare chroot): the clock and a per-process hash
    // key still make nonces and test ids that do not repeat.
    use std::hash::{BuildHasher, Hasher};
    for (i, chunk) in b.chunks_mut(8).enumerate() {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_i64(misura_sys::clock::monotonic_ns());
        h.write_usize(i);
        chunk.copy_from_slice(&h.finish().to_be_bytes()[..chunk.len()]);
    }
    b
}

fn handle(shared: &Arc<Shared>, stream: TcpStream, peer: SocketAddr, conn_id: u64) {
    let l = &shared.limits;
    let _ = stream.set_nodelay(true);
    let _ = stream.set_write_timeout(Some(l.handshake_timeout));
    let nonce: [u8; 16] = random_bytes();
    let hello = Message::new(proto::HELLO)
        .with(proto::F_VERSION, Value::U64(proto::PROTOCOL_VERSION))
        .with(proto::F_NONCE, Value::Bytes(nonce.to_vec()))
        .with(
            proto::F_MAX_DURATION_NS,
            Value::U64(l.max_duration.as_nanos() as u64),
        )
        .with(proto::F_MAX_STREAMS, Value::U64(l.max_streams as u64))
        .with(proto::F_MAX_RATE_BPS, Value::U64(l.max_rate_bps))
        .with(proto::F_AUTH_REQUIRED, Value::Bool(shared.key.is_some()));
    if proto::write_message(&mut &stream, &hello).is_err() {
        return;
    }
    let first = proto::read_message(&mut DeadlineReader {
        stream: &stream,
        until: Instant::now() + l.handshake_timeout,
    });
    shared.table.lock().unwrap().unpend(conn_id);
    let msg = match first {
        Ok(m) => m,
        Err(e) => {
            if timed_out(&e) {
                shared.count(|c| c.handshake_timeouts += 1);
            } else {
                shared.count(|c| c.malformed += 1);
            }
            return;
        }
    };
    let ip = peer.ip().to_canonical();
    match msg.typ {
        proto::REQUEST => control(
            shared,
            stream,
            SocketAddr::new(ip, peer.port()),
            &nonce,
            &msg,
        ),
        proto::DATA => {
            let test = msg.opt_u64(proto::F_TEST_ID).and_then(|id| shared.test(id));
            match test {
                // A data connection must come from the address that asked
                // for the test (test ids are random as well).
                Some(t) if t.peer_ip == ip => handlers::data(shared, &t, stream),
                _ => shared.count(|c| c.unknown_test_id += 1),
            }
        }
        _ => shared.count(|c| c.malformed += 1),
    }
}

fn refuse(shared: &Shared, stream: &TcpStream, reason: String) {
    shared.refused(&reason);
    let _ = proto::write_message(
        &mut &*stream,
        &Message::new(proto::REFUSE).with(proto::F_REASON, Value::Str(reason)),
    );
    let _ = stream.shutdown(Shutdown::Write);
}

/// A test's parameters, checked.
#[derive(Clone, Debug)]
pub struct Spec {
    pub kind: String,
    pub direction: String,
    pub streams: u64,
    pub duration: Duration,
    pub msg_size: u64,
    pub sndbuf: u64,
    pub rcvbuf: u64,
    pub nodelay: bool,
    pub rate_bps: u64,
    pub df: bool,
    pub request_size: u64,
    pub response_size: u64,
    pub burst: u64,
    pub client_name: Option<String>,
}

impl Spec {
    pub fn is_udp(&self) -> bool {
        matches!(self.kind.as_str(), "udp" | "rr-udp" | "setup")
    }
    pub fn server_sends(&self) -> bool {
        self.direction != "forward"
    }
    pub fn server_receives(&self) -> bool {
        self.direction != "reverse"
    }
}

fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0} s")
    } else {
        format!("{s:.3} s")
    }
}

/// Read and check a request's parameters against the limits.
pub fn parse_request(m: &Message, l: &Limits) -> Result<Spec, String> {
    let kind = m
        .need_str(proto::F_KIND, "kind")
        .map_err(|e| e.to_string())?
        .to_string();
    if !matches!(
        kind.as_str(),
        "tcp" | "udp" | "rr-tcp" | "rr-udp" | "crr" | "setup"
    ) {
        return Err(format!(
            "unknown test kind `{kind}` (this server runs tcp, udp, rr-tcp, rr-udp, crr, setup)"
        ));
    }
    let direction = m.str(proto::F_DIRECTION).unwrap_or("forward").to_string();
    if !matches!(direction.as_str(), "forward" | "reverse" | "bidir") {
        return Err(format!(
            "unknown direction `{direction}` (forward, reverse or bidir)"
        ));
    }
    let u = |id, default| m.opt_u64(id).unwrap_or(default);
    let udp = matches!(kind.as_str(), "udp" | "rr-udp" | "setup");
    let streams = u(proto::F_STREAMS, 1);
    let duration_ns = u(
        proto::F_DURATION_NS,
        (l.max_duration.as_nanos() as u64).min(10_000_000_000),
    );
    let msg_size = u(
        proto::F_MSG_SIZE,
        if kind == "udp" { 1472 } else { 128 * 1024 },
    );
    let spec = Spec {
        direction,
        streams,
        duration: Duration::from_nanos(duration_ns),
        msg_size,
        sndbuf: u(proto::F_SNDBUF, 0),
        rcvbuf: u(proto::F_RCVBUF, 0),
        nodelay: m.opt_bool(proto::F_NODELAY).unwrap_or(false),
        rate_bps: u(proto::F_RATE_BPS, 0),
        df: m.opt_bool(proto::F_DF).unwrap_or(false),
        request_size: u(proto::F_REQUEST_SIZE, if udp { 16 } else { 1 }),
        response_size: u(proto::F_RESPONSE_SIZE, if udp { 16 } else { 1 }),
        burst: u(proto::F_BURST, 1),
        client_name: m
            .str(proto::F_CLIENT_NAME)
            .map(|s| s.chars().filter(|c| !c.is_control()).take(64).collect()),
        kind,
    };
    if spec.streams == 0 || spec.streams > l.max_streams as u64 {
        return Err(format!(
            "{} streams outside 1 … {} (limit of this server)",
            spec.streams, l.max_streams
        ));
    }
    if duration_ns == 0 {
        return Err("duration 0: ask for a test of some length".into());
    }
    if spec.duration > l.max_duration {
        return Err(format!(
            "duration {} above the limit of {}",
            secs(spec.duration),
            secs(l.max_duration)
        ));
    }
    if spec.rate_bps > l.max_rate_bps {
        return Err(format!(
            "rate {} above the limit of {}",
            misura_report::serve::human_bps(spec.rate_bps as f64),
            misura_report::serve::human_bps(l.max_rate_bps as f64)
        ));
    }
    if spec.sndbuf > MAX_SOCKET_BUFFER || spec.rcvbuf > MAX_SOCKET_BUFFER {
        return Err(format!("socket buffer above {} bytes", MAX_SOCKET_BUFFER));
    }
    match spec.kind.as_str() {
        "tcp" if !(1..=MAX_MSG_SIZE).contains(&spec.msg_size) => {
            return Err(format!(
                "message size {} outside 1 … {MAX_MSG_SIZE} bytes",
                spec.msg_size
            ))
        }
        "udp" if !(24..=MAX_DATAGRAM).contains(&spec.msg_size) => {
            return Err(format!(
                "datagram size {} outside 24 … {MAX_DATAGRAM} bytes",
                spec.msg_size
            ))
        }
        "rr-tcp" | "crr" => {
            for (what, v) in [
                ("request", spec.request_size),
                ("response", spec.response_size),
            ] {
                if !(1..=MAX_MSG_SIZE).contains(&v) {
                    return Err(format!("{what} size {v} outside 1 … {MAX_MSG_SIZE} bytes"));
                }
            }
        }
        "rr-udp" | "setup" => {
            // Under 16 bytes a datagram has no room for the test id and
            // transaction number: allowed for rr-udp with one in flight.
            let rr = spec.kind == "rr-udp";
            let min = if rr { 1 } else { 16 };
            for (what, v) in [
                ("request", spec.request_size),
                ("response", spec.response_size),
            ] {
                if !(min..=MAX_DATAGRAM).contains(&v) {
                    return Err(format!(
                        "{what} size {v} outside {min} … {MAX_DATAGRAM} bytes"
                    ));
                }
            }
            if rr && spec.request_size.min(spec.response_size) < 16 && spec.burst > 1 {
                return Err(
                    "datagrams under 16 bytes carry no transaction number: only burst 1".into(),
                );
            }
        }
        _ => {}
    }
    if spec.burst == 0 || spec.burst > 1024 {
        return Err(format!("burst {} outside 1 … 1024", spec.burst));
    }
    if spec.kind == "crr" && spec.burst.max(spec.streams) > l.max_streams as u64 {
        return Err(format!(
            "{} connections in flight above the limit of {}",
            spec.burst, l.max_streams
        ));
    }
    Ok(spec)
}

fn control(shared: &Arc<Shared>, stream: TcpStream, peer: SocketAddr, nonce: &[u8], req: &Message) {
    if let Some(key) = &shared.key {
        let now = misura_sys::clock::realtime_ns().max(0) as u64;
        if let Err(why) = proto::verify(req, key, nonce, now, shared.limits.auth_window) {
            return refuse(shared, &stream, why.to_string());
        }
    }
    let spec = match parse_request(req, &shared.limits) {
        Ok(s) => s,
        Err(why) => return refuse(shared, &stream, why),
    };
    let id = u64::from_be_bytes(random_bytes());
    let test = match Test::new(id, spec, peer, &stream) {
        Ok(t) => Arc::new(t),
        Err(e) => {
            return refuse(
                shared,
                &stream,
                format!("server cannot set the test up: {e}"),
            )
        }
    };
    if let Err(why) = shared.register_test(test.clone()) {
        return refuse(shared, &stream, why);
    }
    shared.count(|c| c.tests_accepted += 1);
    handlers::run_control(shared, &test, stream);
    shared.unregister_test(&test);
}
