//! irtt's UDP packets (the Isochronous Round-Trip Tester, protocol version
//! 1, as irtt 0.9.0 speaks it), read from irtt's `packet.go`, `fbuf.go`,
//! `conn.go`, `sconn.go` and `client.go`; no code is taken from it.
//!
//! Every packet starts with the same header; multi-byte integers are
//! little-endian:
//!
//! ```text
//! 0       3 magic 14 a7 5b        | 3 flags: 1 open, 2 reply, 3 close, 8 HMAC
//! 4      20 HMAC-MD5 (only with the HMAC flag), over the whole datagram
//!           with these 16 bytes zeroed
//! then     8 connection token (not in an open request)
//! ```
//!
//! * **open request** (client → server): `open` (+ `close` for a no-test
//!   open), then the wanted [`Params`] as the payload.
//! * **open reply**: `open|reply` (+ `close` when the server refuses), the
//!   token the server chose, then the granted [`Params`].
//! * **echo request / reply**: the token, a 4-byte sequence number, then
//!   the fields the granted parameters ask for, in this order and only if
//!   asked: received count (4), received window (8), receive wall, receive
//!   monotonic, midpoint wall, midpoint monotonic, send wall, send monotonic
//!   (8 each, ns: wall since the Unix epoch, monotonic since the server
//!   process started). The client sends them zeroed, so a request is as
//!   long as its reply; both are padded to the granted length. A stamp of
//!   0 means "not stamped".
//! * **close** (client → server): `close`, the token; no reply.
//!
//! The packet does not say which optional fields it carries: both ends lay
//! them out from the negotiated parameters ([`Layout`]).

pub use crate::irtt_error::IrttError;
use crate::irtt_params::{Clock, Params, ReceivedStats, StampAt};
use hmac::{Hmac, Mac};

pub use crate::irtt_params::MAX_PARAMS_LEN;

/// The three bytes every irtt packet starts with.
pub const MAGIC: [u8; 3] = [0x14, 0xa7, 0x5b];
pub const FLAG_OPEN: u8 = 0x01;
pub const FLAG_REPLY: u8 = 0x02;
pub const FLAG_CLOSE: u8 = 0x04;
pub const FLAG_HMAC: u8 = 0x08;
const FLAGS_ALL: u8 = 0x0f;
pub const HMAC_LEN: usize = 16;
pub const TOKEN_LEN: usize = 8;
/// The protocol version of irtt 0.9 (and the only one).
pub const PROTOCOL_VERSION: i64 = 1;
/// irtt's UDP port.
pub const DEFAULT_PORT: u16 = 2112;
/// Longest irtt datagram misura reads or writes (a jumbo frame's payload).
pub const MAX_PACKET_LEN: usize = 9216;
/// Longest HMAC key misura accepts.
pub const MAX_KEY_LEN: usize = 1024;

type HmacMd5 = Hmac<md5::Md5>;

/// The fixed header: magic and flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub flags: u8,
}

impl Header {
    /// Checks the length bound, the magic and the flag bits.
    pub fn parse(buf: &[u8]) -> Result<Header, IrttError> {
        if buf.len() > MAX_PACKET_LEN {
            return Err(IrttError::TooLong {
                len: buf.len(),
                max: MAX_PACKET_LEN,
            });
        }
        if buf.len() < 4 {
            return Err(IrttError::Truncated {
                what: "header",
                need: 4,
                have: buf.len(),
            });
        }
        if buf[..3] != MAGIC {
            return Err(IrttError::BadMagic([buf[0], buf[1], buf[2]]));
        }
        if buf[3] & !FLAGS_ALL != 0 {
            return Err(IrttError::BadFlags(buf[3]));
        }
        Ok(Header { flags: buf[3] })
    }
    pub fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }
    /// Length of magic, flags and (with the HMAC flag) the HMAC.
    pub fn len(&self) -> usize {
        4 + if self.has(FLAG_HMAC) { HMAC_LEN } else { 0 }
    }
    pub fn is_empty(&self) -> bool {
        false
    }
}

fn mac(key: &[u8], buf: &[u8]) -> HmacMd5 {
    // HMAC takes a key of any length; MAX_KEY_LEN is checked by the callers.
    let mut m = HmacMd5::new_from_slice(key).expect("HMAC takes any key length");
    m.update(&buf[..4]);
    m.update(&[0u8; HMAC_LEN]);
    m.update(&buf[4 + HMAC_LEN..]);
    m
}

/// Checks the HMAC against `key` as irtt does: a key wants an HMAC, no key
/// refuses one. The comparison is in constant time.
pub fn check_hmac(buf: &[u8], key: Option<&[u8]>) -> Result<Header, IrttError> {
    let h = Header::parse(buf)?;
    match (key, h.has(FLAG_HMAC)) {
        (None, false) => Ok(h),
        (None, true) => Err(IrttError::HmacUnexpected),
        (Some(_), false) => Err(IrttError::HmacMissing),
        (Some(k), true) => {
            if k.len() > MAX_KEY_LEN {
                return Err(IrttError::KeyTooLong {
                    len: k.len(),
                    max: MAX_KEY_LEN,
                });
            }
            if buf.len() < 4 + HMAC_LEN {
                return Err(IrttError::Truncated {
                    what: "HMAC",
                    need: 4 + HMAC_LEN,
                    have: buf.len(),
                });
            }
            mac(k, buf)
                .verify_slice(&buf[4..4 + HMAC_LEN])
                .map_err(|_| IrttError::HmacMismatch)?;
            Ok(h)
        }
    }
}

/// Writes magic and flags (with the HMAC flag when `key` is set); returns
/// where the body starts.
fn put_header(out: &mut [u8], flags: u8, key: Option<&[u8]>) -> Result<usize, IrttError> {
    let flags = flags | if key.is_some() { FLAG_HMAC } else { 0 };
    let h = Header { flags }.len();
    need(out, h)?;
    out[..3].copy_from_slice(&MAGIC);
    out[3] = flags;
    out[4..h].fill(0);
    Ok(h)
}

/// Signs the finished packet `buf` in place when `key` is set.
fn sign(buf: &mut [u8], key: Option<&[u8]>) -> Result<(), IrttError> {
    if let Some(k) = key {
        if k.len() > MAX_KEY_LEN {
            return Err(IrttError::KeyTooLong {
                len: k.len(),
                max: MAX_KEY_LEN,
            });
        }
        let tag = mac(k, buf).finalize().into_bytes();
        buf[4..4 + HMAC_LEN].copy_from_slice(&tag);
    }
    Ok(())
}

fn need(out: &[u8], n: usize) -> Result<(), IrttError> {
    if n > MAX_PACKET_LEN {
        return Err(IrttError::TooLong {
            len: n,
            max: MAX_PACKET_LEN,
        });
    }
    if out.len() < n {
        return Err(IrttError::BufferTooSmall {
            need: n,
            have: out.len(),
        });
    }
    Ok(())
}

/// An open request (`token` None) or open reply (`token` Some), signed
/// with `key`; returns its length.
pub fn emit_open(
    token: Option<u64>,
    params: &Params,
    close: bool,
    key: Option<&[u8]>,
    out: &mut [u8],
) -> Result<usize, IrttError> {
    let mut flags = FLAG_OPEN | if close { FLAG_CLOSE } else { 0 };
    if token.is_some() {
        flags |= FLAG_REPLY;
    }
    let mut pos = put_header(out, flags, key)?;
    if let Some(t) = token {
        need(out, pos + TOKEN_LEN)?;
        out[pos..pos + TOKEN_LEN].copy_from_slice(&t.to_le_bytes());
        pos += TOKEN_LEN;
    }
    let end = out.len().min(MAX_PACKET_LEN);
    pos += params.emit(&mut out[pos..end])?;
    sign(&mut out[..pos], key)?;
    Ok(pos)
}

/// A close request for `token`; returns its length.
pub fn emit_close(token: u64, key: Option<&[u8]>, out: &mut [u8]) -> Result<usize, IrttError> {
    let pos = put_header(out, FLAG_CLOSE, key)?;
    need(out, pos + TOKEN_LEN)?;
    out[pos..pos + TOKEN_LEN].copy_from_slice(&token.to_le_bytes());
    sign(&mut out[..pos + TOKEN_LEN], key)?;
    Ok(pos + TOKEN_LEN)
}

/// An irtt packet after its header, HMAC and direction are checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Packet {
    /// An open request or reply; `token` is the reply's.
    Open {
        close: bool,
        token: Option<u64>,
        params: Params,
    },
    /// A close request.
    Close { token: u64 },
    /// An echo request or reply: its fields need the session's [`Layout`]
    /// ([`parse_echo`]).
    Echo { token: u64 },
}

/// Parses any irtt packet: the header, the HMAC against `key`, that the
/// reply flag is `reply`, then what the flags say it is.
pub fn parse(buf: &[u8], key: Option<&[u8]>, reply: bool) -> Result<Packet, IrttError> {
    let h = check_hmac(buf, key)?;
    if h.has(FLAG_REPLY) != reply {
        return Err(IrttError::ReplyFlag {
            found: h.has(FLAG_REPLY),
        });
    }
    let mut pos = h.len();
    let close = h.has(FLAG_CLOSE);
    let token_at = |pos: usize, what| {
        buf.get(pos..pos + TOKEN_LEN)
            .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
            .ok_or(IrttError::Truncated {
                what,
                need: pos + TOKEN_LEN,
                have: buf.len(),
            })
    };
    if h.has(FLAG_OPEN) {
        let token = if reply {
            let t = token_at(pos, "open reply")?;
            pos += TOKEN_LEN;
            if t == 0 && !close {
                return Err(IrttError::ZeroToken);
            }
            Some(t)
        } else {
            None
        };
        let params = Params::parse(&buf[pos..])?;
        return Ok(Packet::Open {
            close,
            token,
            params,
        });
    }
    let token = token_at(pos, if close { "close" } else { "echo" })?;
    Ok(if close {
        Packet::Close { token }
    } else {
        Packet::Echo { token }
    })
}

/// Which optional echo fields a session's packets carry, from the granted
/// parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    pub hmac: bool,
    pub received_stats: ReceivedStats,
    pub stamp_at: StampAt,
    pub clock: Clock,
}

/// Offsets of an echo packet's fields (None: not in this layout).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Offsets {
    pub token: usize,
    pub seqno: usize,
    pub received_count: Option<usize>,
    pub received_window: Option<usize>,
    /// Receive wall, receive monotonic, midpoint wall, midpoint
    /// monotonic, send wall, send monotonic.
    pub stamps: [Option<usize>; 6],
    /// The header's length: where the padding starts.
    pub end: usize,
}

impl Layout {
    pub fn new(params: &Params, hmac: bool) -> Layout {
        Layout {
            hmac,
            received_stats: params.received_stats,
            stamp_at: params.stamp_at,
            clock: params.clock,
        }
    }

    pub fn offsets(&self) -> Offsets {
        let mut pos = 4 + if self.hmac { HMAC_LEN } else { 0 };
        let mut take = |on: bool, n: usize| {
            on.then(|| {
                pos += n;
                pos - n
            })
        };
        let token = take(true, TOKEN_LEN).unwrap_or_default();
        let seqno = take(true, 4).unwrap_or_default();
        let received_count = take(self.received_stats.count(), 4);
        let received_window = take(self.received_stats.window(), 8);
        let (w, m) = (self.clock.wall(), self.clock.monotonic());
        let at = [
            self.stamp_at.receive(),
            self.stamp_at == StampAt::Midpoint,
            self.stamp_at.send(),
        ];
        let mut stamps = [None; 6];
        for (i, on) in at.into_iter().enumerate() {
            stamps[2 * i] = take(on && w, 8);
            stamps[2 * i + 1] = take(on && m, 8);
        }
        Offsets {
            token,
            seqno,
            received_count,
            received_window,
            stamps,
            end: pos,
        }
    }

    /// Length of an echo packet padded to `length` (never shorter than its header).
    pub fn packet_len(&self, length: usize) -> usize {
        self.offsets().end.max(length)
    }
}

/// One server stamp; 0 means "not stamped", as in irtt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Time {
    pub wall_ns: i64,
    pub mono_ns: i64,
}

/// An echo request or reply's fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Echo {
    pub token: u64,
    pub seqno: u32,
    pub received_count: Option<u32>,
    pub received_window: Option<u64>,
    /// Receive stamp (for a midpoint layout: the midpoint).
    pub receive: Time,
    /// Send stamp (for a midpoint layout: the midpoint again).
    pub send: Time,
}

/// Writes an echo request (`reply` false: stats and stamps zeroed) or
/// reply of `len` bytes (at least the layout's header), signed with `key`.
pub fn emit_echo(
    layout: &Layout,
    e: &Echo,
    reply: bool,
    len: usize,
    key: Option<&[u8]>,
    out: &mut [u8],
) -> Result<usize, IrttError> {
    let o = layout.offsets();
    let len = len.max(o.end);
    need(out, len)?;
    let flags = if reply { FLAG_REPLY } else { 0 };
    put_header(out, flags, if layout.hmac { key } else { None })?;
    out[o.token..o.token + 8].copy_from_slice(&e.token.to_le_bytes());
    out[o.seqno..o.seqno + 4].copy_from_slice(&e.seqno.to_le_bytes());
    out[o.seqno + 4..len].fill(0);
    if reply {
        if let Some(at) = o.received_count {
            let v = e.received_count.unwrap_or(0);
            out[at..at + 4].copy_from_slice(&v.to_le_bytes());
        }
        if let Some(at) = o.received_window {
            let v = e.received_window.unwrap_or(0);
            out[at..at + 8].copy_from_slice(&v.to_le_bytes());
        }
        let mid = layout.stamp_at == StampAt::Midpoint;
        let values = [
            e.receive.wall_ns,
            e.receive.mono_ns,
            if mid { e.receive.wall_ns } else { 0 },
            if mid { e.receive.mono_ns } else { 0 },
            e.send.wall_ns,
            e.send.mono_ns,
        ];
        for (at, v) in o.stamps.iter().zip(values) {
            if let Some(at) = at {
                out[*at..at + 8].copy_from_slice(&v.to_le_bytes());
            }
        }
    }
    sign(&mut out[..len], if layout.hmac { key } else { None })?;
    Ok(len)
}

/// Reads an echo packet's fields by `layout`; the caller checked the
/// header and HMAC ([`parse`]). A packet shorter than the layout's header is
/// refused.
pub fn parse_echo(buf: &[u8], layout: &Layout) -> Result<Echo, IrttError> {
    let o = layout.offsets();
    if buf.len() < o.end {
        return Err(IrttError::Truncated {
            what: "echo packet for the negotiated fields",
            need: o.end,
            have: buf.len(),
        });
    }
    let u32_at = |at: usize| u32::from_le_bytes(buf[at..at + 4].try_into().expect("4 bytes"));
    let u64_at = |at: usize| u64::from_le_bytes(buf[at..at + 8].try_into().expect("8 bytes"));
    let s: [i64; 6] = o.stamps.map(|at| at.map_or(0, |a| u64_at(a) as i64));
    let mid = layout.stamp_at == StampAt::Midpoint;
    let (receive, send) = if mid {
        let t = Time {
            wall_ns: s[2],
            mono_ns: s[3],
        };
        (t, t)
    } else {
        (
            Time {
                wall_ns: s[0],
                mono_ns: s[1],
            },
            Time {
                wall_ns: s[4],
                mono_ns: s[5],
            },
        )
    };
    Ok(Echo {
        token: u64_at(o.token),
        seqno: u32_at(o.seqno),
        received_count: o.received_count.map(u32_at),
        received_window: o.received_window.map(u64_at),
        receive,
        send,
    })
}

#[cfg(test)]
#[path = "irtt_tests.rs"]
mod tests;
