//! The `--shape` parser (no privileges needed) and, as root, a shape put on
//! a real switch lab, read back from the kernel and removed.

use super::*;
use crate::tests::{guard, require_lab};
use crate::Topology;

fn shape(text: &str) -> Shape {
    Shape::parse(text)
        .unwrap_or_else(|e| panic!("{text}: {e}"))
        .unwrap_or_else(|| panic!("{text}: parsed as none"))
}

#[test]
fn rates_are_written_as_everywhere_in_misura() {
    for (text, bps) in [
        ("20M", 20_000_000),
        ("100M", 100_000_000),
        ("1G", 1_000_000_000),
        ("2.5G", 2_500_000_000),
        ("500k", 500_000),
        ("500K", 500_000),
        ("8000", 8_000),
        ("20Mbit/s", 20_000_000),
        ("20Mb/s", 20_000_000),
        ("20Mbps", 20_000_000),
        ("20Mbit", 20_000_000),
        ("100G", 100_000_000_000),
        // tbf keeps bytes per second: rounded down to a multiple of 8 bit/s.
        ("8005", 8_000),
    ] {
        assert_eq!(shape(text).rate_bps, bps, "{text}");
    }
    assert_eq!(Shape::parse("none").unwrap(), None);
    assert_eq!(Shape::parse(" NONE ").unwrap(), None);
}

#[test]
fn defaults_follow_the_rate() {
    // 20 Mbit/s: 1 ms is 2500 bytes, above the 1600-byte floor.
    let s = shape("20M");
    assert_eq!(s.burst_bytes, 2500);
    assert_eq!(s.queue_bytes, DEFAULT_QUEUE);
    // 1 Mbit/s: 1 ms is 125 bytes, so the floor (one full frame) holds.
    assert_eq!(shape("1M").burst_bytes, MIN_BURST);
    // 10 Gbit/s: 1 ms is 1.25 MB, and the queue holds at least one burst.
    let s = shape("10G");
    assert_eq!(s.burst_bytes, 1_250_000);
    assert_eq!(s.queue_bytes, 1_250_000);
    // 64 KiB at 100 Mbit/s: 5.24288 ms of queueing.
    assert_eq!(shape("100M").max_queueing_delay_ns(), 5_242_880);
}

#[test]
fn queue_and_burst_are_sizes_in_bytes() {
    let s = shape("20M,queue=32K");
    assert_eq!((s.queue_bytes, s.burst_bytes), (32 * 1024, 2500));
    let s = shape("20M,burst=4000,queue=1M");
    assert_eq!((s.queue_bytes, s.burst_bytes), (1024 * 1024, 4000));
    let s = shape("1G, queue=64KiB ,burst=16kB");
    assert_eq!((s.queue_bytes, s.burst_bytes), (65536, 16384));
    // A larger burst than the default queue carries the queue with it.
    assert_eq!(shape("20M,burst=100K").queue_bytes, 100 * 1024);
}

#[test]
fn numbers_out_of_bounds_name_the_bound() {
    for (text, what, bound) in [
        ("0", "rate", "8 kbit/s"),
        ("7999", "rate", "8 kbit/s"),
        ("5T", "rate", "100 Gbit/s"),
        ("100.1G", "rate", "100 Gbit/s"),
        ("20M,queue=100", "queue", "1600 bytes"),
        ("20M,queue=1G", "queue", "268435456 bytes"),
        ("20M,burst=1000", "burst", "1600 bytes"),
        // 10 s at 8 kbit/s is 10 000 bytes.
        ("8k,burst=20000", "burst", "10000 bytes"),
    ] {
        let e = Shape::parse(text).expect_err(text);
        assert!(e.is_out_of_range(), "{text}: {e}");
        let msg = e.to_string();
        assert!(
            msg.contains(what) && msg.contains(bound),
            "{text}: `{msg}` names neither {what} nor {bound}"
        );
    }
}

#[test]
fn malformed_text_says_what_is_wrong() {
    for (text, says) in [
        ("", "no rate"),
        ("fast", "not a rate"),
        ("20X", "unknown rate unit `X`"),
        ("10M,queue=x", "queue `x` is not a size"),
        ("10M,queue=5Q", "unknown queue unit `Q`"),
        ("10M,queue", "not key=value"),
        ("10M,delay=5ms", "unknown key `delay`"),
        ("10M,queue=1M,queue=2M", "`queue` given twice"),
        (",queue=1M", "no rate"),
    ] {
        let e = Shape::parse(text).expect_err(text);
        assert!(!e.is_out_of_range(), "{text}: {e}");
        let msg = e.to_string();
        assert!(msg.contains(says), "{text}: `{msg}` does not say `{says}`");
        assert!(msg.contains("RATE[,queue=BYTES]"), "{text}: `{msg}`");
        assert!(
            msg.starts_with(&format!("shape `{text}`: ")),
            "{text}: `{msg}`"
        );
    }
}

#[test]
fn rates_read_as_people_write_them() {
    assert_eq!(format_rate(20_000_000), "20 Mbit/s");
    assert_eq!(format_rate(2_500_000_000), "2.5 Gbit/s");
    assert_eq!(format_rate(8_000), "8 kbit/s");
    assert_eq!(format_rate(12), "12 bit/s");
    assert_eq!(format_rate(5_000_000_000_000), "5 Tbit/s");
    let huge = Shape::parse("20M,queue=99999999999999999999999").expect_err("huge");
    assert!(
        huge.is_out_of_range() && huge.to_string().contains("queue"),
        "{huge}"
    );
    assert_eq!(
        shape("20M,queue=25000").to_string(),
        "rate 20 Mbit/s, burst 2500 B, queue 25000 B (at most 10 ms of queueing)"
    );
}

#[test]
#[ignore = "needs root: network namespaces (CAP_NET_ADMIN)"]
fn a_shape_is_put_on_the_port_towards_p2_read_back_and_removed() {
    require_lab();
    let g = guard();
    let lab = g.lab();
    lab.up(Topology::Direct).unwrap();
    match lab.set_shape(Topology::Switch, Some(&shape("20M"))) {
        Err(LabError::NotShapeable { prefix, .. }) => assert_eq!(prefix, lab.prefix()),
        other => panic!("a direct cable took a shape: {other:?}"),
    }
    lab.up(Topology::Switch).unwrap();
    assert_eq!(lab.shape().unwrap(), None);
    let want = shape("20M,queue=24K");
    let st = lab
        .set_shape(Topology::Switch, Some(&want))
        .unwrap()
        .expect("shape in place");
    assert_eq!(st.shape, want);
    assert_eq!((st.interface.as_str(), st.towards.as_str()), ("s2", "p2"));
    assert_eq!(st.netns, lab.sut_ns());
    // The kernel's own view: a root tbf on s2 at 2 500 000 bytes/s, none on s1.
    let q = read_tbf(&lab.sut_ns(), SUT_P2).unwrap().expect("tbf on s2");
    assert_eq!(q.options.rate, 2_500_000);
    let s1 = tc(
        Kind::Query,
        &lab.sut_ns(),
        &["-j", "qdisc", "show", "dev", "s1"],
    )
    .unwrap();
    assert!(!s1.contains("tbf"), "s1 is shaped too: {s1}");
    // Status (and shape_of, which later commands use) report it.
    assert_eq!(lab.status().unwrap().shape.map(|s| s.shape), Some(want));
    assert_eq!(shape_of(lab.prefix()).unwrap().map(|s| s.shape), Some(want));
    // Up again changes nothing; a new shape replaces the old.
    lab.up(Topology::Switch).unwrap();
    assert_eq!(lab.shape().unwrap().map(|s| s.shape), Some(want));
    let faster = shape("1G");
    let st = lab
        .set_shape(Topology::Switch, Some(&faster))
        .unwrap()
        .expect("replaced");
    assert_eq!(st.shape, faster);
    assert_eq!(
        read_tbf(&lab.sut_ns(), SUT_P2)
            .unwrap()
            .unwrap()
            .options
            .rate,
        125_000_000
    );
    // Someone changes it by hand: the kernel's numbers win over the record.
    tc(
        Kind::Query,
        &lab.sut_ns(),
        &[
            "qdisc", "replace", "dev", "s2", "root", "tbf", "rate", "8mbit", "burst", "3000",
            "limit", "3000",
        ],
    )
    .unwrap();
    let hand = lab.shape().unwrap().expect("hand-made tbf").shape;
    assert_eq!((hand.rate_bps, hand.burst_bytes), (8_000_000, 3000));
    // none removes it, and says so.
    assert_eq!(lab.set_shape(Topology::Switch, None).unwrap(), None);
    assert!(read_tbf(&lab.sut_ns(), SUT_P2).unwrap().is_none());
    assert_eq!(lab.status().unwrap().shape, None);
}

#[test]
fn the_lab_owns_which_topology_takes_which_shape() {
    let tbf = shape("20M");
    let codel = Shape::parse("20M,qdisc=fq_codel").unwrap().unwrap();
    for t in [Topology::Switch, Topology::Routed] {
        check_shape(t, Some(&tbf)).unwrap();
        check_shape(t, None).unwrap();
    }
    check_shape(Topology::Routed, Some(&codel)).unwrap();
    // The switch's port takes no fq_codel: refused here, so set_shape never
    // records `fq_codel: true` in the SUT's marker.
    let e = check_shape(Topology::Switch, Some(&codel)).unwrap_err();
    assert!(
        matches!(
            e,
            LabError::ShapeNotApplicable {
                topology: Topology::Switch,
                managed_queue: true
            }
        ),
        "{e}"
    );
    assert!(
        e.to_string().contains("applies to the routed topology"),
        "{e}"
    );
    for t in [Topology::Direct, Topology::Hosts] {
        let e = check_shape(t, Some(&tbf)).unwrap_err();
        assert!(
            matches!(
                e,
                LabError::ShapeNotApplicable {
                    managed_queue: false,
                    ..
                }
            ),
            "{e}"
        );
        assert!(e.to_string().contains("nothing to shape"), "{e}");
        assert!(!e.to_string().contains("--"), "names no flag: {e}");
    }
}

#[test]
#[ignore = "needs root: network namespaces (CAP_NET_ADMIN)"]
fn a_switch_shape_goes_to_the_switch_even_with_the_router_built() {
    require_lab();
    let g = guard();
    let lab = g.lab();
    lab.up(Topology::Routed).unwrap();
    let routed = shape("20M,queue=32K");
    lab.set_shape(Topology::Routed, Some(&routed)).unwrap();
    lab.up(Topology::Switch).unwrap();
    let want = shape("100M");
    let st = lab
        .set_shape(Topology::Switch, Some(&want))
        .unwrap()
        .expect("the switch is shaped");
    assert_eq!(
        (st.netns.as_str(), st.interface.as_str()),
        (lab.sut_ns().as_str(), "s2")
    );
    let q = read_tbf(&lab.sut_ns(), SUT_P2).unwrap().expect("tbf on s2");
    assert_eq!(q.options.rate, 12_500_000);
    // The router keeps its own shape, untouched; status lists both.
    let r = read_tbf(&lab.router_ns(), ROUTER_P2)
        .unwrap()
        .expect("router tbf");
    assert_eq!(r.options.rate, 2_500_000);
    let shapes: Vec<_> = lab
        .status()
        .unwrap()
        .shapes
        .iter()
        .map(|s| (s.netns.clone(), s.shape))
        .collect();
    assert_eq!(
        shapes,
        vec![(lab.sut_ns(), want), (lab.router_ns(), routed)]
    );
    // fq_codel on the switch is refused and records nothing.
    let codel = Shape::parse("20M,qdisc=fq_codel").unwrap().unwrap();
    assert!(lab.set_shape(Topology::Switch, Some(&codel)).is_err());
    assert_eq!(
        lab.shape_on(Topology::Switch).unwrap().map(|s| s.shape),
        Some(want)
    );
}
