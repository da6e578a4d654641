//! The parameter JSON a client sends after PARAM_EXCHANGE (iperf_api.c
//! send_parameters / get_parameters).

use super::codec::{flag, object, string, uint, Iperf3Error};
use super::codec::{MAX_STREAMS, MAX_TCP_BLOCK, MAX_TIME_S, MAX_UDP_BLOCK, MAX_WINDOW};
use serde_json::{Map, Value};

/// Highest rate a parameter may ask for, bit/s (10 Tbit/s; iperf3 3.12's
/// server reads the rate into a C int, so it caps a stream at 2^31 − 1).
pub const MAX_RATE_BPS: u64 = 10_000_000_000_000;
/// Largest `num`/`blockcount` (2^53: exact in cJSON's double).
const MAX_COUNT: u64 = 1 << 53;

/// The transport of the data streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Protocol {
    #[default]
    Tcp,
    Udp,
    Sctp,
}

impl Protocol {
    pub fn as_str(self) -> &'static str {
        match self {
            Protocol::Tcp => "tcp",
            Protocol::Udp => "udp",
            Protocol::Sctp => "sctp",
        }
    }
}

/// A test's parameters. Zero/`None`/`false` is "not sent" (iperf3 leaves
/// out a field at its default).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Params {
    pub protocol: Protocol,
    /// Seconds to omit at the start (`-O`).
    pub omit: u64,
    /// Test duration, seconds (`-t`; 0 with `-n`/`-k`).
    pub time: u64,
    /// Bytes to send instead of a duration (`-n`).
    pub num: u64,
    /// Blocks to send instead of a duration (`-k`).
    pub blockcount: u64,
    pub mss: Option<u64>,
    pub nodelay: bool,
    /// Streams per direction (`-P`).
    pub parallel: u32,
    pub reverse: bool,
    pub bidirectional: bool,
    /// Socket buffer asked for (`-w`), bytes.
    pub window: Option<u64>,
    /// Block (write) length (`-l`), bytes.
    pub len: Option<u64>,
    /// Target rate per stream (`-b`), bit/s.
    pub bandwidth: Option<u64>,
    pub fqrate: Option<u64>,
    pub pacing_timer: Option<u64>,
    pub burst: Option<u64>,
    pub tos: Option<u64>,
    pub flowlabel: Option<u64>,
    pub title: Option<String>,
    pub congestion: Option<String>,
    pub get_server_output: bool,
    pub udp_counters_64bit: bool,
    pub repeating_payload: bool,
    pub zerocopy: bool,
    pub dont_fragment: bool,
    /// An authentication token was sent (`--username`); misura has no RSA
    /// key to check it.
    pub authtoken: bool,
    /// What the client says it is (`client_version`, 3.1+); unverified.
    pub client_version: Option<String>,
}

impl Params {
    /// Parse a parameter message body, checking every number against
    /// iperf3's own bounds.
    pub fn parse(body: &[u8]) -> Result<Params, Iperf3Error> {
        let m = object(body, "parameter message")?;
        let protocol = if flag(&m, "udp") {
            Protocol::Udp
        } else if flag(&m, "sctp") {
            Protocol::Sctp
        } else {
            Protocol::Tcp
        };
        let block_max = match protocol {
            Protocol::Udp => MAX_UDP_BLOCK,
            _ => MAX_TCP_BLOCK,
        };
        Ok(Params {
            protocol,
            omit: uint(&m, "omit", 600)?.unwrap_or(0),
            time: uint(&m, "time", MAX_TIME_S)?.unwrap_or(0),
            num: uint(&m, "num", MAX_COUNT)?.unwrap_or(0),
            blockcount: uint(&m, "blockcount", MAX_COUNT)?.unwrap_or(0),
            mss: uint(&m, "MSS", 9 * 1024)?,
            nodelay: flag(&m, "nodelay"),
            parallel: uint(&m, "parallel", MAX_STREAMS as u64)?.unwrap_or(1) as u32,
            reverse: flag(&m, "reverse"),
            bidirectional: flag(&m, "bidirectional"),
            window: uint(&m, "window", MAX_WINDOW)?,
            len: uint(&m, "len", block_max)?,
            bandwidth: uint(&m, "bandwidth", MAX_RATE_BPS)?,
            fqrate: uint(&m, "fqrate", MAX_RATE_BPS)?,
            pacing_timer: uint(&m, "pacing_timer", u32::MAX as u64)?,
            burst: uint(&m, "burst", 1000)?,
            tos: uint(&m, "TOS", 255)?,
            flowlabel: uint(&m, "flowlabel", 0xF_FFFF)?,
            title: string(&m, "title")?,
            congestion: string(&m, "congestion")?,
            get_server_output: flag(&m, "get_server_output"),
            udp_counters_64bit: flag(&m, "udp_counters_64bit"),
            repeating_payload: flag(&m, "repeating_payload"),
            zerocopy: flag(&m, "zerocopy"),
            dont_fragment: flag(&m, "dont_fragment"),
            authtoken: flag(&m, "authtoken"),
            client_version: string(&m, "client_version")?,
        })
    }

    /// The message body, as iperf3's client writes it (fields at their
    /// default left out).
    pub fn to_json(&self) -> String {
        let mut j = Map::new();
        let mut put = |k: &str, v: Value| {
            j.insert(k.into(), v);
        };
        put(self.protocol.as_str(), Value::Bool(true));
        put("omit", self.omit.into());
        put("time", self.time.into());
        put("num", self.num.into());
        put("blockcount", self.blockcount.into());
        let opt = [
            ("MSS", self.mss),
            ("window", self.window),
            ("len", self.len),
            ("bandwidth", self.bandwidth),
            ("fqrate", self.fqrate),
            ("pacing_timer", self.pacing_timer),
            ("burst", self.burst),
            ("TOS", self.tos),
            ("flowlabel", self.flowlabel),
        ];
        put("parallel", self.parallel.into());
        for (k, v) in opt {
            if let Some(v) = v.filter(|v| *v != 0) {
                put(k, v.into());
            }
        }
        for (k, on) in [
            ("nodelay", self.nodelay),
            ("reverse", self.reverse),
            ("bidirectional", self.bidirectional),
        ] {
            if on {
                put(k, Value::Bool(true));
            }
        }
        for (k, on) in [
            ("get_server_output", self.get_server_output),
            ("udp_counters_64bit", self.udp_counters_64bit),
            ("repeating_payload", self.repeating_payload),
            ("zerocopy", self.zerocopy),
            ("dont_fragment", self.dont_fragment),
        ] {
            if on {
                put(k, 1.into());
            }
        }
        for (k, v) in [("title", &self.title), ("congestion", &self.congestion)] {
            if let Some(v) = v {
                put(k, v.clone().into());
            }
        }
        if let Some(v) = &self.client_version {
            put("client_version", v.clone().into());
        }
        Value::Object(j).to_string()
    }

    /// Streams each end sends on: (client's, server's).
    pub fn senders(&self) -> (u32, u32) {
        match (self.bidirectional, self.reverse) {
            (true, _) => (self.parallel, self.parallel),
            (false, true) => (0, self.parallel),
            (false, false) => (self.parallel, 0),
        }
    }
}
