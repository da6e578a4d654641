//! The pieces of iperf3's control protocol every message uses: states,
//! the cookie, the JSON framing and its bounds, the errors, and the JSON
//! field readers of the parameter and results parsers.

/// iperf3's default port (control and data).
pub const DEFAULT_PORT: u16 = 5201;
/// The cookie: 36 characters of [`COOKIE_CHARS`] and a NUL.
pub const COOKIE_LEN: usize = 37;
/// The alphabet of a cookie (iperf_util.c make_cookie).
pub const COOKIE_CHARS: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";
/// Longest JSON message (parameters or results) either end accepts, bytes.
/// A results message without `get_server_output` holds ~150 bytes per
/// stream, so 2 × 128 streams fit many times over.
pub const MAX_JSON_LEN: usize = 256 * 1024;
/// Streams per direction (iperf3's MAX_STREAMS).
pub const MAX_STREAMS: u32 = 128;
/// Longest test, seconds (iperf3's MAX_TIME).
pub const MAX_TIME_S: u64 = 86_400;
/// Largest TCP block, bytes (iperf3's MAX_BLOCKSIZE).
pub const MAX_TCP_BLOCK: u64 = 1 << 20;
/// Largest UDP block, bytes (iperf3's MAX_UDP_BLOCKSIZE: 65535 − 8 − 20).
pub const MAX_UDP_BLOCK: u64 = 65_535 - 8 - 20;
/// Largest socket buffer (`window`), bytes (iperf3's MAX_TCP_BUFFER).
pub const MAX_WINDOW: u64 = 512 << 20;
/// Longest string field (version, congestion algorithm, title) kept.
pub const MAX_STRING: usize = 256;

/// Everything a peer can get wrong; each names the field and the bound.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Iperf3Error {
    #[error(
        "iperf3 JSON message of {len} bytes is longer than the {max}-byte bound (MAX_JSON_LEN)"
    )]
    JsonTooLong { len: usize, max: usize },
    #[error("iperf3 JSON message is empty (length 0)")]
    JsonEmpty,
    #[error("iperf3 {what} is not valid JSON: {reason}")]
    BadJson { what: &'static str, reason: String },
    #[error("iperf3 {what} lacks the field `{field}`")]
    Missing {
        what: &'static str,
        field: &'static str,
    },
    #[error("iperf3 field `{field}` = {value} is out of range (at most {max})")]
    OutOfRange {
        field: &'static str,
        value: String,
        max: String,
    },
    #[error("iperf3 field `{field}` has the wrong type: {value}")]
    WrongType { field: &'static str, value: String },
    #[error("unknown iperf3 state byte {0} (known: 1, 2, 4, 9-16, -1, -2)")]
    UnknownState(i8),
    #[error("not an iperf3 cookie: {0}")]
    BadCookie(&'static str),
    #[error("iperf3 UDP datagram of {have} bytes is shorter than its {need}-byte header")]
    Truncated { need: usize, have: usize },
}

/// The states of an iperf3 test, as the control connection carries them
/// (one signed byte).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum State {
    TestStart,
    TestRunning,
    TestEnd,
    ParamExchange,
    CreateStreams,
    ServerTerminate,
    ClientTerminate,
    ExchangeResults,
    DisplayResults,
    IperfStart,
    IperfDone,
    AccessDenied,
    ServerError,
}

impl State {
    pub(crate) const ALL: [(State, i8); 13] = [
        (State::TestStart, 1),
        (State::TestRunning, 2),
        (State::TestEnd, 4),
        (State::ParamExchange, 9),
        (State::CreateStreams, 10),
        (State::ServerTerminate, 11),
        (State::ClientTerminate, 12),
        (State::ExchangeResults, 13),
        (State::DisplayResults, 14),
        (State::IperfStart, 15),
        (State::IperfDone, 16),
        (State::AccessDenied, -1),
        (State::ServerError, -2),
    ];

    /// The byte on the wire.
    pub fn byte(self) -> u8 {
        let (_, b) = Self::ALL
            .iter()
            .find(|(s, _)| *s == self)
            .expect("every state has a byte");
        *b as u8
    }

    /// The state a byte from the wire names.
    pub fn from_byte(b: u8) -> Result<State, Iperf3Error> {
        Self::ALL
            .iter()
            .find(|(_, v)| *v == b as i8)
            .map(|(s, _)| *s)
            .ok_or(Iperf3Error::UnknownState(b as i8))
    }

    /// iperf3's name of the state (its `#define`).
    pub fn name(self) -> &'static str {
        match self {
            State::TestStart => "TEST_START",
            State::TestRunning => "TEST_RUNNING",
            State::TestEnd => "TEST_END",
            State::ParamExchange => "PARAM_EXCHANGE",
            State::CreateStreams => "CREATE_STREAMS",
            State::ServerTerminate => "SERVER_TERMINATE",
            State::ClientTerminate => "CLIENT_TERMINATE",
            State::ExchangeResults => "EXCHANGE_RESULTS",
            State::DisplayResults => "DISPLAY_RESULTS",
            State::IperfStart => "IPERF_START",
            State::IperfDone => "IPERF_DONE",
            State::AccessDenied => "ACCESS_DENIED",
            State::ServerError => "SERVER_ERROR",
        }
    }
}

/// A test's cookie: it names the test on the control connection and on
/// every TCP data connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cookie(pub [u8; COOKIE_LEN]);

impl Cookie {
    /// A cookie made from 36 random bytes (the caller reads the entropy).
    pub fn from_random(r: &[u8; COOKIE_LEN - 1]) -> Cookie {
        let mut c = [0u8; COOKIE_LEN];
        for (o, b) in c.iter_mut().zip(r) {
            *o = COOKIE_CHARS[(*b as usize) % COOKIE_CHARS.len()];
        }
        Cookie(c)
    }

    /// A cookie as read from a peer: 36 printable ASCII bytes and a NUL
    /// (other iperf3 versions may use another alphabet; any printable one
    /// is taken).
    pub fn parse(b: &[u8]) -> Result<Cookie, Iperf3Error> {
        let b: &[u8; COOKIE_LEN] = b
            .try_into()
            .map_err(|_| Iperf3Error::BadCookie("not 37 bytes"))?;
        if b[COOKIE_LEN - 1] != 0 {
            return Err(Iperf3Error::BadCookie("its 37th byte is not NUL"));
        }
        if !b[..COOKIE_LEN - 1].iter().all(|c| c.is_ascii_graphic()) {
            return Err(Iperf3Error::BadCookie(
                "it holds bytes other than printable ASCII",
            ));
        }
        Ok(Cookie(*b))
    }

    /// The 36 characters.
    pub fn as_str(&self) -> &str {
        core::str::from_utf8(&self.0[..COOKIE_LEN - 1]).unwrap_or("")
    }
}

/// The 4-byte length that precedes a JSON message, checked against
/// [`MAX_JSON_LEN`] before the caller reads (or allocates for) the body.
pub fn json_len(prefix: [u8; 4]) -> Result<usize, Iperf3Error> {
    let len = u32::from_be_bytes(prefix) as usize;
    if len == 0 {
        return Err(Iperf3Error::JsonEmpty);
    }
    if len > MAX_JSON_LEN {
        return Err(Iperf3Error::JsonTooLong {
            len,
            max: MAX_JSON_LEN,
        });
    }
    Ok(len)
}

/// A JSON message as written on the control connection: length, then body.
pub fn frame_json(body: &str) -> Result<Vec<u8>, Iperf3Error> {
    if body.len() > MAX_JSON_LEN {
        return Err(Iperf3Error::JsonTooLong {
            len: body.len(),
            max: MAX_JSON_LEN,
        });
    }
    let mut v = Vec::with_capacity(4 + body.len());
    v.extend_from_slice(&(body.len() as u32).to_be_bytes());
    v.extend_from_slice(body.as_bytes());
    Ok(v)
}

/// The JSON object of a message body, or why it is not one.
pub(crate) fn object(
    body: &[u8],
    what: &'static str,
) -> Result<serde_json::Map<String, serde_json::Value>, Iperf3Error> {
    if body.len() > MAX_JSON_LEN {
        return Err(Iperf3Error::JsonTooLong {
            len: body.len(),
            max: MAX_JSON_LEN,
        });
    }
    // cJSON_Print ends nothing with a NUL, but tolerate one.
    let body = body.strip_suffix(&[0]).unwrap_or(body);
    match serde_json::from_slice(body) {
        Ok(serde_json::Value::Object(m)) => Ok(m),
        Ok(_) => Err(Iperf3Error::BadJson {
            what,
            reason: "not a JSON object".into(),
        }),
        Err(e) => Err(Iperf3Error::BadJson {
            what,
            reason: e.to_string(),
        }),
    }
}

/// A non-negative integer field (cJSON writes every number as a double), at
/// most `max`.
pub(crate) fn uint(
    m: &serde_json::Map<String, serde_json::Value>,
    field: &'static str,
    max: u64,
) -> Result<Option<u64>, Iperf3Error> {
    let Some(v) = m.get(field) else {
        return Ok(None);
    };
    let wrong = || Iperf3Error::WrongType {
        field,
        value: short(v),
    };
    let x = v.as_f64().ok_or_else(wrong)?;
    if !x.is_finite() || x < 0.0 {
        return Err(wrong());
    }
    if x > max as f64 {
        return Err(Iperf3Error::OutOfRange {
            field,
            value: short(v),
            max: max.to_string(),
        });
    }
    Ok(Some(x as u64))
}

/// A field that is present (iperf3 sends `true`, or a number, for flags).
pub(crate) fn flag(m: &serde_json::Map<String, serde_json::Value>, field: &str) -> bool {
    match m.get(field) {
        None | Some(serde_json::Value::Null) | Some(serde_json::Value::Bool(false)) => false,
        Some(_) => true,
    }
}

/// A string field, at most [`MAX_STRING`] bytes.
pub(crate) fn string(
    m: &serde_json::Map<String, serde_json::Value>,
    field: &'static str,
) -> Result<Option<String>, Iperf3Error> {
    match m.get(field) {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::String(s)) if s.len() <= MAX_STRING => Ok(Some(s.clone())),
        Some(serde_json::Value::String(s)) => Err(Iperf3Error::OutOfRange {
            field,
            value: format!("a string of {} bytes", s.len()),
            max: format!("{MAX_STRING} bytes"),
        }),
        Some(v) => Err(Iperf3Error::WrongType {
            field,
            value: short(v),
        }),
    }
}

/// A value for an error message, at most 40 characters of it.
pub(crate) fn short(v: &serde_json::Value) -> String {
    let s = v.to_string();
    match s.char_indices().nth(40) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s,
    }
}

/// iperf3's error numbers (its `i_errno`, iperf_api.h) that a server sends
/// after SERVER_ERROR; the client prints its own text for each.
pub mod errno {
    /// "test duration too long".
    pub const DURATION: i32 = 5;
    /// "number of parallel streams too large".
    pub const NUM_STREAMS: i32 = 6;
    /// "block size too large".
    pub const BLOCK_SIZE: i32 = 7;
    /// "not implemented yet".
    pub const UNIMPLEMENTED: i32 = 13;
    /// "total required bandwidth is larger than server limit".
    pub const TOTAL_RATE: i32 = 27;
    /// "protocol does not exist".
    pub const PROTOCOL: i32 = 131;
    /// "test authorization failed".
    pub const AUTH_TEST: i32 = 142;
}
