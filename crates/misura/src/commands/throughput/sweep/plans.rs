//! The plans of a sweep: one per value, differing only in the swept field,
//! each checked before the first run.

use super::flags::{
    RrSweepArgs as RrSweep, SweepFlags, TcpSweepArgs as TcpSweep, UdpSweepArgs as UdpSweep,
};
use crate::commands::throughput::parsed::{client, OnHost};
use crate::shared::exit::Failure;
use misura_throughput::sweep::{Series, Sweepable};

/// The plans of `misura sweep TEST h ARGS…` (ARGS: the test's flags).
fn series<K: SweepFlags>(args: &[&str]) -> Result<Series<<K::Plain as Sweepable>::Plan>, Failure> {
    let w = OnHost::<K>::of(&[&["h"], args].concat());
    w.flags
        .plain()
        .plans(|clients| client(&w.host, clients))
        .map_err(|r| crate::shared::throughput_words::sentence(&r))
}

fn values<P>(s: &Series<P>) -> Vec<&str> {
    s.points.iter().map(|(v, _)| v.as_str()).collect()
}

#[test]
fn nodelay_sweeps_on_off_and_a_bare_nodelay_holds_for_every_run() {
    let s = series::<TcpSweep>(&["--nodelay", "on,off"]).unwrap();
    assert_eq!((s.parameter, values(&s)), ("nodelay", vec!["on", "off"]));
    let on: Vec<bool> = s.points.iter().map(|(_, p)| p.nodelay).collect();
    assert_eq!(on, [true, false]);
    let s = series::<TcpSweep>(&["--nodelay", "--streams", "1..3"]).unwrap();
    assert_eq!(values(&s), ["1", "2", "3"]);
    assert!(s
        .points
        .iter()
        .all(|(_, p)| p.nodelay && p.msg_size.bytes == 128 * 1024));
    let s = series::<TcpSweep>(&["--clients", "1,4"]).unwrap();
    let clients: Vec<u32> = s.points.iter().map(|(_, p)| p.client.clients).collect();
    assert_eq!((s.parameter, clients), ("clients", vec![1, 4]));
}

#[test]
fn every_value_is_checked_before_the_first_run() {
    let e = series::<TcpSweep>(&["--streams", "0..2"]).err().unwrap();
    assert_eq!(
        e.to_string(),
        "--streams must be between 1 and 1024",
        "the first value is the base plan's"
    );
    let e = series::<TcpSweep>(&["--streams", "1024..1025"])
        .err()
        .unwrap();
    assert!(matches!(&e, Failure::Params(_)));
    assert_eq!(
        e.to_string(),
        "the run with --streams 1025: --streams must be between 1 and 1024"
    );
}

#[test]
fn udp_and_rr_vary_their_own_fields() {
    let s = series::<UdpSweep>(&["--rate", "10M,1G", "--msg-size", "100", "--df"]).unwrap();
    let rates: Vec<u64> = s.points.iter().map(|(_, p)| p.rate_bps()).collect();
    assert_eq!(
        (s.parameter, rates),
        ("rate", vec![10_000_000, 1_000_000_000])
    );
    assert!(s.points.iter().all(|(_, p)| p.df && p.msg_size() == 100));
    assert_eq!(values(&s), ["10M", "1G"]);

    let s = series::<RrSweep>(&["--proto", "udp", "--request=16,64"]).unwrap();
    let sizes: Vec<(u64, u64)> = s
        .points
        .iter()
        .map(|(_, p)| (p.t.request, p.t.response))
        .collect();
    assert_eq!((s.parameter, sizes), ("request", vec![(16, 16), (64, 16)]));
    // A bare 1-byte UDP request cannot have two in flight: refused up front.
    let bare = series::<RrSweep>(&["--proto", "udp", "--burst", "2", "--request", "16,1"]);
    assert!(matches!(bare, Err(Failure::Params(m)) if m.starts_with("the run with --request 1:")));
}
