//! `misura report RUN|FILE.json`: a result as a self-contained HTML page with
//! plots, and the plots alone as SVG or PNG files. The method (loading,
//! the format check, the series, the files, the PNG converters) is
//! `misura_cli::report_page`; here are its flags, what was written said,
//! and the exit code (the refusals' sentences, with the flags, are
//! `shared/words.rs`'s).

use crate::shared::exit::Chain;
use anyhow::Result;
use misura_cli::exit::BoxedError;
use misura_cli::report_page::{make, ReportError, ReportRequest, Written};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

/// Long help for the subcommand (shown by `--help`).
pub const LONG_ABOUT: &str = "\
Turn a result into a page people can read: one self-contained HTML file with
SVG plots chosen by the kind of run, and the configuration, host fingerprint,
timestamp sources and warnings in words. The page loads nothing from anywhere:
no scripts, fonts or style sheets, so it opens offline and can be mailed.

Latency distributions are drawn from the full HDR histograms a result stores
(every recorded bucket, ≤ 0.1 % wide): a percentile distribution (latency
against percentile on a 1/(1 − p) axis, HdrHistogram style, up to the data's
resolution 1 − 1/n, the quoted median, p90, p99 and p99.9 ringed), a histogram
whose bin width comes from the data (Freedman–Diaconis on the central 99 %,
log bins when that spans more than a factor 30, what lies outside in the
note) and a CDF. Each figure kind has one time unit across the page. Results
from before the full histograms were stored use their display buckets, and
kinds that store only quantiles show those as points; each figure says which.

Plots by kind of result:
  oneway        per size: Mul histogram (kernel outline), percentile
                distribution (Mul and kernel); across sizes: percentile
                distribution and CDF; SUT latency over frame length with its
                fit and 95 % band
  calibrate     the same for internal latency Mil, the calibration line
                Amil(P) = α + β·P with its 95 % band
  rtt           per size: RTT histogram, percentile distribution (network,
                user and kernel RTT); across sizes: percentile distribution, CDF
  exchange / rr histogram, percentile distribution and CDF of the phases
                (t3, t3 kernel, t2, t1) or of each client's transactions
  load / rfc2544
                the pages' own figures, and the stored quantiles per phase or
                frame size on a percentile axis
  clock interference / clock timer
                step and wake-up latency histograms on log axes, the wake-up
                latency's percentile distribution
  sweep         throughput, transactions and latency against the parameter
  tcp / udp     throughput per interval
  others        the summary tables and the JSON
With --frames FILE.csv (the per-frame or per-probe CSV of the run) the page
also shows latency over time with a moving median and 99th percentile.

The input is a run id from the results store (see `misura history`) or a
result JSON file (--export-json). Without --html, --svg or --png the page is
written to misura-report-<run>.html in the current directory.

With --vs-load and several runs (rtt or oneway, e.g. taken with --cpu-load
0, 1, 2), the page draws their latency against the CPU load each recorded.

To compare runs on the same axes, see `misura compare RUN RUN… --html OUT`.

Examples:
  misura report 12 --html run12.html
  misura report 12 13 14 --vs-load --html rtt-vs-load.html
  misura report result.json --frames frames.csv --html result.html --svg plots/
  misura report result.json --png plots/      # needs rsvg-convert, chromium or ImageMagick";

#[derive(clap::Args, Debug, Clone)]
pub struct ReportArgs {
    /// A run id from the results store, or a result JSON file (several with
    /// --vs-load).
    #[arg(value_name = "RUN|FILE.json", required = true, num_args = 1..)]
    pub inputs: Vec<String>,
    /// Draw latency against the host CPU load each run recorded (rtt:
    /// network and user RTT; oneway: kernel and user one-way latency), one
    /// point per run: Fig. 6 of Li, Zhang, Xie and Yang (2006) from stored runs.
    #[arg(long)]
    pub vs_load: bool,
    /// Write the HTML page here ("-" for standard output).
    #[arg(long, value_name = "OUT.html")]
    pub html: Option<PathBuf>,
    /// Also write every plot as DIR/<plot>.svg.
    #[arg(long, value_name = "DIR")]
    pub svg: Option<PathBuf>,
    /// Also write every plot as DIR/<plot>.png.
    #[arg(long, value_name = "DIR")]
    pub png: Option<PathBuf>,
    /// The run's per-frame or per-probe CSV (--frames of oneway/calibrate/rtt),
    /// for the latency-over-time plot.
    #[arg(long, value_name = "FILE.csv")]
    pub frames: Option<PathBuf>,
    /// Print nothing but errors.
    #[arg(long, short)]
    pub quiet: bool,
}

/// The flags as the library's request.
fn request(a: &ReportArgs) -> ReportRequest {
    ReportRequest {
        inputs: a.inputs.clone(),
        vs_load: a.vs_load,
        html: a.html.clone(),
        svg: a.svg.clone(),
        png: a.png.clone(),
        frames: a.frames.clone(),
    }
}

/// A stored run, through the binary's store hook (its failure whole).
fn stored_run(id: i64) -> Result<Value, BoxedError> {
    crate::shared::store::load_run(id).map_err(|e| Box::new(Chain(e)) as BoxedError)
}

pub fn run(args: &ReportArgs, stop: &Arc<AtomicUsize>) -> Result<i32> {
    let say = |m: String| {
        if !args.quiet {
            eprintln!("{m}");
        }
    };
    let mut written = |w: Written| match w {
        Written::Html { path, plots, bytes } => say(format!(
            "wrote {} ({plots} plots, {bytes} bytes)",
            path.display()
        )),
        Written::Svgs { dir, plots } => {
            say(format!("wrote {plots} SVG plots to {}", dir.display()))
        }
        Written::Pngs { dir, plots } => {
            say(format!("wrote {plots} PNG plots to {}", dir.display()))
        }
        Written::NoPlots { format } => say(format!(
            "no plots for a {format} result: the page has its tables and JSON"
        )),
    };
    let stdout = std::io::stdout();
    match make(
        &request(args),
        &stored_run,
        &mut stdout.lock(),
        stop,
        &mut written,
    ) {
        Ok(()) => Ok(crate::shared::exit::OK),
        // The page's own output, so that a closed pipe ends quietly.
        Err(ReportError::Io(io)) => Err(io.into()),
        // Worded with the flags by shared/words.rs.
        Err(e) => Err(e.into()),
    }
}
