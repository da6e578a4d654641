//! The messages of misura's test-control protocol (`misura serve` and the
//! `tcp`, `udp`, `rr`, `setup` clients), on top of `wire::control`.
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

use anyhow::{bail, Context, Result};
use misura_wire::control::{self, Message, Value};
use std::io::{Read, Write};
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

pub const PROTOCOL_VERSION: u64 = 1;
/// How long either side waits for a whole control message.
pub const MESSAGE_TIMEOUT: Duration = Duration::from_secs(10);

/// Read one control message from a blocking stream with a read timeout
/// already set. The header is checked before the payload is read, so a
/// hostile length never causes a large allocation.
pub fn read_message(s: &mut impl Read) -> Result<Message> {
    let mut h = [0u8; control::HEADER_LEN];
    s.read_exact(&mut h)
        .map_err(|e| read_error("reading a control message header", e))?;
    let header = control::parse_header(&h).map_err(|e| match e {
        misura_wire::WireError::BadMagic => anyhow::anyhow!(
            "bad control message: its first bytes are not misura's control magic (is the peer a `misura serve` or `misura tcp/udp/rr`?)"
        ),
        e => anyhow::anyhow!("bad control message: {e}"),
    })?;
    let mut payload = vec![0u8; header.payload_len];
    s.read_exact(&mut payload)
        .map_err(|e| read_error("reading a control message", e))?;
    control::parse_payload(&header, &payload)
        .map_err(|e| anyhow::anyhow!("bad control message: {e}"))
}

/// A failed read, with the time limit when that is what ended it (the
/// kernel says only "Resource temporarily unavailable").
fn read_error(what: &str, e: std::io::Error) -> anyhow::Error {
    match e.kind() {
        // The io::Error stays in the chain: callers tell timeouts apart by it.
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => anyhow::Error::new(e)
            .context(format!(
                "{what}: nothing came within the read time limit ({} s for a control message, the handshake timeout in a server's handshake)",
                MESSAGE_TIMEOUT.as_secs()
            )),
        _ => anyhow::Error::new(e).context(what.to_string()),
    }
}

pub fn write_message(s: &mut impl Write, m: &Message) -> Result<()> {
    let mut buf = Vec::new();
    m.emit(&mut buf)
        .map_err(|e| anyhow::anyhow!("cannot encode a control message: {e}"))?;
    s.write_all(&buf).context("sending a control message")?;
    s.flush().context("sending a control message")?;
    Ok(())
}

/// Field accessors that name the missing field.
pub trait Fields {
    fn need_u64(&self, id: u16, name: &str) -> Result<u64>;
    fn need_str(&self, id: u16, name: &str) -> Result<&str>;
    fn opt_u64(&self, id: u16) -> Option<u64>;
    fn opt_bool(&self, id: u16) -> Option<bool>;
    fn opt_bytes(&self, id: u16) -> Option<&[u8]>;
}

impl Fields for Message {
    fn need_u64(&self, id: u16, name: &str) -> Result<u64> {
        match self.get(id) {
            Some(Value::U64(v)) => Ok(*v),
            Some(_) => bail!("control field `{name}` has the wrong type"),
            None => bail!("control field `{name}` is missing"),
        }
    }
    fn need_str(&self, id: u16, name: &str) -> Result<&str> {
        match self.get(id) {
            Some(Value::Str(v)) => Ok(v),
            Some(_) => bail!("control field `{name}` has the wrong type"),
            None => bail!("control field `{name}` is missing"),
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

/// Sign a request in place (adds F_TIMESTAMP and F_MAC).
pub fn sign(
    request: &mut Message,
    key: &misura_measure::auth::StampKey,
    nonce: &[u8],
    now_ns: u64,
) {
    request
        .fields
        .retain(|(id, _)| *id != F_MAC && *id != F_TIMESTAMP);
    request.fields.push((F_TIMESTAMP, Value::U64(now_ns)));
    let mac = misura_measure::auth::hmac16(key, &[&mac_input(nonce, request)]);
    request.fields.push((F_MAC, Value::Bytes(mac.to_vec())));
}

/// Check a signed request: MAC and timestamp window.
pub fn verify(
    request: &Message,
    key: &misura_measure::auth::StampKey,
    nonce: &[u8],
    now_ns: u64,
    window: Duration,
) -> Result<(), &'static str> {
    let Some(ts) = request.u64(F_TIMESTAMP) else {
        return Err("authentication required: the request carries no timestamp");
    };
    let Some(Value::Bytes(mac)) = request.get(F_MAC) else {
        return Err("authentication required: the request carries no MAC");
    };
    if !misura_measure::auth::verify16(key, &[&mac_input(nonce, request)], mac) {
        return Err("authentication failed: wrong key");
    }
    if (now_ns as i128 - ts as i128).unsigned_abs() > window.as_nanos() {
        return Err("authentication failed: timestamp outside the allowed window (clocks apart, or a replay)");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sign_and_verify() {
        let key =
            misura_measure::auth::StampKey::from_file_contents(b"00112233445566778899aabbccddeeff")
                .unwrap();
        let other =
            misura_measure::auth::StampKey::from_file_contents(b"ffeeddccbbaa99887766554433221100")
                .unwrap();
        let nonce = [7u8; 16];
        let mut m = Message::new(REQUEST)
            .with(F_KIND, Value::Str("tcp".into()))
            .with(F_STREAMS, Value::U64(4));
        sign(&mut m, &key, &nonce, 1_000_000_000_000);
        let w = Duration::from_secs(30);
        assert_eq!(
            verify(&m, &key, &nonce, 1_000_000_000_000 + 5_000_000_000, w),
            Ok(())
        );
        assert!(
            verify(&m, &other, &nonce, 1_000_000_000_000, w).is_err(),
            "wrong key"
        );
        assert!(
            verify(&m, &key, &[8u8; 16], 1_000_000_000_000, w).is_err(),
            "another nonce (replay)"
        );
        assert!(
            verify(&m, &key, &nonce, 1_000_000_000_000 + 60_000_000_000, w).is_err(),
            "stale"
        );
        // Tampering with a field breaks the MAC.
        let mut t = m.clone();
        t.fields[1].1 = Value::U64(64);
        assert!(verify(&t, &key, &nonce, 1_000_000_000_000, w).is_err());
    }

    #[test]
    fn messages_round_trip_over_a_stream() {
        let m = Message::new(HELLO)
            .with(F_VERSION, Value::U64(1))
            .with(F_NONCE, Value::Bytes(vec![1; 16]));
        let mut buf = Vec::new();
        write_message(&mut buf, &m).unwrap();
        let back = read_message(&mut &buf[..]).unwrap();
        assert_eq!(back, m);
        assert_eq!(back.need_u64(F_VERSION, "version").unwrap(), 1);
        assert!(back
            .need_str(F_KIND, "kind")
            .unwrap_err()
            .to_string()
            .contains("missing"));
        // A header announcing 4 GiB is refused without reading further.
        let mut bad = buf.clone();
        bad[8..12].copy_from_slice(&u32::MAX.to_be_bytes());
        assert!(read_message(&mut &bad[..]).is_err());
    }
}
