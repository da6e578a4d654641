//! misura's test-control protocol: small, versioned, length-prefixed
//! messages of flat typed fields, for `misura serve` and its clients.
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +---------------------------------------------------------------+
//! |                    magic "MSRC" (0x4D535243)                   |  0
//! +---------------+---------------+-------------------------------+
//! |  version = 1  | message type  |        field count (N)        |  4
//! +---------------+---------------+-------------------------------+
//! |                 payload length (bytes, ≤ 65 536)               |  8
//! +---------------------------------------------------------------+
//! |  N fields:  id (u16) | kind (u8) | len (u16) | value (len B)   | 12
//! +---------------------------------------------------------------+
//!
//! kind: 1 u64 (8 B) · 2 i64 (8 B) · 3 f64 (8 B) · 4 bool (1 B) ·
//!       5 UTF-8 string (≤ 4096 B) · 6 bytes (≤ 4096 B)
//! ```
//!
//! Fields are flat: there is no nesting to exhaust a stack, the header says
//! how much follows before anything is allocated, and a message is refused as
//! soon as its header is read if it is too long, of another version, or has
//! more fields than the payload could hold.

use crate::WireError;

pub const MAGIC: u32 = 0x4D53_5243;
pub const VERSION: u8 = 1;
pub const HEADER_LEN: usize = 12;
/// Largest payload accepted.
pub const MAX_PAYLOAD: usize = 64 * 1024;
/// Largest string or byte value.
pub const MAX_VALUE: usize = 4096;
/// Most fields in one message.
pub const MAX_FIELDS: usize = 256;
const FIELD_HEADER: usize = 5;

/// A field's value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    U64(u64),
    I64(i64),
    F64(f64),
    Bool(bool),
    Str(String),
    Bytes(Vec<u8>),
}

impl Value {
    fn kind(&self) -> u8 {
        match self {
            Value::U64(_) => 1,
            Value::I64(_) => 2,
            Value::F64(_) => 3,
            Value::Bool(_) => 4,
            Value::Str(_) => 5,
            Value::Bytes(_) => 6,
        }
    }

    fn len(&self) -> usize {
        match self {
            Value::U64(_) | Value::I64(_) | Value::F64(_) => 8,
            Value::Bool(_) => 1,
            Value::Str(s) => s.len(),
            Value::Bytes(b) => b.len(),
        }
    }
}

/// One message: a type and its fields (ids are the message type's own).
#[derive(Clone, Debug, PartialEq)]
pub struct Message {
    pub typ: u8,
    pub fields: Vec<(u16, Value)>,
}

/// What a message header says, checked.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Header {
    pub typ: u8,
    pub fields: u16,
    pub payload_len: usize,
}

/// Check a 12-byte header before reading (or allocating for) the payload.
pub fn parse_header(b: &[u8]) -> Result<Header, WireError> {
    if b.len() < HEADER_LEN {
        return Err(WireError::Truncated {
            need: HEADER_LEN,
            have: b.len(),
        });
    }
    if u32::from_be_bytes([b[0], b[1], b[2], b[3]]) != MAGIC {
        return Err(WireError::BadMagic);
    }
    if b[4] != VERSION {
        return Err(WireError::UnsupportedVersion(b[4]));
    }
    let fields = u16::from_be_bytes([b[6], b[7]]);
    let payload_len = u32::from_be_bytes([b[8], b[9], b[10], b[11]]) as usize;
    if payload_len > MAX_PAYLOAD {
        return Err(WireError::BadLength {
            field: "control payload",
            value: payload_len,
        });
    }
    if fields as usize > MAX_FIELDS || fields as usize * FIELD_HEADER > payload_len {
        return Err(WireError::BadLength {
            field: "control field count",
            value: fields as usize,
        });
    }
    Ok(Header {
        typ: b[5],
        fields,
        payload_len,
    })
}

/// Parse a payload whose header has been checked.
pub fn parse_payload(h: &Header, p: &[u8]) -> Result<Message, WireError> {
    if p.len() != h.payload_len {
        return Err(WireError::BadLength {
            field: "control payload",
            value: p.len(),
        });
    }
    let mut fields = Vec::with_capacity(h.fields as usize);
    let mut at = 0;
    for _ in 0..h.fields {
        if p.len() - at < FIELD_HEADER {
            return Err(WireError::Truncated {
                need: at + FIELD_HEADER,
                have: p.len(),
            });
        }
        let id = u16::from_be_bytes([p[at], p[at + 1]]);
        let kind = p[at + 2];
        let len = u16::from_be_bytes([p[at + 3], p[at + 4]]) as usize;
        at += FIELD_HEADER;
        if p.len() - at < len {
            return Err(WireError::Truncated {
                need: at + len,
                have: p.len(),
            });
        }
        let v = &p[at..at + len];
        let fixed = |n: usize| {
            if len == n {
                Ok(())
            } else {
                Err(WireError::BadLength {
                    field: "control value",
                    value: len,
                })
            }
        };
        let value = match kind {
            1 => {
                fixed(8)?;
                Value::U64(u64::from_be_bytes(v.try_into().unwrap()))
            }
            2 => {
                fixed(8)?;
                Value::I64(i64::from_be_bytes(v.try_into().unwrap()))
            }
            3 => {
                fixed(8)?;
                Value::F64(f64::from_bits(u64::from_be_bytes(v.try_into().unwrap())))
            }
            4 => {
                fixed(1)?;
                match v[0] {
                    0 => Value::Bool(false),
                    1 => Value::Bool(true),
                    _ => {
                        return Err(WireError::BadLength {
                            field: "control bool",
                            value: v[0] as usize,
                        })
                    }
                }
            }
            5 | 6 if len > MAX_VALUE => {
                return Err(WireError::BadLength {
                    field: "control value",
                    value: len,
                })
            }
            5 => Value::Str(
                std::str::from_utf8(v)
                    .map_err(|_| WireError::BadLength {
                        field: "control string (UTF-8)",
                        value: len,
                    })?
                    .to_string(),
            ),
            6 => Value::Bytes(v.to_vec()),
            k => {
                return Err(WireError::BadLength {
                    field: "control value kind",
                    value: k as usize,
                })
            }
        };
        fields.push((id, value));
        at += len;
    }
    if at != p.len() {
        return Err(WireError::BadLength {
            field: "control trailing bytes",
            value: p.len() - at,
        });
    }
    Ok(Message { typ: h.typ, fields })
}

/// Parse one whole message (header + payload) from `b`, returning it and
/// the bytes it used.
pub fn parse(b: &[u8]) -> Result<(Message, usize), WireError> {
    let h = parse_header(b)?;
    let end = HEADER_LEN + h.payload_len;
    if b.len() < end {
        return Err(WireError::Truncated {
            need: end,
            have: b.len(),
        });
    }
    Ok((parse_payload(&h, &b[HEADER_LEN..end])?, end))
}

impl Message {
    pub fn new(typ: u8) -> Message {
        Message {
            typ,
            fields: Vec::new(),
        }
    }

    pub fn with(mut self, id: u16, v: Value) -> Message {
        self.fields.push((id, v));
        self
    }

    pub fn get(&self, id: u16) -> Option<&Value> {
        self.fields.iter().find(|(i, _)| *i == id).map(|(_, v)| v)
    }

    pub fn u64(&self, id: u16) -> Option<u64> {
        match self.get(id)? {
            Value::U64(v) => Some(*v),
            _ => None,
        }
    }

    pub fn str(&self, id: u16) -> Option<&str> {
        match self.get(id)? {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn payload_len(&self) -> usize {
        self.fields
            .iter()
            .map(|(_, v)| FIELD_HEADER + v.len())
            .sum()
    }

    /// Append the encoded message to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) -> Result<(), WireError> {
        let n = self.payload_len();
        if n > MAX_PAYLOAD || self.fields.len() > MAX_FIELDS {
            return Err(WireError::BadLength {
                field: "control payload",
                value: n,
            });
        }
        for (_, v) in &self.fields {
            if matches!(v, Value::Str(_) | Value::Bytes(_)) && v.len() > MAX_VALUE {
                return Err(WireError::BadLength {
                    field: "control value",
                    value: v.len(),
                });
            }
        }
        out.extend_from_slice(&MAGIC.to_be_bytes());
        out.push(VERSION);
        out.push(self.typ);
        out.extend_from_slice(&(self.fields.len() as u16).to_be_bytes());
        out.extend_from_slice(&(n as u32).to_be_bytes());
        for (id, v) in &self.fields {
            out.extend_from_slice(&id.to_be_bytes());
            out.push(v.kind());
            out.extend_from_slice(&(v.len() as u16).to_be_bytes());
            match v {
                Value::U64(x) => out.extend_from_slice(&x.to_be_bytes()),
                Value::I64(x) => out.extend_from_slice(&x.to_be_bytes()),
                Value::F64(x) => out.extend_from_slice(&x.to_bits().to_be_bytes()),
                Value::Bool(x) => out.push(u8::from(*x)),
                Value::Str(s) => out.extend_from_slice(s.as_bytes()),
                Value::Bytes(b) => out.extend_from_slice(b),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_bytes() {
        let m = Message::new(7)
            .with(1, Value::U64(0x0102030405060708))
            .with(2, Value::Bool(true))
            .with(3, Value::Str("hi".into()));
        let mut b = Vec::new();
        m.emit(&mut b).unwrap();
        let expect: Vec<u8> = [
            &[0x4D, 0x53, 0x52, 0x43, 1, 7, 0, 3, 0, 0, 0, 13 + 6 + 7][..],
            &[0, 1, 1, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8],
            &[0, 2, 4, 0, 1, 1],
            &[0, 3, 5, 0, 2, b'h', b'i'],
        ]
        .concat();
        assert_eq!(b, expect);
        let (back, used) = parse(&b).unwrap();
        assert_eq!((back, used), (m, b.len()));
    }

    #[test]
    fn hostile_headers_are_refused_before_the_payload() {
        let mut h = vec![0x4D, 0x53, 0x52, 0x43, 1, 1, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF];
        assert!(
            matches!(parse_header(&h), Err(WireError::BadLength { .. })),
            "4 GiB length"
        );
        h[8..12].copy_from_slice(&10u32.to_be_bytes());
        h[6..8].copy_from_slice(&1000u16.to_be_bytes());
        assert!(
            parse_header(&h).is_err(),
            "more fields than the payload can hold"
        );
        h[4] = 2;
        assert_eq!(parse_header(&h), Err(WireError::UnsupportedVersion(2)));
        assert_eq!(parse_header(b"GET / HTTP/1.1"), Err(WireError::BadMagic));
        assert!(matches!(
            parse_header(b"MSRC"),
            Err(WireError::Truncated { .. })
        ));
    }

    #[test]
    fn bad_values() {
        for (kind, len) in [(1u8, 4u16), (4, 1), (9, 0)] {
            let mut b = vec![0x4D, 0x53, 0x52, 0x43, 1, 1, 0, 1];
            b.extend_from_slice(&(5 + len as u32).to_be_bytes());
            b.extend_from_slice(&[0, 1, kind]);
            b.extend_from_slice(&len.to_be_bytes());
            b.extend(std::iter::repeat_n(7u8, len as usize));
            assert!(parse(&b).is_err(), "kind {kind} len {len}");
        }
        // Invalid UTF-8 in a string.
        let mut b = vec![
            0x4D, 0x53, 0x52, 0x43, 1, 1, 0, 1, 0, 0, 0, 7, 0, 1, 5, 0, 2, 0xC3, 0x28,
        ];
        assert!(parse(&b).is_err());
        b.truncate(15);
        assert!(parse(&b).is_err());
    }

    proptest::proptest! {
        #[test]
        fn emit_parse_identity(typ: u8, vals in proptest::collection::vec((0u16..100, 0u8..6, proptest::num::u64::ANY, "[a-z]{0,40}"), 0..40)) {
            let mut m = Message::new(typ);
            for (id, k, x, s) in vals {
                let v = match k {
                    0 => Value::U64(x),
                    1 => Value::I64(x as i64),
                    2 => Value::F64((x % 1_000_000) as f64 / 7.0),
                    3 => Value::Bool(x % 2 == 0),
                    4 => Value::Str(s),
                    _ => Value::Bytes(s.into_bytes()),
                };
                m = m.with(id, v);
            }
            let mut b = Vec::new();
            m.emit(&mut b).unwrap();
            let (back, used) = parse(&b).unwrap();
            proptest::prop_assert_eq!(used, b.len());
            proptest::prop_assert_eq!(back, m);
        }

        #[test]
        fn parse_never_panics(b in proptest::collection::vec(proptest::num::u8::ANY, 0..200)) {
            let _ = parse(&b);
        }
    }
}
