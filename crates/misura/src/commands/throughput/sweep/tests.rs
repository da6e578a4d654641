//! The sweep's command line, parsed once, and the plans it varies.

use super::*;
use crate::cli::{Cli, Command};
use crate::shared::client_flags::Direction;
use clap::Parser;

/// `misura ARGS…` parsed as main parses it; the sweep's flags.
fn sweep(args: &[&str]) -> SweepArgs {
    let argv = std::iter::once("misura").chain(args.iter().copied());
    match Cli::try_parse_from(argv).unwrap().command {
        Command::Sweep(a) => a,
        _ => panic!("not a sweep"),
    }
}

fn tcp(args: &[&str]) -> Given<Sweep<TcpSweepArgs>> {
    match sweep(args).test {
        SweepTest::Tcp(g) => g,
        other => panic!("{other:?}"),
    }
}

fn values<P>(s: &Series<P>) -> Vec<&str> {
    s.points.iter().map(|(v, _)| v.as_str()).collect()
}

#[test]
fn one_parse_gives_plans_that_differ_only_in_the_swept_field() {
    let g = tcp(&[
        "sweep",
        "tcp",
        "h",
        "--duration",
        "1s",
        "--msg-size",
        "10,64K",
        "--json",
        "--export-csv",
        "x.csv",
        "--streams",
        "2",
        "--bidir",
    ]);
    let s = g.args.series().unwrap();
    assert_eq!((s.parameter, values(&s)), ("msg-size", vec!["10", "64K"]));
    let sizes: Vec<u64> = s.points.iter().map(|(_, p)| p.msg_size.bytes).collect();
    assert_eq!(sizes, [10, 65536]);
    for (_, p) in &s.points {
        assert_eq!(
            (p.streams, p.direction, p.duration_ns()),
            (2, Direction::Bidir, 1_000_000_000)
        );
        assert_eq!((p.client.host.as_str(), p.client.clients), ("h", 1));
        assert!(p.client.quiet, "the runs of a sweep print no progress");
    }
    let (out, csv, _) = output_flags(&sweep(&[
        "sweep",
        "tcp",
        "h",
        "--streams",
        "1,2",
        "--json",
        "--export-csv",
        "x.csv",
    ]));
    assert!(out.json && !out.quiet);
    assert_eq!(csv.export_csv.unwrap().to_str(), Some("x.csv"));
    // The shared arguments as written, without the sweep's outputs and the swept flag.
    let mut leave_out = OUTPUT_FLAGS.to_vec();
    leave_out.push(s.parameter);
    assert_eq!(
        g.written_except(&leave_out),
        ["h", "--duration", "1s", "--streams", "2", "--bidir"]
    );
}

#[test]
fn exactly_one_flag_is_given_several_values() {
    let nothing = tcp(&["sweep", "tcp", "h", "--msg-size", "10"])
        .args
        .series();
    assert!(matches!(nothing, Err(Failure::Usage(m)) if m.starts_with("give one of --msg-size")));
    let two = tcp(&[
        "sweep",
        "tcp",
        "h",
        "--msg-size",
        "1,2",
        "--streams",
        "1..3",
    ])
    .args
    .series();
    assert!(matches!(two, Err(Failure::Usage(m)) if m.contains("--msg-size and --streams")));
    // Only the test's own sweepable flags exist.
    let argv = [
        "misura",
        "sweep",
        "udp",
        "h",
        "--rate",
        "10M",
        "--streams",
        "1..3",
    ];
    assert!(Cli::try_parse_from(argv).is_err());
    assert!(Cli::try_parse_from(["misura", "sweep", "h", "--msg-size", "1,2"]).is_err());
    assert!(Cli::try_parse_from(["misura", "sweep", "tcp", "h", "--streams", "1,x"]).is_err());
}

#[test]
fn the_global_store_flags_parse_before_and_after_the_sweep() {
    for argv in [
        &[
            "misura",
            "--no-store",
            "sweep",
            "tcp",
            "h",
            "--msg-size",
            "1,2",
        ][..],
        &[
            "misura",
            "sweep",
            "tcp",
            "h",
            "--msg-size",
            "1,2",
            "--no-store",
        ][..],
        &[
            "misura",
            "sweep",
            "tcp",
            "h",
            "--no-store",
            "--msg-size",
            "1,2",
            "--store",
            "/tmp/s.sqlite",
        ][..],
    ] {
        let cli = Cli::try_parse_from(argv).unwrap_or_else(|e| panic!("{argv:?}: {e}"));
        assert!(cli.no_store, "{argv:?}");
        let Command::Sweep(SweepArgs {
            test: SweepTest::Tcp(g),
        }) = cli.command
        else {
            panic!()
        };
        assert_eq!(g.args.series().unwrap().points.len(), 2);
        assert_eq!(
            g.written_except(&["msg-size"]),
            ["h"],
            "global flags are not the test's"
        );
    }
}
