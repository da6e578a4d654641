//! The configuration's parsing and validation, with the lines of mistakes.

use super::*;

const GOOD: &str = r#"
[agent]
parallel = 3

[[target]]
name = "r2"
kind = "rtt"
address = "198.18.0.2:8620"
interval = "10s"
count = 20
period = "10ms"
timeout = "500ms"
sizes = [64, 512]

[[target]]
name = "pair"
kind = "oneway"
netns = "misura-tester"
tx = "p1"
rx = "p2"
interval = "1m"
"#;

#[test]
fn parses_both_kinds() {
    let c = parse(GOOD, "a.toml").unwrap();
    assert_eq!(c.parallel, 3);
    assert_eq!(c.targets.len(), 2);
    assert_eq!(
        c.targets[0].kind,
        TargetKind::Rtt {
            address: "198.18.0.2:8620".into()
        }
    );
    assert_eq!(c.targets[0].run_ns(), 20 * 10_000_000 + 500_000_000);
    let a = c.targets[0].child_args().join(" ");
    assert_eq!(a, "rtt 198.18.0.2:8620 --count 20 --period 10000000ns --timeout 500000000ns --request 64,512 --json --no-store -q");
    let a = c.targets[1].child_args().join(" ");
    assert!(
        a.starts_with("oneway --tx p1 --rx p2 --netns misura-tester --count 10"),
        "{a}"
    );
}

#[test]
fn unknown_key_names_its_line() {
    let text = GOOD.replace("timeout = \"500ms\"", "timout = \"500ms\"");
    let e = parse(&text, "a.toml").unwrap_err().to_string();
    assert!(e.starts_with("a.toml:12:"), "{e}");
    assert!(e.contains("timout"), "{e}");
}

#[test]
fn impossible_intervals_are_refused_with_their_line() {
    let e = parse(&GOOD.replace("\"10s\"", "\"0s\""), "a.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("a.toml:9:") && e.contains("impossible"),
        "{e}"
    );
    let e = parse(&GOOD.replace("\"10s\"", "\"600ms\""), "a.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("a.toml:9:") && e.contains("shorter than one measurement"),
        "{e}"
    );
}

#[test]
fn other_mistakes() {
    for (from, to, want) in [
        ("kind = \"rtt\"", "kind = \"ping\"", "unknown kind"),
        ("name = \"pair\"", "name = \"r2\"", "used twice"),
        ("address = \"198.18.0.2:8620\"\n", "", "needs address"),
        ("parallel = 3", "parallel = 0", "parallel"),
        ("count = 20", "count = 0", "count"),
        ("interval = \"1m\"", "interval = \"soon\"", "not a duration"),
    ] {
        let e = parse(&GOOD.replace(from, to), "a.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains(want), "{from} -> {to}: {e}");
    }
    assert!(parse("", "a.toml")
        .unwrap_err()
        .to_string()
        .contains("no [[target]]"));
}

#[test]
fn throughput_targets_and_their_class() {
    let text = r#"
[[target]]
name = "bulk"
kind = "tcp"
address = "198.18.0.2:5201"
interval = "1m"
duration = "10s"

[[target]]
name = "paced"
kind = "udp"
address = "198.18.0.2:5201"
interval = "1m"
rate = "100M"
background = true
"#;
    let c = parse(text, "a.toml").unwrap();
    assert!(c.targets[0].exclusive && !c.targets[1].exclusive);
    assert_eq!(
        c.targets[0].child_args().join(" "),
        "tcp 198.18.0.2:5201 --duration 10000000000ns --json --no-store -q"
    );
    assert!(c.targets[1].child_args().join(" ").contains("--rate 100M"));
    assert_eq!(c.targets[0].run_ns(), 15_000_000_000);
    for (from, to, want) in [
        ("rate = \"100M\"\n", "", "needs rate"),
        ("rate = \"100M\"", "rate = \"fast\"", "rate"),
        ("duration = \"10s\"", "duration = \"2h\"", "1 ms to 1 h"),
        (
            "duration = \"10s\"",
            "count = 5",
            "count, period and sizes belong",
        ),
    ] {
        let e = parse(&text.replace(from, to), "a.toml")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(want) && e.starts_with("a.toml:"),
            "{from} -> {to}: {e}"
        );
    }
    let e = parse(&GOOD.replace("count = 20", "duration = \"1s\""), "a.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("belong to kinds \"tcp\""), "{e}");
}
