//! Each typed error the libraries leave to the binary to word: the lines
//! main prints and the exit code, alone and inside the enums that carry it
//! (OnewayError, BenchError, EngineError, RttError, LoadError), as the
//! command line gave them before the libraries were typed.

use super::*;
use crate::shared::exit::{code_for, Chain, ERROR, INTERFACE, OUTPUT, PARAMS, PROFILE, USAGE};
use misura_cli::units::DurationArg;
use misura_rtt::plan::{Pace, Span};
use misura_sys::SysError;
use std::path::PathBuf;

/// What main prints of `e` (its chain, each in its sentence) and its code.
fn printed(e: impl Into<anyhow::Error>) -> (Vec<String>, i32) {
    let e = e.into();
    (chain(&e), code_for(&e))
}

fn said(e: impl Into<anyhow::Error>, lines: &[&str], code: i32) {
    let (got, got_code) = printed(e);
    assert_eq!(got, lines);
    assert_eq!(got_code, code, "{got:?}");
}

const CORES_99: &str =
    "--cores 99: use 1 to 64 (each core drives one transmit path and one receive ring)";
const CORES_3: &str = "--cores 3: this host has 2 CPUs online; use at most 2";
const HARDWARE: &str =
    "--timestamps hardware: no PHC; use --timestamps kernel to fall back to software stamps";
const CPU_LOAD: &str = "--cpu-load 100000 is more than this host can run usefully: at most 8 busy threads (4 per online CPU)";
const SILENT: &str = "no reply within 1000 ms to 8 probes: is a reflector running at 198.18.0.2, reachable, and using the same mode (authenticated: --key-file)?";

fn out_of_range() -> CoresError {
    CoresError::OutOfRange { cores: 99, max: 64 }
}

fn over_online() -> CoresError {
    CoresError::OverOnline {
        cores: 3,
        online: 2,
    }
}

fn hw() -> HardwareRequired {
    HardwareRequired {
        why: "no PHC".into(),
    }
}

fn threads() -> TooManyThreads {
    TooManyThreads {
        threads: 100_000,
        max: 8,
    }
}

/// rtt's warm-up that had no reply from 198.18.0.2.
fn silent() -> RttError {
    RttError::NoReply {
        target: "198.18.0.2".into(),
        why: NoReplyWhy::Silent {
            wait_ms: 1000.0,
            probes: 8,
            target: "198.18.0.2".into(),
        },
    }
}

fn nic() -> SysError {
    SysError::NoSuchInterface {
        name: "nosuch0".into(),
    }
}

#[test]
fn the_engines_core_count_and_forced_path() {
    said(out_of_range(), &[CORES_99], PARAMS);
    said(EngineError::from(over_online()), &[CORES_3], PARAMS);
    let e = anyhow::Error::from(BenchError::Engine(out_of_range().into())).context("rfc2544");
    said(e, &["rfc2544", CORES_99], PARAMS);
    let e = OnewayError::Engine(over_online().into());
    said(BenchError::Oneway(e), &[CORES_3], PARAMS);
    // A forced path that did not open: the last one's error, its class.
    let e = EngineError::NoPath {
        forced: Some(misura_engine::EngineChoice::Xdp),
        last: Box::new(EngineError::Sys(nic())),
    };
    let (lines, code) = printed(OnewayError::Engine(e));
    assert_eq!(
        lines[0],
        "--engine xdp could not be opened (try --engine auto, which picks the best path that opens)"
    );
    assert_eq!(lines[1], nic().to_string());
    assert_eq!(code, INTERFACE);
    let e = BenchError::Engine(EngineError::PtpFrameTooSmall { frame: 70, min: 88 });
    said(e, &["a 70-byte frame cannot carry misura's header inside a PTP Sync message: PTP-wrapped frames are 88 bytes or more (FCS included); use larger frames or --frame-format misura"], ERROR);
    let e = EngineError::NoPath {
        forced: None,
        last: Box::new(EngineError::NoPathTried),
    };
    said(
        e,
        &[
            "no transmit path of the frame engine could be opened",
            "no transmit path",
        ],
        ERROR,
    );
}

#[test]
fn the_required_nic_stamps_and_the_busy_threads() {
    said(hw(), &[HARDWARE], PARAMS);
    said(RttError::Hardware(hw()), &[HARDWARE], PARAMS);
    said(OnewayError::Hardware(hw()), &[HARDWARE], PARAMS);
    said(BenchError::Oneway(hw().into()), &[HARDWARE], PARAMS);
    let (lines, _) = printed(ExchangeError::Hardware(hw()));
    assert_eq!(lines, [HARDWARE]);
    // Through load's probe (an irtt session's chain, or rtt's error).
    let probe = Chain(anyhow::Error::new(hw()).context("the irtt session"));
    said(
        LoadError::Probe(Box::new(probe)),
        &["the irtt session", HARDWARE],
        PARAMS,
    );
    said(
        LoadError::Probe(Box::new(RttError::Hardware(hw()))),
        &[HARDWARE],
        PARAMS,
    );
    said(threads(), &[CPU_LOAD], PARAMS);
    said(RttError::CpuLoad(threads()), &[CPU_LOAD], PARAMS);
    said(LoadError::Plan(threads().into()), &[CPU_LOAD], PARAMS);
}

#[test]
fn the_per_frame_loop() {
    let fast = |forced| LoopError::TooFast {
        rate_fps: 2e6,
        max_fps: 1e6,
        forced,
    };
    let line = |why: &str| {
        format!("2000000 frames/s is more than the per-frame loop sustains ({why}; it measured 0.48 M frames/s send + receive on the lab's veth, scripts/bench-oneway.sh): use `misura oneway --engine auto` (the frame engine, for rates up to line rate) or a rate below 1000000")
    };
    said(
        OnewayError::from(fast(true)),
        &[&line("--engine loop")],
        PARAMS,
    );
    said(
        BenchError::Oneway(fast(false).into()),
        &[&line("calibration and the demo always use the loop")],
        PARAMS,
    );
    said(
        OnewayError::from(LoopError::LatencyEvery),
        &["--latency-every needs the frame engine: drop --engine loop"],
        USAGE,
    );
}

#[test]
fn the_calibration_profile() {
    let io = || std::io::Error::from(std::io::ErrorKind::NotFound);
    let json = || serde_json::from_str::<serde_json::Value>("{").unwrap_err();
    let path = || PathBuf::from("/p/cal.json");
    let not_found = io().to_string();
    let cases: Vec<(ProfileError, String, i32)> = vec![
        (
            ProfileError::CreateDir {
                dir: "/p".into(),
                error: io(),
            },
            format!("cannot create /p for the calibration profile: {not_found}; choose --profile FILE"),
            OUTPUT,
        ),
        (
            ProfileError::NotWritable {
                path: path(),
                error: io(),
            },
            format!("cannot write the calibration profile /p/cal.json: {not_found}; choose --profile FILE"),
            OUTPUT,
        ),
        (
            ProfileError::Save {
                path: path(),
                error: io(),
            },
            format!("cannot write /p/cal.json: {not_found}"),
            OUTPUT,
        ),
        (
            ProfileError::Unreadable {
                path: path(),
                error: io(),
            },
            format!("cannot read calibration profile /p/cal.json: {not_found}; run `misura calibrate` first"),
            PROFILE,
        ),
        (
            ProfileError::NotJson {
                path: path(),
                error: json(),
            },
            format!("/p/cal.json is not JSON: {}", json()),
            PROFILE,
        ),
        (
            ProfileError::NotProfile { path: path() },
            "/p/cal.json is not a misura calibration profile".into(),
            PROFILE,
        ),
        (
            ProfileError::Newer {
                path: path(),
                version: 9,
                max: 2,
            },
            "/p/cal.json has format version 9, newer than this misura understands (2): upgrade misura".into(),
            PROFILE,
        ),
        (
            ProfileError::Damaged {
                path: path(),
                error: json(),
            },
            format!("/p/cal.json is damaged: {}", json()),
            PROFILE,
        ),
        (
            ProfileError::OutOfBounds {
                path: path(),
                error: misura_measure::calibration::OutOfBounds {
                    field: "rate_fps".into(),
                    value: "1e300".into(),
                    bound: "at most 1e10".into(),
                },
            },
            "/p/cal.json: rate_fps = 1e300 is outside what a cable and a PC can give (at most 1e10); this is no tester's calibration: run `misura calibrate` again".into(),
            PROFILE,
        ),
        (
            ProfileError::Mismatch {
                path: path(),
                mismatches: vec!["another host".into(), "another NIC".into()],
                calibrate: "misura calibrate --tx p1 --rx p2 --profile /p/cal.json".into(),
            },
            "calibration profile /p/cal.json was made on another set-up: another host; another NIC. Calibrate this set-up (misura calibrate --tx p1 --rx p2 --profile /p/cal.json), or pass --accept-profile-mismatch to use it anyway".into(),
            PROFILE,
        ),
    ];
    for (e, line, code) in cases {
        said(BenchError::Oneway(e.into()), &[line.as_str()], code);
    }
}

/// Load's probes' plan: a period too short, a timeout of none, another.
fn probe_plan(error: SessionPlanError) -> ProbePlanError {
    ProbePlanError {
        period: "1ns".parse::<DurationArg>().unwrap(),
        error,
    }
}

fn too_short() -> SessionPlanError {
    SessionPlanError::Period {
        pace: Pace::Period(Span::from_ns(1)),
        error: PeriodError::TooShort {
            period: Span::from_ns(1),
            min: Span::from_ns(1_000),
        },
    }
}

#[test]
fn loads_probes_and_its_checks_before_measuring() {
    let period = "--period 1ns is too short: it must be at least 1.00 µs";
    said(
        LoadError::ProbePlan(probe_plan(too_short())),
        &[period],
        PARAMS,
    );
    said(
        LoadError::ProbePlan(probe_plan(SessionPlanError::TimeoutNotPositive)),
        &["--timeout must be positive"],
        USAGE,
    );
    said(
        LoadError::ProbePlan(probe_plan(SessionPlanError::NoProbes)),
        &["at least 1 probe must be sent"],
        PARAMS,
    );
    let hint =
        "Start `misura reflect` there (port 862), or name another with --reflector HOST[:PORT]";
    let missing = |why| LoadError::ReflectorMissing {
        reflector: "198.18.0.2".into(),
        why,
    };
    said(
        missing(ReflectorWhy::Plan(probe_plan(too_short()))),
        &[&format!(
            "checked before measuring: the probes' reflector 198.18.0.2: {period}. {hint}"
        )],
        ERROR,
    );
    let silent = silent();
    said(
        missing(ReflectorWhy::Probe(Box::new(silent))),
        &[&format!("checked before measuring: the probes' reflector 198.18.0.2: no reply from 198.18.0.2: {SILENT}. {hint}")],
        ERROR,
    );
    said(
        missing(ReflectorWhy::Said("no answer".into())),
        &[&format!(
            "checked before measuring: the probes' reflector 198.18.0.2: no answer. {hint}"
        )],
        ERROR,
    );
    for (rr, words) in [(true, " and the --rr transactions'"), (false, "")] {
        let e = LoadError::ServerMissing {
            host: "h".into(),
            rr,
            why: "refused".into(),
        };
        said(
            e,
            &[&format!("checked before measuring: refused. Start `misura serve` on h (the load's server{words}), or give its port as HOST:PORT")],
            ERROR,
        );
    }
}

#[test]
fn rtts_silent_reflector_and_the_store() {
    let silent = silent();
    said(
        silent,
        &[&format!("no reply from 198.18.0.2: {SILENT}")],
        ERROR,
    );
    let icmp = RttError::NoReply {
        target: "t".into(),
        why: NoReplyWhy::PortUnreachable,
    };
    said(icmp, &["no reply from t: the host answered ICMP port unreachable: nothing listens on that UDP port (start `misura reflect` or another STAMP reflector there)"], ERROR);
    let foreign = || StoreError::Foreign {
        path: "/s/x.db".into(),
    };
    let line = "/s/x.db: not a misura results store (another program's SQLite database); choose another file with --store, or --no-store";
    assert_eq!(sentence(&foreign()).as_deref(), Some(line));
    let agent = misura_agent::AgentError::Store(foreign());
    assert_eq!(sentence(&agent).as_deref(), Some(line));
    let newer = StoreError::Newer {
        path: "/s/x.db".into(),
        found: 99,
    };
    assert_eq!(
        sentence(&newer).unwrap(),
        format!("/s/x.db: written by a newer misura (store version 99, this one reads up to {}); upgrade misura or use another --store", misura_store::SCHEMA_VERSION)
    );
    // The store's output class is the binary's (`store_failure`).
    let e = crate::shared::store::store_failure(foreign());
    assert_eq!(
        (e.to_string().as_str(), crate::shared::exit::code(e.class())),
        (line, OUTPUT)
    );
}

#[test]
fn a_services_refusal_keeps_its_words_and_class() {
    let why = "CIR+EIR is more than the link carries".to_string();
    let error = misura_measure::load::LoadError::Inconsistent { what: "cir", why };
    let e = BenchError::Service {
        service: "data".into(),
        error,
    };
    let line = "service data: cir: CIR+EIR is more than the link carries";
    said(e, &[line], PARAMS);
}

#[test]
fn a_udp_port_that_cannot_be_bound_names_port_alone_and_inside_rtt() {
    let addr: std::net::SocketAddr = "0.0.0.0:862".parse().unwrap();
    let in_use = || SysError::PortInUse {
        addr,
        source: std::io::Error::from_raw_os_error(98),
    };
    let os = std::io::Error::from_raw_os_error(98).to_string();
    let line = format!(
        "binding 0.0.0.0:862: the port is in use (see `ss -uanp`), or choose another with --port: {os}"
    );
    said(in_use(), &[line.as_str(), os.as_str()], ERROR);
    // reflect's listener: a step naming the address, the bind its cause.
    let setup = RttError::Setup {
        what: "listening on UDP 0.0.0.0:862".into(),
        source: in_use(),
    };
    said(
        setup,
        &["listening on UDP 0.0.0.0:862", line.as_str(), os.as_str()],
        ERROR,
    );
    // rtt's own socket: carried transparently.
    said(
        RttError::Sys(in_use()),
        &[line.as_str(), os.as_str()],
        ERROR,
    );
    assert!(!in_use().to_string().contains("--"), "{}", in_use());

    let privileged = SysError::PrivilegedPort { port: 862 };
    assert!(!privileged.to_string().contains("--"), "{privileged}");
    let (lines, _) = printed(privileged);
    assert_eq!(
        lines,
        ["binding UDP port 862 (a privileged port; or choose a port >= 1024 with --port) needs CAP_NET_BIND_SERVICE: run as root or grant it with `setcap cap_net_bind_service+ep $(which misura)`"]
    );
}

/// The lab's refusals of a shape name `lab up`'s flags here, and only
/// here: the lab says the setting.
#[test]
fn a_refused_shape_is_worded_with_lab_ups_flags() {
    use misura_lab::{LabError, Topology};
    let cases = [
        (
            LabError::ShapeNotApplicable {
                topology: Topology::Hosts,
                managed_queue: false,
            },
            "--shape applies to --topology switch",
        ),
        (
            LabError::ShapeNotApplicable {
                topology: Topology::Switch,
                managed_queue: true,
            },
            "qdisc=fq_codel applies to --topology routed",
        ),
        (
            LabError::NotShapeable {
                prefix: "misura-".into(),
                topology: Topology::Routed,
            },
            "misura lab up --topology routed --shape RATE",
        ),
        (
            LabError::QdiscMissing {
                qdisc: "fq_codel".into(),
                config: "FQ_CODEL".into(),
            },
            "--shape 20M,queue=16K",
        ),
    ];
    for (e, says) in cases {
        assert!(!e.to_string().contains("--"), "the lab names no flag: {e}");
        let worded = crate::shared::words::said(&e);
        assert!(worded.contains(says), "{worded}");
        assert_eq!(chain(&anyhow::Error::new(e)), vec![worded]);
    }
}
