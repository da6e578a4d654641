//! `misura load --rr`: UDP request/response transactions (one in flight)
//! through `misura serve` beside each phase's probes, from the flags a
//! user would give `misura rr` (parsed by the binary: `plan::RrFlags`).

use crate::error::PlanError;
use crate::plan::{LoadPlan, RrFlags};
use misura_cli::exit::BoxedError;
use misura_report::under_load::{Percentiles, RrPhase};
use misura_rtt::plan::Span;
use misura_throughput::error::Refusal;
use misura_throughput::rr::{self, RrPlan};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The flags of a phase `ns` long, or why `misura rr`'s parser refused
/// them.
fn args(a: &LoadPlan, ns: i64) -> Result<RrFlags, PlanError> {
    let parsed = a
        .transactions
        .clone()
        .unwrap_or_else(|| Err("the binary gave no flags for the transactions".into()));
    let mut f = parsed.map_err(|error| PlanError::Transactions { error })?;
    f.shape.duration = misura_cli::units::DurationArg::whole_ms((ns / 1_000_000).max(1));
    Ok(f)
}

/// The plan of the flags, as `misura rr` checks them.
fn plan(f: &RrFlags) -> Result<RrPlan, Refusal> {
    RrPlan::new(f.client.clone(), &f.knobs, &f.shape)
}

/// Check the transactions' flags before anything is measured.
pub fn check(a: &LoadPlan) -> Result<(), PlanError> {
    Ok(plan(&args(a, a.idle.ns)?).map(drop)?)
}

/// Start a phase's transactions in their own thread (unpinned, like the
/// load), `delay` from now, for `ns`; `None` without `--rr`.
pub fn start(
    a: &LoadPlan,
    delay: Span,
    ns: i64,
    stop: &Arc<AtomicUsize>,
) -> Option<JoinHandle<RrPhase>> {
    if !a.rr {
        return None;
    }
    let parsed = args(a, ns);
    let (stop, word) = (stop.clone(), a.refusal_words);
    Some(std::thread::spawn(move || {
        let _ = misura_sys::sched::unpin();
        let until = Instant::now() + delay.to_std();
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
            Err(e) => failed(crate::error::said(&*e, word)),
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
