//! The latency distribution figures of a page (issue 15): the percentile
//! distribution (value against percentile on a 1/(1 − p) axis, as
//! HdrHistogram draws it) with the quoted percentiles marked, histograms
//! binned by Freedman–Diaconis, and CDFs, all drawn from the full HDR
//! histograms a result stores (`hdr_*`), or, for results written before
//! those were stored, from the 10-per-decade display histogram, which each
//! figure then says. One time unit per figure kind across a page.

use crate::distribution::{
    cdf_points, freedman_diaconis, normalised, percentile_curve, Bin, Binning,
};
use crate::figure::{bins, ns_words, push, time_unit, Figure};
use crate::svg::{num, Mark, Plot, Scale};
use serde_json::Value;

/// One distribution to draw: its legend, its buckets, where they came from
/// and the percentiles a text output quotes for it `(p, value ns)`.
#[derive(Clone, Debug)]
pub struct Dist {
    pub label: String,
    pub bins: Vec<Bin>,
    /// True for the full HDR histogram, false for display buckets.
    pub full: bool,
    pub quoted: Vec<(f64, f64)>,
}

impl Dist {
    /// From a result's `hdr_KEY` (preferred) or `histogram_KEY` buckets and
    /// the summary `summary` whose percentiles are marked; `shift` moves
    /// every value (a calibration's constant C).
    pub fn of(
        label: &str,
        group: &Value,
        hdr_key: &str,
        display_key: &str,
        summary: Option<&Value>,
        shift: f64,
    ) -> Option<Dist> {
        let hdr = bins(group.get(hdr_key));
        let (bins, full) = if hdr.is_empty() {
            (bins(group.get(display_key)), false)
        } else {
            (hdr, true)
        };
        let quoted = quoted(summary, shift);
        if bins.is_empty() {
            // No histogram at all (an older result, or a kind that stores
            // only its summary): the summary's own quantiles, its exact
            // minimum at p = 0 among them, and nothing between them.
            let min = summary
                .and_then(|s| s.get("min_ns")?.as_f64())
                .map(|m| (0.0, m - shift));
            let quoted: Vec<(f64, f64)> = min.into_iter().chain(quoted).collect();
            return (!quoted.is_empty()).then(|| Dist {
                label: format!("{label} (stored quantiles only)"),
                bins: Vec::new(),
                full: false,
                quoted,
            });
        }
        Some(Dist {
            label: label.to_string(),
            bins: bins
                .into_iter()
                .map(|b| (b.0 - shift, b.1 - shift, b.2))
                .collect(),
            full,
            quoted,
        })
    }
}

/// The percentiles a summary quotes (median, p90, p99, p99.9) as
/// `(p, value − shift)`.
pub fn quoted(summary: Option<&Value>, shift: f64) -> Vec<(f64, f64)> {
    summary
        .map(|s| {
            [
                (0.5, "median_ns"),
                (0.9, "p90_ns"),
                (0.99, "p99_ns"),
                (0.999, "p999_ns"),
            ]
            .iter()
            // Only those within the data's resolution 1 − 1/n.
            .filter(|(p, _)| {
                let n = s
                    .get("count")
                    .and_then(Value::as_f64)
                    .unwrap_or(f64::INFINITY);
                *p <= 1.0 - 1.0 / n
            })
            .filter_map(|(p, k)| Some((*p, s.get(*k)?.as_f64()? - shift)))
            .collect()
        })
        .unwrap_or_default()
}

impl Dist {
    pub fn count(&self) -> f64 {
        self.bins.iter().map(|b| b.2).sum()
    }
}

/// Where a figure's data came from, for its note.
pub fn source_words(d: &[&Dist]) -> String {
    let n: usize = d.iter().map(|x| normalised(&x.bins).len()).sum();
    if d.iter().all(|x| x.bins.is_empty()) {
        "from the quantiles the result stores (min, median, p90, p99, p99.9: no histogram stored), nothing drawn between them".to_string()
    } else if d.iter().any(|x| x.bins.is_empty()) {
        format!("lines from the stored histograms ({n} buckets), points alone from the stored quantiles only")
    } else if d.iter().all(|x| x.full) {
        format!("from the full HDR histogram ({n} recorded buckets, ≤ 0.1 % wide)")
    } else {
        "from the result's 10-per-decade display histogram (written before misura stored the full HDR histogram): coarse".to_string()
    }
}

/// The unit for a figure kind across a page: the one that suits the
/// largest value any of its figures draws.
pub fn page_unit(max_ns: impl IntoIterator<Item = f64>) -> (f64, &'static str) {
    time_unit(max_ns.into_iter().fold(0.0, |a, b| a.max(b.abs())))
}

/// The unit of percentile plots of `dists` across a page. On a linear
/// latency axis the one the largest value needs; when the values span more
/// than a factor 100 (the plot is then logarithmic) the one of their
/// geometric middle, so a 1 µs median beside a 10 ms tail reads in µs
/// rather than as 0.001 ms.
pub fn percentile_unit(dists: &[&Dist]) -> (f64, &'static str) {
    let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
    for d in dists {
        for y in percentile_curve(&d.bins)
            .iter()
            .map(|p| p.1)
            .chain(d.quoted.iter().map(|q| q.1))
        {
            if y > 0.0 {
                lo = lo.min(y);
            }
            hi = hi.max(y.abs());
        }
    }
    if lo.is_finite() && hi / lo > 100.0 {
        time_unit((lo * hi).sqrt())
    } else {
        time_unit(hi)
    }
}

/// Latency against percentile, one line per distribution, the quoted
/// percentiles of each marked (those within the data's resolution).
pub fn percentile_plot(
    name: &str,
    title: &str,
    quantity: &str,
    dists: &[&Dist],
    (d, unit): (f64, &str),
) -> Option<Plot> {
    let mut p = Plot::new(
        name,
        title,
        "percentile (%), on a 1/(1 − p) axis",
        &format!("{quantity} ({unit})"),
    );
    p.x_scale = Scale::Percentile;
    p.legend_left = true;
    let mut last = 0.0f64;
    let mut n_min = f64::INFINITY;
    for (i, x) in dists.iter().enumerate() {
        let c = percentile_curve(&x.bins);
        if c.is_empty() {
            // Quantiles alone: points, no line between them.
            if !x.quoted.is_empty() {
                last = last.max(x.quoted.iter().map(|q| q.0).fold(0.5, f64::max));
                p.mark(
                    Mark::Tagged {
                        points: x.quoted.iter().map(|q| (q.0, q.1 / d, tag(q.0))).collect(),
                        series: i,
                    },
                    &x.label,
                );
            }
            continue;
        }
        let n = x.count();
        last = last.max(1.0 - 1.0 / n);
        n_min = n_min.min(n);
        p.mark(
            Mark::Line {
                points: c.iter().map(|q| (q.0, q.1 / d)).collect(),
                series: i,
                dashed: false,
                step: false,
            },
            &x.label,
        );
        let tags: Vec<(f64, f64, String)> = x
            .quoted
            .iter()
            .filter(|q| q.0 <= 1.0 - 1.0 / n)
            .map(|q| (q.0, q.1 / d, if i == 0 { tag(q.0) } else { String::new() }))
            .collect();
        if !tags.is_empty() {
            p.mark(
                Mark::Tagged {
                    points: tags,
                    series: i,
                },
                "",
            );
        }
    }
    if p.marks.is_empty() {
        return None;
    }
    p.x_range = Some((0.0, last));
    // A tail a hundred times the smallest value would flatten the rest of
    // the curve: then the latency axis is logarithmic.
    let (lo, hi) = p
        .marks
        .iter()
        .flat_map(|(m, _)| match m {
            Mark::Line { points, .. } => points.iter().map(|q| q.1).collect::<Vec<_>>(),
            Mark::Tagged { points, .. } => points.iter().map(|q| q.1).collect(),
            _ => Vec::new(),
        })
        .fold((f64::INFINITY, 0.0f64), |(l, h), y| (l.min(y), h.max(y)));
    p.y_scale = if lo > 0.0 && hi / lo > 100.0 {
        Scale::Log
    } else {
        Scale::Linear
    };
    p.note = Some(if n_min.is_finite() {
        format!(
            "{}; up to 1 − 1/n = {} % (n = {})",
            source_words(dists),
            percent_below(last),
            num(n_min)
        )
    } else {
        source_words(dists)
    });
    Some(p)
}

/// A percentile in percent with enough decimals to stay below 100 %
/// (1 − 1/3000 is "99.97", not "100").
pub fn percent_below(p: f64) -> String {
    let nines = crate::svg::percentile_position(p);
    let decimals = ((nines - 1e-9).ceil() as usize).saturating_sub(2).min(12);
    format!(
        "{:.*}",
        decimals,
        ((p * 100.0) * 10f64.powi(decimals as i32)).floor() / 10f64.powi(decimals as i32)
    )
}

fn tag(p: f64) -> String {
    if p == 0.0 {
        "min".into()
    } else if p == 0.5 {
        "median".into()
    } else {
        format!("p{}", crate::svg::percent_label(p))
    }
}

/// A histogram of `main` (bars) with bins chosen by Freedman–Diaconis on its
/// central 99 %, and the `others` as outlines on the same bins.
pub fn fd_histogram_plot(
    name: &str,
    title: &str,
    quantity: &str,
    main: &Dist,
    others: &[&Dist],
    (d, unit): (f64, &str),
) -> Option<Plot> {
    let b = freedman_diaconis(&main.bins)?;
    let mut p = Plot::new(
        name,
        title,
        &format!("{quantity} ({unit})"),
        "values per bin",
    );
    // Display buckets are log-spaced: a log axis shows them evenly.
    p.x_scale = if b.log || (!main.full && b.lo > 0.0) {
        Scale::Log
    } else {
        Scale::Linear
    };
    p.x_range = Some((b.lo / d, b.hi / d));
    let scaled = |x: Vec<Bin>| -> Vec<Bin> { x.iter().map(|q| (q.0 / d, q.1 / d, q.2)).collect() };
    p.mark(
        Mark::Bars {
            bins: scaled(binned(&b, main)),
            series: 0,
        },
        &main.label,
    );
    // Another figure is outlined only when most of it falls in the range
    // (the note says so otherwise).
    let drawn: Vec<&Dist> = others
        .iter()
        .copied()
        .filter(|o| inside(&b, o) * 2.0 >= o.count())
        .collect();
    for (i, o) in drawn.iter().enumerate() {
        // The outline across the bins' tops (a staircase), down to zero at
        // both ends.
        let r = scaled(binned(&b, o));
        let mut pts = Vec::with_capacity(2 * r.len() + 2);
        pts.extend(r.first().map(|x| (x.0, 0.0)));
        for x in &r {
            pts.extend([(x.0, x.2), (x.1, x.2)]);
        }
        pts.extend(r.last().map(|x| (x.1, 0.0)));
        p.mark(
            Mark::Line {
                points: pts,
                series: i + 1,
                dashed: false,
                step: false,
            },
            &o.label,
        );
    }
    p.note = Some(binning_words(&b, main, others));
    Some(p)
}

/// A distribution counted into the FD bins, or, when it has only the
/// coarse display buckets of an older result, those buckets as stored
/// within the range (re-binning them would put whole 26 %-wide buckets into
/// narrow bins and draw gaps that are not in the data).
fn binned(b: &Binning, d: &Dist) -> Vec<Bin> {
    if d.full {
        b.rebin(&d.bins)
    } else {
        normalised(&d.bins)
            .into_iter()
            .filter(|x| x.1 > b.lo && x.0 < b.hi)
            .collect()
    }
}

fn inside(b: &Binning, d: &Dist) -> f64 {
    binned(b, d).iter().map(|x| x.2).sum()
}

fn binning_words(b: &Binning, main: &Dist, others: &[&Dist]) -> String {
    let width = if b.log {
        format!("{} decades (×{})", num(b.width), num(10f64.powf(b.width)))
    } else {
        ns_words(b.width)
    };
    let how = if main.full {
        format!("bins {width}, Freedman–Diaconis on the central 99 %")
    } else {
        "the result's 10-per-decade display buckets as stored (written before misura stored the full HDR histogram), central 99 %".to_string()
    };
    let mut w = format!(
        "{how}; {} of {} {} outside ({} … {})",
        num(b.outside),
        num(b.total),
        main.label,
        ns_words(main.bins.first().map_or(0.0, |x| x.0)),
        ns_words(main.bins.last().map_or(0.0, |x| x.1)),
    );
    for o in others {
        let within = inside(b, o);
        let median = crate::distribution::quantile(&o.bins, 0.5).unwrap_or(f64::NAN);
        w.push_str(&if within * 2.0 >= o.count() {
            format!(
                "; {} of {} {} outside",
                num(o.count() - within),
                num(o.count()),
                o.label
            )
        } else {
            format!(
                "; {} not outlined, {} of {} lie outside (median {}: see the percentile plot)",
                o.label,
                num(o.count() - within),
                num(o.count()),
                ns_words(median)
            )
        });
    }
    w
}

/// The range a CDF shows: the union of each line's 0.5 … 99.5 % range.
pub fn cdf_extent(dists: &[&Dist]) -> Option<(f64, f64)> {
    let mut r: Option<(f64, f64)> = None;
    for x in dists {
        if let Some(b) = freedman_diaconis(&x.bins) {
            r = Some(r.map_or((b.lo, b.hi), |(l, h)| (l.min(b.lo), h.max(b.hi))));
        }
    }
    r
}

/// Cumulative distributions, one line per distribution, from every bucket.
pub fn cdf_plot(
    name: &str,
    title: &str,
    quantity: &str,
    dists: &[&Dist],
    (d, unit): (f64, &str),
) -> Option<Plot> {
    let (lo, hi) = cdf_extent(dists)?;
    let mut p = Plot::new(
        name,
        title,
        &format!("{quantity} ({unit})"),
        "share of values ≤ x",
    );
    p.x_scale = if lo > 0.0 && hi / lo > 30.0 {
        Scale::Log
    } else {
        Scale::Linear
    };
    p.x_range = Some((lo / d, hi / d));
    p.y_range = Some((0.0, 1.0));
    for (i, x) in dists.iter().enumerate() {
        p.mark(
            Mark::Line {
                points: cdf_points(&x.bins)
                    .into_iter()
                    .map(|q| (q.0 / d, q.1))
                    .collect(),
                series: i,
                dashed: false,
                step: false,
            },
            &x.label,
        );
    }
    p.note = Some(format!(
        "{}; x shows each line's 0.5 … 99.5 %",
        source_words(dists)
    ));
    Some(p)
}

/// A set of distributions of one run (phases, clients): the first as an FD
/// histogram (the second outlined), all of them as percentile
/// distributions and CDFs, one unit per figure kind.
pub fn set_figures(out: &mut Vec<Figure>, q: &str, quantity: &str, dists: &[Dist], what: &str) {
    let Some(main) = dists.first() else {
        return;
    };
    let refs: Vec<&Dist> = dists.iter().collect();
    let hist_unit = page_unit(freedman_diaconis(&main.bins).map(|b| b.hi));
    let others: Vec<&Dist> = dists.iter().skip(1).take(1).collect();
    push(
        out,
        fd_histogram_plot(
            "histogram",
            &format!("{q} histogram"),
            quantity,
            main,
            &others,
            hist_unit,
        ),
        &format!(
            "Distribution of the {} (bars), bin width from the data. {what}.",
            main.label
        ),
    );
    push(
        out,
        percentile_plot("percentiles", &format!("{q} percentile distribution"), quantity, &refs, percentile_unit(&refs)),
        "Against percentile, one line per figure (HdrHistogram style: 90 %, 99 %, 99.9 % … equally spaced); the rings mark the median, p90, p99 and p99.9 the text output quotes.",
    );
    push(
        out,
        cdf_plot(
            "cdf",
            &format!("{q} CDF"),
            quantity,
            &refs,
            page_unit(cdf_extent(&refs).map(|r| r.1)),
        ),
        "Cumulative distribution, one line per figure, from every recorded bucket.",
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exact(label: &str, values: &[f64]) -> Dist {
        Dist {
            label: label.into(),
            bins: values.iter().map(|v| (*v, v + 1.0, 1.0)).collect(),
            full: true,
            quoted: Vec::new(),
        }
    }

    #[test]
    fn one_percentile_unit_for_a_page_from_its_middle_when_the_spread_is_wide() {
        // 1 µs network RTT beside a user RTT with a 17 ms tail: µs, not ms.
        let net = exact("network", &[900.0, 1000.0, 1200.0, 5000.0, 6000.0]);
        let user = exact("user", &[20e3, 40e3, 60e3, 17e6]);
        assert_eq!(percentile_unit(&[&net, &user]).1, "µs");
        // Narrow data: the unit its largest value drawn needs (the curve
        // ends at 1 − 1/n, on the 5000 ns value).
        assert_eq!(percentile_unit(&[&net]).1, "µs");
        assert_eq!(
            percentile_unit(&[&exact("x", &[300.0, 400.0, 600.0])]).1,
            "ns"
        );
    }

    #[test]
    fn the_last_percentile_is_written_below_100() {
        assert_eq!(percent_below(1.0 - 1.0 / 3000.0), "99.96");
        assert_eq!(percent_below(0.999), "99.9");
        assert_eq!(percent_below(0.99), "99");
        assert_eq!(percent_below(0.5), "50");
    }
}
