//! iperf3's control connection, both ends: state bytes and length-prefixed
//! JSON (`misura_wire::iperf3`), every read bounded by a deadline.

use crate::error::{Iperf3PeerError, Result};
use misura_wire::iperf3::{self as wire, State};
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often a read waiting on the peer looks at `Ctrl::abort`.
const ABORT_TICK: Duration = Duration::from_millis(100);

/// How long a peer may take to send the next control message of the
/// handshake (cookie, parameters, a state, results).
pub const STEP_TIMEOUT: Duration = Duration::from_secs(10);

/// The control connection.
pub struct Ctrl {
    pub s: TcpStream,
    /// How long each step may take ([`STEP_TIMEOUT`]; a server's
    /// --handshake-timeout).
    pub step: Duration,
    /// No read goes past this instant, whatever each step allows (the
    /// client's end of test plus its grace).
    pub until: Option<Instant>,
    /// A signal's flag (non-zero: stop): every read gives up within
    /// [`ABORT_TICK`] once it is set.
    pub abort: Option<Arc<AtomicUsize>>,
}

impl Ctrl {
    pub fn new(s: TcpStream) -> Result<Ctrl> {
        s.set_nodelay(true)?;
        Ok(Ctrl {
            s,
            step: STEP_TIMEOUT,
            until: None,
            abort: None,
        })
    }

    /// Read exactly `buf.len()` bytes by `deadline`; `what` names the
    /// message in the error.
    pub fn read_exact_by(&mut self, buf: &mut [u8], deadline: Instant, what: &str) -> Result<()> {
        let mut got = 0;
        let deadline = self.until.map_or(deadline, |u| u.min(deadline));
        while got < buf.len() {
            if self
                .abort
                .as_ref()
                .is_some_and(|a| a.load(Ordering::Relaxed) != 0)
            {
                return Err(Iperf3PeerError::Stopped { what: what.into() }.into());
            }
            let mut left = deadline.saturating_duration_since(Instant::now());
            if self.abort.is_some() {
                left = left.min(ABORT_TICK);
            }
            if deadline <= Instant::now() {
                return Err(Iperf3PeerError::Stalled {
                    what: what.into(),
                    secs: self.step.as_secs_f64(),
                    got,
                    len: buf.len(),
                }
                .into());
            }
            self.s
                .set_read_timeout(Some(left.max(Duration::from_millis(1))))?;
            match self.s.read(&mut buf[got..]) {
                Ok(0) => {
                    return Err(Iperf3PeerError::ClosedWhile {
                        what: what.into(),
                        got,
                        len: buf.len(),
                    }
                    .into())
                }
                Ok(n) => got += n,
                Err(e)
                    if matches!(
                        e.kind(),
                        ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                    ) => {}
                Err(source) => {
                    return Err(Iperf3PeerError::Read {
                        what: what.into(),
                        source,
                    }
                    .into())
                }
            }
        }
        Ok(())
    }

    /// The next state byte, if one comes within `wait` (None: none yet).
    pub fn poll_state(&mut self, wait: Duration) -> Result<Option<State>> {
        let mut b = [0u8; 1];
        self.s
            .set_read_timeout(Some(wait.max(Duration::from_millis(1))))?;
        match self.s.read(&mut b) {
            Ok(0) => Err(Iperf3PeerError::Closed.into()),
            Ok(_) => Ok(Some(State::from_byte(b[0])?)),
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                ) =>
            {
                Ok(None)
            }
            Err(e) => Err(Iperf3PeerError::ReadState(e).into()),
        }
    }

    /// The next state byte, within a step's time.
    pub fn read_state(&mut self, waiting_for: &str) -> Result<State> {
        let mut b = [0u8; 1];
        let what = format!("the state byte ({waiting_for})");
        self.read_exact_by(&mut b, Instant::now() + self.step, &what)?;
        Ok(State::from_byte(b[0])?)
    }

    /// The next state, which must be `want`; the peer's refusal or error
    /// says what it was.
    pub fn expect_state(&mut self, want: State) -> Result<()> {
        match self.read_state(want.name())? {
            s if s == want => Ok(()),
            State::AccessDenied => Err(Iperf3PeerError::AccessDenied.into()),
            State::ServerError => {
                let mut b = [0u8; 8];
                self.read_exact_by(&mut b, Instant::now() + self.step, "SERVER_ERROR's codes")?;
                let code = i32::from_be_bytes(b[..4].try_into().unwrap());
                let errno = i32::from_be_bytes(b[4..].try_into().unwrap());
                Err(Iperf3PeerError::ServerError { code, errno }.into())
            }
            s => Err(Iperf3PeerError::Unexpected {
                got: s.name(),
                want: want.name(),
            }
            .into()),
        }
    }

    pub fn write_state(&mut self, s: State) -> Result<()> {
        self.s.write_all(&[s.byte()]).map_err(|source| {
            Iperf3PeerError::SendState {
                state: s.name(),
                source,
            }
            .into()
        })
    }

    /// A JSON message, within a step's time and `MAX_JSON_LEN`.
    pub fn read_json(&mut self, what: &str) -> Result<Vec<u8>> {
        let deadline = Instant::now() + self.step;
        let mut len = [0u8; 4];
        self.read_exact_by(&mut len, deadline, &format!("the length of {what}"))?;
        let n = wire::json_len(len).map_err(|error| Iperf3PeerError::JsonLength {
            what: what.into(),
            error,
        })?;
        let mut body = vec![0u8; n];
        self.read_exact_by(&mut body, deadline, what)?;
        Ok(body)
    }

    pub fn write_json(&mut self, body: &str) -> Result<()> {
        let f = wire::frame_json(body)?;
        self.s
            .write_all(&f)
            .map_err(|e| Iperf3PeerError::SendJson(e).into())
    }
}
