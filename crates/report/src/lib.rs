//! misura's result model and its exporters.
//!
//! Every result is versioned and self-describing: format name and version,
//! tool version, host fingerprint, configuration, the timestamp sources that
//! were actually obtained, the calibration used, statistics and fits. The
//! exporters are pure functions `fn(&Report, &mut dyn Write)`; none of them
//! opens a file or reads a clock.
//!
//! The crate is in two parts with no import between them in the other
//! direction: `model` (the serde types, one module per command) and the
//! renderers, which read the model or its JSON: `text` (human and CSV
//! forms), `csv` and `frames` (tables), `html` (the page), `figures` (the
//! plots a page shows), `compare`, `svg` and `metrics`. What every renderer
//! shares (a figure, units, the JSON readers) is in `figure`. A command's
//! types and text forms are also found together at the crate's top
//! (`misura_report::clock::SourcesReport`, `…::clock::write_sources_text`).
#![forbid(unsafe_code)]

pub mod compare;
pub mod compare_rows;
pub mod csv;
pub mod distribution;
pub mod figure;
pub mod figures;
pub mod frames;
pub mod html;
pub mod metrics;
pub mod model;
pub mod series;
pub mod stored;
pub mod svg;
pub mod text;

pub use figures::vs_load;
pub use model::*;

/// A command's result types and their text (and CSV) forms under one name,
/// as they were before the crate was split into `model` and `text`.
macro_rules! command {
    ($($(#[$doc:meta])* $name:ident;)*) => {$(
        $(#[$doc])*
        pub mod $name {
            pub use crate::model::$name::*;
            pub use crate::text::$name::*;
        }
    )*};
}

command! {
    /// `misura clock sources`, `clock interference` and `clock timer`.
    clock;
    /// `misura exchange` and its responder.
    exchange;
    /// `misura host check` and `host tune`.
    host;
    /// The load a one-way run was taken under, and the frame engine's facts.
    load;
    /// How a paced sender kept its schedule, and the CPU it used.
    pacing;
    /// `misura reflect`'s summary.
    reflect;
    /// `misura rfc2544`.
    rfc2544;
    /// `misura rtt`.
    rtt;
    /// `misura serve`.
    serve;
    /// `misura tcp`, `udp`, `rr`, `setup` and `sweep`.
    throughput;
    /// `misura tsc`.
    tsc;
    /// `misura load`.
    under_load;
    /// `misura y1564`.
    y1564;
}

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
