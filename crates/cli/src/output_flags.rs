//! The output flags every measuring command has (declared once, flattened
//! into each command's flags; the binary's `shared::output` acts on them).

use std::path::PathBuf;

/// Output flags every measuring command has.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct OutputArgs {
    /// Print the result as JSON on stdout instead of text.
    #[arg(long)]
    pub json: bool,
    /// Also write the JSON result to FILE (checked writable before measuring).
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<PathBuf>,
    /// No progress or interval lines on stderr.
    #[arg(long, short)]
    pub quiet: bool,
}

/// The CSV export, for the commands whose result is a table.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct CsvArgs {
    /// Also write the CSV summary to FILE (checked writable before measuring).
    #[arg(long, value_name = "FILE")]
    pub export_csv: Option<PathBuf>,
}
