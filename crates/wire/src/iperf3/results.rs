//! The results JSON both ends send after EXCHANGE_RESULTS (iperf_api.c
//! send_results / get_results): the sender's CPU and, per stream, what the
//! sender sent or the receiver received.

use super::codec::{object, short, string, Iperf3Error, MAX_STREAMS};
use serde_json::{Map, Value};

/// One end's results.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Results {
    /// CPU use of the end over the test, % (iperf3's cpu_util: total, user,
    /// system).
    pub cpu_util_total: f64,
    pub cpu_util_user: f64,
    pub cpu_util_system: f64,
    /// 1 when the end sent and reads retransmits from TCP_INFO, 0 when it
    /// sent without, -1 when it only received.
    pub sender_has_retransmits: i64,
    pub congestion_used: Option<String>,
    pub streams: Vec<StreamResult>,
}

/// One stream's figures, as the end that sends them counted.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StreamResult {
    pub id: i64,
    /// Bytes sent (by a sender, after the omitted seconds) or received.
    pub bytes: u64,
    /// TCP retransmits of a sender, -1 when not known.
    pub retransmits: i64,
    /// UDP receiver: RFC 1889 jitter, seconds.
    pub jitter: f64,
    /// UDP receiver: datagrams lost (sequence gaps less out-of-order).
    pub errors: i64,
    /// UDP: datagrams sent, or the highest sequence number received.
    pub packets: i64,
    /// Seconds from the stream's start (absent from pre-3.2 peers).
    pub start_time: Option<f64>,
    pub end_time: Option<f64>,
}

impl Results {
    /// Parse a results body: the fields iperf3's get_results requires must
    /// be there, and at most 2 × [`MAX_STREAMS`] streams.
    pub fn parse(body: &[u8]) -> Result<Results, Iperf3Error> {
        const WHAT: &str = "results message";
        let m = object(body, WHAT)?;
        let f = |k| required(&m, WHAT, k);
        let streams = match m.get("streams") {
            Some(Value::Array(a)) if a.len() <= 2 * MAX_STREAMS as usize => a,
            Some(Value::Array(a)) => {
                return Err(Iperf3Error::OutOfRange {
                    field: "streams",
                    value: format!("{} streams", a.len()),
                    max: format!("{} (2 × MAX_STREAMS)", 2 * MAX_STREAMS),
                })
            }
            Some(v) => {
                return Err(Iperf3Error::WrongType {
                    field: "streams",
                    value: short(v),
                })
            }
            None => {
                return Err(Iperf3Error::Missing {
                    what: WHAT,
                    field: "streams",
                })
            }
        };
        Ok(Results {
            cpu_util_total: f("cpu_util_total")?,
            cpu_util_user: f("cpu_util_user")?,
            cpu_util_system: f("cpu_util_system")?,
            sender_has_retransmits: signed(f("sender_has_retransmits")?),
            congestion_used: string(&m, "congestion_used")?,
            streams: streams
                .iter()
                .map(StreamResult::parse)
                .collect::<Result<_, _>>()?,
        })
    }

    /// The message body.
    pub fn to_json(&self) -> String {
        let mut j = Map::new();
        j.insert("cpu_util_total".into(), num(self.cpu_util_total));
        j.insert("cpu_util_user".into(), num(self.cpu_util_user));
        j.insert("cpu_util_system".into(), num(self.cpu_util_system));
        j.insert(
            "sender_has_retransmits".into(),
            self.sender_has_retransmits.into(),
        );
        if let Some(c) = &self.congestion_used {
            j.insert("congestion_used".into(), c.clone().into());
        }
        let s = self.streams.iter().map(StreamResult::to_json).collect();
        j.insert("streams".into(), Value::Array(s));
        Value::Object(j).to_string()
    }

    /// Bytes over all streams.
    pub fn bytes(&self) -> u64 {
        self.streams.iter().map(|s| s.bytes).sum()
    }
}

impl StreamResult {
    fn parse(v: &Value) -> Result<StreamResult, Iperf3Error> {
        const WHAT: &str = "results stream";
        let Value::Object(m) = v else {
            return Err(Iperf3Error::WrongType {
                field: "streams[]",
                value: short(v),
            });
        };
        let f = |k| required(m, WHAT, k);
        let opt = |k: &'static str| m.get(k).map(|v| finite(k, v)).transpose();
        let bytes = f("bytes")?;
        if !(0.0..=9.007_199_254_740_992e15).contains(&bytes) {
            return Err(Iperf3Error::OutOfRange {
                field: "bytes",
                value: bytes.to_string(),
                max: "2^53".into(),
            });
        }
        Ok(StreamResult {
            id: signed(f("id")?),
            bytes: bytes as u64,
            retransmits: signed(f("retransmits")?),
            jitter: f("jitter")?,
            errors: signed(f("errors")?),
            packets: signed(f("packets")?),
            start_time: opt("start_time")?,
            end_time: opt("end_time")?,
        })
    }

    fn to_json(&self) -> Value {
        let mut j = Map::new();
        j.insert("id".into(), self.id.into());
        j.insert("bytes".into(), self.bytes.into());
        j.insert("retransmits".into(), self.retransmits.into());
        j.insert("jitter".into(), num(self.jitter));
        j.insert("errors".into(), self.errors.into());
        j.insert("packets".into(), self.packets.into());
        if let Some(t) = self.start_time {
            j.insert("start_time".into(), num(t));
        }
        if let Some(t) = self.end_time {
            j.insert("end_time".into(), num(t));
        }
        Value::Object(j)
    }
}

/// The finite number field `field` of `what`, which must be there.
fn required(
    m: &Map<String, Value>,
    what: &'static str,
    field: &'static str,
) -> Result<f64, Iperf3Error> {
    let v = m.get(field).ok_or(Iperf3Error::Missing { what, field })?;
    finite(field, v)
}

/// A finite number field (cJSON writes NaN as null: refused).
fn finite(field: &'static str, v: &Value) -> Result<f64, Iperf3Error> {
    v.as_f64()
        .filter(|x| x.is_finite())
        .ok_or_else(|| Iperf3Error::WrongType {
            field,
            value: short(v),
        })
}

/// A signed count as iperf3 3.12 writes it: -1 comes as 2^64 − 1 (cJSON
/// 1.7.15 prints the C int through an unsigned conversion), read back as -1.
fn signed(x: f64) -> i64 {
    if x >= i64::MAX as f64 {
        (x as u64) as i64
    } else {
        x as i64
    }
}

/// A JSON number of a finite double (non-finite written as 0).
fn num(x: f64) -> Value {
    serde_json::Number::from_f64(x)
        .map(Value::Number)
        .unwrap_or(0.into())
}
