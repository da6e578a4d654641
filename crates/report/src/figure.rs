//! What every renderer shares: a figure (a plot and its caption), the units
//! that keep a number readable (`human_ns`, `human_bps`, `time_unit`), and the
//! readers of a result's JSON that the page and its plots use.

use crate::distribution::Bin;
use crate::svg::{num, Plot};
use serde_json::Value;

/// A figure on the page: the plot and a sentence saying what it shows.
#[derive(Clone, Debug)]
pub struct Figure {
    pub plot: Plot,
    pub caption: String,
}

pub fn push(out: &mut Vec<Figure>, plot: Option<Plot>, caption: &str) {
    if let Some(plot) = plot {
        out.push(Figure {
            plot,
            caption: caption.to_string(),
        });
    }
}

/// Nanoseconds for people: 37 ns, 4.00 µs, 12.3 ms, 1.20 s.
pub fn human_ns(ns: f64) -> String {
    let a = ns.abs();
    if a < 1e3 {
        format!("{ns:.0} ns")
    } else if a < 1e6 {
        format!("{:.2} µs", ns / 1e3)
    } else if a < 1e9 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

/// "941.2 Mbit/s".
pub fn human_bps(b: f64) -> String {
    let (v, u) = if b >= 1e9 {
        (b / 1e9, "Gbit/s")
    } else if b >= 1e6 {
        (b / 1e6, "Mbit/s")
    } else if b >= 1e3 {
        (b / 1e3, "kbit/s")
    } else {
        (b, "bit/s")
    };
    format!("{v:.2} {u}")
}

/// A divisor and unit name that keep nanosecond values readable.
pub fn time_unit(max_abs_ns: f64) -> (f64, &'static str) {
    if max_abs_ns >= 5e6 {
        (1e6, "ms")
    } else if max_abs_ns >= 5e3 {
        (1e3, "µs")
    } else {
        (1.0, "ns")
    }
}

pub fn ns_words(ns: f64) -> String {
    let (d, u) = time_unit(ns.abs());
    format!("{} {u}", num(ns / d))
}

pub fn bins(v: Option<&Value>) -> Vec<Bin> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|b| {
                    Some((
                        b.get("lower_ns")?.as_f64()?,
                        b.get("upper_ns")?.as_f64()?,
                        b.get("count")?.as_f64()?,
                    ))
                })
                .collect()
        })
        .unwrap_or_default()
}

pub fn f(v: &Value, ptr: &str) -> Option<f64> {
    v.pointer(ptr).and_then(Value::as_f64)
}

pub fn s<'a>(v: &'a Value, ptr: &str) -> Option<&'a str> {
    v.pointer(ptr).and_then(Value::as_str)
}

pub fn array(v: &Value, k: &str) -> Vec<Value> {
    v.get(k)
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

// ---------------------------------------------------------------- tables

pub fn cell(v: &Value) -> String {
    match v {
        Value::Null => "—".into(),
        Value::Bool(true) => "yes".into(),
        Value::Bool(false) => "no".into(),
        Value::String(s) => s.clone(),
        Value::Array(a) if a.iter().all(|x| !x.is_object() && !x.is_array()) => {
            if a.is_empty() {
                "none".into()
            } else {
                a.iter().map(cell).collect::<Vec<_>>().join(", ")
            }
        }
        other => other.to_string(),
    }
}

pub fn size_label(p: &Value) -> String {
    if let Some(x) = p.get("payload_bytes").and_then(Value::as_u64) {
        format!("P = {x} B")
    } else if let Some(x) = p.get("request_bytes").and_then(Value::as_u64) {
        format!("{x} B request")
    } else {
        "all".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_units() {
        assert_eq!(human_ns(37.0), "37 ns");
        assert_eq!(human_ns(4000.0), "4.00 µs");
        assert_eq!(human_ns(12_300_000.0), "12.30 ms");
        assert_eq!(human_ns(1.2e9), "1.20 s");
        assert_eq!(human_bps(19_131_409.0), "19.13 Mbit/s");
    }
}
