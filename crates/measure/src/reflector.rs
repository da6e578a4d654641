//! The STAMP Session-Reflector (RFC 8762, RFC 8972 TLVs), without I/O.
//!
//! [`Reflector::handle`] takes one received request (the UDP payload, or
//! the STAMP body of a raw probe frame with [`Reflector::handle_l2_frame`]),
//! what the socket reported about it ([`RequestMeta`]) and the instant the
//! caller is about to send, and either writes the reply into `out` or says
//! why not ([`DropReason`]). Every decision is counted ([`Counters`]).
//! [`Reflector::on_tx_stamp`] feeds back the precise transmit stamp of a
//! reply once the kernel (or NIC) reports it; it goes into the Follow-Up
//! Telemetry TLV of the next reply to the same source (two-step, as PTP).
//!
//! # Safety rules (a reflector is left running on a network)
//!
//! * A reply is exactly as long as its request, never longer (RFC 8762's
//!   symmetric size rule), so the reflector cannot amplify.
//! * No reply to a group (multicast/broadcast) or unspecified source, to a
//!   packet that looks like a reply (L2: the REPLY flag; UDP: it comes from
//!   the reflector's own port, i.e. another reflector, which would start a
//!   reflector-to-reflector loop), to a truncated or malformed packet, or,
//!   with a key, to a packet whose HMAC does not verify.
//! * A token bucket per source address, and every table (rate limiter,
//!   stateful sessions, follow-up state) is bounded; when full, a new
//!   source is refused unless the oldest entry has been idle for
//!   [`IDLE`], rather than evicting a live one.
//!
//! # Timestamps
//!
//! * Receive Timestamp: the kernel's RX stamp of the request (or the NIC's);
//!   without one, the user clock read just after the receive, and the
//!   Timestamp Information TLV then says "control plane" for the receive
//!   side (see below).
//! * Timestamp (the reflector's transmit time): `now`, the user clock read
//!   just before sending. The precise kernel/NIC transmit stamp only exists
//!   after the send; it comes in the next reply's Follow-Up Telemetry TLV.
//! * The format follows the request's Z bit (NTP or PTP truncated), so a
//!   sender reads the reply in the format it chose; except when the
//!   request was stamped by the NIC: its stamps are on the NIC's PTP
//!   hardware clock, and the reply is in PTPv2 format (Z set; RFC 8762
//!   §4.2.1 lets each side choose, and the sender reads the reply's Z).
//!   The caller then passes `now` and the clock state on that clock too.
//! * Error Estimate: S only if the caller says the clock is synchronised
//!   (the kernel's NTP state); scale and multiplier from the caller's stated
//!   uncertainty ([`ClockState::uncertainty_ns`]).
//!
//! Timestamp Information TLV (RFC 8972 §4.3), filled when the request has
//! one: sync source in/out = NTP when synchronised, else local free-running;
//! timestamp in = HW assist (NIC stamp), SW local (kernel software stamp)
//! or, when there was no kernel stamp and the user clock stood in,
//! control plane; timestamp out = SW local (the user clock before `send()`).
//!
//! Follow-Up Telemetry TLV (RFC 8972 §4.7), filled when the request has
//! one: the sequence number of the previous reply to the same source
//! (address and port, or MAC), its precise transmit stamp in the request's
//! format and how it was taken (HW assist or SW local), always on the clock
//! of that reply's RX stamp (a NIC-stamped request's reply follows up with
//! the NIC's TX stamp, any other with the kernel's). When nothing is
//! known (the first reply, or no TX stamp reported in time), sequence,
//! timestamp and mode are all zero: mode 0 is not a timestamp method, so a
//! sender can tell "no follow-up" apart.
//!
//! The raw-frame (L2) reflection is in [`l2`]; the tests, one for each
//! rule, in `reflector/tests.rs` and `reflector/tests/`.

use std::net::{IpAddr, SocketAddr};

use misura_wire::ethernet::MacAddr;
use misura_wire::stamp::{
    self, build_reflection, sync_source, timestamp_method, tlv_hmac_covered, tlv_type,
    ErrorEstimate, Mode, RawTlvs, ReflectParams, SenderRepr, StampTimestampFormat, TimestampInfo,
    HMAC_FIELD,
};
use serde::Serialize;

use crate::auth::{sign_reply, verify16, StampKey};
use crate::ratelimit::{Admit, BoundedMap, PerAddressCap, Room, SourceLimiter};
use crate::time::{Instant, Span, TimestampSource};

/// An entry idle this long may be reused when a table is full.
pub const IDLE: Span = Span::from_secs(10);
/// Source ports one address may hold in the peer table at once (more
/// replace its oldest): one host cycling ports cannot fill the table.
pub const PORTS_PER_ADDRESS: usize = 256;

/// Who sent a request, and where its reply goes.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Peer {
    /// A UDP Session-Sender: address and port.
    Udp(SocketAddr),
    /// A raw-frame sender: its MAC address.
    L2(MacAddr),
}

/// The address a rate limit applies to: all ports of one host share it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
enum SourceAddr {
    Ip(IpAddr),
    Mac(MacAddr),
}

impl Peer {
    fn source_addr(&self) -> SourceAddr {
        match *self {
            Peer::Udp(a) => SourceAddr::Ip(a.ip().to_canonical()),
            Peer::L2(m) => SourceAddr::Mac(m),
        }
    }

    /// True when a reply to this source would go to a group, or nowhere:
    /// IPv4 224.0.0.0/4, 255.255.255.255 and 0.0.0.0, IPv6 ff00::/8 and
    /// ::, port 0, a multicast/broadcast MAC or the all-zero MAC.
    pub fn is_group_or_unspecified(&self) -> bool {
        match *self {
            Peer::Udp(a) => {
                let ip = a.ip().to_canonical();
                a.port() == 0
                    || ip.is_unspecified()
                    || ip.is_multicast()
                    || matches!(ip, IpAddr::V4(v4) if v4.is_broadcast())
            }
            Peer::L2(m) => m.is_multicast() || m.0 == [0; 6],
        }
    }
}

/// A timestamp and what produced it, on the reflector's `CLOCK_REALTIME`
/// (or, for a NIC stamp, on the NIC's clock).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Stamp {
    pub at: Instant,
    pub source: TimestampSource,
}

impl Stamp {
    /// The stamp as a STAMP Timestamp field in `fmt`.
    fn to_wire(self, fmt: StampTimestampFormat) -> [u8; 8] {
        stamp::to_wire(self.at.as_ns(), fmt)
    }
}

/// What the socket reported about one request.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RequestMeta {
    pub src: Peer,
    /// Destination address of the request's IP header (UDP), if reported.
    pub dst: Option<IpAddr>,
    /// IPv4 TTL / IPv6 hop limit of the request; `None` (raw frames, or not
    /// reported) is sent as 0.
    pub ttl: Option<u8>,
    /// When the request arrived: the kernel's or NIC's RX stamp, or the
    /// user clock right after the receive when there was none.
    pub rx: Stamp,
    /// The request did not fit the receive buffer (it was cut short).
    pub truncated: bool,
}

/// The state of the reflector's clock, read by the caller (e.g. from
/// `adjtimex(2)`) and passed in, since this crate reads no clock.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ClockState {
    /// The clock is known to be synchronised to a reference (sets S).
    pub synchronized: bool,
    /// [`sync_source`] code for the Timestamp Information TLV.
    pub sync_source: u8,
    /// Stated uncertainty of the timestamps (fills the Error Estimate).
    pub uncertainty_ns: u64,
}

impl ClockState {
    /// A free-running clock of unknown accuracy: S clear, one second.
    pub const FREE_RUNNING: ClockState = ClockState {
        synchronized: false,
        sync_source: sync_source::LOCAL_FREE_RUNNING,
        uncertainty_ns: 1_000_000_000,
    };
}

/// How the reflector is configured.
#[derive(Clone, Debug)]
pub struct ReflectorConfig {
    /// With a key, authenticated mode (RFC 8762 §4.2.2): requests must be
    /// at least 112 bytes and carry a valid HMAC.
    pub key: Option<StampKey>,
    /// Stateful: number replies per session (RFC 8762 §4.3.1); stateless:
    /// echo the sender's sequence number.
    pub stateful: bool,
    /// Replies per second per source address.
    pub rate_per_s: u64,
    /// Replies a source may send back to back.
    pub burst: u64,
    /// Most sources (and sessions) tracked at once.
    pub max_sources: usize,
    /// The UDP port the reflector listens on: a request from this port
    /// comes from another reflector. `None` for raw frames.
    pub listen_port: Option<u16>,
}

impl ReflectorConfig {
    pub fn mode(&self) -> Mode {
        if self.key.is_some() {
            Mode::Authenticated
        } else {
            Mode::Unauthenticated
        }
    }
}

/// Why a request got no reply.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DropReason {
    /// Shorter than the base packet (44 bytes; 112 with a key is AuthFailed).
    TooShort,
    /// Cut short by the receive buffer, or a raw frame that is not a
    /// well-formed probe.
    Malformed,
    /// From a group (multicast/broadcast) or unspecified address.
    GroupSource,
    /// A reply (L2 REPLY flag), or from the reflector's own port (UDP).
    LooksLikeReply,
    /// A key is set and the HMAC does not verify, or the packet is too
    /// short to carry one.
    AuthFailed,
    /// The source is over its rate.
    RateLimited,
    /// The state tables are full of live sources.
    TableFull,
    /// A PTP frame (EtherType 0x88F7) that is not misura's PTP-wrapped
    /// probe: another PTP instance's message (Announce, a Sync of another
    /// domain, ...) or a malformed one.
    ForeignPtp,
}

/// What to do with one request.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Send the first `len` bytes of `out`; the reply's sequence number is
    /// `reply_seq` (report its TX stamp with [`Reflector::on_tx_stamp`]).
    Reply {
        len: usize,
        reply_seq: u32,
    },
    Drop(DropReason),
}

/// Everything the reflector counted.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Counters {
    pub received: u64,
    pub replied: u64,
    pub too_short: u64,
    pub malformed: u64,
    pub group_source: u64,
    pub looks_like_reply: u64,
    pub auth_failed: u64,
    pub rate_limited: u64,
    pub table_full: u64,
    /// PTP frames that were not misura's PTP-wrapped probes (dropped).
    #[serde(default)]
    pub foreign_ptp: u64,
    /// Replies whose request had no kernel/NIC RX stamp (user clock used).
    pub rx_user_clock: u64,
    /// Replies whose request's HMAC TLV did not verify (I flag set).
    pub tlv_integrity_failed: u64,
    /// Replies that carried a follow-up with the previous reply's TX stamp.
    pub follow_ups: u64,
    /// TX stamps reported with [`Reflector::on_tx_stamp`] and kept.
    pub tx_stamps: u64,
}

impl Counters {
    pub fn dropped(&self) -> u64 {
        self.too_short
            + self.malformed
            + self.group_source
            + self.looks_like_reply
            + self.auth_failed
            + self.rate_limited
            + self.table_full
            + self.foreign_ptp
    }

    fn count(&mut self, r: DropReason) {
        let c = match r {
            DropReason::TooShort => &mut self.too_short,
            DropReason::Malformed => &mut self.malformed,
            DropReason::GroupSource => &mut self.group_source,
            DropReason::LooksLikeReply => &mut self.looks_like_reply,
            DropReason::AuthFailed => &mut self.auth_failed,
            DropReason::RateLimited => &mut self.rate_limited,
            DropReason::TableFull => &mut self.table_full,
            DropReason::ForeignPtp => &mut self.foreign_ptp,
        };
        *c += 1;
    }
}

#[derive(Copy, Clone, Debug)]
struct PeerState {
    last: Instant,
    /// The last reply sent to this peer.
    last_reply: Option<LastReply>,
}

#[derive(Copy, Clone, Debug)]
struct LastReply {
    seq: u32,
    /// Its request's RX stamp was the NIC's (on the NIC's clock), not the
    /// system clock's: only a TX stamp on the same clock may follow up.
    rx_on_nic: bool,
    /// Its TX stamp, once reported.
    tx: Option<Stamp>,
}

#[derive(Copy, Clone, Debug)]
struct SessionState {
    next_seq: u32,
    last: Instant,
}

/// The sans-IO Session-Reflector.
#[derive(Debug)]
pub struct Reflector {
    config: ReflectorConfig,
    limiter: SourceLimiter<SourceAddr>,
    peers: BoundedMap<Peer, PeerState>,
    ports: PerAddressCap<SourceAddr, Peer>,
    sessions: BoundedMap<(Peer, u16), SessionState>,
    counters: Counters,
}

impl Reflector {
    pub fn new(config: ReflectorConfig) -> Reflector {
        let n = config.max_sources.max(1);
        Reflector {
            limiter: SourceLimiter::new(config.rate_per_s, config.burst.max(1), n, IDLE),
            peers: BoundedMap::new(n, IDLE),
            ports: PerAddressCap::new(PORTS_PER_ADDRESS),
            sessions: BoundedMap::new(n, IDLE),
            counters: Counters::default(),
            config,
        }
    }

    pub fn config(&self) -> &ReflectorConfig {
        &self.config
    }

    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    /// Sources and sessions currently tracked (for tests and status).
    pub fn tracked(&self) -> (usize, usize, usize) {
        (
            self.limiter.sources(),
            self.peers.map.len(),
            self.sessions.map.len(),
        )
    }

    fn drop(&mut self, r: DropReason) -> Decision {
        self.counters.count(r);
        Decision::Drop(r)
    }

    /// Handles one STAMP request (a UDP payload): checks it, and writes the
    /// reply into `out` (at least `request.len()` bytes, else the request
    /// is dropped as malformed). `now` is the user clock just before the
    /// caller sends; it becomes the reply's Timestamp.
    pub fn handle(
        &mut self,
        request: &[u8],
        meta: &RequestMeta,
        now: Instant,
        clock: &ClockState,
        out: &mut [u8],
    ) -> Decision {
        self.counters.received += 1;
        if meta.src.is_group_or_unspecified() {
            return self.drop(DropReason::GroupSource);
        }
        if let (Peer::Udp(a), Some(port)) = (meta.src, self.config.listen_port) {
            if a.port() == port {
                return self.drop(DropReason::LooksLikeReply);
            }
        }
        self.reflect(request, meta, now, clock, out)
    }

    /// The checks and the reply common to UDP and raw frames.
    fn reflect(
        &mut self,
        request: &[u8],
        meta: &RequestMeta,
        now: Instant,
        clock: &ClockState,
        out: &mut [u8],
    ) -> Decision {
        let mode = self.config.mode();
        if meta.truncated || out.len() < request.len() {
            return self.drop(DropReason::Malformed);
        }
        if request.len() < mode.base_len() {
            // In authenticated mode a short packet cannot carry an HMAC: it is
            // unauthenticated, whatever else it is.
            return self.drop(match mode {
                Mode::Authenticated => DropReason::AuthFailed,
                Mode::Unauthenticated => DropReason::TooShort,
            });
        }
        let Ok(req) = SenderRepr::parse(request, mode) else {
            return self.drop(DropReason::Malformed);
        };
        let mut tlv_integrity_failed = false;
        if let Some(key) = &self.config.key {
            let covered = stamp::hmac_covered(mode).expect("authenticated mode has an HMAC field");
            if !verify16(key, &[&request[covered]], &request[HMAC_FIELD]) {
                return self.drop(DropReason::AuthFailed);
            }
            if let Some(c) = tlv_hmac_covered(request, mode) {
                // RFC 8972 §4.8: a failed HMAC TLV is reported with the I flag
                // on every TLV, the base packet being authentic.
                tlv_integrity_failed = !verify16(
                    key,
                    &[&request[c.seq.clone()], &request[c.tlvs.clone()]],
                    &request[c.hmac.clone()],
                );
            }
        }
        let src = meta.src;
        match self.limiter.admit(src.source_addr(), now) {
            Admit::Yes => {}
            Admit::RateLimited => return self.drop(DropReason::RateLimited),
            Admit::TableFull => return self.drop(DropReason::TableFull),
        }
        match self.peers.room_for(&src, now, |p| p.last) {
            Room::Have => {}
            Room::Full => return self.drop(DropReason::TableFull),
            Room::Made(evicted) => {
                if let Some(e) = evicted {
                    self.ports.forget(e.source_addr(), &e);
                }
                if let Some(oldest) = self.ports.add(src.source_addr(), src) {
                    self.peers.remove(&oldest);
                }
            }
        }
        let reply_seq = if self.config.stateful {
            let key = (src, req.ssid);
            if !self.sessions.make_room(&key, now, |s| s.last) {
                return self.drop(DropReason::TableFull);
            }
            let s = self.sessions.map.entry(key).or_insert(SessionState {
                next_seq: 0,
                last: now,
            });
            let seq = s.next_seq;
            s.next_seq = s.next_seq.wrapping_add(1);
            s.last = now;
            seq
        } else {
            req.seq
        };
        let peer = self.peers.map.entry(src).or_insert(PeerState {
            last: now,
            last_reply: None,
        });
        peer.last = now;

        // A NIC stamp is on the NIC's PTP clock: the reply says so in
        // PTPv2 format (Z set), whatever the request's; else the reply
        // follows the request's Z bit.
        let fmt = if meta.rx.source == TimestampSource::NicHardware {
            StampTimestampFormat::Ptp
        } else {
            req.error_estimate.format()
        };
        let rx_method = match meta.rx.source {
            TimestampSource::NicHardware => timestamp_method::HW_ASSIST,
            TimestampSource::KernelSoftware => timestamp_method::SW_LOCAL,
            TimestampSource::UserClock => timestamp_method::CONTROL_PLANE,
        };
        let has_follow_up = has_tlv(request, mode, tlv_type::FOLLOW_UP_TELEMETRY);
        let follow_up = match peer.last_reply {
            Some(LastReply {
                seq, tx: Some(tx), ..
            }) => {
                if has_follow_up {
                    self.counters.follow_ups += 1;
                }
                (seq, tx.to_wire(fmt), method_code(tx.source))
            }
            _ => (0, [0; 8], 0),
        };
        let params = ReflectParams {
            seq: reply_seq,
            timestamp: stamp::to_wire(now.as_ns(), fmt),
            error_estimate: ErrorEstimate::from_ns(clock.uncertainty_ns, clock.synchronized, fmt),
            receive_timestamp: meta.rx.to_wire(fmt),
            sender_ttl: meta.ttl.unwrap_or(0),
            tlv_integrity_failed,
            timestamp_info: Some(TimestampInfo {
                sync_src_in: clock.sync_source,
                timestamp_in: rx_method,
                sync_src_out: clock.sync_source,
                timestamp_out: timestamp_method::SW_LOCAL,
            }),
            follow_up: Some(follow_up),
            counters: None,
            received_tos: None,
            ports: match src {
                Peer::Udp(a) => self.config.listen_port.map(|p| (p, a.port())),
                Peer::L2(_) => None,
            },
        };
        let Ok(len) = build_reflection(request, mode, &params, out) else {
            // Only a parse or buffer error is possible, both excluded above.
            self.counters.count(DropReason::Malformed);
            return Decision::Drop(DropReason::Malformed);
        };
        if let Some(key) = &self.config.key {
            sign_reply(key, mode, &mut out[..len]);
        }
        peer.last_reply = Some(LastReply {
            seq: reply_seq,
            rx_on_nic: meta.rx.source == TimestampSource::NicHardware,
            tx: None,
        });
        if meta.rx.source == TimestampSource::UserClock {
            self.counters.rx_user_clock += 1;
        }
        if tlv_integrity_failed {
            self.counters.tlv_integrity_failed += 1;
        }
        self.counters.replied += 1;
        Decision::Reply { len, reply_seq }
    }

    /// Records the precise transmit stamp of the reply `reply_seq` sent to
    /// `src`; the next reply to `src` carries it in its Follow-Up Telemetry
    /// TLV. Ignored unless it is the last reply sent to `src` (a late stamp
    /// of an older reply would be misattributed), and unless it is on the
    /// clock of that reply's RX stamp: the NIC's for a NIC-stamped request,
    /// the system clock's otherwise. A send may report the kernel's and the
    /// NIC's TX stamps apart, and the sender subtracts the reply's RX stamp
    /// from this one: across two clocks that would be their offset (seconds
    /// for a PHC on TAI), not a turnaround. True when it was taken.
    pub fn on_tx_stamp(
        &mut self,
        src: Peer,
        reply_seq: u32,
        tx: Instant,
        method: TimestampSource,
    ) -> bool {
        let Some(last) = self
            .peers
            .map
            .get_mut(&src)
            .and_then(|p| p.last_reply.as_mut())
        else {
            return false;
        };
        if last.seq != reply_seq || last.rx_on_nic != (method == TimestampSource::NicHardware) {
            return false;
        }
        last.tx = Some(Stamp {
            at: tx,
            source: method,
        });
        self.counters.tx_stamps += 1;
        true
    }
}

fn method_code(s: TimestampSource) -> u8 {
    match s {
        TimestampSource::NicHardware => timestamp_method::HW_ASSIST,
        TimestampSource::KernelSoftware | TimestampSource::UserClock => timestamp_method::SW_LOCAL,
    }
}

fn has_tlv(packet: &[u8], mode: Mode, typ: u8) -> bool {
    packet.get(mode.base_len()..).is_some_and(|area| {
        RawTlvs::new(area)
            .map_while(Result::ok)
            .any(|t| t.typ == typ)
    })
}

/// The format a request asked for, from its Z bit (for tests and callers).
pub fn request_format(request: &[u8], mode: Mode) -> Option<StampTimestampFormat> {
    SenderRepr::parse(request, mode)
        .ok()
        .map(|r| r.error_estimate.format())
}

pub mod l2;

#[cfg(test)]
mod tests;
