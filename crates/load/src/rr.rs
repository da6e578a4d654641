//! `misura load --rr`: UDP request/response transactions (one in flight)
//! through `misura serve` beside each phase's probes, built from the flags
//! a user would give `misura rr` and checked by its own parser.

use crate::error::PlanError;
use crate::flows::Target;
use crate::plan::LoadPlan;
use clap::Parser;
use misura_cli::exit::one_line;
use misura_cli::exit::BoxedError;
use misura_cli::exit::Failure;
use misura_report::under_load::{Percentiles, RrPhase};
use misura_throughput::rr::{self, RrKnobs, RrPlan, RrShape};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// `misura rr`'s flags but --clients (one client).
#[derive(Parser)]
struct RrArgs {
    #[command(flatten)]
    c: Target,
    #[command(flatten)]
    knobs: RrKnobs,
    #[command(flatten)]
    shape: RrShape,
}

/// The plan of the flags, as `misura rr` checks them.
fn plan(a: &RrArgs) -> Result<RrPlan, Failure> {
    RrPlan::new(a.c.client(), &a.knobs, &a.shape)
}

/// The transactions of a phase `ns` long, as `misura rr` flags. Their
/// timeout is the probes': a loaded queue holds a response as long as it
/// holds a probe.
fn args(a: &LoadPlan, ns: i64) -> Result<RrArgs, PlanError> {
    let mut argv: Vec<String> = ["rr", &a.host, "--proto", "udp", "-q"]
        .map(String::from)
        .into();
    argv.extend([
        "--duration".into(),
        format!("{}ms", (ns / 1_000_000).max(1)),
        "--timeout".into(),
        a.timeout.to_string(),
    ]);
    if let Some(k) = &a.key_file {
        argv.extend(["--key-file".to_string(), k.display().to_string()]);
    }
    RrArgs::try_parse_from(&argv).map_err(|e| PlanError::Transactions {
        error: e.to_string(),
    })
}

/// Check the transactions' flags before anything is measured.
pub fn check(a: &LoadPlan) -> Result<(), PlanError> {
    Ok(plan(&args(a, a.idle.ns)?).map(drop)?)
}

/// Start a phase's transactions in their own thread (unpinned, like the
/// load), `delay_ns` from now, for `ns`; `None` without `--rr`.
pub fn start(
    a: &LoadPlan,
    delay_ns: i64,
    ns: i64,
    stop: &Arc<AtomicUsize>,
) -> Option<JoinHandle<RrPhase>> {
    if !a.rr {
        return None;
    }
    let parsed = args(a, ns);
    let stop = stop.clone();
    Some(std::thread::spawn(move || {
        let _ = misura_sys::sched::unpin();
        let until = Instant::now() + Duration::from_nanos(delay_ns.max(0) as u64);
        while Instant::now() < until && stop.load(Ordering::Relaxed) == 0 {
            std::thread::sleep(Duration::from_millis(10));
        }
        let ran: Result<_, BoxedError> = parsed
            .map_err(BoxedError::from)
            .and_then(|p| Ok(plan(&p)?))
            .and_then(|plan| Ok(rr::measure(&plan, &stop)?));
        match ran {
            Ok(r) => {
                let c = r.clients.first();
                RrPhase {
                    transactions: c.map_or(0, |c| c.transactions),
                    transactions_per_s: r.transactions_per_s,
                    lost: c.map_or(0, |c| c.lost),
                    latency: c
                        .map_or_else(Percentiles::default, |c| Percentiles::of(&c.latency, 0.0)),
                    error: (!r.complete).then(|| r.stop_reason.to_string()),
                }
            }
            Err(e) => failed(one_line(&*e)),
        }
    }))
}

/// The phase's transactions once they end.
pub fn join(h: Option<JoinHandle<RrPhase>>) -> Option<RrPhase> {
    h.map(|h| {
        h.join()
            .unwrap_or_else(|_| failed("the request/response thread panicked".into()))
    })
}

/// Transactions that did not run, and why.
fn failed(why: String) -> RrPhase {
    RrPhase {
        transactions: 0,
        transactions_per_s: 0.0,
        lost: 0,
        latency: Percentiles::default(),
        error: Some(why),
    }
}
