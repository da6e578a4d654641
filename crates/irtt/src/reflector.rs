//! The irtt reflector's decisions, with no clock and no socket: which
//! datagrams open, echo on or close a session, what each reply holds, and
//! the bounds (sessions, rate, length, idle time). The caller reads the
//! clocks and hands in the stamps; the `server` module is its I/O loop.
//!
//! As irtt 0.9's server: the client's wanted parameters are granted
//! except where a bound restricts them (the interval to the rate limit,
//! the length to [`MAX_PACKET_LEN`], no DSCP, no server fill); stamps are
//! taken where the client asked and on the clocks it asked for; the
//! received count and window follow irtt's rules, sequence numbers
//! wrapping. Unlike irtt, a reply is never longer than its request: a
//! request shorter than the granted layout is dropped, so the reflector
//! cannot amplify.

use misura_wire::irtt::{self, Echo, IrttError, Layout, Packet, Time, MAX_PACKET_LEN};
use misura_wire::irtt_params::Params;
use std::collections::HashMap;
use std::net::SocketAddr;

/// A session idle this long is forgotten (irtt's default server timeout).
pub const IDLE_TIMEOUT_NS: i64 = 60_000_000_000;
/// Longest interval granted: a quarter of the idle timeout, as irtt.
pub const MAX_INTERVAL_NS: i64 = IDLE_TIMEOUT_NS / 4;

/// The reflector's bounds and key.
#[derive(Debug, Clone)]
pub struct Config {
    pub key: Option<Vec<u8>>,
    /// Sessions open at once; an open beyond it is refused (close flag).
    pub max_sessions: usize,
    /// Replies per second per session, with a tenth of a second's burst.
    pub rate_per_s: u64,
}

/// What happened to the datagrams, by kind. Every datagram lands in one
/// counter.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Counters {
    pub received: u64,
    pub opened: u64,
    /// Opens refused: another protocol version, or the session table full.
    pub refused: u64,
    /// Open-close handshakes (`irtt client --notest`... ), answered, no session.
    pub open_close: u64,
    pub closed: u64,
    pub expired: u64,
    pub replies: u64,
    /// Not irtt, a bad header, a bad parameter block, or a reply sent to us.
    pub malformed: u64,
    pub hmac_failures: u64,
    pub unknown_token: u64,
    /// A token used from another address than the one that opened it.
    pub address_mismatch: u64,
    /// An echo request shorter than the negotiated packet: no reply (it
    /// would be longer than the request).
    pub short_request: u64,
    pub rate_limited: u64,
}

struct Session {
    peer: SocketAddr,
    layout: Layout,
    reply_len: usize,
    last_seqno: u32,
    count: u32,
    window: u64,
    window_valid: bool,
    last_ns: i64,
    bucket: f64,
}

/// The reflector core.
pub struct Reflector {
    cfg: Config,
    sessions: HashMap<u64, Session>,
    counters: Counters,
    since_sweep: u32,
}

/// What to do with a datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Send `len` bytes of the output buffer back to the source.
    Reply {
        len: usize,
    },
    Drop,
}

impl Reflector {
    pub fn new(cfg: Config) -> Reflector {
        Reflector {
            cfg,
            sessions: HashMap::new(),
            counters: Counters::default(),
            since_sweep: 0,
        }
    }

    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    pub fn sessions(&self) -> usize {
        self.sessions.len()
    }

    /// Handles one datagram from `src`, received at `rx` (`now_ns` on the
    /// monotonic clock of `rx.mono_ns`), to be sent at `tx`. `new_token`
    /// is a fresh random token for a session this datagram may open.
    #[allow(clippy::too_many_arguments)]
    pub fn handle(
        &mut self,
        req: &[u8],
        src: SocketAddr,
        rx: Time,
        tx: Time,
        now_ns: i64,
        new_token: u64,
        out: &mut [u8],
    ) -> Decision {
        self.counters.received += 1;
        self.since_sweep += 1;
        if self.since_sweep >= 1024 {
            self.sweep(now_ns);
        }
        let key = self.cfg.key.as_deref();
        let pkt = match irtt::parse(req, key, false) {
            Ok(p) => p,
            Err(IrttError::HmacMismatch | IrttError::HmacMissing | IrttError::HmacUnexpected) => {
                self.counters.hmac_failures += 1;
                return Decision::Drop;
            }
            Err(_) => {
                self.counters.malformed += 1;
                return Decision::Drop;
            }
        };
        match pkt {
            Packet::Open { close, params, .. } => {
                self.open(close, params, src, now_ns, new_token, out)
            }
            Packet::Close { token } => {
                match self.sessions.get(&token) {
                    Some(s) if s.peer == src => {
                        self.sessions.remove(&token);
                        self.counters.closed += 1;
                    }
                    Some(_) => self.counters.address_mismatch += 1,
                    None => self.counters.unknown_token += 1,
                }
                Decision::Drop
            }
            Packet::Echo { token } => self.echo(req, token, src, rx, tx, now_ns, out),
        }
    }

    fn open(
        &mut self,
        close: bool,
        mut p: Params,
        src: SocketAddr,
        now_ns: i64,
        token: u64,
        out: &mut [u8],
    ) -> Decision {
        let key = self.cfg.key.clone();
        let key = key.as_deref();
        let refuse = p.protocol_version != irtt::PROTOCOL_VERSION;
        p.protocol_version = irtt::PROTOCOL_VERSION;
        let min_interval = (1_000_000_000 / self.cfg.rate_per_s.max(1)) as i64;
        p.interval_ns = p.interval_ns.clamp(min_interval, MAX_INTERVAL_NS);
        p.length = p.length.clamp(0, MAX_PACKET_LEN as i64);
        p.dscp = 0;
        p.server_fill.clear();
        if self.sessions.len() >= self.cfg.max_sessions {
            self.sweep(now_ns);
        }
        let full = self.sessions.len() >= self.cfg.max_sessions;
        let (token, close) = if refuse || full {
            self.counters.refused += 1;
            (0, true)
        } else if close {
            self.counters.open_close += 1;
            (0, true)
        } else {
            let layout = Layout::new(&p, key.is_some());
            let reply_len = layout.packet_len(p.length as usize);
            // A token collision (1 in 2^64) refuses instead of overwriting.
            if token == 0 || self.sessions.contains_key(&token) {
                self.counters.refused += 1;
                (0, true)
            } else {
                self.sessions.insert(
                    token,
                    Session {
                        peer: src,
                        layout,
                        reply_len,
                        last_seqno: u32::MAX,
                        count: 0,
                        window: 0,
                        window_valid: false,
                        last_ns: now_ns,
                        bucket: self.burst(),
                    },
                );
                self.counters.opened += 1;
                (token, false)
            }
        };
        match irtt::emit_open(Some(token), &p, close, key, out) {
            Ok(len) => Decision::Reply { len },
            Err(_) => Decision::Drop,
        }
    }

    fn burst(&self) -> f64 {
        (self.cfg.rate_per_s / 10).max(1) as f64
    }

    #[allow(clippy::too_many_arguments)]
    fn echo(
        &mut self,
        req: &[u8],
        token: u64,
        src: SocketAddr,
        rx: Time,
        tx: Time,
        now_ns: i64,
        out: &mut [u8],
    ) -> Decision {
        let burst = self.burst();
        let rate = self.cfg.rate_per_s.max(1) as f64;
        let key = self.cfg.key.clone();
        let Some(s) = self.sessions.get_mut(&token) else {
            self.counters.unknown_token += 1;
            return Decision::Drop;
        };
        if s.peer != src {
            self.counters.address_mismatch += 1;
            return Decision::Drop;
        }
        if req.len() < s.reply_len {
            self.counters.short_request += 1;
            return Decision::Drop;
        }
        let Ok(e) = irtt::parse_echo(req, &s.layout) else {
            self.counters.short_request += 1;
            return Decision::Drop;
        };
        let earned = (now_ns - s.last_ns).max(0) as f64 * rate / 1e9;
        s.bucket = (s.bucket + earned).min(burst);
        s.last_ns = now_ns;
        if s.bucket < 1.0 {
            self.counters.rate_limited += 1;
            return Decision::Drop;
        }
        s.bucket -= 1.0;
        // irtt's received window: bit k says seqno - k came. The distance
        // wraps as irtt's uint32 does, so an older seqno shifts everything out.
        let since = e.seqno.wrapping_sub(s.last_seqno);
        s.window = if since >= 64 { 0 } else { s.window << since };
        s.window |= 1;
        s.window_valid = true;
        s.count = s.count.wrapping_add(1);
        s.last_seqno = e.seqno;
        let stats = s.layout.received_stats;
        let at = s.layout.stamp_at;
        let clock = s.layout.clock;
        let pick = |t: Time| Time {
            wall_ns: if clock.wall() { t.wall_ns } else { 0 },
            mono_ns: if clock.monotonic() { t.mono_ns } else { 0 },
        };
        let (receive, send) = match at {
            misura_wire::irtt_params::StampAt::Midpoint => {
                let m = Time {
                    wall_ns: rx.wall_ns + (tx.wall_ns - rx.wall_ns) / 2,
                    mono_ns: rx.mono_ns + (tx.mono_ns - rx.mono_ns) / 2,
                };
                (pick(m), pick(m))
            }
            _ => (
                if at.receive() {
                    pick(rx)
                } else {
                    Time::default()
                },
                if at.send() { pick(tx) } else { Time::default() },
            ),
        };
        let reply = Echo {
            token,
            seqno: e.seqno,
            received_count: stats.count().then_some(s.count),
            received_window: stats
                .window()
                .then_some(if s.window_valid { s.window } else { 0 }),
            receive,
            send,
        };
        match irtt::emit_echo(&s.layout, &reply, true, s.reply_len, key.as_deref(), out) {
            Ok(len) => {
                self.counters.replies += 1;
                Decision::Reply { len }
            }
            Err(_) => Decision::Drop,
        }
    }

    /// Forgets sessions idle longer than [`IDLE_TIMEOUT_NS`].
    pub fn sweep(&mut self, now_ns: i64) {
        self.since_sweep = 0;
        let before = self.sessions.len();
        self.sessions
            .retain(|_, s| now_ns - s.last_ns <= IDLE_TIMEOUT_NS);
        self.counters.expired += (before - self.sessions.len()) as u64;
    }
}

#[cfg(test)]
#[path = "reflector_tests.rs"]
mod tests;
