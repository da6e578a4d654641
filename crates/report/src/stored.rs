//! A stored result (its JSON, as the results store keeps it) rendered as it
//! was printed when it ran: `misura show RUN`. Its `format` picks the text
//! writer; a format without one is shown as its JSON.

use serde_json::Value;
use std::io::Write;

/// Why a stored result cannot be shown as text.
#[derive(Debug, thiserror::Error)]
pub enum StoredError {
    /// Written by a newer misura than this one reads.
    #[error("this result was written by a newer misura (format {format} version {version}): upgrade to show it")]
    Newer { format: String, version: Value },
    /// Its JSON does not read back into its format's type.
    #[error("stored {format} result does not read back: {why}")]
    Unreadable { format: String, why: String },
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Json(#[from] serde_json::Error),
}

/// Writes the stored result `v` as its command printed it.
pub fn render(v: &Value, out: &mut dyn Write) -> Result<(), StoredError> {
    let format = v.get("format").and_then(|f| f.as_str()).unwrap_or("");
    let newer = v
        .get("format_version")
        .and_then(|f| f.as_u64())
        .unwrap_or(0)
        > crate::FORMAT_VERSION as u64;
    if newer {
        return Err(StoredError::Newer {
            format: format.into(),
            version: v["format_version"].clone(),
        });
    }
    use crate::{
        clock, exchange, host, reflect, rfc2544, rtt, serve, text, throughput as tp, tsc,
        under_load, y1564,
    };
    match format {
        "misura.oneway" | "misura.calibration-run" => as_text(v, format, text::write_oneway, out),
        "misura.rtt" => as_text(v, format, rtt::write_text, out),
        "misura.exchange" => as_text(v, format, exchange::write_text, out),
        "misura.exchange-responder" => as_text(v, format, exchange::write_responder_text, out),
        "misura.tcp" => as_text(v, format, tp::write_tcp_text, out),
        "misura.udp" => as_text(v, format, tp::write_udp_text, out),
        "misura.rr" => as_text(v, format, tp::write_rr_text, out),
        "misura.setup" => as_text(v, format, tp::write_setup_text, out),
        "misura.sweep" => as_text(v, format, tp::write_sweep_text, out),
        "misura.serve" => as_text(v, format, serve::write_text, out),
        "misura.clock-sources" => as_text(v, format, clock::write_sources_text, out),
        "misura.clock-interference" => as_text(v, format, clock::write_interference_text, out),
        "misura.clock-timer" => as_text(v, format, clock::write_timer_text, out),
        "misura.clock-tsc" => as_text(v, format, tsc::write_text, out),
        "misura.host-check" => as_text(v, format, host::write_check_text, out),
        "misura.host-tune" => as_text(v, format, host::write_tune_text, out),
        "misura.reflect" => as_text(v, format, reflect::write_summary, out),
        "misura.rfc2544" => as_text(v, format, rfc2544::write_text, out),
        "misura.y1564" => as_text(v, format, y1564::write_text, out),
        "misura.load" => as_text(v, format, under_load::write_text, out),
        _ => {
            // A format without a text form here is shown as its JSON.
            writeln!(out, "{}", serde_json::to_string_pretty(v)?)?;
            Ok(())
        }
    }
}

/// Reads a stored result back into its type and writes it with `text`.
fn as_text<T: serde::de::DeserializeOwned>(
    v: &Value,
    format: &str,
    text: fn(&T, &mut dyn Write) -> std::io::Result<()>,
    out: &mut dyn Write,
) -> Result<(), StoredError> {
    let r: T = serde_json::from_value(v.clone()).map_err(|e| StoredError::Unreadable {
        format: format.into(),
        why: e.to_string(),
    })?;
    text(&r, out)?;
    Ok(())
}
