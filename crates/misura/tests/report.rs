//! `misura report`: pages from files and from the store, refused inputs, and
//! the page as a real browser sees it (headless Chromium, so that test is
//! ignored by a plain `cargo test`): the plots are in the DOM and the page
//! asked the network for nothing.

#[macro_use]
mod common;

use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../report/tests/fixtures")
        .join(name)
}

fn tmp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("misura-report-it-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn report(args: &[&str]) -> std::process::Output {
    let mut a = vec!["--no-store", "report"];
    a.extend_from_slice(args);
    run(&a)
}

fn plot_names(html: &str) -> Vec<String> {
    html.match_indices("data-plot=\"")
        .map(|(i, m)| {
            let rest = &html[i + m.len()..];
            rest[..rest.find('"').unwrap()].to_string()
        })
        .collect()
}

#[test]
fn a_result_file_becomes_a_page_and_plot_files() {
    let d = tmp_dir("file");
    let page = d.join("page.html");
    let svg = d.join("svg");
    let o = report(&[
        fixture("oneway-sut.json").to_str().unwrap(),
        "--html",
        page.to_str().unwrap(),
        "--svg",
        svg.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = std::fs::read_to_string(&page).unwrap();
    let names = plot_names(&html);
    assert!(
        names.contains(&"sut-fit-user".to_string()) && names.contains(&"cdf".to_string()),
        "{names:?}"
    );
    for n in &names {
        let s = std::fs::read_to_string(svg.join(format!("{n}.svg"))).unwrap();
        assert!(s.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
    }
    // --html - writes the page to standard output.
    let o = report(&[
        fixture("clock-timer-plain.json").to_str().unwrap(),
        "--html",
        "-",
    ]);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains("data-plot=\"timer\""));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_stored_run_becomes_a_page_and_bad_inputs_are_refused_without_damage() {
    let d = tmp_dir("store");
    let db = d.join("results.sqlite");
    let db_s = db.to_str().unwrap();
    let o = run(&["--store", db_s, "clock", "sources", "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let runs = json_of(&run(&["--store", db_s, "history", "--json"]));
    let id = runs[0]["id"].as_i64().unwrap().to_string();
    let page = d.join("run.html");
    let o = run(&[
        "--store",
        db_s,
        "report",
        &id,
        "--html",
        page.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("misura clock-sources") && html.contains("Host fingerprint"));

    // An unknown run id: the store's code (6), naming it.
    let o = run(&[
        "--store",
        db_s,
        "report",
        "999",
        "--html",
        page.to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(6),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("999"));
    // A newer format version and a file that is not JSON: refused, the old
    // page left as it was.
    let mut newer: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("rtt-small.json")).unwrap()).unwrap();
    newer["format_version"] = 99.into();
    let newer_file = d.join("newer.json");
    std::fs::write(&newer_file, newer.to_string()).unwrap();
    let o = report(&[
        newer_file.to_str().unwrap(),
        "--html",
        page.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(7));
    assert!(String::from_utf8_lossy(&o.stderr).contains("newer misura"));
    let junk = d.join("junk.json");
    std::fs::write(&junk, "{ not json").unwrap();
    let o = report(&[junk.to_str().unwrap(), "--html", page.to_str().unwrap()]);
    assert_ne!(o.status.code(), Some(0));
    assert_eq!(std::fs::read_to_string(&page).unwrap(), html);
    let _ = std::fs::remove_dir_all(&d);
}

const CHROMIUM: &str = "/usr/bin/chromium";

/// Run headless Chromium on a file with a fresh profile; returns the
/// dumped DOM (or None with a screenshot) and the network log.
fn chromium(page: &Path, dir: &Path, screenshot: Option<&Path>) -> (String, Value) {
    let profile = dir.join(format!(
        "profile-{}",
        page.file_stem().unwrap().to_str().unwrap()
    ));
    let netlog = dir.join(format!(
        "netlog-{}.json",
        page.file_stem().unwrap().to_str().unwrap()
    ));
    let mut c = Command::new(CHROMIUM);
    c.args(misura_report::html::CHROMIUM_FLAGS)
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--log-net-log={}", netlog.display()))
        .arg("--net-log-capture-mode=Default");
    match screenshot {
        Some(png) => c
            .arg(format!("--screenshot={}", png.display()))
            .arg("--window-size=1200,2600"),
        None => c.arg("--dump-dom"),
    };
    let o = c
        .arg(format!("file://{}", page.canonicalize().unwrap().display()))
        .output()
        .expect("running chromium");
    assert!(
        o.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let log: Value = serde_json::from_str(&std::fs::read_to_string(&netlog).unwrap())
        .expect("chromium's net log");
    (String::from_utf8_lossy(&o.stdout).into_owned(), log)
}

/// URLs the page itself asked for. Chromium's own background requests
/// (update checks and the like) carry the initiator "not an origin"; a
/// load started by a file:// page has the page's (opaque) origin.
fn page_requests(log: &Value) -> Vec<String> {
    let start_job = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
        .as_i64()
        .expect("net log constants");
    log["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"].as_i64() == Some(start_job))
        .filter_map(|e| {
            let p = &e["params"];
            let url = p["url"].as_str()?;
            let initiator = p["initiator"].as_str().unwrap_or("");
            (initiator != "not an origin").then(|| format!("{url} (initiator {initiator})"))
        })
        .collect()
}

/// Elements in a DOM that point outside the page.
fn external_refs(dom: &str) -> Vec<String> {
    let lower = dom.to_lowercase();
    let mut bad = Vec::new();
    for attr in ["src=\"", "href=\"", "xlink:href=\"", "url(", "@import"] {
        for (i, _) in lower.match_indices(attr) {
            let rest = &lower[i + attr.len()..];
            let rest = rest.trim_start_matches(['"', '\'']);
            if !rest.starts_with('#') {
                bad.push(lower[i..(i + 60).min(lower.len())].to_string());
            }
        }
    }
    for tag in ["<script", "<link", "<img", "<iframe", "<object", "<embed"] {
        if lower.contains(tag) {
            bad.push(tag.to_string());
        }
    }
    bad
}

/// The page in Chromium: the same plots as the file, those in `want`
/// among them, each an SVG element of its stated size with data in it, no
/// reference outside the page and no request made. Returns the DOM.
fn browser_checks(page: &Path, d: &Path, want: &[&str]) -> String {
    let stem = page.file_stem().unwrap().to_str().unwrap().to_string();
    let written = std::fs::read_to_string(page).unwrap();
    let (dom, log) = chromium(page, d, None);
    // The browser built the same plots the file holds, as SVG elements.
    let in_dom = plot_names(&dom);
    assert_eq!(in_dom, plot_names(&written), "{stem}");
    for w in want {
        assert!(
            in_dom.iter().any(|n| n == w),
            "{stem}: plot {w} missing from the DOM: {in_dom:?}"
        );
    }
    assert_eq!(dom.matches("<svg").count(), in_dom.len(), "{stem}");
    // Sized: every plot states its width and height (the page lays them
    // out by it) and they are not degenerate.
    for (i, _) in dom.match_indices("<svg") {
        let tag = &dom[i..i + dom[i..].find('>').unwrap()];
        let attr = |k: &str| -> f64 {
            let at = tag
                .find(&format!(" {k}=\""))
                .unwrap_or_else(|| panic!("{stem}: {tag}"));
            let rest = &tag[at + k.len() + 3..];
            rest[..rest.find('"').unwrap()].parse().unwrap()
        };
        assert!(
            attr("width") >= 300.0 && attr("height") >= 200.0,
            "{stem}: {tag}"
        );
    }
    assert!(
        dom.matches("<path class=\"line\"").count() + dom.matches("<g class=\"bars\"").count()
            >= in_dom.len(),
        "{stem}: plots without data"
    );
    let refs = external_refs(&dom);
    assert!(
        refs.is_empty(),
        "{stem}: external references in the DOM: {refs:?}"
    );
    let reqs = page_requests(&log);
    assert!(
        reqs.iter().all(|u| u.starts_with("file://")),
        "{stem}: the page made requests: {reqs:?}"
    );
    dom
}

#[test]
#[ignore = "needs chromium (apt-get install chromium)"]
fn the_page_renders_in_a_browser_with_its_plots_and_loads_nothing() {
    require_file(CHROMIUM, "apt-get install chromium");
    let d = tmp_dir("browser");
    // The check itself: a page that loads an image from the network is caught.
    let control = d.join("control.html");
    std::fs::write(
        &control,
        "<!DOCTYPE html><html><body><img src=\"http://127.0.0.1:9/x.png\"><p>x</p></body></html>",
    )
    .unwrap();
    let (dom, log) = chromium(&control, &d, None);
    assert!(!external_refs(&dom).is_empty());
    assert!(
        page_requests(&log)
            .iter()
            .any(|u| u.contains("127.0.0.1:9")),
        "the net-log check misses a page's request: {:?}",
        page_requests(&log)
    );

    for (fixture_name, want) in [
        (
            "oneway-sut.json",
            &[
                "histogram-0",
                "percentiles-0",
                "percentiles",
                "cdf",
                "sut-fit-user",
                "sut-fit-kernel",
            ][..],
        ),
        (
            "calibrate-run.json",
            &["histogram-0", "cdf", "calibration-fit-user"][..],
        ),
        (
            "rtt-stampsuite.json",
            &[
                "histogram-0",
                "histogram-1",
                "percentiles-0",
                "percentiles-1",
                "percentiles",
                "cdf",
            ][..],
        ),
        (
            "clock-interference-compare.json",
            &["interference-0", "interference-1", "interference-all"][..],
        ),
        ("clock-timer-plain.json", &["timer"][..]),
    ] {
        let stem = fixture_name.trim_end_matches(".json");
        let page = d.join(format!("{stem}.html"));
        let o = report(&[
            fixture(fixture_name).to_str().unwrap(),
            "--html",
            page.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        browser_checks(&page, &d, want);
    }
    // A screenshot to look at: target/report-screenshots/oneway-sut.png.
    let shots = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/report-screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    let png = shots.join("oneway-sut.png");
    let _ = std::fs::remove_file(&png);
    chromium(&d.join("oneway-sut.html"), &d, Some(&png));
    let bytes = std::fs::read(&png).unwrap();
    assert!(
        bytes.starts_with(b"\x89PNG") && bytes.len() > 20_000,
        "screenshot too small: {} bytes",
        bytes.len()
    );
    eprintln!("screenshot: {}", png.canonicalize().unwrap().display());
    let _ = std::fs::remove_dir_all(&d);
}

/// Real rtt runs through a lab reflector into a scratch store: their page
/// draws the percentile distributions and FD histograms from the full HDR
/// histograms, and `misura compare --html` draws both runs on one axis;
/// both pages in Chromium as above, with a screenshot to look at.
#[test]
#[ignore = "needs root (a lab for real rtt runs) and chromium"]
fn rtt_runs_and_their_comparison_render_in_a_browser() {
    need_root!();
    require_file(CHROMIUM, "apt-get install chromium");
    let mut lab = Lab::up("rp", "c", "hosts");
    lab.reflector(&["--listen", "198.18.0.2", "--port", "8640"]);
    let d = tmp_dir("compare");
    let db = d.join("results.sqlite");
    let db = db.to_str().unwrap();
    for extra in [&[][..], &["--request", "64,1400"][..]] {
        let mut args = vec![
            "--store",
            db,
            "198.18.0.2:8640",
            "--count",
            "3000",
            "--period",
            "1ms",
        ];
        args.extend_from_slice(extra);
        let o = lab.rtt(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let runs = json_of(&run(&["--store", db, "history", "--json"]));
    let ids: Vec<String> = runs
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .map(|r| r["id"].to_string())
        .collect();
    assert_eq!(ids.len(), 2, "{runs}");

    let page = d.join("rtt-run.html");
    let o = run(&[
        "--store",
        db,
        "report",
        &ids[1],
        "--html",
        page.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let dom = browser_checks(
        &page,
        &d,
        &[
            "histogram-0",
            "percentiles-0",
            "percentiles-1",
            "percentiles",
            "cdf",
        ],
    );
    // Drawn from the full histograms, binned from the data, on a
    // percentile axis that stops at the data's resolution (1500 probes a
    // size: 99.93 %, so 99.9 % is the last tick).
    assert!(dom.contains("from the full HDR histogram"));
    assert!(dom.contains("Freedman–Diaconis on the central 99 %"));
    assert!(dom.contains(">99.9</text>") && !dom.contains(">99.99</text>"));
    assert!(dom.contains(">median</text>") && dom.contains(">p99</text>"));

    let cmp = d.join("compare.html");
    let mut args = vec!["--store", db, "compare"];
    args.extend(ids.iter().map(String::as_str));
    args.extend(["--html", cmp.to_str().unwrap()]);
    let o = run(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let dom = browser_checks(&cmp, &d, &["compare-percentiles", "compare-cdf"]);
    for id in &ids {
        assert!(dom.contains(&format!("run {id} (")), "run {id} missing");
    }
    assert!(dom.contains("baseline") && dom.contains("the spread"));
    assert!(dom.contains("95 % CI"));

    let shots = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/report-screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    for (p, name) in [(&page, "rtt-run.png"), (&cmp, "compare.png")] {
        let png = shots.join(name);
        let _ = std::fs::remove_file(&png);
        chromium(p, &d, Some(&png));
        let bytes = std::fs::read(&png).unwrap();
        assert!(bytes.starts_with(b"\x89PNG") && bytes.len() > 20_000);
        eprintln!("screenshot: {}", png.canonicalize().unwrap().display());
    }
    let _ = std::fs::remove_dir_all(&d);
}
