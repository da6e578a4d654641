//! irtt's negotiated test parameters: the payload of its open request and
//! open reply (the packets around them are in the `irtt` module).
//!
//! Each parameter is a type number as an unsigned LEB128 varint, then its
//! value as a zig-zag signed varint (Go's `encoding/binary` `PutUvarint` /
//! `PutVarint`), except the server fill, a string: its length as an
//! unsigned varint, then its bytes. Parameters whose value is zero are not
//! written; unknown types are skipped (their value read as a signed
//! varint), as irtt 0.9 does. Durations are nanoseconds.
//!
//! | type | parameter | value |
//! |---|---|---|
//! | 1 | protocol version | 1 in irtt 0.9 |
//! | 2 | duration | ns, > 0 |
//! | 3 | interval | ns, > 0 |
//! | 4 | length | bytes of every echo packet, header included (0: header only) |
//! | 5 | received stats | 0 none, 1 count, 2 window, 3 both |
//! | 6 | stamp at | 0 none, 1 send, 2 receive, 3 both, 4 midpoint |
//! | 7 | clock | 1 wall, 2 monotonic, 3 both |
//! | 8 | DSCP | the TOS / traffic-class byte |
//! | 9 | server fill | string of at most 32 bytes |
//!
//! Read from irtt 0.9.0's `params.go`, `time.go` and `defaults.go`; no
//! code is taken from it.

use crate::irtt_error::IrttError;

/// Most bytes of an encoded parameter block misura reads or writes (irtt
/// writes at most 128).
pub const MAX_PARAMS_LEN: usize = 256;
/// Longest server fill name (irtt's `maxServerFillLen`).
pub const MAX_SERVER_FILL_LEN: usize = 32;

const P_VERSION: u64 = 1;
const P_DURATION: u64 = 2;
const P_INTERVAL: u64 = 3;
const P_LENGTH: u64 = 4;
const P_RECEIVED_STATS: u64 = 5;
const P_STAMP_AT: u64 = 6;
const P_CLOCK: u64 = 7;
const P_DSCP: u64 = 8;
const P_SERVER_FILL: u64 = 9;

/// Which received-packet statistics the server returns in each reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReceivedStats {
    #[default]
    None,
    Count,
    Window,
    Both,
}

/// Where the server stamps an echo.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StampAt {
    #[default]
    None,
    Send,
    Receive,
    Both,
    Midpoint,
}

/// Which server clocks the stamps carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Clock {
    Wall,
    Monotonic,
    #[default]
    Both,
}

impl ReceivedStats {
    pub fn name(self) -> &'static str {
        ["none", "count", "window", "both"][self as usize]
    }
    pub fn from_code(v: i64) -> Option<ReceivedStats> {
        Some(match v {
            0 => ReceivedStats::None,
            1 => ReceivedStats::Count,
            2 => ReceivedStats::Window,
            3 => ReceivedStats::Both,
            _ => return None,
        })
    }
    pub fn code(self) -> i64 {
        self as i64
    }
    pub fn count(self) -> bool {
        matches!(self, ReceivedStats::Count | ReceivedStats::Both)
    }
    pub fn window(self) -> bool {
        matches!(self, ReceivedStats::Window | ReceivedStats::Both)
    }
}

impl StampAt {
    /// irtt's name of it (`--tstamp`).
    pub fn name(self) -> &'static str {
        ["none", "send", "receive", "both", "midpoint"][self as usize]
    }
    pub fn from_code(v: i64) -> Option<StampAt> {
        Some(match v {
            0 => StampAt::None,
            1 => StampAt::Send,
            2 => StampAt::Receive,
            3 => StampAt::Both,
            4 => StampAt::Midpoint,
            _ => return None,
        })
    }
    pub fn code(self) -> i64 {
        self as i64
    }
    pub fn receive(self) -> bool {
        matches!(self, StampAt::Receive | StampAt::Both)
    }
    pub fn send(self) -> bool {
        matches!(self, StampAt::Send | StampAt::Both)
    }
}

impl Clock {
    /// irtt's name of it (`--clock`).
    pub fn name(self) -> &'static str {
        match self {
            Clock::Wall => "wall",
            Clock::Monotonic => "monotonic",
            Clock::Both => "both",
        }
    }
    pub fn from_code(v: i64) -> Option<Clock> {
        Some(match v {
            1 => Clock::Wall,
            2 => Clock::Monotonic,
            3 => Clock::Both,
            _ => return None,
        })
    }
    pub fn code(self) -> i64 {
        match self {
            Clock::Wall => 1,
            Clock::Monotonic => 2,
            Clock::Both => 3,
        }
    }
    pub fn wall(self) -> bool {
        matches!(self, Clock::Wall | Clock::Both)
    }
    pub fn monotonic(self) -> bool {
        matches!(self, Clock::Monotonic | Clock::Both)
    }
}

/// The negotiated parameters. The client sends what it wants; the server
/// answers with what it grants, and both then lay out the echo packets by
/// the granted `received_stats`, `stamp_at` and `clock`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Params {
    pub protocol_version: i64,
    pub duration_ns: i64,
    pub interval_ns: i64,
    pub length: i64,
    pub received_stats: ReceivedStats,
    pub stamp_at: StampAt,
    /// irtt writes no clock when it is 0; read as absent it stays `Both`,
    /// as irtt's client then lays out its packets.
    pub clock: Clock,
    pub dscp: i64,
    pub server_fill: String,
}

impl Params {
    /// Parses a parameter block, checking every value's range.
    pub fn parse(b: &[u8]) -> Result<Params, IrttError> {
        if b.len() > MAX_PARAMS_LEN {
            return Err(IrttError::ParamsTooLong {
                len: b.len(),
                max: MAX_PARAMS_LEN,
            });
        }
        let mut p = Params {
            clock: Clock::Both,
            ..Params::default()
        };
        let mut pos = 0;
        while pos < b.len() {
            let (t, n) = read_uvarint(&b[pos..])?;
            pos += n;
            if t == P_SERVER_FILL {
                let (len, n) = read_uvarint(&b[pos..])?;
                pos += n;
                if len > MAX_SERVER_FILL_LEN as u64 {
                    return Err(IrttError::ParamValue {
                        name: "server fill",
                        value: len as i64,
                        why: "longer than 32 bytes",
                    });
                }
                let len = len as usize;
                let s = b.get(pos..pos + len).ok_or(IrttError::Truncated {
                    what: "server fill parameter",
                    need: pos + len,
                    have: b.len(),
                })?;
                p.server_fill = String::from_utf8_lossy(s).into_owned();
                pos += len;
                continue;
            }
            let (v, n) = read_varint(&b[pos..])?;
            pos += n;
            let bad = |name, why| IrttError::ParamValue {
                name,
                value: v,
                why,
            };
            match t {
                P_VERSION => p.protocol_version = v,
                P_DURATION if v <= 0 => return Err(bad("duration", "not positive")),
                P_DURATION => p.duration_ns = v,
                P_INTERVAL if v <= 0 => return Err(bad("interval", "not positive")),
                P_INTERVAL => p.interval_ns = v,
                P_LENGTH if v < 0 => return Err(bad("length", "negative")),
                P_LENGTH => p.length = v,
                P_RECEIVED_STATS => {
                    p.received_stats = ReceivedStats::from_code(v)
                        .ok_or_else(|| bad("received stats", "not 0-3"))?
                }
                P_STAMP_AT => {
                    p.stamp_at = StampAt::from_code(v).ok_or_else(|| bad("stamp at", "not 0-4"))?
                }
                P_CLOCK => p.clock = Clock::from_code(v).ok_or_else(|| bad("clock", "not 1-3"))?,
                P_DSCP if !(0..=255).contains(&v) => return Err(bad("DSCP", "not 0-255")),
                P_DSCP => p.dscp = v,
                _ => {}
            }
        }
        Ok(p)
    }

    /// Writes the block into `out`; returns its length. Zero values are
    /// left out, as irtt does; the clock is always written.
    pub fn emit(&self, out: &mut [u8]) -> Result<usize, IrttError> {
        let mut w = Writer { out, pos: 0 };
        let ints = [
            (P_VERSION, self.protocol_version),
            (P_DURATION, self.duration_ns),
            (P_INTERVAL, self.interval_ns),
            (P_LENGTH, self.length),
            (P_RECEIVED_STATS, self.received_stats.code()),
            (P_STAMP_AT, self.stamp_at.code()),
            (P_CLOCK, self.clock.code()),
            (P_DSCP, self.dscp),
        ];
        for (t, v) in ints {
            if v != 0 {
                w.uvarint(t)?;
                w.uvarint(zigzag(v))?;
            }
        }
        if !self.server_fill.is_empty() {
            let s = self.server_fill.as_bytes();
            let s = &s[..s.len().min(MAX_SERVER_FILL_LEN)];
            w.uvarint(P_SERVER_FILL)?;
            w.uvarint(s.len() as u64)?;
            w.bytes(s)?;
        }
        Ok(w.pos)
    }
}

struct Writer<'a> {
    out: &'a mut [u8],
    pos: usize,
}

impl Writer<'_> {
    fn bytes(&mut self, b: &[u8]) -> Result<(), IrttError> {
        let end = self.pos + b.len();
        let have = self.out.len();
        self.out
            .get_mut(self.pos..end)
            .ok_or(IrttError::BufferTooSmall { need: end, have })?
            .copy_from_slice(b);
        self.pos = end;
        Ok(())
    }
    fn uvarint(&mut self, mut v: u64) -> Result<(), IrttError> {
        let mut tmp = [0u8; 10];
        let mut n = 0;
        while v >= 0x80 {
            tmp[n] = (v as u8) | 0x80;
            v >>= 7;
            n += 1;
        }
        tmp[n] = v as u8;
        self.bytes(&tmp[..=n])
    }
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// An unsigned LEB128 varint of at most 10 bytes; returns it and its length.
pub(crate) fn read_uvarint(b: &[u8]) -> Result<(u64, usize), IrttError> {
    let mut v: u64 = 0;
    for (i, &byte) in b.iter().enumerate() {
        if i == 9 && byte > 1 {
            return Err(IrttError::ParamOverflow);
        }
        v |= u64::from(byte & 0x7f) << (7 * i);
        if byte < 0x80 {
            return Ok((v, i + 1));
        }
        if i == 9 {
            return Err(IrttError::ParamOverflow);
        }
    }
    Err(IrttError::Truncated {
        what: "parameter varint",
        need: b.len() + 1,
        have: b.len(),
    })
}

fn read_varint(b: &[u8]) -> Result<(i64, usize), IrttError> {
    let (u, n) = read_uvarint(b)?;
    Ok((((u >> 1) as i64) ^ -((u & 1) as i64), n))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full() -> Params {
        Params {
            protocol_version: 1,
            duration_ns: 60_000_000_000,
            interval_ns: 1_000_000_000,
            length: 172,
            received_stats: ReceivedStats::Both,
            stamp_at: StampAt::Midpoint,
            clock: Clock::Monotonic,
            dscp: 46,
            server_fill: "rand".into(),
        }
    }

    #[test]
    fn round_trips_and_matches_go_varints() {
        let mut b = [0u8; MAX_PARAMS_LEN];
        let n = full().emit(&mut b).unwrap();
        assert_eq!(Params::parse(&b[..n]).unwrap(), full());
        // Version 1: type 1, zig-zag(1) = 2. Interval 1 s: zig-zag 2e9.
        assert_eq!(&b[..2], &[0x01, 0x02]);
        let mut one = [0u8; 16];
        let p = Params {
            interval_ns: 1,
            ..Params::default()
        };
        let n = p.emit(&mut one).unwrap();
        // Clock `both` (3, zig-zag 6) is always written.
        assert_eq!(&one[..n], &[0x03, 0x02, 0x07, 0x06]);
    }

    #[test]
    fn refuses_bad_values_with_their_names() {
        let e = Params::parse(&[0x02, 0x01]).unwrap_err().to_string();
        assert!(e.contains("duration") && e.contains("-1"), "{e}");
        let e = Params::parse(&[0x07, 0x0a]).unwrap_err().to_string();
        assert!(e.contains("clock"), "{e}");
        let e = Params::parse(&[0x09, 0x21]).unwrap_err().to_string();
        assert!(e.contains("32"), "{e}");
        assert!(matches!(
            Params::parse(&[0x02, 0xff]),
            Err(IrttError::Truncated { .. })
        ));
        assert!(matches!(
            Params::parse(&[0x02, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]),
            Err(IrttError::ParamOverflow)
        ));
        let long = vec![0u8; MAX_PARAMS_LEN + 1];
        assert!(Params::parse(&long)
            .unwrap_err()
            .to_string()
            .contains("256"));
        // Unknown types are skipped.
        assert_eq!(
            Params::parse(&[0x30, 0x04, 0x01, 0x02])
                .unwrap()
                .protocol_version,
            1
        );
    }
}
