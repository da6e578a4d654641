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
//!   [`IDLE_NS`], rather than evicting a live one.
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
//! format and how it was taken (HW assist or SW local). When nothing is
//! known (the first reply, or no TX stamp reported in time), sequence,
//! timestamp and mode are all zero: mode 0 is not a timestamp method, so a
//! sender can tell "no follow-up" apart.
//!
//! Long: one state machine with its safety rules, then a test for each rule
//! (about half of the file).

use std::net::{IpAddr, SocketAddr};

use misura_wire::ethernet::{EthernetFrame, EthernetRepr, MacAddr};
use misura_wire::probe::{self, ProbeFlags, ProbeRepr};
use misura_wire::ptp;
use misura_wire::stamp::{
    self, build_reflection, sync_source, timestamp_method, tlv_hmac_covered, tlv_type,
    ErrorEstimate, Mode, RawTlvs, ReflectParams, SenderRepr, StampTimestampFormat, TimestampInfo,
    HMAC_FIELD,
};
use serde::Serialize;

use crate::auth::{hmac16, verify16, StampKey};
use crate::ratelimit::{Admit, BoundedMap, PerAddressCap, Room, SourceLimiter};
use crate::time::TimestampSource;

/// An entry idle this long may be reused when a table is full.
pub const IDLE_NS: i64 = 10_000_000_000;
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

/// A timestamp and what produced it, on the reflector's `CLOCK_REALTIME`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Stamp {
    pub ns: i64,
    pub source: TimestampSource,
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
    last_ns: i64,
    /// The last reply's sequence number and, once reported, its TX stamp.
    last_reply: Option<(u32, Option<Stamp>)>,
}

#[derive(Copy, Clone, Debug)]
struct SessionState {
    next_seq: u32,
    last_ns: i64,
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
            limiter: SourceLimiter::new(config.rate_per_s, config.burst.max(1), n, IDLE_NS),
            peers: BoundedMap::new(n, IDLE_NS),
            ports: PerAddressCap::new(PORTS_PER_ADDRESS),
            sessions: BoundedMap::new(n, IDLE_NS),
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
        now: i64,
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
        now: i64,
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
        match self.peers.room_for(&src, now, |p| p.last_ns) {
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
            if !self.sessions.make_room(&key, now, |s| s.last_ns) {
                return self.drop(DropReason::TableFull);
            }
            let s = self.sessions.map.entry(key).or_insert(SessionState {
                next_seq: 0,
                last_ns: now,
            });
            let seq = s.next_seq;
            s.next_seq = s.next_seq.wrapping_add(1);
            s.last_ns = now;
            seq
        } else {
            req.seq
        };
        let peer = self.peers.map.entry(src).or_insert(PeerState {
            last_ns: now,
            last_reply: None,
        });
        peer.last_ns = now;

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
            Some((seq, Some(tx))) => {
                if has_follow_up {
                    self.counters.follow_ups += 1;
                }
                (seq, stamp::to_wire(tx.ns, fmt), method_code(tx.source))
            }
            _ => (0, [0; 8], 0),
        };
        let params = ReflectParams {
            seq: reply_seq,
            timestamp: stamp::to_wire(now, fmt),
            error_estimate: ErrorEstimate::from_ns(clock.uncertainty_ns, clock.synchronized, fmt),
            receive_timestamp: stamp::to_wire(meta.rx.ns, fmt),
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
            let reply = &mut out[..len];
            if let Some(c) = tlv_hmac_covered(reply, mode) {
                let tag = hmac16(key, &[&reply[c.seq.clone()], &reply[c.tlvs.clone()]]);
                reply[c.hmac].copy_from_slice(&tag);
            }
            let covered = stamp::hmac_covered(mode).expect("authenticated mode has an HMAC field");
            let tag = hmac16(key, &[&reply[covered]]);
            reply[HMAC_FIELD].copy_from_slice(&tag);
        }
        peer.last_reply = Some((reply_seq, None));
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
    /// of an older reply would be misattributed).
    pub fn on_tx_stamp(&mut self, src: Peer, reply_seq: u32, tx_ns: i64, method: TimestampSource) {
        if let Some(p) = self.peers.map.get_mut(&src) {
            if let Some((seq, stamp)) = &mut p.last_reply {
                if *seq == reply_seq {
                    *stamp = Some(Stamp {
                        ns: tx_ns,
                        source: method,
                    });
                    self.counters.tx_stamps += 1;
                }
            }
        }
    }

    /// Handles one raw frame (see [`l2`] for the format) and writes the
    /// reply frame into `out`; `Decision::Reply::len` is then the reply
    /// frame's length, never more than `frame.len()`. `meta.src` is
    /// ignored: the frame's source MAC is the peer.
    #[allow(clippy::too_many_arguments)]
    pub fn handle_l2_frame(
        &mut self,
        frame: &[u8],
        ethertype: u16,
        our_mac: MacAddr,
        meta: &RequestMeta,
        now: i64,
        clock: &ClockState,
        out: &mut [u8],
    ) -> Decision {
        self.counters.received += 1;
        let Ok(f) = EthernetFrame::new_checked(frame) else {
            return self.drop(DropReason::TooShort);
        };
        let Ok(eth) = EthernetRepr::parse(&f) else {
            return self.drop(DropReason::TooShort);
        };
        let peer = Peer::L2(eth.src);
        if peer.is_group_or_unspecified() {
            return self.drop(DropReason::GroupSource);
        }
        let hl = eth.header_len();
        // A PTP-wrapped probe (misura_wire::ptp): only misura's Sync, in its
        // domain, carrying a probe; anything else PTP is someone else's.
        let (payload, ptp_len) = if eth.ethertype == ptp::ETHERTYPE_PTP {
            match ptp::strip_misura_sync(f.payload()) {
                Ok(inner) => (inner, f.payload().len() - inner.len()),
                Err(_) => return self.drop(DropReason::ForeignPtp),
            }
        } else if eth.ethertype != ethertype {
            return self.drop(DropReason::Malformed);
        } else {
            (f.payload(), 0)
        };
        if payload.len() < probe::HEADER_LEN {
            return self.drop(if ptp_len > 0 {
                DropReason::ForeignPtp
            } else {
                DropReason::TooShort
            });
        }
        let Ok(p) = ProbeRepr::parse(payload) else {
            return self.drop(if ptp_len > 0 {
                DropReason::ForeignPtp
            } else {
                DropReason::Malformed
            });
        };
        if p.flags.contains(ProbeFlags::REPLY) {
            return self.drop(DropReason::LooksLikeReply);
        }
        let body = &payload[probe::HEADER_LEN..usize::from(p.payload_len)];
        let reply_eth = EthernetRepr {
            dst: eth.src,
            src: our_mac,
            vlan: eth.vlan,
            ethertype: eth.ethertype,
        };
        // The probe header's offset: after the PTP message, if any.
        let ph = hl + ptp_len;
        // Padded to the 60-byte minimum as a sender's emit_frame pads, but
        // never beyond the request (a path that did not pad, such as veth).
        let frame_len = (ph + usize::from(p.payload_len))
            .max(l2::MIN_FRAME_NO_FCS)
            .min(frame.len());
        if out.len() < frame_len {
            return self.drop(DropReason::Malformed);
        }
        let meta = RequestMeta { src: peer, ..*meta };
        // The STAMP body's checks and counters are the UDP ones.
        let start = ph + probe::HEADER_LEN;
        let d = self.reflect(body, &meta, now, clock, &mut out[start..]);
        if let Decision::Reply { reply_seq, .. } = d {
            reply_eth.emit(out).expect("a parsed header re-emits");
            if ptp_len > 0 {
                // The request's Sync header (its sequenceId and length), from
                // the reflector's port: the reply is a Sync too, so the
                // sender's NIC stamps it on receive.
                out[hl..ph].copy_from_slice(&f.payload()[..ptp_len]);
                out[hl + ptp::PORT_IDENTITY..hl + ptp::PORT_IDENTITY + 8]
                    .copy_from_slice(&ptp::clock_identity(our_mac.0));
            }
            out[ph..start].copy_from_slice(&payload[..probe::HEADER_LEN]);
            let mut flags = p.flags;
            flags.insert(ProbeFlags::REPLY);
            out[ph + 5] = flags.bits();
            let end = ph + usize::from(p.payload_len);
            out[end..frame_len].fill(0);
            return Decision::Reply {
                len: frame_len,
                reply_seq,
            };
        }
        d
    }
}

/// misura's raw-frame STAMP reflection (`misura reflect --l2 IF`).
///
/// A request is an Ethernet frame of misura's ethertype (default 0x88B5)
/// carrying misura's 40-byte probe header (see `misura_wire::probe`) with
/// the REPLY flag clear, followed by a whole STAMP Session-Sender packet
/// (base packet and TLVs, in the configured mode). The probe header's
/// payload_len P covers header and STAMP packet, so NIC padding of short
/// frames is not mistaken for TLVs:
///
/// ```text
/// +----------------------+  0
/// | dst MAC | src MAC    |
/// | [VLAN tag] | 0x88B5  |  Ethernet, 14 (18) bytes
/// +----------------------+  14
/// | probe header (40)    |  magic MSRA, version, flags (REPLY = 0x04 in replies),
/// |                      |  payload_len P, session, stream, size index, seq, ts
/// +----------------------+  54
/// | STAMP Session-Sender |  44 (112 authenticated) + TLVs = P − 40 bytes
/// | packet + TLVs        |  (a Session-Reflector packet in replies)
/// +----------------------+  14 + P
/// | zero padding to 60   |  only when 14 + P < 60
/// +----------------------+
/// ```
///
/// The reply swaps the addresses (dst = the request's source MAC, src = the
/// reflector's), keeps the VLAN tag, copies the probe header with REPLY
/// set, and carries the STAMP reply built exactly as over UDP, of the same
/// length: the reply frame is never longer than the request frame.
///
/// PTP-wrapped requests (EtherType 0x88F7, for NICs that stamp only PTP
/// event messages; `misura_wire::ptp`) carry misura's PTPv2 Sync header
/// (domain 127) between the Ethernet header and the probe header. Their
/// reply is wrapped the same way: the request's Sync header with the
/// reflector's port identity, so it is as long as the request and the
/// sender's NIC stamps it too. Any other PTP frame (another instance's
/// Announce or Sync, a malformed header, a Sync carrying no probe) is
/// dropped and counted as [`DropReason::ForeignPtp`], never answered.
pub mod l2 {
    /// Frame length without FCS below which frames are padded (64 − 4).
    pub const MIN_FRAME_NO_FCS: usize = 60;

    /// Offset of the STAMP packet in a frame without a VLAN tag.
    pub const STAMP_OFFSET: usize =
        misura_wire::ethernet::HEADER_LEN + misura_wire::probe::HEADER_LEN;
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

#[cfg(test)]
mod tests {
    use super::*;
    use misura_wire::stamp::{
        emit_tlvs, from_wire, ReflectorRepr, StampReflectorPacket, TlvFlags, TlvRepr, AUTH_LEN,
        UNAUTH_LEN,
    };
    use proptest::prelude::*;

    const NOW: i64 = 1_700_000_000_123_456_789;

    fn cfg() -> ReflectorConfig {
        ReflectorConfig {
            key: None,
            stateful: false,
            rate_per_s: 1_000_000,
            burst: 1_000_000,
            max_sources: 16,
            listen_port: Some(862),
        }
    }

    fn src(n: u8, port: u16) -> Peer {
        Peer::Udp(SocketAddr::new(IpAddr::from([198, 18, 0, n]), port))
    }

    fn meta(peer: Peer, rx_ns: i64) -> RequestMeta {
        RequestMeta {
            src: peer,
            dst: Some(IpAddr::from([198, 18, 0, 2])),
            ttl: Some(64),
            rx: Stamp {
                ns: rx_ns,
                source: TimestampSource::KernelSoftware,
            },
            truncated: false,
        }
    }

    /// A sender packet with Timestamp Information and Follow-Up TLVs.
    fn request(mode: Mode, seq: u32, fmt: StampTimestampFormat, ssid: u16, tlvs: bool) -> Vec<u8> {
        let mut buf = vec![0xa5; 200];
        let n = SenderRepr {
            seq,
            timestamp: stamp::to_wire(NOW - 1_000_000, fmt),
            error_estimate: ErrorEstimate::new(false, fmt, 0, 1),
            ssid,
            hmac: (mode == Mode::Authenticated).then_some([0; 16]),
        }
        .emit(&mut buf)
        .unwrap();
        let mut len = n;
        if tlvs {
            let t = [
                TlvRepr::TimestampInformation {
                    flags: TlvFlags::SENDER,
                    info: TimestampInfo::default(),
                    sub_tlvs: &[],
                },
                TlvRepr::FollowUpTelemetry {
                    flags: TlvFlags::SENDER,
                    seq: 0,
                    timestamp: [0; 8],
                    mode: 0,
                },
            ];
            len += emit_tlvs(&t, &mut buf[n..]).unwrap();
        }
        buf.truncate(len);
        buf
    }

    fn sign(key: &StampKey, req: &mut [u8]) {
        if let Some(c) = tlv_hmac_covered(req, Mode::Authenticated) {
            let tag = hmac16(key, &[&req[c.seq.clone()], &req[c.tlvs.clone()]]);
            req[c.hmac].copy_from_slice(&tag);
        }
        let tag = hmac16(key, &[&req[..96]]);
        req[HMAC_FIELD].copy_from_slice(&tag);
    }

    fn tlvs_of(reply: &[u8], mode: Mode) -> Vec<TlvRepr<'_>> {
        let base = StampReflectorPacket::new_checked(reply, mode)
            .unwrap()
            .mode()
            .base_len();
        misura_wire::stamp::Tlvs::new(&reply[base..])
            .map(Result::unwrap)
            .collect()
    }

    #[test]
    fn stateless_reply_byte_checked() {
        let mut r = Reflector::new(cfg());
        let req = request(
            Mode::Unauthenticated,
            77,
            StampTimestampFormat::Ntp,
            0x1234,
            true,
        );
        let mut out = [0xa5u8; 300];
        let rx = NOW - 5_000;
        let d = r.handle(
            &req,
            &meta(src(1, 40000), rx),
            NOW,
            &ClockState::FREE_RUNNING,
            &mut out,
        );
        assert_eq!(
            d,
            Decision::Reply {
                len: req.len(),
                reply_seq: 77
            }
        );
        assert_eq!(out[req.len()], 0xa5, "nothing written past the reply");
        let rep = ReflectorRepr::parse(&out[..req.len()], Mode::Unauthenticated).unwrap();
        assert_eq!(rep.seq, 77);
        assert_eq!(rep.sender_seq, 77);
        assert_eq!(rep.ssid, 0x1234);
        assert_eq!(rep.sender_ttl, 64);
        assert_eq!(
            rep.timestamp,
            stamp::to_wire(NOW, StampTimestampFormat::Ntp)
        );
        assert_eq!(
            rep.receive_timestamp,
            stamp::to_wire(rx, StampTimestampFormat::Ntp)
        );
        assert_eq!(
            from_wire(rep.receive_timestamp, StampTimestampFormat::Ntp),
            rx
        );
        assert_eq!(rep.sender_timestamp, req[4..12]);
        assert!(!rep.error_estimate.synchronized());
        assert_eq!(rep.error_estimate.format(), StampTimestampFormat::Ntp);
        assert!(rep.error_estimate.to_ns() >= 1_000_000_000);
        // Byte layout of the base packet (RFC 8762 §4.3.1).
        let o = &out[..req.len()];
        assert_eq!(&o[0..4], &77u32.to_be_bytes());
        assert_eq!(&o[14..16], &[0x12, 0x34]);
        assert_eq!(&o[24..28], &77u32.to_be_bytes());
        assert_eq!(o[40], 64);
        assert_eq!(&o[38..40], &[0, 0]);
        assert_eq!(&o[41..44], &[0, 0, 0]);
        // TLVs: recognised (U clear), Timestamp Information filled.
        let t = tlvs_of(o, Mode::Unauthenticated);
        assert_eq!(
            t[0],
            TlvRepr::TimestampInformation {
                flags: TlvFlags(0),
                info: TimestampInfo {
                    sync_src_in: sync_source::LOCAL_FREE_RUNNING,
                    timestamp_in: timestamp_method::SW_LOCAL,
                    sync_src_out: sync_source::LOCAL_FREE_RUNNING,
                    timestamp_out: timestamp_method::SW_LOCAL,
                },
                sub_tlvs: &[],
            }
        );
        // First reply: no follow-up known, all zero.
        assert_eq!(
            t[1],
            TlvRepr::FollowUpTelemetry {
                flags: TlvFlags(0),
                seq: 0,
                timestamp: [0; 8],
                mode: 0
            }
        );
        assert_eq!(r.counters().replied, 1);
        assert_eq!(r.counters().received, 1);
    }

    #[test]
    fn ptp_format_sync_and_user_clock_fallback() {
        let mut r = Reflector::new(cfg());
        let req = request(Mode::Unauthenticated, 5, StampTimestampFormat::Ptp, 0, true);
        let mut out = [0u8; 300];
        let mut m = meta(src(1, 40000), NOW - 10);
        m.rx.source = TimestampSource::UserClock;
        m.ttl = None;
        let clock = ClockState {
            synchronized: true,
            sync_source: sync_source::NTP,
            uncertainty_ns: 2_000,
        };
        let Decision::Reply { len, .. } = r.handle(&req, &m, NOW, &clock, &mut out) else {
            panic!()
        };
        let rep = ReflectorRepr::parse(&out[..len], Mode::Unauthenticated).unwrap();
        assert_eq!(rep.error_estimate.format(), StampTimestampFormat::Ptp);
        assert!(rep.error_estimate.synchronized());
        let e = rep.error_estimate.to_ns();
        assert!((2_000..2_100).contains(&e), "{e}");
        assert_eq!(from_wire(rep.timestamp, StampTimestampFormat::Ptp), NOW);
        assert_eq!(
            from_wire(rep.receive_timestamp, StampTimestampFormat::Ptp),
            NOW - 10
        );
        assert_eq!(rep.sender_ttl, 0);
        let TlvRepr::TimestampInformation { info, .. } =
            tlvs_of(&out[..len], Mode::Unauthenticated)[0]
        else {
            panic!()
        };
        assert_eq!(info.sync_src_in, sync_source::NTP);
        assert_eq!(info.timestamp_in, timestamp_method::CONTROL_PLANE);
        assert_eq!(r.counters().rx_user_clock, 1);
    }

    #[test]
    fn stateful_numbers_per_session() {
        let mut r = Reflector::new(ReflectorConfig {
            stateful: true,
            ..cfg()
        });
        let mut out = [0u8; 300];
        let mut seqs = vec![];
        for (peer, ssid, sender_seq) in [
            (src(1, 1000), 1, 500),
            (src(1, 1000), 1, 900),
            (src(1, 1000), 2, 7),
            (src(1, 1001), 1, 7),
            (src(1, 1000), 1, 3),
        ] {
            let req = request(
                Mode::Unauthenticated,
                sender_seq,
                StampTimestampFormat::Ntp,
                ssid,
                false,
            );
            let Decision::Reply { len, reply_seq } = r.handle(
                &req,
                &meta(peer, NOW),
                NOW,
                &ClockState::FREE_RUNNING,
                &mut out,
            ) else {
                panic!()
            };
            let rep = ReflectorRepr::parse(&out[..len], Mode::Unauthenticated).unwrap();
            assert_eq!(rep.seq, reply_seq);
            assert_eq!(rep.sender_seq, sender_seq);
            seqs.push(reply_seq);
        }
        assert_eq!(seqs, [0, 1, 0, 0, 2]);
        assert_eq!(r.tracked().2, 3);
    }

    #[test]
    fn follow_up_carries_the_previous_reply_and_its_stamp() {
        let mut r = Reflector::new(cfg());
        let mut out = [0u8; 300];
        let a = src(1, 4000);
        let b = src(9, 4000);
        let req = |seq| {
            request(
                Mode::Unauthenticated,
                seq,
                StampTimestampFormat::Ntp,
                0,
                true,
            )
        };
        assert!(matches!(
            r.handle(
                &req(10),
                &meta(a, NOW),
                NOW,
                &ClockState::FREE_RUNNING,
                &mut out
            ),
            Decision::Reply { reply_seq: 10, .. }
        ));
        r.on_tx_stamp(a, 10, NOW + 777, TimestampSource::KernelSoftware);
        // A stamp for a reply that was not the last one is ignored.
        r.on_tx_stamp(a, 9, NOW + 1, TimestampSource::KernelSoftware);
        // Another source's state is its own.
        assert!(matches!(
            r.handle(
                &req(50),
                &meta(b, NOW),
                NOW,
                &ClockState::FREE_RUNNING,
                &mut out
            ),
            Decision::Reply { .. }
        ));
        let Decision::Reply { len, .. } = r.handle(
            &req(11),
            &meta(a, NOW + 1000),
            NOW + 2000,
            &ClockState::FREE_RUNNING,
            &mut out,
        ) else {
            panic!()
        };
        let TlvRepr::FollowUpTelemetry {
            seq,
            timestamp,
            mode,
            flags,
        } = tlvs_of(&out[..len], Mode::Unauthenticated)[1]
        else {
            panic!()
        };
        assert_eq!(flags, TlvFlags(0));
        assert_eq!(seq, 10);
        assert_eq!(from_wire(timestamp, StampTimestampFormat::Ntp), NOW + 777);
        assert_eq!(mode, timestamp_method::SW_LOCAL);
        assert_eq!(r.counters().follow_ups, 1);
        assert_eq!(r.counters().tx_stamps, 1);
        // Reply 11's stamp was not reported: the next follow-up is empty.
        let Decision::Reply { len, .. } = r.handle(
            &req(12),
            &meta(a, NOW),
            NOW,
            &ClockState::FREE_RUNNING,
            &mut out,
        ) else {
            panic!()
        };
        let TlvRepr::FollowUpTelemetry { mode, .. } =
            tlvs_of(&out[..len], Mode::Unauthenticated)[1]
        else {
            panic!()
        };
        assert_eq!(mode, 0);
        // A hardware stamp says HW assist.
        r.on_tx_stamp(a, 12, NOW + 5, TimestampSource::NicHardware);
        let Decision::Reply { len, .. } = r.handle(
            &req(13),
            &meta(a, NOW),
            NOW,
            &ClockState::FREE_RUNNING,
            &mut out,
        ) else {
            panic!()
        };
        let TlvRepr::FollowUpTelemetry { mode, seq, .. } =
            tlvs_of(&out[..len], Mode::Unauthenticated)[1]
        else {
            panic!()
        };
        assert_eq!((seq, mode), (12, timestamp_method::HW_ASSIST));
    }

    #[test]
    fn every_drop_reason_is_triggered_and_counted() {
        let mut out = [0u8; 300];
        let ok = request(
            Mode::Unauthenticated,
            1,
            StampTimestampFormat::Ntp,
            0,
            false,
        );
        let c = ClockState::FREE_RUNNING;
        let mut r = Reflector::new(cfg());
        let cases: Vec<(Vec<u8>, RequestMeta, DropReason)> = vec![
            (
                ok[..43].to_vec(),
                meta(src(1, 5000), NOW),
                DropReason::TooShort,
            ),
            (vec![], meta(src(1, 5000), NOW), DropReason::TooShort),
            (
                ok.clone(),
                RequestMeta {
                    truncated: true,
                    ..meta(src(1, 5000), NOW)
                },
                DropReason::Malformed,
            ),
            (
                ok.clone(),
                meta(Peer::Udp("224.0.0.1:5000".parse().unwrap()), NOW),
                DropReason::GroupSource,
            ),
            (
                ok.clone(),
                meta(Peer::Udp("255.255.255.255:5000".parse().unwrap()), NOW),
                DropReason::GroupSource,
            ),
            (
                ok.clone(),
                meta(Peer::Udp("[ff02::1]:5000".parse().unwrap()), NOW),
                DropReason::GroupSource,
            ),
            (
                ok.clone(),
                meta(Peer::Udp("[::ffff:239.1.1.1]:5000".parse().unwrap()), NOW),
                DropReason::GroupSource,
            ),
            (
                ok.clone(),
                meta(Peer::Udp("0.0.0.0:5000".parse().unwrap()), NOW),
                DropReason::GroupSource,
            ),
            (ok.clone(), meta(src(1, 0), NOW), DropReason::GroupSource),
            (
                ok.clone(),
                meta(src(1, 862), NOW),
                DropReason::LooksLikeReply,
            ),
        ];
        for (req, m, want) in &cases {
            assert_eq!(
                r.handle(req, m, NOW, &c, &mut out),
                Decision::Drop(*want),
                "{want:?}"
            );
        }
        // Output buffer shorter than the request: refused, not truncated.
        assert_eq!(
            r.handle(&ok, &meta(src(1, 5000), NOW), NOW, &c, &mut out[..43]),
            Decision::Drop(DropReason::Malformed)
        );
        let k = r.counters();
        assert_eq!(
            (k.too_short, k.malformed, k.group_source, k.looks_like_reply),
            (2, 2, 6, 1)
        );
        assert_eq!(k.received, 11);
        assert_eq!(k.replied, 0);

        // Auth: short, wrong HMAC.
        let key = StampKey::new(b"k").unwrap();
        let mut r = Reflector::new(ReflectorConfig {
            key: Some(key.clone()),
            ..cfg()
        });
        assert_eq!(
            r.handle(&ok, &meta(src(1, 5000), NOW), NOW, &c, &mut out),
            Decision::Drop(DropReason::AuthFailed)
        );
        let mut a = request(Mode::Authenticated, 1, StampTimestampFormat::Ntp, 0, false);
        sign(&StampKey::new(b"wrong").unwrap(), &mut a);
        assert_eq!(
            r.handle(&a, &meta(src(1, 5000), NOW), NOW, &c, &mut out),
            Decision::Drop(DropReason::AuthFailed)
        );
        assert_eq!(r.counters().auth_failed, 2);

        // Rate limit: a burst of 3 at 10/s.
        let mut r = Reflector::new(ReflectorConfig {
            rate_per_s: 10,
            burst: 3,
            ..cfg()
        });
        let d: Vec<Decision> = (0..5)
            .map(|_| r.handle(&ok, &meta(src(1, 5000), NOW), NOW, &c, &mut out))
            .collect();
        assert!(matches!(d[2], Decision::Reply { .. }));
        assert_eq!(d[3], Decision::Drop(DropReason::RateLimited));
        // Another port of the same host shares the budget.
        assert_eq!(
            r.handle(&ok, &meta(src(1, 5001), NOW), NOW, &c, &mut out),
            Decision::Drop(DropReason::RateLimited)
        );
        assert_eq!(r.counters().rate_limited, 3);

        // Table full.
        let mut r = Reflector::new(ReflectorConfig {
            max_sources: 2,
            ..cfg()
        });
        // Two sources that keep talking (seen twice: off probation) fill
        // the table; a third is refused until one has been idle.
        for n in 1..=2 {
            for _ in 0..2 {
                assert!(matches!(
                    r.handle(&ok, &meta(src(n, 5000), NOW), NOW, &c, &mut out),
                    Decision::Reply { .. }
                ));
            }
        }
        assert_eq!(
            r.handle(&ok, &meta(src(3, 5000), NOW), NOW, &c, &mut out),
            Decision::Drop(DropReason::TableFull)
        );
        // Same host, new port: new follow-up peer, table full too.
        assert_eq!(
            r.handle(&ok, &meta(src(1, 5001), NOW), NOW, &c, &mut out),
            Decision::Drop(DropReason::TableFull)
        );
        assert_eq!(r.counters().table_full, 2);
        assert_eq!(r.counters().dropped(), 2);
    }

    #[test]
    fn hmac_verified_and_reply_signed() {
        let key = StampKey::new(b"0123456789abcdef").unwrap();
        let mut r = Reflector::new(ReflectorConfig {
            key: Some(key.clone()),
            ..cfg()
        });
        let c = ClockState::FREE_RUNNING;
        let mut out = [0u8; 400];
        // With an HMAC TLV after the Timestamp Information TLV.
        let mut req = request(Mode::Authenticated, 3, StampTimestampFormat::Ntp, 0, true);
        let mut t = [0u8; 20];
        emit_tlvs(
            &[TlvRepr::Hmac {
                flags: TlvFlags::SENDER,
                hmac: [0; 16],
            }],
            &mut t,
        )
        .unwrap();
        req.extend_from_slice(&t);
        sign(&key, &mut req);
        let Decision::Reply { len, .. } =
            r.handle(&req, &meta(src(1, 5000), NOW), NOW, &c, &mut out)
        else {
            panic!("{:?}", r.counters())
        };
        assert_eq!(len, req.len());
        let reply = &out[..len];
        assert!(verify16(&key, &[&reply[..96]], &reply[96..112]));
        let cov = tlv_hmac_covered(reply, Mode::Authenticated).unwrap();
        assert!(verify16(
            &key,
            &[&reply[cov.seq.clone()], &reply[cov.tlvs.clone()]],
            &reply[cov.hmac.clone()]
        ));
        assert!(tlvs_of(reply, Mode::Authenticated)
            .iter()
            .all(|t| !t.flags().contains(TlvFlags::I)));
        assert_eq!(
            ReflectorRepr::parse(reply, Mode::Authenticated)
                .unwrap()
                .sender_seq,
            3
        );

        // A bad HMAC TLV with a good base HMAC: replied, I set on every TLV.
        let mut bad = req.clone();
        let n = bad.len();
        sign(&key, &mut bad);
        bad[n - 1] ^= 0xff;
        let Decision::Reply { len, .. } =
            r.handle(&bad, &meta(src(1, 5000), NOW), NOW, &c, &mut out)
        else {
            panic!()
        };
        assert!(tlvs_of(&out[..len], Mode::Authenticated)
            .iter()
            .all(|t| t.flags().contains(TlvFlags::I)));
        assert_eq!(r.counters().tlv_integrity_failed, 1);

        // Tampered base: dropped.
        let mut tampered = req.clone();
        tampered[0] ^= 1;
        assert_eq!(
            r.handle(&tampered, &meta(src(1, 5000), NOW), NOW, &c, &mut out),
            Decision::Drop(DropReason::AuthFailed)
        );
        // Without TLVs, exactly 112 bytes.
        let mut plain = request(Mode::Authenticated, 4, StampTimestampFormat::Ptp, 9, false);
        sign(&key, &mut plain);
        let Decision::Reply { len, .. } =
            r.handle(&plain, &meta(src(1, 5000), NOW), NOW, &c, &mut out)
        else {
            panic!()
        };
        assert_eq!(len, AUTH_LEN);
        assert!(verify16(&key, &[&out[..96]], &out[96..112]));
    }

    #[test]
    fn bounded_tables_under_a_flood_of_sources() {
        let mut r = Reflector::new(ReflectorConfig {
            max_sources: 64,
            stateful: true,
            ..cfg()
        });
        let c = ClockState::FREE_RUNNING;
        let mut out = [0u8; 300];
        let ok = request(
            Mode::Unauthenticated,
            1,
            StampTimestampFormat::Ntp,
            0,
            false,
        );
        for i in 0..20_000u32 {
            let ip = IpAddr::from((0x0a00_0000u32 + i).to_be_bytes());
            let m = meta(
                Peer::Udp(SocketAddr::new(ip, 1024 + (i % 60000) as u16)),
                NOW + i64::from(i),
            );
            let _ = r.handle(&ok, &m, NOW + i64::from(i), &c, &mut out);
        }
        let (l, p, s) = r.tracked();
        assert!(l <= 64 && p <= 64 && s <= 64, "{l} {p} {s}");
        // Issue 13, finding 1: one-shot sources take turns on probation;
        // none is refused and the tables stay bounded.
        assert_eq!(r.counters().replied, 20_000);
        assert_eq!(r.counters().table_full, 0);
        // A real source that keeps talking is served all through a flood.
        let mut served = 0;
        for i in 0..20_000u32 {
            let t = NOW + 30_000 + i64::from(i) * 1_000;
            if i % 100 == 0 {
                let m = meta(src(200, 5000), t);
                if matches!(r.handle(&ok, &m, t, &c, &mut out), Decision::Reply { .. }) {
                    served += 1;
                }
            }
            let ip = IpAddr::from((0x0b00_0000u32 + i).to_be_bytes());
            let m = meta(Peer::Udp(SocketAddr::new(ip, 2000)), t);
            let _ = r.handle(&ok, &m, t, &c, &mut out);
        }
        assert_eq!(served, 200, "the real source lost replies during the flood");
        assert_eq!(r.counters().table_full, 0);
    }

    #[test]
    fn one_address_cycling_ports_holds_at_most_its_share_of_the_peer_table() {
        // Issue 13, finding 1: one real address cycling 4 200 source ports
        // (each talking twice, so promoted) locked new sources out.
        let mut r = Reflector::new(ReflectorConfig {
            max_sources: 1024,
            rate_per_s: 1_000_000,
            burst: 1_000_000,
            ..cfg()
        });
        let c = ClockState::FREE_RUNNING;
        let mut out = [0u8; 300];
        let ok = request(
            Mode::Unauthenticated,
            1,
            StampTimestampFormat::Ntp,
            0,
            false,
        );
        let mut t = NOW;
        for port in 0..4_200u16 {
            for _ in 0..2 {
                t += 200_000;
                let _ = r.handle(&ok, &meta(src(9, 1024 + port), t), t, &c, &mut out);
            }
        }
        let a = src(9, 1).source_addr();
        assert_eq!(r.ports.keys_of(&a), PORTS_PER_ADDRESS);
        assert!(r.tracked().1 <= PORTS_PER_ADDRESS, "{:?}", r.tracked());
        assert_eq!(r.counters().table_full, 0);
        // New sources from other addresses all get in and stay.
        for host in 20..220u8 {
            for _ in 0..2 {
                t += 200_000;
                let d = r.handle(&ok, &meta(src(host, 5000), t), t, &c, &mut out);
                assert!(matches!(d, Decision::Reply { .. }), "host {host}: {d:?}");
            }
        }
        assert!(r.tracked().1 >= 200 + PORTS_PER_ADDRESS - 1);
    }

    fn l2_request(flags: ProbeFlags, stamp_req: &[u8], src_mac: [u8; 6]) -> Vec<u8> {
        let eth = EthernetRepr {
            dst: MacAddr([2, 0, 0, 0, 0, 2]),
            src: MacAddr(src_mac),
            vlan: None,
            ethertype: 0x88b5,
        };
        let p = ProbeRepr {
            flags,
            payload_len: (probe::HEADER_LEN + stamp_req.len()) as u16,
            session_id: 42,
            stream: 0,
            size_index: 0,
            seq: 99,
            sender_timestamp: 0,
            aux_timestamp: 0,
        };
        let mut f = vec![0u8; 2000];
        let n = probe::emit_frame(&eth, &p, &mut f).unwrap();
        f.truncate(n);
        f[l2::STAMP_OFFSET..l2::STAMP_OFFSET + stamp_req.len()].copy_from_slice(stamp_req);
        f
    }

    /// A raw-frame reflector (no UDP port), a free-running clock, its MAC.
    fn l2_reflector() -> (Reflector, ClockState, MacAddr) {
        let r = Reflector::new(ReflectorConfig {
            listen_port: None,
            ..cfg()
        });
        (r, ClockState::FREE_RUNNING, MacAddr([2, 0, 0, 0, 0, 2]))
    }

    #[test]
    fn l2_frames() {
        let (mut r, c, ours) = l2_reflector();
        let req = request(Mode::Unauthenticated, 8, StampTimestampFormat::Ntp, 0, true);
        let f = l2_request(ProbeFlags::empty(), &req, [2, 0, 0, 0, 0, 1]);
        let mut out = [0xa5u8; 2000];
        let m = meta(src(1, 1), NOW);
        let Decision::Reply { len, reply_seq } =
            r.handle_l2_frame(&f, 0x88b5, ours, &m, NOW, &c, &mut out)
        else {
            panic!("{:?}", r.counters())
        };
        assert_eq!((len, reply_seq), (f.len(), 8));
        let (eth, p) = probe::parse_frame(&out[..len], 0x88b5).unwrap();
        assert_eq!(eth.dst, MacAddr([2, 0, 0, 0, 0, 1]));
        assert_eq!(eth.src, ours);
        assert!(p.flags.contains(ProbeFlags::REPLY));
        assert_eq!(
            (p.seq, p.session_id, p.payload_len),
            (99, 42, f.len() as u16 - 14)
        );
        let rep = ReflectorRepr::parse(&out[l2::STAMP_OFFSET..len], Mode::Unauthenticated).unwrap();
        assert_eq!(rep.sender_seq, 8);
        // Follow-up state is per MAC.
        r.on_tx_stamp(
            Peer::L2(MacAddr([2, 0, 0, 0, 0, 1])),
            8,
            NOW + 3,
            TimestampSource::KernelSoftware,
        );
        let Decision::Reply { len, .. } =
            r.handle_l2_frame(&f, 0x88b5, ours, &m, NOW, &c, &mut out)
        else {
            panic!()
        };
        let TlvRepr::FollowUpTelemetry { seq, mode, .. } =
            tlvs_of(&out[l2::STAMP_OFFSET..len], Mode::Unauthenticated)[1]
        else {
            panic!()
        };
        assert_eq!((seq, mode), (8, timestamp_method::SW_LOCAL));
        // Drops: a reply, a group source, a bad magic, a short frame.
        let reply = l2_request(ProbeFlags::REPLY, &req, [2, 0, 0, 0, 0, 1]);
        assert_eq!(
            r.handle_l2_frame(&reply, 0x88b5, ours, &m, NOW, &c, &mut out),
            Decision::Drop(DropReason::LooksLikeReply)
        );
        let group = l2_request(ProbeFlags::empty(), &req, [3, 0, 0, 0, 0, 1]);
        assert_eq!(
            r.handle_l2_frame(&group, 0x88b5, ours, &m, NOW, &c, &mut out),
            Decision::Drop(DropReason::GroupSource)
        );
        let mut bad = f.clone();
        bad[14] = b'X';
        assert_eq!(
            r.handle_l2_frame(&bad, 0x88b5, ours, &m, NOW, &c, &mut out),
            Decision::Drop(DropReason::Malformed)
        );
        assert_eq!(
            r.handle_l2_frame(&f[..20], 0x88b5, ours, &m, NOW, &c, &mut out),
            Decision::Drop(DropReason::TooShort)
        );
        // A short STAMP body inside a padded frame: the body's length counts.
        let short = l2_request(ProbeFlags::empty(), &req[..10], [2, 0, 0, 0, 0, 1]);
        assert_eq!(
            r.handle_l2_frame(&short, 0x88b5, ours, &m, NOW, &c, &mut out),
            Decision::Drop(DropReason::TooShort)
        );
        let k = r.counters();
        assert_eq!(k.received, 7);
        assert_eq!(k.replied + k.dropped(), k.received);
    }

    /// A PTP-wrapped request: the probe frame with misura's Sync header
    /// between Ethernet and the probe header.
    fn ptp_request(stamp_req: &[u8], src_mac: [u8; 6]) -> Vec<u8> {
        let plain = l2_request(ProbeFlags::empty(), stamp_req, src_mac);
        let mut f = plain[..12].to_vec();
        f.extend_from_slice(&ptp::ETHERTYPE_PTP.to_be_bytes());
        let mut sync = [0u8; ptp::SYNC_LEN];
        ptp::emit_sync(&mut sync, 99, ptp::clock_identity(src_mac)).unwrap();
        f.extend_from_slice(&sync);
        let p_len = probe::HEADER_LEN + stamp_req.len();
        f.extend_from_slice(&plain[14..14 + p_len]);
        f.resize(f.len().max(l2::MIN_FRAME_NO_FCS), 0);
        f
    }

    #[test]
    fn ptp_wrapped_request_gets_a_ptp_wrapped_reply_of_its_size() {
        let (mut r, c, ours) = l2_reflector();
        let req = request(Mode::Unauthenticated, 8, StampTimestampFormat::Ntp, 0, true);
        let f = ptp_request(&req, [2, 0, 0, 0, 0, 1]);
        let m = meta(src(1, 1), NOW);
        let mut out = [0xa5u8; 2000];
        let Decision::Reply { len, reply_seq } =
            r.handle_l2_frame(&f, 0x88b5, ours, &m, NOW, &c, &mut out)
        else {
            panic!("{:?}", r.counters())
        };
        assert_eq!((len, reply_seq), (f.len(), 8), "the request's size");
        let eth = EthernetFrame::new_checked(&out[..len]).unwrap();
        assert_eq!(eth.ethertype(), ptp::ETHERTYPE_PTP);
        assert_eq!((eth.dst(), eth.src()), (MacAddr([2, 0, 0, 0, 0, 1]), ours));
        let sync = eth.payload();
        assert_eq!(&sync[..2], &[0x00, 0x02], "a PTPv2 Sync: NICs stamp it");
        assert_eq!(&sync[30..32], &[0, 99], "the request's sequenceId");
        assert_eq!(&sync[20..28], &ptp::clock_identity(ours.0), "our port");
        let inner = ptp::strip_misura_sync(sync).unwrap();
        let p = ProbeRepr::parse(inner).unwrap();
        assert!(p.flags.contains(ProbeFlags::REPLY));
        assert_eq!(
            (p.seq, p.session_id, usize::from(p.payload_len)),
            (99, 42, probe::HEADER_LEN + req.len())
        );
        let at = l2::STAMP_OFFSET + ptp::SYNC_LEN;
        let rep = ReflectorRepr::parse(&out[at..at + req.len()], Mode::Unauthenticated).unwrap();
        assert_eq!(rep.sender_seq, 8);
        // Its own reply coming back is not answered.
        assert_eq!(
            r.handle_l2_frame(&out[..len], 0x88b5, ours, &m, NOW, &c, &mut [0u8; 2000]),
            Decision::Drop(DropReason::LooksLikeReply)
        );
    }

    #[test]
    fn foreign_ptp_frames_are_counted_and_never_answered() {
        let mut r = Reflector::new(cfg());
        let c = ClockState::FREE_RUNNING;
        let ours = MacAddr([2, 0, 0, 0, 0, 2]);
        let m = meta(src(1, 1), NOW);
        let req = request(
            Mode::Unauthenticated,
            8,
            StampTimestampFormat::Ntp,
            0,
            false,
        );
        let good = ptp_request(&req, [2, 0, 0, 0, 0, 1]);
        // ptp4l's Announce (messageType 0xB, domain 0), a Sync of domain 0
        // with nothing after it, a v1 header, a Sync in our domain carrying
        // no probe, and a header cut short.
        let mut announce = good.clone();
        announce[14] = 0x0b;
        announce[18] = 0;
        let mut sync0 = good[..14 + ptp::SYNC_LEN].to_vec();
        sync0[18] = 0;
        sync0.resize(60, 0);
        let mut v1 = good.clone();
        v1[15] = 1;
        let mut no_probe = good.clone();
        no_probe[14 + ptp::SYNC_LEN] = b'X';
        let short = good[..14 + 30].to_vec();
        let mut out = [0u8; 2000];
        for (what, f) in [
            ("announce", announce),
            ("sync of domain 0", sync0),
            ("v1", v1),
            ("no probe", no_probe),
            ("short", short),
        ] {
            assert_eq!(
                r.handle_l2_frame(&f, 0x88b5, ours, &m, NOW, &c, &mut out),
                Decision::Drop(DropReason::ForeignPtp),
                "{what}"
            );
        }
        let k = r.counters();
        assert_eq!((k.received, k.foreign_ptp, k.replied), (5, 5, 0));
        assert_eq!(k.dropped(), 5);
    }

    proptest! {
        #[test]
        fn reply_never_longer_than_request(len in 0usize..=300, fill in any::<u8>(), tlv_area in proptest::collection::vec(any::<u8>(), 0..300), l2 in any::<bool>()) {
            let mut req = request(Mode::Unauthenticated, 1, StampTimestampFormat::Ntp, 0, false);
            req.extend_from_slice(&tlv_area);
            req.resize(len, fill);
            let mut r = Reflector::new(cfg());
            let mut out = [0u8; 700];
            let c = ClockState::FREE_RUNNING;
            if l2 {
                let f = l2_request(ProbeFlags::empty(), &req, [2, 0, 0, 0, 0, 1]);
                let d = r.handle_l2_frame(&f, 0x88b5, MacAddr([2, 0, 0, 0, 0, 2]), &meta(src(1, 1), NOW), NOW, &c, &mut out);
                match d {
                    Decision::Reply { len: n, .. } => prop_assert!(n <= f.len()),
                    Decision::Drop(why) => prop_assert!(len < UNAUTH_LEN && why == DropReason::TooShort),
                }
            } else {
                let d = r.handle(&req, &meta(src(1, 1000), NOW), NOW, &c, &mut out);
                match d {
                    Decision::Reply { len: n, .. } => prop_assert_eq!(n, len),
                    Decision::Drop(why) => prop_assert!(len < UNAUTH_LEN && why == DropReason::TooShort),
                }
            }
        }

        #[test]
        fn authenticated_reply_never_longer(len in 0usize..=300, fill in any::<u8>()) {
            let key = StampKey::new(b"key").unwrap();
            let mut req = request(Mode::Authenticated, 1, StampTimestampFormat::Ntp, 0, false);
            req.resize(len, fill);
            if len >= AUTH_LEN {
                sign(&key, &mut req);
            }
            let mut r = Reflector::new(ReflectorConfig { key: Some(key), ..cfg() });
            let mut out = [0u8; 300];
            match r.handle(&req, &meta(src(1, 1000), NOW), NOW, &ClockState::FREE_RUNNING, &mut out) {
                Decision::Reply { len: n, .. } => prop_assert_eq!(n, len),
                Decision::Drop(why) => prop_assert!(len < AUTH_LEN && why == DropReason::AuthFailed),
            }
        }
    }
}
