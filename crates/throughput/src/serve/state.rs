//! State shared by the accept loop and every connection thread: the slot
//! tables, the running tests, counters and results.

use super::limits::Limits;
use super::test::Test;
use crate::proto;
use misura_measure::auth::StampKey;
use misura_report::serve::{ServeCounters, ServedTest};
use misura_wire::control::{Message, Value};
use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::net::{IpAddr, Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Default)]
pub(super) struct Table {
    pub(super) total: usize,
    /// Connections that have not yet sent their first message, oldest first.
    pub(super) pending: BTreeMap<u64, (IpAddr, TcpStream, Instant)>,
    pub(super) pending_by_source: HashMap<IpAddr, usize>,
    pub(super) running: usize,
    pub(super) tests_by_source: HashMap<IpAddr, usize>,
    /// Connections closed by eviction whose thread has not yet noticed:
    /// their failed read is the eviction, not a malformed peer.
    pub(super) evicted: std::collections::HashSet<u64>,
    /// Pending connections whose first message has begun to arrive.
    pub(super) started: std::collections::HashSet<u64>,
}

impl Table {
    pub(super) fn unpend(&mut self, id: u64) -> Option<TcpStream> {
        self.started.remove(&id);
        let (ip, s, _) = self.pending.remove(&id)?;
        if let Some(n) = self.pending_by_source.get_mut(&ip) {
            *n -= 1;
            if *n == 0 {
                self.pending_by_source.remove(&ip);
            }
        }
        Some(s)
    }

    /// Close the oldest pending connection (of `source`, if given) that has
    /// sent nothing, whatever its age; only when every one has sent
    /// something, the oldest whose first message has been arriving for at
    /// least `min_age` (a drip). Admission by progress: a churn of idle
    /// connections from a client's own address makes room for the
    /// client's, and a connection whose first message has arrived is not
    /// pushed out while an idle one is there, however long its thread
    /// waits for a CPU (a busy host: its HELLO may be out already, so its
    /// client would stream into a closed socket).
    pub(super) fn evict_oldest(&mut self, source: Option<IpAddr>, min_age: Duration) -> bool {
        let now = Instant::now();
        let from = |ip: &IpAddr| source.is_none_or(|src| *ip == src);
        let idle = self
            .pending
            .iter()
            .find(|(id, (ip, s, _))| from(ip) && !(self.started.contains(id) || has_sent(s)));
        let id = idle
            .or_else(|| {
                self.pending
                    .iter()
                    .find(|(_, (ip, _, at))| from(ip) && now - *at >= min_age)
            })
            .map(|(id, _)| *id);
        match id.and_then(|id| self.unpend(id).map(|s| (id, s))) {
            Some((id, s)) => {
                // Say why before closing (never waiting for the peer), then
                // wake the connection's thread, which ends and gives its
                // slot back.
                let why = match source {
                    Some(ip) => format!(
                        "closed: too many connections from {ip} still in their handshake; the oldest make room"
                    ),
                    None => "closed: the server is full and this connection was the oldest still in its handshake".into(),
                };
                let _ = s.set_nonblocking(true);
                let _ = proto::write_message(
                    &mut &s,
                    &Message::new(proto::REFUSE).with(proto::F_REASON, Value::Str(why)),
                );
                let _ = s.shutdown(Shutdown::Both);
                self.evicted.insert(id);
                true
            }
            None => false,
        }
    }
}

/// Whether the peer's first bytes wait in the socket (its thread has not
/// read them yet): a peek that never blocks. Linux's MSG_PEEK | MSG_DONTWAIT.
fn has_sent(s: &TcpStream) -> bool {
    const MSG_PEEK: i32 = 0x2;
    const MSG_DONTWAIT: i32 = 0x40;
    let mut b = [std::mem::MaybeUninit::<u8>::uninit(); 1];
    matches!(
        socket2::SockRef::from(s).recv_with_flags(&mut b, MSG_PEEK | MSG_DONTWAIT),
        Ok(n) if n > 0
    )
}

/// State shared by the accept loop and every connection thread.
pub struct Shared {
    pub limits: Limits,
    pub key: Option<StampKey>,
    pub quiet: bool,
    pub shutting_down: AtomicBool,
    pub(super) table: Mutex<Table>,
    pub(super) tests: Mutex<HashMap<u64, Arc<Test>>>,
    pub results: Mutex<Vec<ServedTest>>,
    pub(super) counters: Mutex<ServeCounters>,
    pub(super) next_conn: AtomicU64,
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
pub(super) struct Slot<'a> {
    pub(super) shared: &'a Shared,
    pub(super) id: u64,
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        let mut t = self.shared.table.lock().unwrap();
        t.unpend(self.id);
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
pub fn timed_out(e: &(dyn std::error::Error + 'static)) -> bool {
    crate::error::io_cause(e).is_some_and(|io| {
        matches!(
            io.kind(),
            std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock
        )
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::net::{TcpListener, TcpStream};

    /// A loopback connection: the client's end and the server's.
    fn pair(l: &TcpListener) -> (TcpStream, TcpStream) {
        let c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        (c, l.accept().unwrap().0)
    }

    fn pend(t: &mut Table, id: u64, s: &TcpStream, age: Duration) {
        let ip = s.peer_addr().unwrap().ip();
        t.pending
            .insert(id, (ip, s.try_clone().unwrap(), Instant::now() - age));
        *t.pending_by_source.entry(ip).or_default() += 1;
        t.total += 1;
    }

    #[test]
    fn an_idle_connection_makes_room_before_one_whose_first_message_arrived() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let (mut client, sent) = pair(&l);
        let (_idle_client, idle) = pair(&l);
        client.write_all(b"DATA").unwrap();
        let t0 = Instant::now();
        while !has_sent(&sent) && t0.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(has_sent(&sent), "the first bytes never arrived");
        let mut t = Table::default();
        // The one that sent is older, and past the drip age.
        pend(&mut t, 1, &sent, Duration::from_secs(1));
        pend(&mut t, 2, &idle, Duration::ZERO);
        let ip = sent.peer_addr().unwrap().ip();
        assert!(t.evict_oldest(Some(ip), Duration::from_millis(20)));
        assert!(t.evicted.contains(&2) && t.pending.contains_key(&1));
        // With no idle one left, the drip past its age goes.
        assert!(t.evict_oldest(Some(ip), Duration::from_millis(20)));
        assert!(t.evicted.contains(&1) && t.pending.is_empty());
        assert!(!t.evict_oldest(None, Duration::ZERO));
    }

    #[test]
    fn a_young_first_message_is_never_evicted() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let (mut client, sent) = pair(&l);
        client.write_all(b"D").unwrap();
        let t0 = Instant::now();
        while !has_sent(&sent) && t0.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(1));
        }
        let mut t = Table::default();
        pend(&mut t, 1, &sent, Duration::ZERO);
        assert!(!t.evict_oldest(None, Duration::from_secs(60)));
        assert!(t.pending.contains_key(&1));
    }
}
