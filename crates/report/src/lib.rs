//! misura's result model and its exporters.
//!
//! Every result is versioned and self-describing: format name and version,
//! tool version, host fingerprint, configuration, the timestamp sources that
//! were actually obtained, the calibration used, statistics and fits. The
//! exporters are pure functions `fn(&Report, &mut dyn Write)`; none of them
//! opens a file or reads a clock.
#![forbid(unsafe_code)]

pub mod clock;
pub mod compare;
pub mod csv;
pub mod distribution;
pub mod exchange;
pub mod frames;
pub mod hardware;
pub mod host;
pub mod html;
pub mod latency_figures;
pub mod load;
pub mod load_figures;
pub mod metrics;
pub mod model;
pub mod pacing;
pub mod reflect;
pub mod rfc2544;
pub mod rtt;
pub mod series;
pub mod serve;
pub mod svg;
pub mod text;
pub mod throughput;
pub mod tsc;
pub mod under_load;
pub mod under_load_figures;
pub mod vs_load;
pub mod warning;
pub mod y1564;

pub use model::*;
pub use warning::Warning;

/// Version of the JSON result formats written by this build. A reader
/// refuses files with a higher version.
pub const FORMAT_VERSION: u32 = 2;

/// Write a result as pretty JSON followed by a newline.
pub fn write_json<T: serde::Serialize>(
    value: &T,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, value)?;
    out.write_all(b"\n")
}
