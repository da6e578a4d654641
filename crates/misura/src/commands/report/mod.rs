//! `misura report RUN|FILE.json`: a result as a self-contained HTML page with
//! plots, and the plots alone as SVG or PNG files.

use crate::shared::exit::Failure;
use anyhow::{Context, Result};
use misura_report::html;
use misura_report::series::LatencySeries;
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
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

/// The result to report and a name for default file names.
fn load(input: &str) -> Result<(Value, String)> {
    let path = Path::new(input);
    if !path.exists() {
        if let Ok(id) = input.parse::<i64>() {
            return Ok((crate::shared::store::load_run(id)?, format!("run-{id}")));
        }
        return Err(Failure::Usage(format!(
            "{input}: no such file, and not a run id (see misura history)"
        ))
        .into());
    }
    let text = crate::shared::files::read_string_bounded(path, crate::shared::files::RESULT_MAX)
        .with_context(|| format!("reading {input}"))?;
    let v: Value = serde_json::from_str(&text)
        .map_err(|e| Failure::Profile(format!("{input} is not a JSON result: {e}")))?;
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("result")
        .to_string();
    Ok((v, stem))
}

fn check_format(v: &Value) -> Result<()> {
    let Some(format) = v
        .get("format")
        .and_then(Value::as_str)
        .filter(|f| f.starts_with("misura."))
    else {
        return Err(Failure::Profile(
            "this JSON is not a misura result (it has no \"format\": \"misura.…\" field)".into(),
        )
        .into());
    };
    let version = v.get("format_version").and_then(Value::as_u64).unwrap_or(0);
    if version > misura_report::FORMAT_VERSION as u64 {
        return Err(Failure::Profile(format!(
            "this result was written by a newer misura (format {format} version {version}, this build reads up to {}): upgrade to report it",
            misura_report::FORMAT_VERSION
        ))
        .into());
    }
    Ok(())
}

/// Write a page or a figure whole: a failure leaves no half file, a
/// regular file is replaced atomically, a device or a link is written in
/// place and never replaced.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    crate::shared::outfile::replace(path, |w| w.write_all(bytes))
        .map_err(|e| Failure::Output(format!("cannot write {}: {e}", path.display())).into())
}

fn make_dir(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir)
        .map_err(|e| Failure::Output(format!("cannot create {}: {e}", dir.display())).into())
}

fn which(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join(name))
            .find(|f| f.is_file())
    })
}

const NO_CONVERTER: &str = "--png needs an SVG converter: install rsvg-convert (librsvg2-bin), chromium or imagemagick, or use --svg";

/// Whether [`svg_to_png`] finds a converter.
fn has_png_converter() -> bool {
    [
        "rsvg-convert",
        "chromium",
        "chromium-browser",
        "google-chrome",
        "convert",
    ]
    .iter()
    .any(|c| which(c).is_some())
}

/// SVG to PNG with the first converter found: rsvg-convert, Chromium,
/// ImageMagick. misura does not rasterise itself.
fn svg_to_png(svg: &Path, png: &Path, w: f64, h: f64) -> Result<()> {
    let status = if let Some(rsvg) = which("rsvg-convert") {
        Command::new(rsvg)
            .args(["-z", "2", "-o"])
            .arg(png)
            .arg(svg)
            .output()
    } else if let Some(chromium) = which("chromium")
        .or_else(|| which("chromium-browser"))
        .or_else(|| which("google-chrome"))
    {
        let profile =
            std::env::temp_dir().join(format!("misura-report-chromium-{}", std::process::id()));
        let out = Command::new(chromium)
            .args(misura_report::html::CHROMIUM_FLAGS)
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg(format!("--screenshot={}", png.display()))
            .arg(format!(
                "--window-size={},{}",
                w.ceil() as u32,
                h.ceil() as u32
            ))
            .arg(format!("file://{}", svg.canonicalize()?.display()))
            .output();
        let _ = std::fs::remove_dir_all(&profile);
        out
    } else if let Some(convert) = which("convert") {
        Command::new(convert)
            .args(["-density", "144"])
            .arg(svg)
            .arg(png)
            .output()
    } else {
        return Err(Failure::Usage(NO_CONVERTER.into()).into());
    }
    .with_context(|| format!("converting {} to PNG", svg.display()))?;
    if !status.status.success() || !png.exists() {
        return Err(Failure::Output(format!(
            "converting {} to PNG failed: {}",
            svg.display(),
            String::from_utf8_lossy(&status.stderr).trim()
        ))
        .into());
    }
    Ok(())
}

/// The latency-over-time series: from --frames, or the frames file the
/// run names when it is still there.
fn frames_series(args: &ReportArgs, v: &Value) -> Result<Option<LatencySeries>> {
    let frames = args.frames.clone().or_else(|| {
        v.get("frames_file")
            .and_then(Value::as_str)
            .map(PathBuf::from)
            .filter(|p| p.is_file())
    });
    let Some(p) = frames else {
        return Ok(None);
    };
    let f = std::fs::File::open(&p)
        .map_err(|e| Failure::Usage(format!("cannot open the frames CSV {}: {e}", p.display())))?;
    let s = LatencySeries::read(&mut std::io::BufReader::new(f))
        .map_err(|e| Failure::Usage(format!("{}: {e}", p.display())))?;
    Ok(Some(s))
}

/// The page to `path` ("-": standard output); what was written, if a file.
fn write_html(v: &Value, figs: &[html::Figure], path: &Path) -> Result<Option<String>> {
    let mut page = Vec::new();
    html::write_page(v, figs, &mut page)?;
    if path.as_os_str() == "-" {
        std::io::stdout().lock().write_all(&page)?;
        return Ok(None);
    }
    write_atomically(path, &page)?;
    Ok(Some(format!(
        "wrote {} ({} plots, {} bytes)",
        path.display(),
        figs.len(),
        page.len()
    )))
}

fn write_svgs(figs: &[html::Figure], dir: &Path) -> Result<()> {
    make_dir(dir)?;
    for fig in figs {
        let mut svg = Vec::new();
        fig.plot.write(&mut svg, true)?;
        write_atomically(&dir.join(format!("{}.svg", fig.plot.name)), &svg)?;
    }
    Ok(())
}

/// Each plot as PNG through a temporary SVG; a signal stops between plots.
fn write_pngs(figs: &[html::Figure], dir: &Path, stop: &AtomicUsize) -> Result<()> {
    make_dir(dir)?;
    let tmp = std::env::temp_dir().join(format!("misura-report-svg-{}", std::process::id()));
    make_dir(&tmp)?;
    let result = (|| -> Result<()> {
        for fig in figs {
            if stop.load(Ordering::Relaxed) != 0 {
                break;
            }
            let svg = tmp.join(format!("{}.svg", fig.plot.name));
            let mut bytes = Vec::new();
            fig.plot.write(&mut bytes, true)?;
            std::fs::write(&svg, bytes)?;
            svg_to_png(
                &svg,
                &dir.join(format!("{}.png", fig.plot.name)),
                fig.plot.width,
                fig.plot.height,
            )?;
        }
        Ok(())
    })();
    let _ = std::fs::remove_dir_all(&tmp);
    result
}

/// Returns the process exit code.
/// Runs one report page may draw against load.
const MAX_VS_LOAD_RUNS: usize = 1000;

/// The --vs-load page: a small result of its own (the runs it drew) and the
/// plots.
fn vs_load(inputs: &[String]) -> Result<(Value, String, Vec<html::Figure>)> {
    if inputs.len() > MAX_VS_LOAD_RUNS {
        return Err(Failure::Usage(format!(
            "--vs-load draws at most {MAX_VS_LOAD_RUNS} runs; {} given",
            inputs.len()
        ))
        .into());
    }
    let mut points = Vec::new();
    for input in inputs {
        let (v, name) = load(input)?;
        check_format(&v)?;
        points.push(misura_report::vs_load::point(&name, &v).map_err(Failure::Usage)?);
    }
    let page = serde_json::json!({
        "format": "misura.vs-load",
        "started_at": crate::shared::meta::now_rfc3339(),
        "warnings": [],
        "config": {
            "runs": points.iter().map(|p| format!(
                "{}: {:.1} % busy, {} busy thread(s)",
                p.name, p.busy * 100.0, p.busy_threads
            )).collect::<Vec<_>>(),
        },
    });
    Ok((
        page,
        "vs-load".into(),
        misura_report::vs_load::figures(&points),
    ))
}

pub fn run(args: &ReportArgs, stop: &Arc<AtomicUsize>) -> Result<i32> {
    let (v, name, figs) = if args.vs_load {
        vs_load(&args.inputs)?
    } else {
        let [input] = &args.inputs[..] else {
            return Err(Failure::Usage(format!(
                "give one RUN or FILE.json ({} given); several only with --vs-load",
                args.inputs.len()
            ))
            .into());
        };
        let (v, name) = load(input)?;
        check_format(&v)?;
        let series = frames_series(args, &v)?;
        let figs = html::figures(&v, series.as_ref());
        (v, name, figs)
    };
    let say = |m: String| {
        if !args.quiet {
            eprintln!("{m}");
        }
    };
    let html_out = match (&args.html, &args.svg, &args.png) {
        (None, None, None) => Some(PathBuf::from(format!("misura-report-{name}.html"))),
        (h, _, _) => h.clone(),
    };
    // No converter: refused before anything is written.
    if args.png.is_some() && !figs.is_empty() && !has_png_converter() {
        return Err(Failure::Usage(NO_CONVERTER.into()).into());
    }
    // What was written, for the error when a later output fails.
    let mut written = Vec::new();
    if let Some(path) = html_out {
        if let Some(m) = write_html(&v, &figs, &path)? {
            say(m);
            written.push(path.display().to_string());
        }
    }
    if let Some(dir) = &args.svg {
        write_svgs(&figs, dir)?;
        say(format!(
            "wrote {} SVG plots to {}",
            figs.len(),
            dir.display()
        ));
        written.push(format!("{} SVG plots in {}", figs.len(), dir.display()));
    }
    if let Some(dir) = &args.png {
        write_pngs(&figs, dir, stop).map_err(|e| {
            let kept = if written.is_empty() {
                "nothing else was written".to_string()
            } else {
                format!("already written: {}", written.join(", "))
            };
            e.context(format!(
                "writing the PNG plots to {} ({kept})",
                dir.display()
            ))
        })?;
        say(format!(
            "wrote {} PNG plots to {}",
            figs.len(),
            dir.display()
        ));
    }
    if figs.is_empty() {
        say(format!(
            "no plots for a {} result: the page has its tables and JSON",
            v.get("format").and_then(Value::as_str).unwrap_or("?")
        ));
    }
    Ok(crate::shared::exit::OK)
}
