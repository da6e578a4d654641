//! A run's headline in `misura history`: the figure its result names at
//! the top level, as text (rates and times in their unit, verdicts as
//! words).

/// The headline figure a result names at its top level, as text.
pub(crate) fn headline(result: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(result).ok()?;
    for (key, unit) in [
        ("throughput_bps", "bit/s"),
        ("transactions_per_s", "transactions/s"),
    ] {
        if let Some(x) = v.get(key).and_then(|x| x.as_f64()) {
            return Some(if unit == "bit/s" {
                human_bps(x)
            } else {
                format!("{x:.0} {unit}")
            });
        }
    }
    if let Some(h) = service_headline(&v) {
        return Some(h);
    }
    // rfc2544: the first size's NDR, unless it is the tester's limit;
    // y1564: the verdict.
    if let Some(ndr) = v
        .pointer("/sizes/0/throughput/ndr/lower_fps")
        .and_then(|x| x.as_f64())
    {
        let label = v
            .pointer("/sizes/0/label")
            .and_then(|x| x.as_str())
            .unwrap_or("?");
        let t = |p: &str| v.pointer(&format!("/sizes/0/throughput/{p}"));
        // Older results say it only by the search's stop and no failed
        // trial above the NDR (its upper bound is then the line rate).
        let upper = t("ndr/upper_fps").and_then(|x| x.as_f64());
        let line = v.pointer("/sizes/0/line_rate_fps").and_then(|x| x.as_f64());
        let old_limited = t("stopped_by").and_then(|x| x.as_str()) == Some("tester_limit")
            && matches!((upper, line), (Some(u), Some(l)) if u >= l * (1.0 - 1e-9));
        let limited = t("ndr/tester_limited").and_then(|x| x.as_bool()) == Some(true);
        if limited || old_limited {
            return Some(format!("INCONCLUSIVE (tester limit) at {label} B"));
        }
        let more = v
            .get("inconclusive")
            .and_then(|x| x.as_array())
            .is_some_and(|a| !a.is_empty());
        return Some(format!(
            "NDR {ndr:.0} frames/s at {label} B{}",
            if more { ", partly INCONCLUSIVE" } else { "" }
        ));
    }
    if v.get("format").and_then(|f| f.as_str()) == Some("misura.y1564") {
        let pass = v.get("pass").and_then(|p| p.as_bool()).unwrap_or(false);
        let inconclusive = v.get("inconclusive").and_then(|p| p.as_bool()) == Some(true);
        return Some(
            match (pass, inconclusive) {
                (true, _) => "Y.1564 PASS",
                (false, true) => "Y.1564 INCONCLUSIVE (tester limit)",
                (false, false) => "Y.1564 FAIL",
            }
            .into(),
        );
    }
    let med = |p: &[&str]| {
        let mut cur = &v;
        for k in p {
            cur = match k.parse::<usize>() {
                Ok(i) => cur.get(i)?,
                Err(_) => cur.get(k)?,
            };
        }
        cur.as_i64()
    };
    for (path, what) in [
        (
            &["overall", "network_rtt", "median_ns"][..],
            "network RTT median",
        ),
        (&["overall", "mul", "median_ns"][..], "Mul median"),
        (&["latency", "median_ns"][..], "wake-up latency median"),
        (&["runs", "0", "steps", "median_ns"][..], "read step median"),
    ] {
        if let Some(ns) = med(path) {
            return Some(format!("{what} {}", human_ns(ns as f64)));
        }
    }
    None
}

/// Nanoseconds in the unit that suits them: 37 ns, 4.00 µs, 212.50 ms.
fn human_ns(ns: f64) -> String {
    match ns.abs() {
        a if a < 1e3 => format!("{ns:.0} ns"),
        a if a < 1e6 => format!("{:.2} µs", ns / 1e3),
        a if a < 1e9 => format!("{:.2} ms", ns / 1e6),
        _ => format!("{:.2} s", ns / 1e9),
    }
}

/// Bits per second as people read them: 19.13 Mbit/s.
fn human_bps(b: f64) -> String {
    match b {
        b if b >= 1e9 => format!("{:.2} Gbit/s", b / 1e9),
        b if b >= 1e6 => format!("{:.2} Mbit/s", b / 1e6),
        b if b >= 1e3 => format!("{:.2} kbit/s", b / 1e3),
        b => format!("{b:.0} bit/s"),
    }
}

/// The headline of a load, setup, serve or reflect result.
fn service_headline(v: &serde_json::Value) -> Option<String> {
    let f = |p: &str| v.pointer(p).and_then(|x| x.as_f64());
    match v.get("format").and_then(|f| f.as_str()) {
        Some("misura.load") => {
            let loaded = v
                .get("phases")?
                .as_array()?
                .iter()
                .find(|p| p.get("name").and_then(|n| n.as_str()) == Some("loaded"))?;
            let (what, p) = match loaded.get("network_rtt").filter(|x| !x.is_null()) {
                Some(p) => ("network", p),
                None => ("user", loaded.get("user_rtt")?),
            };
            let med = p.get("median_ns").and_then(|x| x.as_f64())?;
            let inflation = f(&format!("/inflation/{what}_rtt_ns"))
                .map_or(String::new(), |i| format!(" (+{} over idle)", human_ns(i)));
            let rpm = f(&format!("/responsiveness/rpm_{what}"))
                .map_or(String::new(), |r| format!(", {r:.0} RPM"));
            Some(format!(
                "loaded {what} RTT median {}{inflation}{rpm}",
                human_ns(med)
            ))
        }
        Some("misura.serve") => {
            let tests = v
                .get("tests")
                .and_then(|t| t.as_array())
                .map_or(0, |t| t.len());
            let bps = f("/aggregate_throughput_bps").unwrap_or(0.0);
            Some(format!("{tests} test(s) served, {} in all", human_bps(bps)))
        }
        Some("misura.reflect") => {
            let replied = f("/counters/replied")?;
            let s = f("/duration_s").unwrap_or(0.0);
            Some(format!("{replied:.0} replies in {s:.0} s"))
        }
        _ => {
            // `setup`: the first gap's mean set-up delay.
            let mean = f("/gaps/0/setup_mean_ns")?;
            Some(format!("set-up delay mean {}", human_ns(mean)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tester_limited_result_is_never_headlined_as_the_suts() {
        let rfc = |ndr: &str, stopped: &str, extra: &str| {
            format!(
                r#"{{"format":"misura.rfc2544","sizes":[{{"label":"512","line_rate_fps":23496.0,"throughput":{{"stopped_by":"{stopped}","ndr":{{"lower_fps":662.0,"upper_fps":23496.0{ndr}}}}}}}]{extra}}}"#
            )
        };
        // Older result: stopped by the tester with no failed trial above.
        assert_eq!(
            headline(&rfc("", "tester_limit", "")).as_deref(),
            Some("INCONCLUSIVE (tester limit) at 512 B")
        );
        assert_eq!(
            headline(&rfc(r#","tester_limited":true"#, "resolution", "")).as_deref(),
            Some("INCONCLUSIVE (tester limit) at 512 B")
        );
        assert_eq!(
            headline(&rfc(r#","tester_limited":false"#, "resolution", "")).as_deref(),
            Some("NDR 662 frames/s at 512 B")
        );
        assert_eq!(
            headline(&rfc("", "resolution", r#","inconclusive":["loss"]"#)).as_deref(),
            Some("NDR 662 frames/s at 512 B, partly INCONCLUSIVE")
        );
        let y = |pass: bool, inc: bool| {
            headline(&format!(
                r#"{{"format":"misura.y1564","pass":{pass},"inconclusive":{inc}}}"#
            ))
        };
        assert_eq!(
            y(false, true).as_deref(),
            Some("Y.1564 INCONCLUSIVE (tester limit)")
        );
        assert_eq!(y(false, false).as_deref(), Some("Y.1564 FAIL"));
        assert_eq!(y(true, false).as_deref(), Some("Y.1564 PASS"));
    }

    #[test]
    fn load_setup_serve_and_reflect_have_readable_headlines() {
        let h = |j: &str| headline(j);
        assert_eq!(
            h(r#"{"throughput_bps": 19131409.0}"#).as_deref(),
            Some("19.13 Mbit/s")
        );
        let load = r#"{"format":"misura.load","phases":[{"name":"idle"},{"name":"loaded",
            "network_rtt":{"median_ns":212500000.0}}],"inflation":{"network_rtt_ns":200000000.0},
            "responsiveness":{"rpm_network":282.4}}"#;
        assert_eq!(
            h(load).as_deref(),
            Some("loaded network RTT median 212.50 ms (+200.00 ms over idle), 282 RPM")
        );
        let serve = r#"{"format":"misura.serve","tests":[{},{}],"aggregate_throughput_bps":9.4e8}"#;
        assert_eq!(
            h(serve).as_deref(),
            Some("2 test(s) served, 940.00 Mbit/s in all")
        );
        let reflect =
            r#"{"format":"misura.reflect","counters":{"replied":1000},"duration_s":10.2}"#;
        assert_eq!(h(reflect).as_deref(), Some("1000 replies in 10 s"));
        let setup = r#"{"format":"misura.setup","gaps":[{"setup_mean_ns":41000.0}]}"#;
        assert_eq!(h(setup).as_deref(), Some("set-up delay mean 41.00 µs"));
        let rtt = r#"{"overall":{"network_rtt":{"median_ns":200123456}}}"#;
        assert_eq!(h(rtt).as_deref(), Some("network RTT median 200.12 ms"));
    }
}
