//! The figures of a frame-engine result (`misura rfc2544`) for `misura
//! report`, drawn as RFC 2544 reports show them: throughput, latency and
//! back-to-back frames against the frame size, and the frame loss rate
//! against the offered load, one line per size.
//!
//! Like the rest of the page this reads the result as JSON, only the fields
//! it draws: a test that was not run (null) leaves its figure out, a size
//! without a figure leaves its point out, and nothing here panics on a
//! result it does not expect. Every caption says where its numbers come
//! from (the search's full-length trials, kernel stamps or user windows)
//! and names the sizes where the tester, not the SUT, set the limit.

use crate::figure::{f, ns_words, push, s, time_unit, Figure};
use crate::svg::{num, Mark, Plot, Scale};
use serde_json::Value;

/// One frame size of the result, with what every figure needs.
struct Size<'a> {
    v: &'a Value,
    /// "64" … "1518", or "imix".
    label: String,
    /// Where the size sits on a frame-size axis: its frame, or the mean
    /// frame of a mix.
    x: f64,
    /// The link's maximum frame rate for this size.
    line_fps: f64,
}

impl Size<'_> {
    fn get(&self, key: &str) -> Option<&Value> {
        self.v.get(key).filter(|x| !x.is_null())
    }
}

fn sizes(v: &Value) -> Vec<Size<'_>> {
    let Some(all) = v.get("sizes").and_then(Value::as_array) else {
        return Vec::new();
    };
    all.iter()
        .filter_map(|x| {
            let frames: Vec<f64> = x
                .get("frame_bytes")?
                .as_array()?
                .iter()
                .filter_map(Value::as_f64)
                .collect();
            if frames.is_empty() {
                return None;
            }
            let mean = frames.iter().sum::<f64>() / frames.len() as f64;
            Some(Size {
                v: x,
                label: s(x, "/label").map_or_else(|| num(mean), str::to_string),
                x: mean,
                line_fps: f(x, "/line_rate_fps").unwrap_or(f64::NAN),
            })
        })
        .collect()
}

/// "208.5 k" frames/s in words.
fn rate(v: f64) -> String {
    if v >= 1e6 {
        format!("{} M", num(v / 1e6))
    } else if v >= 1e3 {
        format!("{} k", num(v / 1e3))
    } else {
        num(v)
    }
}

/// "1 G" bit/s in words.
fn bits(v: f64) -> String {
    if v >= 1e9 {
        format!("{} G", num(v / 1e9))
    } else {
        rate(v)
    }
}

/// The highest y of the plot's lines.
fn peak(p: &Plot) -> f64 {
    p.marks
        .iter()
        .flat_map(|(m, _)| match m {
            Mark::Line { points, .. } => points.iter().map(|q| q.1).collect(),
            _ => Vec::new(),
        })
        .fold(0.0f64, f64::max)
}

/// A linear y axis from 0 with room above the data for the legend, which
/// the plot draws in its top right corner.
fn room_for_legend(p: &mut Plot) {
    let top = peak(p);
    let entries = p.marks.iter().filter(|(_, l)| !l.is_empty()).count();
    if top > 0.0 {
        p.y_range = Some((0.0, top * (1.05 + 0.08 * entries.min(8) as f64)));
    }
}

fn percent(share: f64) -> String {
    let p = 100.0 * share;
    if p != 0.0 && p.abs() < 0.1 {
        format!("{p:.3} %")
    } else {
        format!("{} %", num(p))
    }
}

/// "64 B" for a size, or "imix" for a mix.
fn size_words(z: &Size) -> String {
    if z.label.parse::<f64>().is_ok() {
        format!("{} B", z.label)
    } else {
        z.label.clone()
    }
}

/// A plot over the frame size: log x when the sizes span a decade-ish, a
/// note naming a mix drawn at its mean frame.
fn size_plot(name: &str, title: &str, y_label: &str, all: &[Size]) -> Plot {
    let mut p = Plot::new(name, title, "frame size (bytes, FCS included)", y_label);
    let (lo, hi) = all.iter().fold((f64::INFINITY, 0.0f64), |(l, h), z| {
        (l.min(z.x), h.max(z.x))
    });
    if lo > 0.0 && hi / lo >= 4.0 {
        p.x_scale = Scale::Log;
    }
    let mixes: Vec<String> = all
        .iter()
        .filter(|z| z.label.parse::<f64>().is_err())
        .map(|z| format!("{} drawn at its mean frame, {} B", z.label, num(z.x)))
        .collect();
    if !mixes.is_empty() {
        p.note = Some(mixes.join("; "));
    }
    p
}

/// A line through `pts` with its points, as in the sweep figures; nothing
/// when there are no points.
fn curve(p: &mut Plot, pts: &[(f64, f64)], series: usize, dashed: bool, legend: &str) -> bool {
    if pts.is_empty() {
        return false;
    }
    p.mark(
        Mark::Line {
            points: pts.to_vec(),
            series,
            dashed,
            step: false,
        },
        legend,
    );
    p.mark(
        Mark::Points {
            points: pts.iter().map(|q| (q.0, q.1, 0.0)).collect(),
            series,
        },
        "",
    );
    true
}

/// "64 B (reached 914.2 k frames/s)": the sizes where a trial of `trials`
/// was limited by the tester itself (its `tester_limit` is set), with the
/// highest rate such a trial reached.
fn tester_limited(run: &[&Size], trials: impl Fn(&Size) -> Vec<Value>) -> Vec<String> {
    run.iter()
        .filter_map(|z| {
            let limited: Vec<f64> = trials(z)
                .iter()
                .filter(|t| t.get("tester_limit").is_some_and(|l| !l.is_null()))
                .map(|t| f(t, "/achieved_fps").unwrap_or(0.0))
                .collect();
            if limited.is_empty() {
                return None;
            }
            let max = limited.iter().cloned().fold(0.0, f64::max);
            Some(if max > 0.0 {
                format!("{} (reached {} frames/s)", size_words(z), rate(max))
            } else {
                size_words(z)
            })
        })
        .collect()
}

fn rows(z: &Size, ptr: &str) -> Vec<Value> {
    z.v.pointer(ptr)
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

fn tester_sentence(which: &[String], what: &str) -> String {
    if which.is_empty() {
        String::new()
    } else {
        format!(
            " The tester itself limited {what} at {}: rates above what it reached are its limit, not the SUT's.",
            which.join(", ")
        )
    }
}

/// Figures (a) and (a'): NDR and PDR against the frame size, in frames/s
/// with the line rate, and as a share of the line rate.
fn throughput(v: &Value, all: &[Size], out: &mut Vec<Figure>) {
    let run = run_sizes(all, "throughput");
    if run.is_empty() {
        return;
    }
    let bound = |z: &Size, k: &str| -> Option<(f64, f64, f64)> {
        let b = z.get("throughput")?.get(k)?;
        if b.get("found").and_then(Value::as_bool) != Some(true) {
            return None;
        }
        Some((
            f(b, "/lower_fps")?,
            f(b, "/lower_load")?,
            f(b, "/lower_bps")?,
        ))
    };
    let pdr_ratio = run
        .iter()
        .find_map(|z| f(z.v, "/throughput/pdr_ratio"))
        .or_else(|| f(v, "/config/pdr_ratio"));
    let pdr_legend = pdr_ratio.map_or("PDR".into(), |r| format!("PDR (loss ≤ {})", percent(r)));
    let mut fps = size_plot(
        "rfc2544-throughput",
        "Throughput (RFC 2544 §26.1) against frame size",
        "frames per second",
        all,
    );
    fps.y_scale = Scale::Log;
    let mut load = size_plot(
        "rfc2544-throughput-load",
        "Throughput as a share of the line rate",
        "% of the line rate",
        all,
    );
    let mut any = false;
    let mut missing = Vec::new();
    for (i, (k, legend)) in [("ndr", "NDR (no loss)".to_string()), ("pdr", pdr_legend)]
        .iter()
        .enumerate()
    {
        let pts: Vec<(f64, f64, f64)> = run
            .iter()
            .filter_map(|z| {
                let b = bound(z, k);
                if b.is_none() {
                    missing.push(format!("{} {}", k.to_uppercase(), size_words(z)));
                }
                b.map(|(r, l, _)| (z.x, r, 100.0 * l))
            })
            .collect();
        let by_rate: Vec<(f64, f64)> = pts.iter().map(|p| (p.0, p.1)).collect();
        let by_load: Vec<(f64, f64)> = pts.iter().map(|p| (p.0, p.2)).collect();
        any |= curve(&mut fps, &by_rate, i, false, legend);
        curve(&mut load, &by_load, i, false, legend);
    }
    if !any {
        // No size found a passing rate: the figure would be empty, the
        // tables below still list every trial.
        return;
    }
    let line: Vec<(f64, f64)> = all
        .iter()
        .filter(|z| z.line_fps.is_finite() && z.line_fps > 0.0)
        .map(|z| (z.x, z.line_fps))
        .collect();
    curve(&mut fps, &line, 6, true, "line rate");
    let tester: Vec<(f64, f64)> = all
        .iter()
        .filter_map(|z| Some((z.x, f(z.v, "/tester_max_fps")?)))
        .collect();
    curve(&mut fps, &tester, 4, true, "tester's highest rate");
    room_for_legend(&mut load);
    let bps: Vec<String> = run
        .iter()
        .filter_map(|z| {
            let (_, _, b) = bound(z, "ndr")?;
            Some(format!("{} {}b/s", size_words(z), bits(b)))
        })
        .collect();
    if !bps.is_empty() {
        load.note = Some(format!(
            "NDR in bits of frames (FCS included): {}",
            bps.join(", ")
        ));
    }
    let link = f(v, "/config/link_rate_bps").map_or("the link".into(), |b| {
        format!(
            "a {}b/s link ({})",
            bits(b),
            s(v, "/config/link_speed_source").unwrap_or("?")
        )
    });
    let trial = f(v, "/config/trial_s").map_or(String::new(), |t| format!(" of {} s", num(t)));
    let res = f(v, "/config/resolution").map_or(String::new(), |r| {
        format!(", to a resolution of {}", percent(r))
    });
    let limited = tester_sentence(
        &tester_limited(&run, |z| rows(z, "/throughput/trials")),
        "the search",
    );
    let missing = if missing.is_empty() {
        String::new()
    } else {
        format!(" Not found (no trial passed): {}.", missing.join(", "))
    };
    push(
        out,
        Some(fps),
        &format!(
            "RFC 2544 §26.1 throughput per frame size: the no-drop rate (NDR) and the partial drop rate (PDR), the highest rates that passed the search's full-length trials{trial}{res}, against the line rate of {link} (dashed).{limited}{missing}"
        ),
    );
    push(
        out,
        Some(load),
        &format!("The same NDR and PDR as a share of each size's line rate (preamble and inter-frame gap counted): a device that forwards at the line rate reaches 100 %.{limited}"),
    );
}

/// The sizes that ran `test` (its entry is not null), in order.
fn run_sizes<'b, 'a>(all: &'b [Size<'a>], test: &str) -> Vec<&'b Size<'a>> {
    all.iter().filter(|z| z.get(test).is_some()).collect()
}

/// Figure (b): the frame loss rate against the offered load, one line per
/// size; tester-limited steps marked.
fn frame_loss(v: &Value, all: &[Size], out: &mut Vec<Figure>) {
    let run = run_sizes(all, "frame_loss");
    let mut p = Plot::new(
        "rfc2544-frame-loss",
        "Frame loss rate (RFC 2544 §26.3) against offered load",
        "offered load (% of the line rate)",
        "frame loss rate (%)",
    );
    let mut limited_pts = Vec::new();
    let mut any = false;
    for (i, z) in run.iter().enumerate() {
        if !(z.line_fps.is_finite() && z.line_fps > 0.0) {
            continue;
        }
        let mut pts = Vec::new();
        for t in rows(z, "/frame_loss") {
            let (Some(o), Some(l)) = (f(&t, "/offered_fps"), f(&t, "/loss_ratio")) else {
                continue;
            };
            let pt = (100.0 * o / z.line_fps, 100.0 * l);
            if t.get("tester_limit").is_some_and(|x| !x.is_null()) {
                limited_pts.push((pt.0, pt.1, 0.0));
            }
            pts.push(pt);
        }
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        any |= curve(&mut p, &pts, i % 6, false, &size_words(z));
    }
    if !any {
        return;
    }
    if !limited_pts.is_empty() {
        p.mark(
            Mark::Points {
                points: limited_pts,
                series: 6,
            },
            "step the tester limited",
        );
    }
    room_for_legend(&mut p);
    let trial = f(v, "/config/trial_s").map_or(String::new(), |t| format!("{} s ", num(t)));
    let limited = tester_sentence(
        &tester_limited(&run, |z| rows(z, "/frame_loss")),
        "the frame loss steps",
    );
    push(
        out,
        Some(p),
        &format!(
            "RFC 2544 §26.3 frame loss rate, (sent − received) / sent over {trial}trials from 100 % of the line rate down in 10 % steps until two steps lose nothing, one line per frame size. A tester-limited step (black point) sent less than it offered: its loss is counted on what it sent.{limited}"
        ),
    );
}

/// Figure (c): latency at the throughput rate against the frame size.
fn latency(all: &[Size], out: &mut Vec<Figure>) {
    let run = run_sizes(all, "latency");
    // What each line draws: the figure's pointer and its legend.
    let keys = [
        ("/latency/min_ns", "min"),
        ("/latency/median_ns", "median"),
        ("/latency/p999_ns", "p99.9"),
        ("/latency/msl/median_ns", "SUT latency Msl, median"),
    ];
    let lines: Vec<(&str, Vec<(f64, f64)>)> = keys
        .iter()
        .map(|&(ptr, legend)| {
            let pts = run
                .iter()
                .filter_map(|z| Some((z.x, f(z.v, ptr)?)))
                .collect();
            (legend, pts)
        })
        .collect();
    let ymax = lines
        .iter()
        .flat_map(|l| l.1.iter().map(|p| p.1.abs()))
        .fold(0.0, f64::max);
    let (d, unit) = time_unit(ymax);
    let mut p = size_plot(
        "rfc2544-latency",
        "Latency at the throughput rate (RFC 2544 §26.2)",
        &format!("latency ({unit})"),
        all,
    );
    let mut any = false;
    for (i, (legend, pts)) in lines.iter().enumerate() {
        let scaled: Vec<(f64, f64)> = pts.iter().map(|q| (q.0, q.1 / d)).collect();
        any |= curve(&mut p, &scaled, i, i == 3, legend);
    }
    if !any {
        return;
    }
    room_for_legend(&mut p);
    let mut sources: Vec<String> = Vec::new();
    let mut facts = Vec::new();
    for z in &run {
        let src = match s(z.v, "/latency/source") {
            Some("kernel") => "kernel TX and RX stamps",
            Some("user") => "the user windows (mean user latency Mul)",
            _ => "an unnamed source",
        };
        if !sources.iter().any(|x| x == src) {
            sources.push(src.to_string());
        }
        let mut fact = format!(
            "{} at {} frames/s, {} tagged frames",
            size_words(z),
            f(z.v, "/latency/rate_fps").map_or("?".into(), rate),
            z.v.pointer("/latency/tagged_frames")
                .and_then(Value::as_u64)
                .map_or("?".into(), |n| n.to_string())
        );
        if let Some(pdv) = f(z.v, "/latency/pdv_ns") {
            fact.push_str(&format!(", PDV {}", ns_words(pdv)));
        }
        if let Some(why) = s(z.v, "/latency/load/tester_limit") {
            fact.push_str(&format!(" (limited by the tester: {why})"));
        }
        facts.push(fact);
    }
    let few: Vec<String> = run
        .iter()
        .filter(|z| {
            z.v.pointer("/latency/tagged_frames")
                .and_then(Value::as_u64)
                .is_some_and(|n| n < 500)
        })
        .map(|z| size_words(z))
        .collect();
    let few = if few.is_empty() {
        String::new()
    } else {
        format!(
            " Fewer than the 500 tagged frames RFC 8219 asks for at {}.",
            few.join(", ")
        )
    };
    push(
        out,
        Some(p),
        &format!(
            "RFC 2544 §26.2 latency of the tagged frames of a trial at each size's throughput (NDR) rate, reported as RFC 8219 asks: minimum, median and 99.9th percentile, from {}; the SUT latency Msl (dashed) only with a calibration. {}.{few}",
            sources.join(" or "),
            facts.join("; ")
        ),
    );
}

/// Figure (d): back-to-back frames per size, the buffer times in the
/// caption.
fn back_to_back(v: &Value, all: &[Size], out: &mut Vec<Figure>) {
    let run = run_sizes(all, "back_to_back");
    let mut p = size_plot(
        "rfc2544-back-to-back",
        "Back-to-back frames (RFC 2544 §26.4, RFC 9004)",
        "frames in the longest loss-free burst",
        all,
    );
    p.y_scale = Scale::Log;
    let mut pts = Vec::new();
    let mut words = Vec::new();
    for z in &run {
        let b = &z.v["back_to_back"];
        let Some(mean) = f(b, "/mean_frames") else {
            continue;
        };
        let (lo, hi) = (
            f(b, "/min_frames").unwrap_or(mean),
            f(b, "/max_frames").unwrap_or(mean),
        );
        // The bar spans min … max around the mean (drawn symmetric).
        pts.push((z.x, mean, (mean - lo).max(hi - mean)));
        let mut w = format!(
            "{}: {} frames at {} frames/s over {} trial(s)",
            size_words(z),
            num(mean),
            f(b, "/burst_fps").map_or("?".into(), rate),
            b.get("trials").map_or("?".into(), Value::to_string)
        );
        if let Some(t) = f(b, "/implied_buffer_s") {
            w.push_str(&format!(", implied buffer time {}", ns_words(t * 1e9)));
        }
        if let (Some(c), Some(thr)) = (f(b, "/corrected_buffer_s"), f(b, "/throughput_fps")) {
            w.push_str(&format!(
                ", corrected {} (throughput {} frames/s)",
                ns_words(c * 1e9),
                rate(thr)
            ));
        }
        if let Some(why) = s(b, "/tester_limit") {
            w.push_str(&format!(" [tester: {why}]"));
        }
        words.push(w);
    }
    if pts.is_empty() {
        return;
    }
    p.mark(
        Mark::Line {
            points: pts.iter().map(|q| (q.0, q.1)).collect(),
            series: 0,
            dashed: false,
            step: false,
        },
        "mean of the trials",
    );
    p.mark(
        Mark::Points {
            points: pts,
            series: 0,
        },
        "bar: fewest … most",
    );
    let max_burst = f(v, "/config/b2b_max_burst_s").map_or(String::new(), |m| {
        format!(" (bursts up to {} long)", ns_words(m * 1e9))
    });
    push(
        out,
        Some(p),
        &format!(
            "RFC 2544 §26.4 back-to-back frames: the longest burst at the line rate{max_burst} the SUT forwarded without loss, per frame size. RFC 9004 §5.4 buffer time: the implied time is the mean burst over the burst rate, the corrected one removes what the SUT forwarded during the burst (× (1 − throughput / burst rate)). {}.",
            words.join("; ")
        ),
    );
}

/// The figures of a `misura.rfc2544` result: throughput (frames/s and
/// share of the line rate), frame loss rate, latency and back-to-back, each
/// left out when its test was not run.
pub fn rfc2544_figures(v: &Value, out: &mut Vec<Figure>) {
    let all = sizes(v);
    if all.is_empty() {
        return;
    }
    throughput(v, &all, out);
    frame_loss(v, &all, out);
    latency(&all, out);
    back_to_back(v, &all, out);
}
