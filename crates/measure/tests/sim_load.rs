//! The load methods against the fluid model SUT, in virtual time: the
//! throughput search finds the model's NDR and PDR to the stated resolution,
//! a slow tester caps the search instead of being blamed on the SUT, the
//! frame loss steps stop on two clean trials, the back-to-back search
//! recovers the model's buffer, and Y.1564 passes and fails where it should.

use misura_measure::load::b2b::{
    corrected_buffer_time_ns, implied_buffer_time_ns, B2bConfig, B2bSearch,
};
use misura_measure::load::flr::FlrPlan;
use misura_measure::load::model::{LossKnee, ModelSut};
use misura_measure::load::rate::{line_rate_fps, RateSchedule};
use misura_measure::load::search::{
    LossTarget, SearchConfig, SearchOutcome, StoppedBy, ThroughputSearch, TrialResult, MAX_AIM,
};
use misura_measure::load::y1564::{
    config_test_steps, judge_performance, judge_step, ServiceSpec, StepMeasured, Thresholds,
};
use misura_measure::time::{Instant, Span};
use proptest::prelude::*;

fn line_1g() -> f64 {
    line_rate_fps(64, 1e9, false).unwrap()
}

/// Run a search against `sut` with a tester that offers every rate exactly.
fn search(sut: &ModelSut, cfg: SearchConfig) -> SearchOutcome {
    let bound = cfg.max_trials as usize + 1;
    let mut s = ThroughputSearch::new(cfg).unwrap();
    for _ in 0..bound {
        let Some(req) = s.next_trial() else { break };
        let (sent, received) = sut.trial(req.rate_fps, req.duration);
        s.record(TrialResult {
            offered_fps: req.rate_fps,
            achieved_fps: req.rate_fps,
            sent,
            received,
            tester_limited: false,
            catch_up_frames: 0,
        })
        .unwrap();
    }
    assert!(
        s.next_trial().is_none(),
        "the search ran past its trial budget"
    );
    s.outcome()
}

/// The bound brackets `truth` and is as narrow as asked.
fn assert_brackets(o: &SearchOutcome, name: &str, truth: f64, res: f64) {
    let b = o.bound(name).unwrap();
    let (l, u) = (b.lower_fps.unwrap(), b.upper_fps.unwrap());
    assert!(b.found, "{name}: {b:?}");
    assert!(
        l <= truth * (1.0 + 1e-6) && u >= truth * (1.0 - 1e-6),
        "{name}: {l} ..{u} misses {truth}"
    );
    assert!((u - l) / u <= res, "{name}: {l} .. {u} wider than {res}");
}

#[test]
fn search_finds_the_models_ndr_and_pdr() {
    let line = line_1g();
    let sut = ModelSut::new(1e6, 10_000.0, Span::from_ns(5_000)).unwrap();
    let cfg = SearchConfig::rfc2544(1e4, line);
    let o = search(&sut, cfg);
    // 60 s trials: the buffer hides 10 000 frames of overload.
    let ndr = 1e6 + 10_000.0 / 60.0;
    let pdr = ndr / (1.0 - 0.005);
    assert_brackets(&o, "NDR", ndr, 0.01);
    assert_brackets(&o, "PDR", pdr, 0.01);
    assert_eq!(o.stopped_by, Some(StoppedBy::Resolution));
    let finals = o
        .trials
        .iter()
        .filter(|t| t.request.duration == Span::from_secs(60))
        .count();
    println!(
        "NDR/PDR of a 1 Mfps model: {} trials ({finals} of 60 s)",
        o.trials.len()
    );
    assert!(o.trials.len() <= 30, "{} trials", o.trials.len());
    assert!(o.trials.iter().all(|t| !t.tester_limited));
}

#[test]
fn short_trials_overestimate_and_the_final_phase_corrects_it() {
    // A deep buffer: 1 s trials see 1.2 Mfps loss-free, 60 s trials 1.0033.
    let sut = ModelSut::new(1e6, 200_000.0, Span::from_ns(0)).unwrap();
    let o = search(&sut, SearchConfig::rfc2544(1e4, line_1g()));
    assert_brackets(&o, "NDR", 1e6 + 200_000.0 / 60.0, 0.01);
    let short_best = o
        .trials
        .iter()
        .filter(|t| t.request.duration == Span::from_secs(1) && t.loss_ratio == 0.0)
        .map(|t| t.request.rate_fps)
        .fold(0.0, f64::max);
    assert!(short_best > 1.15e6, "short phase best {short_best}");
}

#[test]
fn search_finds_a_loss_knee() {
    // Drops 0.1 % of everything above 600 kfps: NDR is the knee, PDR the
    // fluid limit scaled by the knee's loss.
    let knee = LossKnee {
        above_fps: 600_000.0,
        loss_ratio: 0.001,
    };
    let sut = ModelSut::new(1e6, 10_000.0, Span::from_ns(0))
        .unwrap()
        .with_knee(knee);
    let o = search(&sut, SearchConfig::rfc2544(1e4, line_1g()));
    assert_brackets(&o, "NDR", 600_000.0, 0.01);
    assert_brackets(&o, "PDR", (1e6 + 10_000.0 / 60.0) * 0.999 / 0.995, 0.01);
    println!("knee model: {} trials", o.trials.len());
}

/// One trial by a sender that cannot send more than `capacity_fps`,
/// driving a real [`RateSchedule`] in 100 µs batches.
fn slow_sender_trial(
    sut: &ModelSut,
    rate_fps: f64,
    duration: Span,
    capacity_fps: f64,
) -> TrialResult {
    let duration_ns = duration.as_ns();
    let batch_ns = 100_000;
    let per_batch = (capacity_fps * batch_ns as f64 / 1e9) as u64;
    let mut sched =
        RateSchedule::new(rate_fps, Instant::from_ns(0), Span::from_ns(1_000_000)).unwrap();
    let mut now = 0;
    while now < duration_ns {
        let n = sched.due(Instant::from_ns(now)).min(per_batch);
        sched.on_sent(n);
        now += batch_ns;
    }
    let f = sched.figures(Instant::from_ns(duration_ns));
    let (_, received) = sut.trial(f.achieved_fps, duration);
    TrialResult {
        offered_fps: rate_fps,
        achieved_fps: f.achieved_fps,
        sent: f.sent,
        received: received.min(f.sent),
        tester_limited: f.tester_limited,
        catch_up_frames: 0,
    }
}

#[test]
fn a_slow_tester_caps_the_search_and_says_so() {
    let sut = ModelSut::new(1e6, 10_000.0, Span::from_ns(0)).unwrap();
    let mut cfg = SearchConfig::rfc2544(1e4, line_1g());
    cfg.final_trial = Span::from_secs(10); // keeps the virtual sender loop short
    let mut s = ThroughputSearch::new(cfg).unwrap();
    for _ in 0..101 {
        let Some(req) = s.next_trial() else { break };
        s.record(slow_sender_trial(
            &sut,
            req.rate_fps,
            req.duration,
            700_000.0,
        ))
        .unwrap();
    }
    let o = s.outcome();
    assert_eq!(o.stopped_by, Some(StoppedBy::TesterLimit));
    let cap = o.tester_max_fps.unwrap();
    assert!(cap <= 700_001.0 && cap > 690_000.0, "cap {cap}");
    assert!(
        o.trials[0].tester_limited,
        "the line-rate trial was the tester's"
    );
    let ndr = o.bound("NDR").unwrap();
    assert!(
        ndr.found
            && ndr.upper_fps.is_none()
            && ndr.lower_fps.is_some_and(|l| l <= cap && l > cap * 0.995),
        "{ndr:?}"
    );
    println!(
        "tester-limited search: {} trials, cap {cap:.0} fps",
        o.trials.len()
    );
}

/// Issue 37: a device the tester outruns 30 times over. Every trial above
/// 250 kfps falls short of its rate and loses 96 % of what was sent: each
/// is an upper bound at the rate achieved, so the search goes on below and
/// finds the device's NDR instead of giving up as the tester's limit.
#[test]
fn trials_the_tester_fell_short_in_but_lost_are_upper_bounds() {
    let truth = 8_400.0;
    let sut = ModelSut::new(truth, 0.0, Span::from_ns(0)).unwrap();
    let line = line_rate_fps(1518, 10e9, false).unwrap();
    let mut cfg = SearchConfig::rfc2544(line * 1e-4, line);
    cfg.targets = vec![LossTarget {
        name: "NDR".into(),
        loss_ratio: 0.0,
    }];
    cfg.short_trial = Span::from_millis(500);
    cfg.final_trial = Span::from_secs(3);
    cfg.relative_resolution = 0.005;
    let mut s = ThroughputSearch::new(cfg).unwrap();
    for _ in 0..101 {
        let Some(req) = s.next_trial() else { break };
        let r = slow_sender_trial(&sut, req.rate_fps, req.duration, 250_000.0);
        if req.rate_fps > 250_000.0 {
            assert!(s.tester_limited(&r), "{req:?}: {r:?}");
            assert!(!s.needs_retry(&r), "a lossy short trial is conclusive");
        }
        s.record(r).unwrap();
    }
    let o = s.outcome();
    assert_eq!(o.stopped_by, Some(StoppedBy::Resolution), "{o:#?}");
    assert!(o.tester_max_fps.is_none(), "no rate was left undecided");
    let ndr = o.bound("NDR").unwrap();
    assert!(ndr.found, "{ndr:?}");
    let (l, u) = (ndr.lower_fps.unwrap(), ndr.upper_fps.unwrap());
    assert!(l <= truth + 1.0 && u >= truth, "{l} .. {u} misses {truth}");
    // The evidence: each bound names the trial that set it, at the rate
    // that trial achieved.
    let lower = &o.trials[ndr.lower_trial.unwrap()];
    let upper = &o.trials[ndr.upper_trial.unwrap()];
    assert_eq!(lower.loss_ratio, 0.0);
    assert!(lower.result.achieved_fps >= l && !lower.tester_limited);
    assert!(upper.loss_ratio > 0.0 && (upper.result.achieved_fps - u).abs() < 1e-6);
    let short_and_lossy = o
        .trials
        .iter()
        .filter(|t| t.tester_limited && t.loss_ratio > 0.9)
        .count();
    assert!(short_and_lossy >= 1, "the first trial was the tester's");
    println!(
        "30x device: {} trials, NDR {l:.0} .. {u:.0} (truth {truth})",
        o.trials.len()
    );
}

/// A short trial that lost nothing proves nothing above the rate it
/// achieved: it is worth a retry, and recorded it caps the search there.
#[test]
fn a_loss_free_short_trial_leaves_the_rates_above_it_undecided() {
    let mut cfg = SearchConfig::rfc2544(10.0, 1e6);
    cfg.short_trial = cfg.final_trial; // one phase: its bounds are the outcome's
    let mut s = ThroughputSearch::new(cfg).unwrap();
    let req = s.next_trial().unwrap();
    let r = TrialResult {
        offered_fps: req.rate_fps,
        achieved_fps: 2e5,
        sent: 200_000,
        received: 200_000,
        tester_limited: true,
        catch_up_frames: 0,
    };
    assert!(s.needs_retry(&r));
    let nothing = TrialResult {
        sent: 0,
        received: 0,
        achieved_fps: 0.0,
        ..r
    };
    assert!(s.needs_retry(&nothing), "nothing sent proves nothing");
    // A short trial that lost no more than the tester's own catch-up
    // bursts: the loss may be the tester's.
    let bursty = TrialResult {
        offered_fps: req.rate_fps,
        achieved_fps: req.rate_fps * 0.9,
        sent: 1_000_000,
        received: 999_990,
        tester_limited: true,
        catch_up_frames: 16,
    };
    assert!(s.needs_retry(&bursty));
    // More lost than the catch-up and than every target allows: conclusive.
    assert!(!s.needs_retry(&TrialResult {
        received: 900_000,
        catch_up_frames: 9,
        ..bursty
    }));
    // The same loss in a trial that kept its rate is the SUT's, bursts and
    // all (the CI run of 1833ced gave up on three such trials).
    assert!(!s.needs_retry(&TrialResult {
        achieved_fps: req.rate_fps,
        tester_limited: false,
        ..bursty
    }));
    s.record(r).unwrap();
    assert_eq!(s.outcome().tester_max_fps, Some(2e5));
    let ndr = s.outcome().bound("NDR").cloned().unwrap();
    assert_eq!((ndr.lower_fps, ndr.lower_trial), (Some(2e5), Some(0)));
}

#[test]
fn frame_loss_steps_stop_after_two_clean_trials() {
    let line = line_1g();
    let sut = ModelSut::new(1e6, 10_000.0, Span::from_ns(0)).unwrap();
    let mut plan = FlrPlan::new(line, 10.0, Span::from_secs(60)).unwrap();
    for _ in 0..11 {
        let Some((_, rate, dur)) = plan.next_trial() else {
            break;
        };
        let (sent, received) = sut.trial(rate, dur);
        plan.record(sent, received, false);
    }
    let pcts: Vec<f64> = plan.points().iter().map(|p| p.percent).collect();
    // 70 % of 1.488 Mfps is 1.042 Mfps, still above the model.
    assert_eq!(pcts, vec![100.0, 90.0, 80.0, 70.0, 60.0, 50.0]);
    assert!(plan.complete());
    let first = &plan.points()[0];
    assert!((first.loss_ratio - (1.0 - (1e6 * 60.0 + 10_000.0) / (line * 60.0))).abs() < 1e-6);
}

#[test]
fn back_to_back_recovers_the_models_buffer() {
    let line = line_1g();
    let sut = ModelSut::new(1e6, 5_000.0, Span::from_ns(0)).unwrap();
    let mut b2b = B2bSearch::new(B2bConfig::rfc2544(line)).unwrap();
    for _ in 0..5_000 {
        let Some(req) = b2b.next_burst() else { break };
        b2b.record(req.frames, sut.burst(req.frames, req.rate_fps), false);
    }
    let o = b2b.outcome();
    assert_eq!(o.per_trial.len(), 50);
    let expected = 5_000.0 / (1.0 - 1e6 / line);
    assert!(
        (o.mean_frames - expected).abs() <= 2.0,
        "{} vs {expected}",
        o.mean_frames
    );
    // The throughput the search measured, as RFC 9004 asks.
    let thr = search(&sut, SearchConfig::rfc2544(1e4, line))
        .bound("NDR")
        .unwrap()
        .lower_fps
        .unwrap();
    let implied = implied_buffer_time_ns(o.mean_frames, line);
    let corrected = corrected_buffer_time_ns(o.mean_frames, line, thr).unwrap();
    let truth = sut.buffer_time_ns(line);
    println!(
        "b2b: {} bursts, mean {:.1} frames, implied {implied:.0} ns, corrected {corrected:.0} ns, model {truth:.0} ns",
        o.bursts, o.mean_frames
    );
    assert!(
        (corrected / truth - 1.0).abs() < 0.03,
        "{corrected} vs {truth}"
    );
    assert!(implied > 2.5 * truth);
}

fn service() -> ServiceSpec {
    ServiceSpec {
        name: "business".into(),
        vlan: Some(200),
        pcp: Some(3),
        frame_bytes: 1000,
        cir_bps: 100e6,
        eir_bps: 50e6,
        thresholds: Thresholds {
            fd: Span::from_ns(5_000_000),
            fdv: Span::from_ns(1_000_000),
            flr_ratio: 0.0001,
            availability_ratio: 0.999,
        },
    }
}

/// One Y.1564 step of 10 s against the model.
fn measure(sut: &ModelSut, spec: &ServiceSpec, rate_bps: f64) -> StepMeasured {
    let dur = Span::from_secs(10);
    let (sent, received) = sut.trial(spec.fps(rate_bps), dur);
    let (fd_mean_ns, fd_max_ns) = sut.delay_ns(spec.fps(rate_bps));
    StepMeasured {
        offered_bps: rate_bps,
        received_bps: received as f64 * (spec.frame_bytes * 8) as f64 / 10.0,
        frames_sent: sent,
        frames_lost: sent - received,
        fd_mean: Span::from_ns(fd_mean_ns),
        fd_max: Span::from_ns(fd_max_ns),
        fdv: Span::from_ns(fd_max_ns - fd_mean_ns),
        available_ratio: Some(1.0),
        sent_bps: None,
        catch_up_frames: 0,
    }
}

#[test]
fn y1564_a_policed_service_passes_every_step() {
    let spec = service();
    let sut = ModelSut::new(1e6, 1000.0, Span::from_ns(100_000))
        .unwrap()
        .with_policer(spec.fps(150e6));
    for step in config_test_steps(&spec).unwrap() {
        let v = judge_step(&spec, &step, &measure(&sut, &spec, step.rate_bps));
        assert!(v.pass, "{}: {:?}", step.label, v.reasons);
    }
    assert!(judge_performance(&spec, &measure(&sut, &spec, spec.cir_bps)).pass);
}

#[test]
fn y1564_an_unpoliced_service_fails_the_overshoot() {
    let spec = service();
    let sut = ModelSut::new(1e6, 1000.0, Span::from_ns(100_000)).unwrap();
    let steps = config_test_steps(&spec).unwrap();
    let over = steps.last().unwrap();
    let v = judge_step(&spec, over, &measure(&sut, &spec, over.rate_bps));
    assert!(!v.pass);
    assert!(
        v.reasons[0].starts_with("traffic not policed"),
        "{:?}",
        v.reasons
    );
}

#[test]
fn y1564_a_device_slower_than_cir_fails_naming_flr() {
    let spec = service();
    // 10 000 frames/s of 1000 B is 80 Mb/s, below the 100 Mb/s CIR.
    let sut = ModelSut::new(10_000.0, 1000.0, Span::from_ns(100_000)).unwrap();
    let verdicts: Vec<_> = config_test_steps(&spec)
        .unwrap()
        .iter()
        .map(|s| {
            (
                s.label.clone(),
                judge_step(&spec, s, &measure(&sut, &spec, s.rate_bps)),
            )
        })
        .collect();
    for (label, v) in &verdicts[..3] {
        assert!(v.pass, "{label}: {:?}", v.reasons);
    }
    let (_, at_cir) = &verdicts[3];
    assert!(!at_cir.pass);
    assert!(
        at_cir.reasons.iter().any(|r| r.starts_with("FLR")),
        "{:?}",
        at_cir.reasons
    );
    assert!(
        at_cir.reasons.iter().any(|r| r.starts_with("FD mean")),
        "{:?}",
        at_cir.reasons
    );
    let perf = judge_performance(&spec, &measure(&sut, &spec, spec.cir_bps));
    assert!(perf.reasons.iter().any(|r| r.starts_with("FLR")));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Whatever the SUT answers, even nonsense, the search ends within its
    /// budget and every bound is ordered.
    #[test]
    fn search_always_terminates_with_ordered_bounds(
        answers in prop::collection::vec(0.0f64..0.02, 1..80),
        max_trials in 1u32..60,
        res in 0.001f64..0.2,
    ) {
        let mut cfg = SearchConfig::rfc2544(1e3, 1e6);
        cfg.max_trials = max_trials;
        cfg.relative_resolution = res;
        let mut s = ThroughputSearch::new(cfg).unwrap();
        let mut calls = 0usize;
        while let Some(req) = s.next_trial() {
            calls += 1;
            prop_assert!(calls <= max_trials as usize);
            prop_assert!((1e3..=1e6).contains(&req.rate_fps));
            let loss = answers[calls % answers.len()];
            let sent = 1_000_000u64;
            let received = sent - (sent as f64 * loss) as u64;
            s.record(TrialResult { offered_fps: req.rate_fps, achieved_fps: req.rate_fps, sent, received, tester_limited: false, catch_up_frames: 0 }).unwrap();
        }
        let o = s.outcome();
        prop_assert!(o.stopped_by.is_some());
        for b in &o.bounds {
            if let (Some(l), Some(u)) = (b.lower_fps, b.upper_fps) {
                prop_assert!(l <= u, "{b:?}");
            }
        }
    }

    /// Against any fluid model the final NDR brackets the truth.
    #[test]
    fn search_brackets_any_models_ndr(thr in 2e4f64..1.4e6, buffer in 0.0f64..1e5) {
        let sut = ModelSut::new(thr, buffer, Span::from_ns(0)).unwrap();
        let o = search(&sut, SearchConfig::rfc2544(1e4, line_1g()));
        let truth = (thr + buffer / 60.0).min(line_1g());
        let b = o.bound("NDR").unwrap();
        let l = b.lower_fps.unwrap();
        prop_assert!(l <= truth * (1.0 + 1e-6), "{b:?} vs {truth}");
        prop_assert!(b.upper_fps.is_none_or(|u| u >= truth * (1.0 - 1e-6)), "{b:?} vs {truth}");
        prop_assert!(b.found, "{b:?}");
    }
}

/// A short trial whose loss the tester's own catch-up bursts may explain
/// decides nothing, and the search never asks for its rate again: it goes below
/// (undecided above, as the tester's limit), each such trial one a caller
/// counts towards giving up (rfc2544 stops after three in a row).
#[test]
fn an_excused_trial_is_not_asked_for_again() {
    let mut cfg = SearchConfig::rfc2544(10.0, 1e5);
    cfg.short_trial = cfg.final_trial;
    let mut s = ThroughputSearch::new(cfg).unwrap();
    let mut rates = Vec::new();
    for _ in 0..10 {
        let Some(req) = s.next_trial() else { break };
        rates.push(req.rate_fps);
        let sent = (req.rate_fps * 60.0) as u64;
        // Falls short and loses 10 frames at every rate, always within 50
        // catch-up frames.
        let r = TrialResult {
            offered_fps: req.rate_fps,
            achieved_fps: req.rate_fps,
            sent,
            received: sent - 10,
            tester_limited: true,
            catch_up_frames: 50,
        };
        assert!(s.needs_retry(&r));
        s.record(r).unwrap();
    }
    assert_eq!(rates.len(), 10);
    assert!(rates.windows(2).all(|w| w[1] < w[0]), "{rates:?}");
    let o = s.outcome();
    let ndr = o.bound("NDR").unwrap();
    assert!(
        ndr.lower_fps.is_none() && ndr.upper_fps.is_none(),
        "{ndr:?}"
    );
    assert!(o.tester_max_fps.is_some_and(|m| m < rates[9]));
}

/// The CI run of 1833ced, trial by trial: a loss-free final trial at 8 472
/// frames/s, then one that kept the 8 503 asked for (8 491 sent, within
/// half the 0.5 % resolution) but lost 5 frames, fewer than its 115
/// catch-up frames. That loss is the SUT's at 8 491: the NDR is found
/// between the two, not left to the tester.
#[test]
fn a_kept_rate_with_loss_is_an_upper_bound_despite_catch_up() {
    let mut cfg = SearchConfig::rfc2544(1000.0, 1e5);
    cfg.short_trial = cfg.final_trial;
    cfg.relative_resolution = 0.005;
    let mut s = ThroughputSearch::new(cfg).unwrap();
    let mut last = None;
    for _ in 0..60 {
        let Some(req) = s.next_trial() else { break };
        let fps = req.rate_fps;
        let achieved = fps * 0.9986;
        let sent = (achieved * 3.0) as u64;
        // Loss-free up to 8 480 frames/s, a few frames lost above.
        let lost = if achieved > 8480.0 { 5 } else { 0 };
        let r = TrialResult {
            offered_fps: fps,
            achieved_fps: achieved,
            sent,
            received: sent - lost,
            tester_limited: false,
            catch_up_frames: 115,
        };
        assert!(!s.needs_retry(&r), "{r:?}");
        s.record(r).unwrap();
        last = Some(fps);
    }
    assert!(last.is_some() && s.next_trial().is_none());
    let o = s.outcome();
    let ndr = o.bound("NDR").unwrap();
    assert!(ndr.found, "{ndr:?}");
    let (l, u) = (ndr.lower_fps.unwrap(), ndr.upper_fps.unwrap());
    assert!(l <= 8480.0 && u > 8480.0 && u - l <= 0.005 * u, "{ndr:?}");
}

/// A busy host's tester sends 2 % less than asked: the next attempt asks
/// for 2 % more (never more than MAX_AIM above the load), and an attempt
/// that then sends the load is not short, though the tester flagged that it
/// could not keep the higher rate it was asked for.
#[test]
fn a_short_tester_is_aimed_above_the_load_it_should_send() {
    let mut cfg = SearchConfig::rfc2544(10.0, 1e6);
    cfg.relative_resolution = 0.005;
    let mut s = ThroughputSearch::new(cfg).unwrap();
    // The first trial, at the maximum, loses half: the next is below it.
    let first = s.next_trial().unwrap().rate_fps;
    s.record(TrialResult {
        offered_fps: first,
        achieved_fps: first,
        sent: 1_000_000,
        received: 500_000,
        tester_limited: false,
        catch_up_frames: 0,
    })
    .unwrap();
    let load = s.next_trial().unwrap().rate_fps;
    assert!(load < first / MAX_AIM, "{load}");
    let short = TrialResult {
        offered_fps: load,
        achieved_fps: load * 0.98,
        sent: 98_000,
        received: 98_000,
        tester_limited: true,
        catch_up_frames: 0,
    };
    assert!(s.tester_limited(&short) && s.needs_retry(&short));
    let aimed = s.aimed_fps(&short);
    assert!(
        (aimed - load / 0.98).abs() < 1e-6 * load,
        "{aimed} for {load}"
    );
    // Far behind: at most 5 % above the load.
    let far = TrialResult {
        achieved_fps: load * 0.5,
        ..short
    };
    assert!(s.aimed_fps(&far) <= (load * MAX_AIM).min(1e6) + 1e-6);
    let reached = TrialResult {
        offered_fps: aimed,
        achieved_fps: load * 0.999,
        sent: 99_900,
        received: 99_900,
        tester_limited: true,
        catch_up_frames: 0,
    };
    assert!(!s.tester_limited(&reached) && !s.needs_retry(&reached));
    // Asked for the load itself, the tester's flag still makes it short.
    assert!(s.tester_limited(&TrialResult {
        offered_fps: load,
        ..reached
    }));
    s.record(reached).unwrap();
    let o = s.outcome();
    assert!(o.tester_max_fps.is_none(), "{o:?}");
}

/// A busy host's tester that once sent 28 000 frames/s and now falls short
/// of 25 285 (sending 25 056, no loss) does not cap the search at 25 056:
/// it reached more before, so the rates between stay to be searched (a run
/// with one busy loop per CPU stopped at the tester's "limit" that way).
#[test]
fn a_short_trial_never_caps_below_what_the_tester_reached() {
    let mut cfg = SearchConfig::rfc2544(10.0, 2e6);
    cfg.short_trial = cfg.final_trial;
    cfg.relative_resolution = 0.005;
    let mut s = ThroughputSearch::new(cfg).unwrap();
    let first = s.next_trial().unwrap().rate_fps;
    s.record(TrialResult {
        offered_fps: first,
        achieved_fps: 27_894.0,
        sent: 83_681,
        received: 75_854,
        tester_limited: true,
        catch_up_frames: 0,
    })
    .unwrap();
    let load = s.next_trial().unwrap().rate_fps;
    assert!(load < 27_894.0, "{load}");
    let short = TrialResult {
        offered_fps: load,
        achieved_fps: load * 0.99,
        sent: 75_000,
        received: 75_000,
        tester_limited: true,
        catch_up_frames: 0,
    };
    assert!(s.needs_retry(&short));
    s.record(short).unwrap();
    let next = s
        .next_trial()
        .expect("the search goes on above the short trial");
    assert!(next.rate_fps > load * 0.99, "{next:?}");
    assert!(s.outcome().tester_max_fps.is_none_or(|m| m >= 27_894.0));
}
