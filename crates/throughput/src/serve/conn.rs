//! `misura serve`: admitting connections, the handshake, and checking a
//! request against the limits and the key.

use super::control::run_control;
use super::data;
use super::request::parse_request;
use super::state::*;
use super::test::Test;
use crate::proto::{self, Fields};
use misura_wire::control::{Message, Value};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Connections from one source that may wait in the handshake at once;
/// beyond it the source's oldest waiting connection is closed.
const MAX_PENDING_PER_SOURCE: usize = 64;
/// A connection whose first message has begun to arrive is evicted to
/// make room for its own source's newer connections only once it has
/// waited this long (one that has sent nothing makes room at any age).
const MIN_EVICT_AGE: Duration = Duration::from_millis(20);
/// Stack of a connection thread: the loops keep their buffers on the heap.
const THREAD_STACK: usize = 256 * 1024;

/// Take a new connection: within the caps it gets a thread; beyond them the
/// oldest connection still in its handshake makes room, and if none is,
/// the newcomer is refused. Never blocks on the peer.
pub fn admit(shared: &Arc<Shared>, stream: TcpStream, peer: SocketAddr) {
    let ip = peer.ip().to_canonical();
    let id = shared.next_conn.fetch_add(1, Ordering::Relaxed);
    {
        let mut t = shared.table.lock().unwrap();
        let mut evicted = 0;
        if t.pending_by_source.get(&ip).copied().unwrap_or(0) >= MAX_PENDING_PER_SOURCE {
            if t.evict_oldest(Some(ip), MIN_EVICT_AGE) {
                evicted += 1;
            } else {
                drop(t);
                shared.count(|c| c.connections_refused_full += 1);
                let reason = format!(
                    "too many connections from {ip} in their handshake ({MAX_PENDING_PER_SOURCE}, each sending its first message for less than {} ms): try again",
                    MIN_EVICT_AGE.as_millis()
                );
                let _ = stream.set_nonblocking(true);
                let _ = proto::write_message(
                    &mut &stream,
                    &Message::new(proto::REFUSE).with(proto::F_REASON, Value::Str(reason)),
                );
                return;
            }
        }
        // Evicted connections still hold their slot until their thread
        // notices; count them as leaving.
        if t.total >= shared.limits.max_connections
            && !t.evict_oldest(Some(ip), Duration::ZERO)
            && !t.evict_oldest(None, Duration::ZERO)
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
        t.pending.insert(id, (ip, clone, Instant::now()));
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
    let mut reader = Progress {
        r: DeadlineReader {
            stream: &stream,
            until: Instant::now() + l.handshake_timeout,
        },
        shared,
        id: conn_id,
        marked: false,
    };
    let first = proto::read_message(&mut reader);
    // Closed after the HELLO without a byte: a peer that only checked the
    // server is there (`misura load` does, before its first phase), not a
    // malformed one (issue 36: every load run left "1 malformed").
    let looked_only = !reader.marked;
    let evicted = {
        let mut t = shared.table.lock().unwrap();
        t.unpend(conn_id);
        t.evicted.remove(&conn_id)
    };
    let msg = match first {
        Ok(m) => m,
        Err(_) if evicted => return, // counted as evicted already
        Err(e) => {
            if timed_out(&e) {
                shared.count(|c| c.handshake_timeouts += 1);
            } else if !looked_only {
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
                Some(t) if t.peer_ip == ip => {
                    data::connection(shared, &t, stream, msg.opt_u64(proto::F_STREAM_INDEX))
                }
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
    run_control(shared, &test, stream);
    shared.unregister_test(&test);
}

/// The first message's reader, which marks the connection as in progress
/// once its first bytes arrive (it then no longer makes room for newer
/// connections of its source until `MIN_EVICT_AGE`).
struct Progress<'a> {
    r: DeadlineReader<'a>,
    shared: &'a Shared,
    id: u64,
    marked: bool,
}

impl std::io::Read for Progress<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = std::io::Read::read(&mut self.r, buf)?;
        if n > 0 && !self.marked {
            self.marked = true;
            let mut t = self.shared.table.lock().unwrap();
            if t.pending.contains_key(&self.id) {
                t.started.insert(self.id);
            }
        }
        Ok(n)
    }
}
