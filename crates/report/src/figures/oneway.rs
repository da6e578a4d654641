//! The figures of `oneway` (and calibration runs) and `rtt`: latency
//! against size, the distributions per size, and the fit.

use super::latency::{
    cdf_extent, cdf_plot, fd_histogram_plot, page_unit, percentile_plot, percentile_unit, Dist,
};
use super::plots::fit_plot;
use crate::figure::{f, push, s, size_label, Figure};
use serde_json::Value;

pub fn oneway_figures(v: &Value, out: &mut Vec<Figure>) {
    let calibrating =
        s(v, "/format") == Some("misura.calibration-run") || s(v, "/mode") == Some("calibrate");
    let sizes = v
        .get("per_size")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    // A calibration run's histograms are Mul; internal latency is Mul − C
    // and C is one number per size, so the buckets move by exactly C.
    let (q, kl, quantity, what) = if calibrating {
        ("Mil", "kernel − C", "internal latency", "Mil = Mul − C is the tester's internal latency, the wire time C removed; kernel − C the same from the kernel software stamps")
    } else {
        ("Mul", "kernel", "one-way latency", "Mul is the mean of the best- and worst-case user latency (Cena, Cibrario Bertolotti and Valenzano); kernel is the kernel software stamps' RX − TX")
    };
    let groups: Vec<(String, Vec<Dist>)> = sizes
        .iter()
        .map(|p| {
            let c = if calibrating {
                p.get("wire_time_ns").and_then(Value::as_f64).unwrap_or(0.0)
            } else {
                0.0
            };
            let lat = p.get("latency");
            let pick = |k: &str| lat.and_then(|l| l.get(k)).filter(|x| !x.is_null());
            // The quoted percentiles: Mil's own summary when there is one.
            let (user_summary, user_shift) = match pick("mil") {
                Some(m) if calibrating => (Some(m), 0.0),
                _ => (pick("mul"), c),
            };
            let (kernel_summary, kernel_shift) = match pick("kernel_internal") {
                Some(m) if calibrating => (Some(m), 0.0),
                _ => (pick("kernel"), c),
            };
            // The buckets move by C; the quoted percentiles are already
            // Mil's when the result has Mil's own summary.
            let mut d = Vec::new();
            d.extend(
                Dist::of(q, p, "hdr_mul", "histogram_mul", user_summary, c).map(|mut x| {
                    shift_marks(&mut x, user_shift - c);
                    x
                }),
            );
            d.extend(
                Dist::of(kl, p, "hdr_kernel", "histogram_kernel", kernel_summary, c).map(
                    |mut x| {
                        shift_marks(&mut x, kernel_shift - c);
                        x
                    },
                ),
            );
            (size_label(p), d)
        })
        .collect();
    latency_distribution_figures(out, &groups, q, quantity, what);
    for (k, what) in [("user", "user windows"), ("kernel", "kernel stamps")] {
        if let Some(line) = v
            .pointer(&format!("/internal_fit/{k}"))
            .filter(|l| !l.is_null())
        {
            push(
                out,
                fit_plot(&format!("calibration-fit-{k}"), &format!("Calibration Amil(P) = α + β·P ({what})"), line, "mean internal latency Amil", None),
                "The tester's internal latency per payload size and its least-squares line with the 95 % confidence band (Cena, Cibrario Bertolotti and Valenzano, Fig. 5).",
            );
        }
    }
    let byte_time = f(v, "/sut/byte_time_ns").unwrap_or(0.0);
    for (k, what) in [("user", "user windows"), ("kernel", "kernel stamps")] {
        if let Some(line) = v.pointer(&format!("/sut/{k}")).filter(|l| !l.is_null()) {
            let verdict = s(v, &format!("/sut/{k}_verdict"))
                .unwrap_or("no verdict")
                .replace('_', "-");
            push(
                out,
                fit_plot(&format!("sut-fit-{k}"), &format!("SUT latency over frame length ({what}): {verdict}"), line, "mean SUT latency Msl", Some((byte_time, "slope 8/R: store-and-forward"))),
                "The SUT's latency per frame length with its fitted line; a store-and-forward device follows the dashed slope of one byte time per byte, a cut-through one stays flat (Cena, Cibrario Bertolotti and Valenzano, Fig. 6).",
            );
        }
    }
}

pub fn rtt_figures(v: &Value, out: &mut Vec<Figure>) {
    let sizes = v
        .get("per_size")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let groups: Vec<(String, Vec<Dist>)> = sizes
        .iter()
        .map(|p| {
            let summary = |k: &str| p.pointer(&format!("/latency/{k}")).filter(|x| !x.is_null());
            let mut d = Vec::new();
            for (label, k) in [
                ("network RTT", "network_rtt"),
                ("user RTT", "user_rtt"),
                ("kernel RTT", "kernel_rtt"),
            ] {
                // Kernel RTT has no display histogram: it is drawn only
                // from the full one.
                d.extend(Dist::of(
                    label,
                    p,
                    &format!("hdr_{k}"),
                    &format!("histogram_{k}"),
                    summary(k),
                    0.0,
                ));
            }
            (size_label(p), d)
        })
        .collect();
    latency_distribution_figures(out, &groups, "RTT", "round-trip time", "network RTT is the user RTT less the reflector's turnaround (STAMP timestamps T2, T3); user RTT is taken by misura's own clock reads around send and receive; kernel RTT from the kernel's software stamps");
}

/// The per-size histogram and percentile plot (every figure of the size
/// as a line), the percentile plot and CDF of the first figure across
/// sizes; each figure kind in one unit for the page.
fn latency_distribution_figures(
    out: &mut Vec<Figure>,
    groups: &[(String, Vec<Dist>)],
    q: &str,
    quantity: &str,
    what: &str,
) {
    let mains: Vec<&Dist> = groups.iter().filter_map(|g| g.1.first()).collect();
    let all: Vec<&Dist> = groups.iter().flat_map(|g| g.1.iter()).collect();
    let hist_unit = page_unit(
        mains
            .iter()
            .filter_map(|d| crate::distribution::freedman_diaconis(&d.bins))
            .map(|b| b.hi),
    );
    let pct_unit = percentile_unit(&all);
    let cdf_unit = page_unit(cdf_extent(&mains).map(|r| r.1));
    for (i, (label, d)) in groups.iter().enumerate() {
        let Some((main, rest)) = d.split_first() else {
            continue;
        };
        let others: Vec<&Dist> = rest.iter().take(1).collect();
        push(
            out,
            fd_histogram_plot(&format!("histogram-{i}"), &format!("{q} histogram, {label}"), quantity, main, &others, hist_unit),
            &format!("Distribution of the {} for {label} (bars) and of the {} (outline), bin width from the data. {what}.", main.label, others.first().map_or("—", |o| o.label.as_str())),
        );
        let refs: Vec<&Dist> = d.iter().collect();
        push(
            out,
            percentile_plot(&format!("percentiles-{i}"), &format!("{q} percentile distribution, {label}"), quantity, &refs, pct_unit),
            &format!("{quantity} against percentile for {label}, one line per figure (HdrHistogram style: 90 %, 99 %, 99.9 % … equally spaced); the rings mark the median, p90, p99 and p99.9 the text output quotes."),
        );
    }
    // The first figure of every size, named by its size.
    let per_size: Vec<Dist> = groups
        .iter()
        .filter_map(|(l, d)| {
            d.first().map(|x| Dist {
                label: l.clone(),
                ..x.clone()
            })
        })
        .collect();
    let refs: Vec<&Dist> = per_size.iter().collect();
    if mains.len() > 1 {
        push(
            out,
            percentile_plot("percentiles", &format!("{} percentile distribution per size", mains[0].label), quantity, &refs, pct_unit),
            &format!("The {} of every size against percentile, one line per size; rings mark each size's quoted percentiles.", mains[0].label),
        );
    }
    push(
        out,
        cdf_plot(
            "cdf",
            &format!(
                "{} CDF per size",
                mains.first().map_or(q, |m| m.label.as_str())
            ),
            quantity,
            &refs,
            cdf_unit,
        ),
        "Cumulative distribution, one line per size, from every recorded bucket.",
    );
}

fn shift_marks(d: &mut Dist, by: f64) {
    for m in &mut d.quoted {
        m.1 -= by;
    }
}
