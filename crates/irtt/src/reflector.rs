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
//! wrapping.
//!
//! Unlike irtt, the reflector does not amplify and one source cannot fill
//! it:
//! * an echo reply is never longer than its request (a request shorter than
//!   the granted layout is dropped);
//! * a refusal is never longer than the open it answers (it carries only
//!   the protocol version: 16 bytes, 32 signed), else it is not sent;
//! * a granted open (or open-close) reply is at most the open plus the
//!   8-byte connection token irtt's open reply carries and its request has
//!   no room for ([`TOKEN_LEN`]): irtt's clients do not pad their opens, so
//!   a strict "never longer" would refuse every `irtt client`; an open
//!   whose answer would be longer still gets none;
//! * opens are rate-limited per source address ([`OPENS_PER_SOURCE_PER_S`])
//!   and overall (a tenth of the session table a second), before any
//!   reply: an open over either limit is dropped unanswered, so spoofed
//!   opens are reflected at most at that rate;
//! * a source address holds at most [`SESSIONS_PER_SOURCE`] sessions, and
//!   a session that has echoed nothing [`UNUSED_TIMEOUT`] after its open
//!   is forgotten, so opens that never echo cannot keep the table full.

use misura_measure::time::{Instant, Span};
use misura_wire::irtt::{self, Echo, IrttError, Layout, Packet, Time, MAX_PACKET_LEN, TOKEN_LEN};
use misura_wire::irtt_params::Params;
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};

/// A session idle this long is forgotten (irtt's default server timeout).
pub const IDLE_TIMEOUT: Span = Span::from_secs(60);
/// Longest interval granted: a quarter of the idle timeout, as irtt.
pub const MAX_INTERVAL_NS: i64 = IDLE_TIMEOUT.as_ns() / 4;

/// A session that has sent no echo this long after its open is forgotten
/// (irtt's clients send their first probe right after the open).
pub const UNUSED_TIMEOUT: Span = Span::from_secs(5);
/// Sessions one source address may hold at once.
pub const SESSIONS_PER_SOURCE: usize = 8;
/// Opens per second from one source address, with as many in a burst.
pub const OPENS_PER_SOURCE_PER_S: u64 = 10;
/// Source addresses whose open rate is tracked at once; a new source
/// beyond it (a flood of spoofed addresses) is dropped until idle ones are
/// forgotten.
pub const MAX_TRACKED_SOURCES: usize = 65_536;
/// A source with no session and no open for this long is forgotten.
const SOURCE_IDLE: Span = Span::from_secs(1);
/// The sweeps an open can trigger are this far apart at least.
const SWEEP_GAP: Span = Span::from_millis(100);

/// The reflector's bounds and key.
#[derive(Debug, Clone)]
pub struct Config {
    pub key: Option<Vec<u8>>,
    /// Sessions open at once; an open beyond it is refused (close flag).
    pub max_sessions: usize,
    /// Replies per second per session, with a tenth of a second's burst.
    pub rate_per_s: u64,
    /// Sessions one source address may hold ([`SESSIONS_PER_SOURCE`]).
    pub sessions_per_source: usize,
    /// Opens per second from one address ([`OPENS_PER_SOURCE_PER_S`]).
    pub opens_per_source_per_s: u64,
    /// Opens per second from all addresses together: by default a tenth
    /// of the table, so opens that never echo (forgotten after
    /// [`UNUSED_TIMEOUT`]) fill at most half of it.
    pub opens_per_s: u64,
}

impl Config {
    /// The bounds with the per-source and open-rate defaults.
    pub fn new(key: Option<Vec<u8>>, max_sessions: usize, rate_per_s: u64) -> Config {
        Config {
            key,
            max_sessions,
            rate_per_s,
            sessions_per_source: SESSIONS_PER_SOURCE,
            opens_per_source_per_s: OPENS_PER_SOURCE_PER_S,
            opens_per_s: (max_sessions as u64 / 10).max(1),
        }
    }
}

/// A token bucket: `rate` a second, at most `burst` kept.
#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    last: Instant,
}

impl Bucket {
    fn full(burst: f64, now: Instant) -> Bucket {
        Bucket {
            tokens: burst,
            last: now,
        }
    }

    /// Takes one token if there is one.
    fn take(&mut self, now: Instant, rate: u64, burst: f64) -> bool {
        let earned = (now - self.last).as_ns().max(0) as f64 * rate.max(1) as f64 / 1e9;
        self.tokens = (self.tokens + earned).min(burst);
        self.last = self.last.max(now);
        if self.tokens < 1.0 {
            return false;
        }
        self.tokens -= 1.0;
        true
    }
}

/// What the reflector keeps per source address.
struct Source {
    sessions: usize,
    opens: Bucket,
}

/// What happened to the datagrams, by kind. Every datagram lands in one
/// counter.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Counters {
    pub received: u64,
    pub opened: u64,
    /// Opens refused (answered with the close flag): another protocol
    /// version, or the session table full.
    pub refused: u64,
    /// Opens refused because their source address already holds
    /// [`SESSIONS_PER_SOURCE`] sessions (answered with the close flag).
    #[serde(default)]
    pub refused_source_cap: u64,
    /// Opens over the per-source or the overall open rate: dropped
    /// unanswered.
    #[serde(default)]
    pub open_rate_limited: u64,
    /// Opens left unanswered because the answer would be longer than the
    /// open allows (a refusal longer than the open, a grant longer than
    /// the open plus its token), or a new source beyond
    /// [`MAX_TRACKED_SOURCES`].
    #[serde(default)]
    pub open_unanswered: u64,
    /// Open-close handshakes (`irtt client --notest`... ), answered, no session.
    pub open_close: u64,
    pub closed: u64,
    /// Sessions forgotten: idle [`IDLE_TIMEOUT`], or never used
    /// [`UNUSED_TIMEOUT`] after the open.
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
    /// An echo came since the open.
    used: bool,
    layout: Layout,
    reply_len: usize,
    last_seqno: u32,
    count: u32,
    window: u64,
    window_valid: bool,
    last: Instant,
    bucket: Bucket,
}

/// The reflector core.
pub struct Reflector {
    cfg: Config,
    sessions: HashMap<u64, Session>,
    sources: HashMap<IpAddr, Source>,
    opens: Bucket,
    counters: Counters,
    since_sweep: u32,
    last_sweep: Option<Instant>,
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
            sessions: HashMap::new(),
            sources: HashMap::new(),
            opens: Bucket::full(cfg.opens_per_s.max(1) as f64, Instant::from_ns(0)),
            cfg,
            counters: Counters::default(),
            since_sweep: 0,
            last_sweep: None,
        }
    }

    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    pub fn sessions(&self) -> usize {
        self.sessions.len()
    }

    /// Handles one datagram from `src`, received at `rx` (`now` on the
    /// monotonic clock of `rx.mono_ns`), to be sent at `tx`. `new_token`
    /// is a fresh random token for a session this datagram may open.
    #[allow(clippy::too_many_arguments)]
    pub fn handle(
        &mut self,
        req: &[u8],
        src: SocketAddr,
        rx: Time,
        tx: Time,
        now: Instant,
        new_token: u64,
        out: &mut [u8],
    ) -> Decision {
        self.counters.received += 1;
        self.since_sweep += 1;
        if self.since_sweep >= 1024 {
            self.sweep(now);
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
                self.open(req.len(), close, params, src, now, new_token, out)
            }
            Packet::Close { token } => {
                match self.sessions.get(&token) {
                    Some(s) if s.peer == src => {
                        self.forget(token);
                        self.counters.closed += 1;
                    }
                    Some(_) => self.counters.address_mismatch += 1,
                    None => self.counters.unknown_token += 1,
                }
                Decision::Drop
            }
            Packet::Echo { token } => self.echo(req, token, src, rx, tx, now, out),
        }
    }

    /// Takes an open from `src`'s and the overall budget; false: over a
    /// limit (or a new source with the source table full).
    fn admit(&mut self, src: IpAddr, now: Instant) -> bool {
        let per_source = self.cfg.opens_per_source_per_s.max(1);
        if !self.sources.contains_key(&src) {
            if self.sources.len() >= MAX_TRACKED_SOURCES {
                self.sweep_soon(now);
            }
            if self.sources.len() >= MAX_TRACKED_SOURCES {
                self.counters.open_unanswered += 1;
                return false;
            }
            self.sources.insert(
                src,
                Source {
                    sessions: 0,
                    opens: Bucket::full(per_source as f64, now),
                },
            );
        }
        let s = self.sources.get_mut(&src).expect("inserted above");
        let overall = self.cfg.opens_per_s.max(1);
        if !s.opens.take(now, per_source, per_source as f64)
            || !self.opens.take(now, overall, overall as f64)
        {
            self.counters.open_rate_limited += 1;
            return false;
        }
        true
    }

    #[allow(clippy::too_many_arguments)]
    fn open(
        &mut self,
        req_len: usize,
        close: bool,
        mut p: Params,
        src: SocketAddr,
        now: Instant,
        token: u64,
        out: &mut [u8],
    ) -> Decision {
        if !self.admit(src.ip(), now) {
            return Decision::Drop;
        }
        let key = self.cfg.key.clone();
        let key = key.as_deref();
        let version_ok = p.protocol_version == irtt::PROTOCOL_VERSION;
        p.protocol_version = irtt::PROTOCOL_VERSION;
        let min_interval = (1_000_000_000 / self.cfg.rate_per_s.max(1)) as i64;
        p.interval_ns = p.interval_ns.clamp(min_interval, MAX_INTERVAL_NS);
        p.length = p.length.clamp(0, MAX_PACKET_LEN as i64);
        p.dscp = 0;
        p.server_fill.clear();
        let held = self.sources.get(&src.ip()).map_or(0, |s| s.sessions);
        if !close && version_ok && held >= self.cfg.sessions_per_source {
            self.sweep_soon(now);
        }
        if self.sessions.len() >= self.cfg.max_sessions {
            self.sweep_soon(now);
        }
        let held = self.sources.get(&src.ip()).map_or(0, |s| s.sessions);
        let full = self.sessions.len() >= self.cfg.max_sessions;
        let over_cap = held >= self.cfg.sessions_per_source;
        // A token collision (1 in 2^64) refuses instead of overwriting.
        let no_token = token == 0 || self.sessions.contains_key(&token);
        let refusal = !version_ok || (!close && (full || over_cap || no_token));
        // The answer, and the longest it may be.
        let (reply, limit) = if refusal {
            let only_version = Params {
                protocol_version: irtt::PROTOCOL_VERSION,
                ..Params::default()
            };
            (
                irtt::emit_open(Some(0), &only_version, true, key, out),
                req_len,
            )
        } else if close {
            (
                irtt::emit_open(Some(0), &p, true, key, out),
                req_len + TOKEN_LEN,
            )
        } else {
            (
                irtt::emit_open(Some(token), &p, false, key, out),
                req_len + TOKEN_LEN,
            )
        };
        let len = match reply {
            Ok(len) if len <= limit => len,
            _ => {
                self.counters.open_unanswered += 1;
                return Decision::Drop;
            }
        };
        if refusal {
            if version_ok && !full && !no_token && over_cap {
                self.counters.refused_source_cap += 1;
            } else {
                self.counters.refused += 1;
            }
        } else if close {
            self.counters.open_close += 1;
        } else {
            let layout = Layout::new(&p, key.is_some());
            let reply_len = layout.packet_len(p.length as usize);
            self.sessions.insert(
                token,
                Session {
                    peer: src,
                    used: false,
                    layout,
                    reply_len,
                    last_seqno: u32::MAX,
                    count: 0,
                    window: 0,
                    window_valid: false,
                    last: now,
                    bucket: Bucket::full(self.burst(), now),
                },
            );
            if let Some(s) = self.sources.get_mut(&src.ip()) {
                s.sessions += 1;
            }
            self.counters.opened += 1;
        }
        Decision::Reply { len }
    }

    /// Forgets session `token`, and its place in its source's count.
    fn forget(&mut self, token: u64) {
        if let Some(s) = self.sessions.remove(&token) {
            if let Some(src) = self.sources.get_mut(&s.peer.ip()) {
                src.sessions = src.sessions.saturating_sub(1);
            }
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
        now: Instant,
        out: &mut [u8],
    ) -> Decision {
        let burst = self.burst();
        let rate = self.cfg.rate_per_s;
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
        s.last = now;
        if !s.bucket.take(now, rate, burst) {
            self.counters.rate_limited += 1;
            return Decision::Drop;
        }
        s.used = true;
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

    /// A sweep, unless one ran less than [`SWEEP_GAP`] ago (an open
    /// flood cannot make every open scan the tables).
    fn sweep_soon(&mut self, now: Instant) {
        if self.last_sweep.is_none_or(|t| now - t >= SWEEP_GAP) {
            self.sweep(now);
        }
    }

    /// Forgets sessions idle longer than [`IDLE_TIMEOUT`], sessions
    /// with no echo [`UNUSED_TIMEOUT`] after their open, and sources
    /// with no session and no open for a second.
    pub fn sweep(&mut self, now: Instant) {
        self.since_sweep = 0;
        self.last_sweep = Some(now);
        let stale: Vec<u64> = self
            .sessions
            .iter()
            .filter(|(_, s)| {
                let idle = now - s.last;
                idle > IDLE_TIMEOUT || (!s.used && idle > UNUSED_TIMEOUT)
            })
            .map(|(t, _)| *t)
            .collect();
        self.counters.expired += stale.len() as u64;
        for t in stale {
            self.forget(t);
        }
        self.sources
            .retain(|_, s| s.sessions > 0 || now - s.opens.last < SOURCE_IDLE);
    }
}

#[cfg(test)]
#[path = "reflector_tests.rs"]
mod tests;
