//! The Y.1564 rules' unit tests: steps, bounds and verdicts.

use super::*;

pub(crate) fn spec() -> ServiceSpec {
    ServiceSpec {
        name: "voice".into(),
        vlan: Some(100),
        pcp: Some(5),
        frame_bytes: 1000,
        cir_bps: 100e6,
        eir_bps: 50e6,
        thresholds: Thresholds {
            fd: Span::from_ns(10_000_000),
            fdv: Span::from_ns(2_000_000),
            flr_ratio: 0.001,
            availability_ratio: 0.9999,
        },
    }
}

#[test]
fn steps_and_their_rates() {
    let steps = config_test_steps(&spec()).unwrap();
    let labels: Vec<&str> = steps.iter().map(|s| s.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "25% CIR",
            "50% CIR",
            "75% CIR",
            "100% CIR",
            "CIR+EIR",
            "overshoot"
        ]
    );
    assert_eq!(steps[3].rate_fps, 12_500.0);
    assert_eq!(steps[5].rate_bps, 187.5e6);
    let no_eir = ServiceSpec {
        eir_bps: 0.0,
        ..spec()
    };
    let steps = config_test_steps(&no_eir).unwrap();
    assert_eq!(steps.len(), 5);
    assert_eq!(steps[4].rate_bps, 125e6);
}

#[test]
fn bad_specs_name_the_number() {
    let e = ServiceSpec {
        pcp: Some(8),
        ..spec()
    }
    .check()
    .unwrap_err();
    assert!(e.to_string().starts_with("PCP = 8"), "{e}");
    let nine = vec![spec(); 9];
    assert!(check_services(&nine)
        .unwrap_err()
        .to_string()
        .starts_with("services = 9"));
    assert!(check_services(&[spec(), spec()]).is_err()); // same name
}

#[test]
fn green_rules_name_what_failed() {
    let s = spec();
    let step = &config_test_steps(&s).unwrap()[3];
    let good = StepMeasured {
        offered_bps: 100e6,
        received_bps: 100e6,
        frames_sent: 1_000_000,
        fd_mean: Span::from_ns(1_000_000),
        fd_max: Span::from_ns(3_000_000),
        fdv: Span::from_ns(500_000),
        ..StepMeasured::default()
    };
    assert!(judge_step(&s, step, &good).pass);
    let slow = StepMeasured {
        fd_mean: Span::from_ns(20_000_000),
        fdv: Span::from_ns(5_000_000),
        ..good.clone()
    };
    let v = judge_step(&s, step, &slow);
    assert_eq!(v.reasons.len(), 2);
    assert!(v.reasons[0].starts_with("FD mean") && v.reasons[1].starts_with("FDV"));
    let perf = judge_performance(
        &s,
        &StepMeasured {
            available_ratio: Some(0.99),
            ..good
        },
    );
    assert!(!perf.pass && perf.reasons[0].starts_with("availability"));
}

/// Issue 37: a step judged at the rate the tester really sent.
#[test]
fn a_short_step_fails_on_loss_and_is_inconclusive_on_a_pass() {
    let s = spec();
    let steps = config_test_steps(&s).unwrap();
    let cir100 = &steps[3];
    // Sent 60 of the 100 Mb/s asked for, and the SUT lost 5 % of it.
    let lossy = StepMeasured {
        offered_bps: 100e6,
        sent_bps: Some(60e6),
        received_bps: 57e6,
        frames_sent: 100_000,
        frames_lost: 5_000,
        ..StepMeasured::default()
    };
    let v = judge_step(&s, cir100, &lossy);
    assert!(!v.pass && !v.inconclusive, "{v:?}");
    assert!(v.reasons.iter().any(|r| r.starts_with("FLR")), "{v:?}");
    // The same shortfall with nothing lost: no verdict at 100 Mb/s.
    let clean = StepMeasured {
        received_bps: 60e6,
        frames_lost: 0,
        ..lossy.clone()
    };
    let v = judge_step(&s, cir100, &clean);
    assert!(!v.pass && v.inconclusive, "{v:?}");
    // The overshoot sent short of CIR + EIR but above it still: the
    // SUT let more than CIR + EIR through, a FAIL.
    let overshoot = &steps[5];
    let unpoliced = StepMeasured {
        offered_bps: 187.5e6,
        sent_bps: Some(170e6),
        received_bps: 170e6,
        frames_sent: 100_000,
        ..StepMeasured::default()
    };
    let v = judge_step(&s, overshoot, &unpoliced);
    assert!(!v.pass && !v.inconclusive && v.reasons[0].contains("not policed"));
    // Sent 140 Mb/s of 187.5, policed at 150: policing is not shown.
    let policed = StepMeasured {
        sent_bps: Some(140e6),
        received_bps: 140e6,
        ..unpoliced
    };
    let v = judge_step(&s, overshoot, &policed);
    assert!(v.inconclusive, "{v:?}");
    // A short step whose few lost frames are no more than the tester's
    // own catch-up bursts: no FAIL on loss, no verdict.
    let bursty = StepMeasured {
        received_bps: 59.9e6,
        frames_lost: 20,
        catch_up_frames: 300,
        ..lossy.clone()
    };
    let v = judge_step(&s, cir100, &bursty);
    assert!(
        v.inconclusive && v.reasons[0].contains("catching up"),
        "{v:?}"
    );
    // The same when the tester kept the rate but was descheduled now
    // and then: its catch-up bursts may be what a small bucket dropped.
    let kept = StepMeasured {
        sent_bps: None,
        ..bursty.clone()
    };
    let v = judge_step(&s, cir100, &kept);
    assert!(v.inconclusive && !v.pass, "{v:?}");
    // The overshoot through a policer, the tester short and bursty: it
    // sent 60 Mb/s, the policer passed 48.5 (1.4 % under CIR less the
    // allowance, 225 frames of 3 s at 1000 B) while it dropped the
    // excess as it should; 300 catch-up frames explain the shortfall.
    let bursty_overshoot = StepMeasured {
        offered_bps: 187.5e6,
        sent_bps: Some(160e6),
        received_bps: 98.0e6,
        frames_sent: 60_000,
        frames_lost: 23_250,
        catch_up_frames: 600,
        ..StepMeasured::default()
    };
    let v = judge_step(&s, overshoot, &bursty_overshoot);
    assert!(
        v.inconclusive && v.reasons[0].contains("catching up"),
        "{v:?}"
    );
    let v = judge_step(
        &s,
        overshoot,
        &StepMeasured {
            catch_up_frames: 100,
            ..bursty_overshoot
        },
    );
    assert!(!v.pass && !v.inconclusive, "{v:?}");
    // ... but loss beyond them is the SUT's.
    let v = judge_step(
        &s,
        cir100,
        &StepMeasured {
            catch_up_frames: 300,
            ..lossy
        },
    );
    assert!(!v.pass && !v.inconclusive, "{v:?}");
}

/// A step the tester sent nothing of (starved, or its path broken) is
/// no verdict, in the configuration test and the performance test,
/// whether or not the tester noticed its own shortfall.
#[test]
fn a_step_with_no_frame_sent_is_inconclusive_never_fail() {
    let s = spec();
    let steps = config_test_steps(&s).unwrap();
    let none = StepMeasured {
        offered_bps: 25e6,
        sent_bps: Some(0.0),
        ..StepMeasured::default()
    };
    for step in &steps {
        let v = judge_step(&s, step, &none);
        assert!(!v.pass && v.inconclusive, "{}: {v:?}", step.label);
        assert!(v.reasons[0].contains("sent no frames"), "{v:?}");
    }
    let untold = StepMeasured {
        sent_bps: None,
        available_ratio: Some(1.0),
        ..none
    };
    let v = judge_performance(&s, &untold);
    assert!(!v.pass && v.inconclusive, "{v:?}");
}
