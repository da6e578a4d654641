//! The one path from a finished run to the user, for every command: the
//! output flags (declared here once and flattened into each command), the
//! output files (opened, and so checked writable, before anything is
//! measured), printing (text or `--json`), the exports, and keeping the run
//! in the results store. A command only builds its report.

pub use crate::shared::common_flags::{CsvArgs, OutputArgs};
use crate::shared::exit::Failure;
use crate::shared::outfile::Export;
use anyhow::{Context, Result};
use misura_report::write_json;
use std::io::Write;

type Writer<T> = fn(&T, &mut dyn Write) -> std::io::Result<()>;

/// A finished (or interrupted) run's report, however the command shapes it.
pub trait RunReport {
    fn write_json(&self, w: &mut dyn Write) -> std::io::Result<()>;
    fn write_text(&self, w: &mut dyn Write) -> std::io::Result<()>;
    /// The CSV summary; `None` when the command has none.
    fn write_csv(&self, w: &mut dyn Write) -> Option<std::io::Result<()>>;
    fn to_value(&self) -> serde_json::Result<serde_json::Value>;
    /// Under which subcommand and target the store keeps the run.
    fn store_key(&self) -> (&str, &str);
}

/// A report value with the functions that print it.
pub struct Report<T> {
    pub value: T,
    subcommand: String,
    target: String,
    text: Writer<T>,
    csv: Option<Writer<T>>,
}

impl<T: serde::Serialize> Report<T> {
    pub fn new(value: T, subcommand: &str, target: impl Into<String>, text: Writer<T>) -> Self {
        Report {
            value,
            subcommand: subcommand.to_string(),
            target: target.into(),
            text,
            csv: None,
        }
    }

    pub fn with_csv(mut self, csv: Writer<T>) -> Self {
        self.csv = Some(csv);
        self
    }
}

impl<T: serde::Serialize> RunReport for Report<T> {
    fn write_json(&self, w: &mut dyn Write) -> std::io::Result<()> {
        write_json(&self.value, w)
    }
    fn write_text(&self, w: &mut dyn Write) -> std::io::Result<()> {
        (self.text)(&self.value, w)
    }
    fn write_csv(&self, w: &mut dyn Write) -> Option<std::io::Result<()>> {
        self.csv.map(|f| f(&self.value, w))
    }
    fn to_value(&self) -> serde_json::Result<serde_json::Value> {
        serde_json::to_value(&self.value)
    }
    fn store_key(&self) -> (&str, &str) {
        (&self.subcommand, &self.target)
    }
}

/// What a measuring command hands back: its report, and the exit code it
/// asks for when no signal stopped it (a signal's code wins in `main`).
pub struct Finished {
    pub report: Box<dyn RunReport>,
    pub code: i32,
}

impl Finished {
    pub fn ok(report: impl RunReport + 'static) -> Finished {
        Finished {
            report: Box::new(report),
            code: crate::shared::exit::OK,
        }
    }

    pub fn with_code(report: impl RunReport + 'static, code: i32) -> Finished {
        Finished {
            report: Box::new(report),
            code,
        }
    }
}

/// Keep a run in the results store (a warning if that fails, never an error).
pub fn keep(r: &dyn RunReport, quiet: bool) {
    match r.to_value() {
        Ok(v) => {
            let (sub, target) = r.store_key();
            crate::shared::store::keep_value(sub, target, &v, quiet)
        }
        Err(e) => eprintln!("misura: warning: the result could not be kept in the store: {e}"),
    }
}

/// The output flags with their files already open.
pub struct Outputs {
    pub json: bool,
    pub quiet: bool,
    json_file: Option<Export>,
    csv_file: Option<Export>,
}

impl Outputs {
    /// Open every output file before measuring, so a bad path costs nothing.
    pub fn open(o: &OutputArgs, csv: Option<&CsvArgs>) -> Result<Outputs> {
        Ok(Outputs {
            json: o.json,
            quiet: o.quiet,
            json_file: Export::open(&o.export_json, "JSON result")?,
            csv_file: match csv {
                Some(c) => Export::open(&c.export_csv, "CSV summary")?,
                None => None,
            },
        })
    }

    /// The run failed before it had a result: the export files were not
    /// touched.
    pub fn abandon(self) {}

    /// Print, export and keep a run. A closed stdout (`| head`) ends the
    /// printing quietly; the exports and the store still get the run. An
    /// export that fails is reported after the rest is done, so nothing
    /// measured is lost from the terminal.
    pub fn deliver(self, r: &dyn RunReport) -> Result<()> {
        let printed = {
            // Buffered: a pretty-printed result is thousands of lines, and
            // stdout flushes each line on its own (one write(2) per line).
            let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
            let res = if self.json {
                r.write_json(&mut out)
            } else {
                r.write_text(&mut out)
            };
            res.and_then(|_| out.flush())
        };
        let mut failed = Vec::new();
        if let Some(e) = self.json_file {
            if let Err(why) = e.write(|w| r.write_json(w)) {
                failed.push(why);
            }
        }
        if let Some(e) = self.csv_file {
            let csv = |w: &mut dyn Write| {
                r.write_csv(w).unwrap_or_else(|| {
                    Err(std::io::Error::other("this command has no CSV summary"))
                })
            };
            if let Err(why) = e.write(csv) {
                failed.push(why);
            }
        }
        keep(r, self.quiet || self.json);
        if !failed.is_empty() {
            return Err(
                Failure::Output(format!("writing results failed: {}", failed.join("; "))).into(),
            );
        }
        match printed {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
            other => other.context("writing the result to stdout"),
        }
    }
}
