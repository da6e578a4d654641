//! `misura report`'s method: a result loaded (a file, or a run the caller's
//! store hook finds) and its format checked, the latency series of its
//! frames log, the page and the plots written whole, and the plots turned
//! into PNG files by a converter run as a subprocess. The `--vs-load` page
//! too. Here, not in `misura-report`: report's exporters are pure (they open
//! no file and spawn nothing, docs/architecture.md's first rule), and this
//! crate is the one that reads results bounded (`files`) and writes the
//! files a user names (`outfile`). No flag is named here: a refusal is a
//! typed [`ReportError`] with its exit class, which the binary words.

use crate::exit::{BoxedError, Class, Classed};
use misura_report::html::{self, Figure};
use misura_report::series::{LatencySeries, SeriesError};
use serde_json::Value;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// What a report is asked: the inputs (run ids or result files) and where
/// its page and plots go.
#[derive(Debug, Clone, Default)]
pub struct ReportRequest {
    /// Run ids or result JSON files (several only for the load page).
    pub inputs: Vec<String>,
    /// Draw each run's latency against the CPU load it recorded.
    pub vs_load: bool,
    /// The page ("-": the caller's output); none of the three: the page to
    /// `misura-report-<name>.html`.
    pub html: Option<PathBuf>,
    /// Each plot as DIR/<plot>.svg.
    pub svg: Option<PathBuf>,
    /// Each plot as DIR/<plot>.png.
    pub png: Option<PathBuf>,
    /// The run's per-frame or per-probe CSV.
    pub frames: Option<PathBuf>,
}

/// Runs one load page may draw.
pub const MAX_VS_LOAD_RUNS: usize = 1000;

/// What was written, as each output is done.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Written {
    /// The page, to a file.
    Html {
        path: PathBuf,
        plots: usize,
        bytes: usize,
    },
    Svgs {
        dir: PathBuf,
        plots: usize,
    },
    Pngs {
        dir: PathBuf,
        plots: usize,
    },
    /// The result's kind has no plots (its format).
    NoPlots {
        format: String,
    },
}

/// Why a report was not made, or not whole.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// Several inputs without the load page.
    #[error("give one RUN or FILE.json ({given} given); several only for the load page")]
    OneInput { given: usize },
    /// More runs than a load page draws.
    #[error("a load page draws at most {max} runs; {given} given")]
    TooManyRuns { given: usize, max: usize },
    #[error("{input}: no such file, and not a run id (see misura history)")]
    NoSuchInput { input: String },
    /// A stored run the store hook could not give (its error whole).
    #[error(transparent)]
    Run(BoxedError),
    #[error("reading {input}")]
    Read {
        input: String,
        #[source]
        source: io::Error,
    },
    #[error("{input} is not a JSON result: {why}")]
    NotJson { input: String, why: String },
    #[error("this JSON is not a misura result (it has no \"format\": \"misura.…\" field)")]
    NotMisura,
    #[error("this result was written by a newer misura (format {format} version {version}, this build reads up to {reads}): upgrade to report it")]
    Newer {
        format: String,
        version: u64,
        reads: u32,
    },
    /// A run the load page cannot draw (why, with its name).
    #[error("{0}")]
    NotDrawable(String),
    #[error("cannot open the frames CSV {}: {why}", path.display())]
    FramesOpen { path: PathBuf, why: io::Error },
    #[error("{}: {why}", path.display())]
    Frames { path: PathBuf, why: SeriesError },
    /// No SVG converter on the PATH.
    #[error("PNG plots need an SVG converter: install rsvg-convert (librsvg2-bin), chromium or imagemagick")]
    NoConverter,
    #[error("cannot write {}: {why}", path.display())]
    CannotWrite { path: PathBuf, why: io::Error },
    #[error("cannot create {}: {why}", dir.display())]
    CannotCreate { dir: PathBuf, why: io::Error },
    #[error("converting {} to PNG", svg.display())]
    Convert {
        svg: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("converting {} to PNG failed: {stderr}", svg.display())]
    ConvertFailed { svg: PathBuf, stderr: String },
    /// The PNG plots failed after the outputs `written`.
    #[error("writing the PNG plots to {} ({})", dir.display(), kept(written))]
    Png {
        dir: PathBuf,
        written: Vec<String>,
        #[source]
        source: Box<ReportError>,
    },
    /// The host's, or the caller's output's.
    #[error(transparent)]
    Io(#[from] io::Error),
}

fn kept(written: &[String]) -> String {
    if written.is_empty() {
        "nothing else was written".to_string()
    } else {
        format!("already written: {}", written.join(", "))
    }
}

impl Classed for ReportError {
    /// An input that is not there, or asked wrongly, is a usage slip; a
    /// result that does not read a profile error (7), as a calibration
    /// profile's; an output that cannot be written an output error (6).
    fn class(&self) -> Option<Class> {
        use ReportError as E;
        match self {
            E::OneInput { .. }
            | E::TooManyRuns { .. }
            | E::NoSuchInput { .. }
            | E::NotDrawable(_)
            | E::FramesOpen { .. }
            | E::Frames { .. }
            | E::NoConverter => Some(Class::Usage),
            E::NotJson { .. } | E::NotMisura | E::Newer { .. } => Some(Class::Profile),
            E::CannotWrite { .. } | E::CannotCreate { .. } | E::ConvertFailed { .. } => {
                Some(Class::Output)
            }
            // Boxed, the chain walk would not know it as a ReportError.
            E::Png { source, .. } => source.class(),
            E::Run(_) | E::Read { .. } | E::Convert { .. } | E::Io(_) => None,
        }
    }

    fn carried(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ReportError::Run(e) => Some(&**e),
            _ => None,
        }
    }
}

/// A stored run's result by its id: the caller's store hook.
pub type Runs<'a> = &'a dyn Fn(i64) -> Result<Value, BoxedError>;

/// Makes the report `r` asks: the page (to `stdout` for "-"), the SVG and
/// the PNG plots, each output said to `written` once it is done. A signal
/// in `stop` ends the PNG conversions between plots.
pub fn make(
    r: &ReportRequest,
    runs: Runs<'_>,
    stdout: &mut dyn Write,
    stop: &AtomicUsize,
    written: &mut dyn FnMut(Written),
) -> Result<(), ReportError> {
    let (v, name, figs) = if r.vs_load {
        vs_load(&r.inputs, runs)?
    } else {
        let [input] = &r.inputs[..] else {
            return Err(ReportError::OneInput {
                given: r.inputs.len(),
            });
        };
        let (v, name) = load(input, runs)?;
        check_format(&v)?;
        let series = frames_series(r.frames.as_deref(), &v)?;
        let figs = html::figures(&v, series.as_ref());
        (v, name, figs)
    };
    let html_out = match (&r.html, &r.svg, &r.png) {
        (None, None, None) => Some(PathBuf::from(format!("misura-report-{name}.html"))),
        (h, _, _) => h.clone(),
    };
    // No converter: refused before anything is written.
    if r.png.is_some() && !figs.is_empty() && !has_png_converter() {
        return Err(ReportError::NoConverter);
    }
    // What was written, for the error when a later output fails.
    let mut done = Vec::new();
    if let Some(path) = html_out {
        if let Some(bytes) = write_html(&v, &figs, &path, stdout)? {
            written(Written::Html {
                path: path.clone(),
                plots: figs.len(),
                bytes,
            });
            done.push(path.display().to_string());
        }
    }
    if let Some(dir) = &r.svg {
        write_svgs(&figs, dir)?;
        written(Written::Svgs {
            dir: dir.clone(),
            plots: figs.len(),
        });
        done.push(format!("{} SVG plots in {}", figs.len(), dir.display()));
    }
    if let Some(dir) = &r.png {
        write_pngs(&figs, dir, stop).map_err(|e| ReportError::Png {
            dir: dir.clone(),
            written: done,
            source: Box::new(e),
        })?;
        written(Written::Pngs {
            dir: dir.clone(),
            plots: figs.len(),
        });
    }
    if figs.is_empty() {
        written(Written::NoPlots {
            format: v
                .get("format")
                .and_then(Value::as_str)
                .unwrap_or("?")
                .to_string(),
        });
    }
    Ok(())
}

/// The result to report and a name for default file names.
fn load(input: &str, runs: Runs<'_>) -> Result<(Value, String), ReportError> {
    let path = Path::new(input);
    if !path.exists() {
        if let Ok(id) = input.parse::<i64>() {
            return Ok((runs(id).map_err(ReportError::Run)?, format!("run-{id}")));
        }
        return Err(ReportError::NoSuchInput {
            input: input.into(),
        });
    }
    let text = crate::files::read_string_bounded(path, crate::files::RESULT_MAX).map_err(|e| {
        ReportError::Read {
            input: input.into(),
            source: e,
        }
    })?;
    let v: Value = serde_json::from_str(&text).map_err(|e| ReportError::NotJson {
        input: input.into(),
        why: e.to_string(),
    })?;
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("result")
        .to_string();
    Ok((v, stem))
}

/// A misura result, of a format version this build reads.
pub fn check_format(v: &Value) -> Result<(), ReportError> {
    let Some(format) = v
        .get("format")
        .and_then(Value::as_str)
        .filter(|f| f.starts_with("misura."))
    else {
        return Err(ReportError::NotMisura);
    };
    let version = v.get("format_version").and_then(Value::as_u64).unwrap_or(0);
    if version > misura_report::FORMAT_VERSION as u64 {
        return Err(ReportError::Newer {
            format: format.into(),
            version,
            reads: misura_report::FORMAT_VERSION,
        });
    }
    Ok(())
}

/// Write a page or a figure whole: a failure leaves no half file, a
/// regular file is replaced atomically, a device or a link is written in
/// place and never replaced.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), ReportError> {
    crate::outfile::replace(path, |w| w.write_all(bytes)).map_err(|why| ReportError::CannotWrite {
        path: path.into(),
        why,
    })
}

fn make_dir(dir: &Path) -> Result<(), ReportError> {
    std::fs::create_dir_all(dir).map_err(|why| ReportError::CannotCreate {
        dir: dir.into(),
        why,
    })
}

fn which(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join(name))
            .find(|f| f.is_file())
    })
}

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
fn svg_to_png(svg: &Path, png: &Path, w: f64, h: f64) -> Result<(), ReportError> {
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
            .args(html::CHROMIUM_FLAGS)
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
        return Err(ReportError::NoConverter);
    }
    .map_err(|source| ReportError::Convert {
        svg: svg.into(),
        source,
    })?;
    if !status.status.success() || !png.exists() {
        return Err(ReportError::ConvertFailed {
            svg: svg.into(),
            stderr: String::from_utf8_lossy(&status.stderr).trim().to_string(),
        });
    }
    Ok(())
}

/// The latency-over-time series: from `frames`, or the frames file the
/// run names when it is still there.
fn frames_series(frames: Option<&Path>, v: &Value) -> Result<Option<LatencySeries>, ReportError> {
    let frames = frames.map(Path::to_path_buf).or_else(|| {
        v.get("frames_file")
            .and_then(Value::as_str)
            .map(PathBuf::from)
            .filter(|p| p.is_file())
    });
    let Some(p) = frames else {
        return Ok(None);
    };
    let f = std::fs::File::open(&p).map_err(|why| ReportError::FramesOpen {
        path: p.clone(),
        why,
    })?;
    let s = LatencySeries::read(&mut io::BufReader::new(f))
        .map_err(|why| ReportError::Frames { path: p, why })?;
    Ok(Some(s))
}

/// The page to `path` ("-": `stdout`); its size, if written to a file.
fn write_html(
    v: &Value,
    figs: &[Figure],
    path: &Path,
    stdout: &mut dyn Write,
) -> Result<Option<usize>, ReportError> {
    let mut page = Vec::new();
    html::write_page(v, figs, &mut page)?;
    Ok(write_whole(path, &page, stdout)?.then_some(page.len()))
}

/// A page to `path` whole (this report's, or `misura compare`'s), or to
/// `stdout` for "-"; whether it went to a file.
pub fn write_whole(path: &Path, page: &[u8], stdout: &mut dyn Write) -> Result<bool, ReportError> {
    if path.as_os_str() == "-" {
        stdout.write_all(page)?;
        return Ok(false);
    }
    write_atomically(path, page)?;
    Ok(true)
}

fn write_svgs(figs: &[Figure], dir: &Path) -> Result<(), ReportError> {
    make_dir(dir)?;
    for fig in figs {
        let mut svg = Vec::new();
        fig.plot.write(&mut svg, true)?;
        write_atomically(&dir.join(format!("{}.svg", fig.plot.name)), &svg)?;
    }
    Ok(())
}

/// Each plot as PNG through a temporary SVG; a signal stops between plots.
fn write_pngs(figs: &[Figure], dir: &Path, stop: &AtomicUsize) -> Result<(), ReportError> {
    make_dir(dir)?;
    let tmp = std::env::temp_dir().join(format!("misura-report-svg-{}", std::process::id()));
    make_dir(&tmp)?;
    let result = (|| -> Result<(), ReportError> {
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

/// The load page: a small result of its own (the runs it drew) and the
/// plots.
fn vs_load(inputs: &[String], runs: Runs<'_>) -> Result<(Value, String, Vec<Figure>), ReportError> {
    if inputs.len() > MAX_VS_LOAD_RUNS {
        return Err(ReportError::TooManyRuns {
            given: inputs.len(),
            max: MAX_VS_LOAD_RUNS,
        });
    }
    let mut points = Vec::new();
    for input in inputs {
        let (v, name) = load(input, runs)?;
        check_format(&v)?;
        points.push(misura_report::vs_load::point(&name, &v).map_err(ReportError::NotDrawable)?);
    }
    let page = serde_json::json!({
        "format": "misura.vs-load",
        "started_at": crate::meta::now_rfc3339(),
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

#[cfg(test)]
mod tests;
