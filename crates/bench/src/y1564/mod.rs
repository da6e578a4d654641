//! ITU-T Y.1564 service activation on the frame engine. Each service (up
//! to eight, told apart by VLAN and PCP) first runs its configuration test
//! alone, step by step; then all services run together at their CIR for
//! the performance test, counted per second for the availability. Steps,
//! rules and verdicts are `misura_measure::load::y1564`'s: each step is
//! judged at the rate the tester really sent. Frame delay is the load
//! frames' transit from the sender's user clock (carried in the frame) to
//! the RX stamp (the NIC's where the ring has them, the kernel's
//! otherwise), an upper bound that includes the tester's own send path.

mod availability;
pub mod fit;
pub mod request;
mod run_verdict;

pub use run_verdict::{run_verdict, Judged, RunVerdict};

use crate::error::{BenchError, Result};
use misura_cli::warnings::Warn;
use misura_engine::{self as frames, open::Engine, Flow, TrialRun, TrialSpec};
use misura_measure::load::y1564 as rules;
use misura_measure::time::Span;
use misura_report::load::LoadFlow;
use misura_report::y1564::{
    PerformanceReport, PerformanceRow, ServiceConfig, ServiceReport, StepReport,
};
use misura_wire::{MacAddr, VlanTag};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A whole Y.1564 run, resolved: services checked against the ports, the
/// engine's frame format settled.
pub struct Plan {
    pub services: Vec<ServiceConfig>,
    /// A configuration-test step.
    pub step: Span,
    /// The performance test (zero: none).
    pub perf: Span,
    /// Runs of a step the tester spoiled.
    pub tester_retries: u32,
    pub ethertype: u16,
    pub dst: MacAddr,
    pub src: MacAddr,
    pub cpus: Vec<usize>,
}

/// What the run measured.
pub struct Figures {
    pub services: Vec<ServiceReport>,
    pub performance: Option<PerformanceReport>,
}

/// Both tests of `plan` on `engine` (opened in the plan's frame format),
/// until done or `stop` is set; warnings go to `warnings`.
pub(crate) fn measure_services(
    plan: &Plan,
    engine: &mut Engine,
    progress: &dyn super::Progress,
    stop: &AtomicUsize,
    warnings: &mut Vec<misura_report::Warning>,
) -> Result<Figures, BenchError> {
    let mut ctx = Ctx {
        engine,
        ethertype: plan.ethertype,
        dst: plan.dst,
        src: plan.src,
        cpus: plan.cpus.clone(),
        stop,
        progress,
    };
    let stopped = || stop.load(Ordering::Relaxed) != 0;
    let steps_of = plan
        .services
        .iter()
        .map(|s| {
            rules::config_test_steps(&rule_spec(s)).map_err(|error| BenchError::Service {
                service: s.name.clone(),
                error,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    // The run's planned time after each step, for the progress line.
    let (step_time, perf) = (plan.step, plan.perf);
    let steps = steps_of.iter().map(|p| p.len() as i64).sum::<i64>();
    let mut after = Span::from_ns(steps.saturating_mul(step_time.as_ns())) + perf;
    let mut reports = Vec::new();
    for (s, steps_planned) in plan.services.iter().zip(steps_of) {
        let spec = rule_spec(s);
        let mut steps = Vec::new();
        for step in steps_planned {
            if stopped() {
                break;
            }
            after = after - step_time;
            steps.push(config_step(
                &mut ctx,
                s,
                &spec,
                &step,
                (step_time, after),
                plan.tester_retries,
                warnings,
            )?);
        }
        let (config_pass, config_inconclusive) = verdict(&steps);
        reports.push(ServiceReport {
            service: s.clone(),
            config_test: steps,
            config_pass,
            config_inconclusive,
        });
    }
    let performance = if perf.is_positive() && !stopped() {
        Some(performance(&mut ctx, &plan.services, perf)?)
    } else {
        None
    };
    Ok(Figures {
        services: reports,
        performance,
    })
}

impl Figures {
    /// The run's verdict (see [`run_verdict()`]).
    pub fn verdict(&self, interrupted: bool) -> RunVerdict {
        let configs: Vec<Judged> = self
            .services
            .iter()
            .map(|r| (r.config_pass, r.config_inconclusive))
            .collect();
        let performance = self.performance.as_ref().map(|p| (p.pass, p.inconclusive));
        run_verdict(&configs, performance, interrupted)
    }

    /// The largest 95 % uncertainty of a step's frame delay over the
    /// whole run (configuration steps and the performance test), in ns:
    /// the run-wide figure for the RX clock's fit.
    pub fn fd_u95_max_ns(&self) -> Option<f64> {
        self.services
            .iter()
            .flat_map(|r| r.config_test.iter())
            .chain(
                self.performance
                    .iter()
                    .flat_map(|p| p.services.iter().map(|r| &r.step)),
            )
            .filter_map(|s| s.fd_u95_ns)
            .reduce(f64::max)
    }
}

struct Ctx<'a> {
    engine: &'a mut Engine,
    ethertype: u16,
    dst: MacAddr,
    src: MacAddr,
    cpus: Vec<usize>,
    stop: &'a AtomicUsize,
    progress: &'a dyn super::Progress,
}

impl Ctx<'_> {
    fn run(
        &mut self,
        services: &[&ServiceConfig],
        rates_bps: &[f64],
        duration: Span,
        per_second: bool,
    ) -> Result<TrialRun> {
        let flows = services
            .iter()
            .zip(rates_bps)
            .map(|(s, &bps)| Flow {
                rate_fps: bps / (s.frame_bytes as f64 * 8.0),
                payloads: vec![payload(s)],
                vlan: (s.vlan.is_some() || s.pcp.is_some()).then(|| VlanTag {
                    pcp: s.pcp.unwrap_or(0),
                    dei: false,
                    vid: s.vlan.unwrap_or(0),
                }),
            })
            .collect();
        let t = misura_sys::clock::realtime_ns() as u64;
        let spec = TrialSpec {
            flows,
            duration,
            burst: None,
            drain: frames::DRAIN,
            max_backlog: Span::from_ns(1_000_000),
            catch_up_frames: frames::CATCH_UP_FRAMES,
            session_id: (t ^ (t >> 31) ^ 0x5931_3536) as u32,
            ethertype: self.ethertype,
            dst: self.dst,
            src: self.src,
            cpus: self.cpus.clone(),
            interval: per_second.then_some(Span::from_secs(1)),
        };
        Ok(frames::run_trial(self.engine, &spec, None, self.stop)?)
    }
}

/// What a step measured; `short` when the tester fell short of the rate
/// (on every attempt), so the step is judged at the rate it did send.
fn measured(
    s: &ServiceConfig,
    offered_bps: f64,
    f: &LoadFlow,
    duration: Span,
    short: bool,
) -> rules::StepMeasured {
    let bits = s.frame_bytes as f64 * 8.0;
    let (delay, _) = delay_of(f);
    rules::StepMeasured {
        sent_bps: short.then_some(f.achieved_fps * bits),
        catch_up_frames: f.catch_up_frames,
        offered_bps,
        received_bps: f.received as f64 * bits * 1e9 / duration.as_ns().max(1) as f64,
        frames_sent: f.sent,
        frames_lost: f.lost,
        // Nothing received leaves no delay to judge: FLR fails the step.
        fd_mean: Span::from_ns(delay.mean_ns.map_or(0, |v| v.round() as i64)),
        fd_max: Span::from_ns(delay.max_ns.unwrap_or(0)),
        fdv: Span::from_ns(match (delay.p999_ns, delay.min_ns) {
            (Some(p), Some(m)) => p - m,
            _ => 0,
        }),
        available_ratio: None,
    }
}

/// The frame delays a step is judged on: NIC RX stamps where the ring had
/// them (the frames the NIC stamped), kernel stamps otherwise.
fn delay_of(f: &LoadFlow) -> (&misura_report::SummarySnapshot, &'static str) {
    match &f.transit_hardware {
        Some(h) if h.count > 0 => (h, "nic_hardware"),
        _ => (&f.transit, "kernel_software"),
    }
}

fn step_report(
    label: &str,
    m: &rules::StepMeasured,
    v: rules::Verdict,
    run: &TrialRun,
    flow: usize,
) -> StepReport {
    let tester_limit = run.trial.tester_limit.clone();
    let delay = run.trial.flows.get(flow).map(delay_of);
    let hardware = delay.is_some_and(|(_, src)| src == "nic_hardware");
    StepReport {
        fd_min_ns: delay.and_then(|(d, _)| d.min_ns),
        fd_source: delay.map(|(_, src)| src.to_string()),
        fd_frames: delay.map(|(d, _)| d.count),
        fd_u95_ns: run.trial.hardware_u95_ns.filter(|_| hardware),
        label: label.into(),
        offered_bps: m.offered_bps,
        received_bps: m.received_bps,
        frames_sent: m.frames_sent,
        frames_lost: m.frames_lost,
        catch_up_frames: m.catch_up_frames,
        flr: if m.frames_sent > 0 {
            m.frames_lost as f64 / m.frames_sent as f64
        } else {
            0.0
        },
        fd_mean_ns: (m.frames_sent > m.frames_lost).then_some(m.fd_mean.as_ns() as f64),
        fd_max_ns: (m.frames_sent > m.frames_lost).then_some(m.fd_max.as_ns()),
        fdv_ns: (m.frames_sent > m.frames_lost).then_some(m.fdv.as_ns()),
        // Judged at the rate the tester sent: a failure there is the SUT's
        // even when the tester fell short; a pass short of the rate is no
        // verdict (rules::judge_step).
        pass: v.pass,
        inconclusive: v.inconclusive,
        reasons: v.reasons,
        tester_limit,
        spoiled_attempts: Vec::new(),
    }
}

fn rule_spec(s: &ServiceConfig) -> rules::ServiceSpec {
    rules::ServiceSpec {
        name: s.name.clone(),
        vlan: s.vlan,
        pcp: s.pcp,
        frame_bytes: s.frame_bytes as u64,
        cir_bps: s.cir_bps,
        eir_bps: s.eir_bps,
        thresholds: rules::Thresholds {
            fd: Span::from_ns(s.fd_ns),
            fdv: Span::from_ns(s.fdv_ns),
            flr_ratio: s.flr,
            availability_ratio: s.availability,
        },
    }
}

/// One configuration-test step of service `s`. A step the tester spoiled
/// (its loop descheduled past the schedule's slack) is run again, up to
/// `retries` times; each spoiled attempt is kept in the step and warned of.
fn config_step(
    ctx: &mut Ctx,
    s: &ServiceConfig,
    spec: &rules::ServiceSpec,
    step: &rules::Step,
    (duration, after): (Span, Span),
    retries: u32,
    warnings: &mut Vec<misura_report::Warning>,
) -> Result<StepReport> {
    let mut spoiled = Vec::new();
    let run = loop {
        ctx.progress.step(
            format!(
                "service {} {} at {:.3} Mb/s{}",
                s.name,
                step.label,
                step.rate_bps / 1e6,
                if spoiled.is_empty() {
                    String::new()
                } else {
                    format!(" (attempt {})", spoiled.len() + 1)
                }
            ),
            duration.to_std(),
            Some(after.to_std()),
        );
        let run = ctx.run(&[s], &[step.rate_bps], duration, false)?;
        let stopped = ctx.stop.load(Ordering::Relaxed) != 0;
        match spoiled_by(&run) {
            Some(w) if spoiled.len() < retries as usize && !stopped => {
                let why = format!(
                    "service {} {} attempt {}: {w}",
                    s.name,
                    step.label,
                    spoiled.len() + 1
                );
                warnings.push(Warn::TesterRepeated { why }.into());
                spoiled.push(w.clone());
            }
            _ => break run,
        }
    };
    let f = run.trial.flows.first().ok_or(BenchError::NoFlow)?;
    let m = measured(
        s,
        step.rate_bps,
        f,
        duration,
        run.trial.tester_limit.is_some(),
    );
    let v = rules::judge_step(spec, step, &m);
    if let Some(w) = &run.trial.tester_limit {
        let why = format!("service {} {}: {w}", s.name, step.label);
        warnings.push(Warn::TesterLimited { why }.into());
    }
    Ok(StepReport {
        spoiled_attempts: spoiled,
        ..step_report(&step.label, &m, v, &run, 0)
    })
}

/// Why a step's run says nothing certain and is worth running again: the
/// tester fell short, or the SUT lost no more than the tester's own
/// catch-up bursts (which a policer's small bucket may drop).
fn spoiled_by(run: &TrialRun) -> Option<String> {
    let t = &run.trial;
    t.tester_limit.clone().or_else(|| {
        let (lost, catch_up) = (t.lost(), t.catch_up_frames());
        (lost > 0 && lost <= catch_up).then(|| {
            format!("{lost} frames lost, no more than the {catch_up} the tester sent back to back catching up after it was descheduled")
        })
    })
}

/// A service's payload P: its frame less Ethernet header, FCS and any tag.
pub fn payload(s: &ServiceConfig) -> usize {
    s.frame_bytes - 18 - usize::from(s.vlan.is_some() || s.pcp.is_some()) * 4
}

/// The performance test: every service at its CIR together, counted per
/// second for the availability.
fn performance(ctx: &mut Ctx, services: &[ServiceConfig], perf: Span) -> Result<PerformanceReport> {
    let all: Vec<&ServiceConfig> = services.iter().collect();
    let rates: Vec<f64> = services.iter().map(|s| s.cir_bps).collect();
    ctx.progress.step(
        format!("performance test, {} service(s) at CIR", services.len()),
        perf.to_std(),
        Some(std::time::Duration::ZERO),
    );
    let run = ctx.run(&all, &rates, perf, true)?;
    let mut rows = Vec::new();
    for (i, s) in services.iter().enumerate() {
        let f = &run.trial.flows[i];
        let (availability, unavailable_s) = availability::availability(&run.intervals[i]);
        let m = rules::StepMeasured {
            available_ratio: Some(availability),
            ..measured(s, s.cir_bps, f, perf, run.trial.tester_limit.is_some())
        };
        let v = rules::judge_performance(&rule_spec(s), &m);
        rows.push(PerformanceRow {
            name: s.name.clone(),
            step: step_report("performance", &m, v, &run, i),
            availability,
            unavailable_s,
        });
    }
    let steps: Vec<StepReport> = rows.iter().map(|r| r.step.clone()).collect();
    let (pass, inconclusive) = verdict(&steps);
    Ok(PerformanceReport {
        duration_s: perf.as_ns() as f64 / 1e9,
        services: rows,
        load: run.trial,
        pass,
        inconclusive,
    })
}

/// (pass, inconclusive) of a list of steps: PASS when every step passed;
/// FAIL when one failed on its own measurement; else inconclusive (a step
/// rests on the tester's limit).
pub fn verdict(steps: &[StepReport]) -> (bool, bool) {
    let pass = !steps.is_empty() && steps.iter().all(|st| st.pass);
    let failed = steps.iter().any(|st| !st.pass && !st.inconclusive);
    (
        pass,
        !pass && !failed && steps.iter().any(|st| st.inconclusive),
    )
}
