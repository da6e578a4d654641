//! The messages of misura's test-control protocol (`misura serve` and the
//! `tcp`, `udp`, `rr`, `setup` clients), on top of [`crate::control`]: the
//! message types, the field ids, the bytes a request's MAC covers, and
//! field accessors whose errors name the field. Reading and writing them on
//! a connection, and signing with a key, are `misura_throughput::proto`'s.
//!
//! One TCP control connection per test:
//!
//! ```text
//! client                                   server
//!   |  ---- connect --------------------->   |
//!   |  <--- HELLO {version, nonce, limits}   |
//!   |  ---- REQUEST {test parameters,        |
//!   |        [timestamp, HMAC]} ---------->  |   checked against limits + auth
//!   |  <--- ACCEPT {test id, data port}      |   or REFUSE {reason}
//!   |  ==== data connections / datagrams ==  |   each data connection first
//!   |                                        |   sends the 8-byte test id
//!   |  ---- DONE {sender figures} -------->  |
//!   |  <--- RESULT {receiver figures} -----  |   receiver-side figures are the
//!   |                                        |   truth for throughput and loss
//! ```
//!
//! Authentication (optional, shared key): the client sends the request with
//! `F_TIMESTAMP` (its Unix time, ns) and `F_MAC` = HMAC-SHA-256 over
//! nonce ‖ timestamp ‖ the request's other fields as encoded, truncated to 16
//! bytes; the server refuses a wrong MAC or a timestamp outside its window.

use crate::control::{Message, Value};
use std::time::Duration;

/// Message types.
pub const HELLO: u8 = 1;
pub const REQUEST: u8 = 2;
pub const ACCEPT: u8 = 3;
pub const REFUSE: u8 = 4;
pub const DONE: u8 = 5;
pub const RESULT: u8 = 6;
pub const ERROR: u8 = 7;
/// First message of a data connection: `DATA {F_TEST_ID}`.
pub const DATA: u8 = 8;

/// Field ids (shared by all message types; each type uses some of them).
pub const F_VERSION: u16 = 1;
pub const F_NONCE: u16 = 2;
pub const F_KIND: u16 = 3; // "tcp" | "udp" | "rr-tcp" | "rr-udp" | "crr" | "setup"
pub const F_STREAMS: u16 = 4;
pub const F_DURATION_NS: u16 = 5;
pub const F_DIRECTION: u16 = 6; // "forward" | "reverse" | "bidir"
pub const F_MSG_SIZE: u16 = 7;
pub const F_SNDBUF: u16 = 8;
pub const F_RCVBUF: u16 = 9;
pub const F_NODELAY: u16 = 10;
pub const F_RATE_BPS: u16 = 11;
pub const F_DF: u16 = 12;
pub const F_REQUEST_SIZE: u16 = 13;
pub const F_RESPONSE_SIZE: u16 = 14;
pub const F_BURST: u16 = 15;
pub const F_TIMESTAMP: u16 = 16;
pub const F_MAC: u16 = 17;
pub const F_TEST_ID: u16 = 18;
pub const F_DATA_PORT: u16 = 19;
pub const F_REASON: u16 = 20;
pub const F_CLIENT_NAME: u16 = 21;
/// Limits the server announces in HELLO.
pub const F_MAX_DURATION_NS: u16 = 22;
pub const F_MAX_STREAMS: u16 = 23;
pub const F_MAX_RATE_BPS: u16 = 24;
pub const F_AUTH_REQUIRED: u16 = 25;
/// Figures in DONE / RESULT.
pub const F_BYTES: u16 = 30;
pub const F_PACKETS: u16 = 31;
pub const F_ELAPSED_NS: u16 = 32;
pub const F_LOST: u16 = 33;
pub const F_DUPLICATES: u16 = 34;
pub const F_REORDERED: u16 = 35;
pub const F_JITTER_NS: u16 = 36;
pub const F_CPU_USER_NS: u16 = 37;
pub const F_CPU_SYSTEM_NS: u16 = 38;
pub const F_TRANSACTIONS: u16 = 39;
pub const F_PARTIAL: u16 = 40;
/// Per-stream receiver bytes, as a packed list of u64 (big-endian) in a Bytes field.
pub const F_STREAM_BYTES: u16 = 41;
pub const F_OWD_MIN_NS: u16 = 42;
pub const F_OWD_MAX_NS: u16 = 43;
/// In DONE and RESULT, beside F_BYTES / F_PACKETS (what that side received):
/// what that side sent.
pub const F_BYTES_SENT: u16 = 44;
pub const F_PACKETS_SENT: u16 = 45;
/// In RESULT of a test the server sent paced datagrams in (reverse udp):
/// how it kept pace, as the JSON of `misura_report::pacing::Pacing`.
pub const F_PACING: u16 = 46;
/// In a udp REQUEST: how the server paces its own datagrams, "sleep"
/// (the default when absent) or "spin" (`misura udp --pacing`).
pub const F_PACING_MODE: u16 = 47;
/// In DATA of a tcp or rr-tcp test: which of the client's streams this
/// connection is (0-based). The server handles data connections on threads
/// of their own, so the order it sees them in need not be the order they
/// were opened in; with this field its per-stream figures (F_STREAM_BYTES)
/// follow the client's numbering. Without it (an older client), arrival order.
pub const F_STREAM_INDEX: u16 = 48;

pub const PROTOCOL_VERSION: u64 = 1;
/// How long either side waits for a whole control message.
pub const MESSAGE_TIMEOUT: Duration = Duration::from_secs(10);

/// A control field a message needs and does not carry as it should.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FieldError {
    #[error("control field `{0}` is missing")]
    Missing(&'static str),
    #[error("control field `{0}` has the wrong type")]
    WrongType(&'static str),
}

/// Field accessors that name the missing field.
pub trait Fields {
    fn need_u64(&self, id: u16, name: &'static str) -> Result<u64, FieldError>;
    fn need_str(&self, id: u16, name: &'static str) -> Result<&str, FieldError>;
    fn opt_u64(&self, id: u16) -> Option<u64>;
    fn opt_bool(&self, id: u16) -> Option<bool>;
    fn opt_bytes(&self, id: u16) -> Option<&[u8]>;
}

impl Fields for Message {
    fn need_u64(&self, id: u16, name: &'static str) -> Result<u64, FieldError> {
        match self.get(id) {
            Some(Value::U64(v)) => Ok(*v),
            Some(_) => Err(FieldError::WrongType(name)),
            None => Err(FieldError::Missing(name)),
        }
    }
    fn need_str(&self, id: u16, name: &'static str) -> Result<&str, FieldError> {
        match self.get(id) {
            Some(Value::Str(v)) => Ok(v),
            Some(_) => Err(FieldError::WrongType(name)),
            None => Err(FieldError::Missing(name)),
        }
    }
    fn opt_u64(&self, id: u16) -> Option<u64> {
        self.u64(id)
    }
    fn opt_bool(&self, id: u16) -> Option<bool> {
        match self.get(id)? {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }
    fn opt_bytes(&self, id: u16) -> Option<&[u8]> {
        match self.get(id)? {
            Value::Bytes(b) => Some(b),
            _ => None,
        }
    }
}

/// The bytes a request's MAC covers: nonce ‖ every field but the MAC, as encoded.
pub fn mac_input(nonce: &[u8], request: &Message) -> Vec<u8> {
    let mut unsigned = Message::new(request.typ);
    for (id, v) in &request.fields {
        if *id != F_MAC {
            unsigned.fields.push((*id, v.clone()));
        }
    }
    let mut out = nonce.to_vec();
    let _ = unsigned.emit(&mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_name_what_is_missing_or_mistyped() {
        let m = Message::new(HELLO)
            .with(F_VERSION, Value::U64(1))
            .with(F_NONCE, Value::Bytes(vec![1; 16]));
        assert_eq!(m.need_u64(F_VERSION, "version"), Ok(1));
        assert_eq!(m.need_str(F_KIND, "kind"), Err(FieldError::Missing("kind")));
        assert_eq!(
            m.need_u64(F_NONCE, "nonce"),
            Err(FieldError::WrongType("nonce"))
        );
        assert_eq!(
            FieldError::Missing("kind").to_string(),
            "control field `kind` is missing"
        );
        assert_eq!(m.opt_bytes(F_NONCE), Some(&[1u8; 16][..]));
        assert_eq!(m.opt_bool(F_NONCE), None);
    }

    #[test]
    fn the_mac_covers_every_field_but_the_mac() {
        let m = Message::new(REQUEST)
            .with(F_KIND, Value::Str("tcp".into()))
            .with(F_MAC, Value::Bytes(vec![9; 16]));
        let unsigned = Message::new(REQUEST).with(F_KIND, Value::Str("tcp".into()));
        let mut want = vec![7u8; 4];
        unsigned.emit(&mut want).unwrap();
        assert_eq!(mac_input(&[7u8; 4], &m), want);
    }
}
