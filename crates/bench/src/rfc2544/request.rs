//! An RFC 2544 run from what it is asked ([`Request`], plain values) to its
//! result: the ports checked, the sizes against their MTU, the link rate
//! (given or the ports'), the calibration profile read, the engine opened,
//! the sizes measured and the result assembled.

use super::{
    inconclusive, measure_sizes, Plan, SizeSpec, Tests, Trials, FRAME_OVERHEAD, MAX_FRAME,
};
use crate::error::{BenchError, Result};
use crate::ports::{self, Ports};
use misura_cli::warnings::Warn;
use misura_engine::{open::open, EngineRequest};
use misura_measure::wire_time::LinkModel;
use misura_oneway::Calibration;
use misura_report::rfc2544::{Rfc2544Config, Rfc2544Report};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// What an RFC 2544 run is asked: every figure plain, its durations
/// within their bounds, its sizes in their syntax (not yet against the
/// ports' MTU).
#[derive(Clone, Debug)]
pub struct Request {
    pub ports: Ports,
    /// The network namespace the ports are in, as the result records it.
    pub netns: Option<String>,
    pub sizes: Vec<SizeSpec>,
    pub tests: Tests,
    /// The link rate; none: the RX port's (else the TX port's).
    pub link_speed_bps: Option<u64>,
    /// The trials' lengths and the searches' bounds.
    pub trials: Trials,
    /// A calibration profile from `misura calibrate`, and whether to use
    /// it though made on another set-up.
    pub calibration: Option<PathBuf>,
    pub accept_profile_mismatch: bool,
}

/// The run `req` asks, until its sizes are done or `stop` is set (the
/// result then says it is incomplete), its progress told to `progress`.
pub fn measure(
    req: &Request,
    progress: &dyn crate::Progress,
    stop: &Arc<AtomicUsize>,
) -> Result<Rfc2544Report> {
    let started = std::time::Instant::now();
    let started_at = misura_cli::meta::now_rfc3339();
    let p = &req.ports;
    let checked = ports::check(p)?;
    let (tx, rx) = (&checked.tx, &checked.rx);
    fit_mtu(&req.sizes, tx.mtu.min(rx.mtu) as usize)?;
    let (link_bps, link_source) = match req.link_speed_bps {
        Some(bps) => (bps, "--link-speed"),
        None => match rx.speed_mbps.or(tx.speed_mbps) {
            Some(m) if m > 0 => (m * 1_000_000, "interface"),
            _ => return Err(BenchError::LinkSpeedUnknown { port: p.rx.clone() }),
        },
    };
    let calibration = req
        .calibration
        .as_ref()
        .map(|path| Calibration::read(path, req.accept_profile_mismatch))
        .transpose()?;
    let engine_req = EngineRequest {
        tx: p.tx.clone(),
        rx: p.rx.clone(),
        ethertype: p.ethertype,
        choice: p.choice,
        cores: p.args.cores as usize,
        max_frame: req
            .sizes
            .iter()
            .flat_map(|s| s.frames.iter())
            .max()
            .copied()
            .unwrap_or(64),
        qdisc_bypass: p.args.qdisc_bypass,
        hardware_stamps: false,
    };
    let engine = open(&engine_req)?;
    let facts = engine.facts();
    let mut warnings: Vec<misura_report::Warning> = facts
        .notes
        .iter()
        .map(|n| Warn::EngineFallback { note: n.clone() }.into())
        .collect();
    let plan = Plan {
        tx: p.tx.clone(),
        rx: p.rx.clone(),
        netns: req.netns.clone(),
        tests: req.tests,
        link: LinkModel::new(link_bps, false),
        trials: req.trials.clone(),
        tester_retries: p.tester_retries,
        engine: engine_req,
        engine_choice: p.choice,
        engine_args: p.args.clone(),
        frame_format: p.frame_format,
        cpu: p.cpu,
        cpus: checked.cpus.clone(),
        dst: misura_wire::MacAddr(rx.mac),
        src: misura_wire::MacAddr(tx.mac),
        calibration,
    };
    let sizes = measure_sizes(&plan, &req.sizes, engine, progress, stop, &mut warnings)?;
    let inconclusive: Vec<String> = sizes.iter().flat_map(inconclusive).collect();
    // The latency trials repeat the engine's notes: keep each warning once.
    let mut seen = std::collections::HashSet::new();
    warnings.retain(|w| seen.insert((w.code.clone(), w.text.clone())));
    let signal = stop.load(Ordering::Relaxed);
    let host = ports::host(p);
    Ok(Rfc2544Report {
        meta: misura_cli::meta::meta("misura.rfc2544", started_at),
        complete: signal == 0,
        stop_reason: misura_cli::exit::stop_reason(signal),
        host,
        ports: checked.infos(),
        config: Rfc2544Config {
            tx: p.tx.clone(),
            rx: p.rx.clone(),
            netns: req.netns.clone(),
            link_rate_bps: link_bps,
            link_speed_source: link_source.into(),
            tests: names(req.tests),
            trial_s: req.trials.trial.as_secs_f64(),
            short_trial_s: req.trials.short.as_secs_f64(),
            resolution: req.trials.resolution,
            pdr_ratio: req.trials.pdr,
            latency_trial_s: req.trials.latency_trial.as_secs_f64(),
            b2b_trials: req.trials.b2b_trials,
            b2b_max_burst_s: req.trials.b2b_max_burst.as_secs_f64(),
            tester_retries: p.tester_retries,
            ethertype: p.ethertype,
            calibration: req.calibration.as_ref().map(|p| p.display().to_string()),
        },
        engine: facts,
        sizes,
        elapsed_s: started.elapsed().as_secs_f64(),
        warnings,
        inconclusive,
    })
}

/// Refuse a size with a frame over what the ports' MTU lets through.
fn fit_mtu(sizes: &[SizeSpec], mtu: usize) -> Result<()> {
    let max = (mtu + FRAME_OVERHEAD).min(MAX_FRAME);
    for s in sizes {
        if let Some(&frame) = s.frames.iter().find(|&&f| f > max) {
            return Err(BenchError::SizeOverMtu {
                size: s.label.clone(),
                frame,
                max,
                mtu,
            });
        }
    }
    Ok(())
}

/// The tests' names, in RFC 2544's order.
fn names(t: Tests) -> Vec<String> {
    [
        (t.throughput, "throughput"),
        (t.latency, "latency"),
        (t.loss, "loss"),
        (t.b2b, "b2b"),
    ]
    .iter()
    .filter(|(on, _)| *on)
    .map(|(_, name)| name.to_string())
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn size(label: &str, frames: &[usize]) -> SizeSpec {
        SizeSpec {
            label: label.into(),
            frames: frames.to_vec(),
        }
    }

    #[test]
    fn a_frame_over_the_mtu_is_refused_with_the_bound() {
        assert!(fit_mtu(&[size("1518", &[1518])], 1500).is_ok());
        let e = fit_mtu(&[size("64", &[64]), size("1519", &[1519])], 1500).unwrap_err();
        assert!(matches!(
            e,
            BenchError::SizeOverMtu { ref size, frame: 1519, max: 1518, mtu: 1500 } if size == "1519"
        ));
        let imix = size("imix", &[64, 570, 1518]);
        let e = fit_mtu(&[imix], 1000).unwrap_err();
        assert!(matches!(
            e,
            BenchError::SizeOverMtu {
                frame: 1518,
                max: 1018,
                ..
            }
        ));
        // A jumbo MTU lets through at most the largest frame accepted.
        assert!(fit_mtu(&[size("9018", &[9018])], 65536).is_ok());
    }

    #[test]
    fn the_tests_are_named_in_rfc_order() {
        let t = Tests {
            throughput: true,
            latency: false,
            loss: true,
            b2b: true,
        };
        assert_eq!(names(t), vec!["throughput", "loss", "b2b"]);
    }
}
