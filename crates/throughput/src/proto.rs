//! The test-control protocol on a connection: its messages and fields are
//! `misura_wire::test_control`'s (re-exported here); reading and writing
//! them on a blocking stream, and signing and checking a request with the
//! shared key, are here (the key's HMAC is `misura_measure::auth`'s).

use crate::error::ControlError;
use misura_wire::control::{self, Message, Value};
pub use misura_wire::test_control::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// The run's SIGINT/SIGTERM flag, once a client has given it
/// ([`stop_reads_on`]): a client's wait for a control message ends on it.
static STOP: OnceLock<Arc<AtomicUsize>> = OnceLock::new();

/// Make every [`read_message_within`] of this process end when `stop` is
/// set (a signal's number): a server dripping its messages cannot hold a
/// client past SIGTERM (issue 33, item 7). The first flag given stays.
pub fn stop_reads_on(stop: &Arc<AtomicUsize>) {
    let _ = STOP.set(stop.clone());
}

fn stopped() -> bool {
    STOP.get().is_some_and(|s| s.load(Ordering::Relaxed) != 0)
}

/// How often a waiting read looks at the stop flag.
const STOP_POLL: Duration = Duration::from_millis(100);

/// How long a read goes on once the stop flag is set: a run stopped by
/// SIGINT still sends DONE and takes the server's RESULT (on any sane
/// path within milliseconds) for its partial figures, while a server that
/// drips or says nothing holds it no longer than this.
const STOP_GRACE: Duration = Duration::from_millis(500);

/// Read one control message whole within `wait` from now: the header and
/// the payload together, however the peer slices them (a read timeout per
/// `read()` alone let a server dripping a byte every 4 s hold a client for
/// days), and at most [`STOP_GRACE`] (plus one [`STOP_POLL`]) past a
/// SIGINT/SIGTERM.
pub fn read_message_within(stream: &TcpStream, wait: Duration) -> Result<Message, ControlError> {
    read_message(&mut Deadline {
        stream,
        until: Instant::now() + wait,
        wait,
        stop_until: None,
    })
}

/// A stream whose reads end at one deadline (TimedOut), or a short grace
/// after the stop flag is set.
struct Deadline<'a> {
    stream: &'a TcpStream,
    until: Instant,
    wait: Duration,
    /// Set when the stop flag was first seen: the grace's end.
    stop_until: Option<Instant>,
}

impl Read for Deadline<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            if stopped() {
                let end = *self
                    .stop_until
                    .get_or_insert_with(|| Instant::now() + STOP_GRACE);
                if Instant::now() >= end {
                    // Not ErrorKind::Interrupted: read_exact would retry that.
                    return Err(std::io::Error::other(
                        "stopped by a signal (SIGINT/SIGTERM) while waiting for a control message",
                    ));
                }
                self.until = self.until.min(end);
            }
            let left = self.until.saturating_duration_since(Instant::now());
            if left < Duration::from_millis(1) {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    format!(
                        "the whole control message did not arrive within {:.1} s (a peer too slow, or dripping it)",
                        self.wait.as_secs_f64()
                    ),
                ));
            }
            self.stream.set_read_timeout(Some(left.min(STOP_POLL)))?;
            match (&mut &*self.stream).read(buf) {
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) => {}
                r => return r,
            }
        }
    }
}

/// Read one control message from a blocking stream with a read timeout
/// already set. The header is checked before the payload is read, so a
/// hostile length never causes a large allocation.
pub fn read_message(s: &mut impl Read) -> Result<Message, ControlError> {
    let mut h = [0u8; control::HEADER_LEN];
    s.read_exact(&mut h)
        .map_err(|e| read_error("reading a control message header", e))?;
    let header = control::parse_header(&h).map_err(|e| match e {
        misura_wire::WireError::BadMagic => ControlError::BadMagic,
        e => ControlError::Bad(e),
    })?;
    let mut payload = vec![0u8; header.payload_len];
    s.read_exact(&mut payload)
        .map_err(|e| read_error("reading a control message", e))?;
    control::parse_payload(&header, &payload).map_err(ControlError::Bad)
}

/// A failed read, with the time limit when that is what ended it (the
/// kernel says only "Resource temporarily unavailable").
fn read_error(what: &'static str, e: std::io::Error) -> ControlError {
    match e.kind() {
        // The io::Error stays in the chain: callers tell timeouts apart by it.
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => {
            ControlError::ReadTimedOut {
                what,
                secs: MESSAGE_TIMEOUT.as_secs(),
                source: e,
            }
        }
        _ => ControlError::Read { what, source: e },
    }
}

pub fn write_message(s: &mut impl Write, m: &Message) -> Result<(), ControlError> {
    let mut buf = Vec::new();
    m.emit(&mut buf).map_err(ControlError::Encode)?;
    s.write_all(&buf).map_err(ControlError::Send)?;
    s.flush().map_err(ControlError::Send)?;
    Ok(())
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
