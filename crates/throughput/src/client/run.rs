//! Running a client test's clients at once and making one result of
//! theirs: each client's end (DONE → RESULT, and why it stopped), the
//! rows of clients that could not run, the run's completeness and exit
//! code.

use super::base::{interrupted, signal_reason, ClientPlan, Server, END_GRACE};
use super::control::{done_message, Control, DoneFigures};
use crate::error::Result;
use crate::proto::MESSAGE_TIMEOUT;
use misura_cli::exit::one_line;
use misura_cli::warnings::Warn;
use misura_report::throughput::ServerFigures;
use misura_report::{StopReason, Warning};
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::time::Instant;

/// Run `n` clients at once, each in its own thread, and return their results
/// in client order.
pub fn run_clients<R: Send>(n: u32, f: impl Fn(u32) -> R + Sync) -> Vec<R> {
    if n <= 1 {
        return vec![f(0)];
    }
    std::thread::scope(|sc| {
        let hs: Vec<_> = (0..n)
            .map(|i| {
                let f = &f;
                sc.spawn(move || f(i))
            })
            .collect();
        hs.into_iter()
            .map(|h| h.join().expect("a client thread panicked"))
            .collect()
    })
}

/// What every client of one run shares.
pub struct Run<'a, P> {
    pub plan: &'a P,
    pub server: &'a Server,
    pub stop: &'a Arc<AtomicUsize>,
    /// When the clients started: interval lines count from here.
    pub t0: Instant,
}

/// A client test's clients, run: its server, when it started, and the
/// clients' outcome.
pub struct Ran<R> {
    pub server: Server,
    pub started_at: String,
    pub outcome: Outcome<R>,
}

/// Resolve the server, then run `client.clients` clients at once, each
/// through `one`, and gather their results.
pub fn run_all<P: Sync, R: ClientResult + Send>(
    plan: &P,
    client: &ClientPlan,
    stop: &Arc<AtomicUsize>,
    one: impl Fn(u32, &Run<P>) -> Result<R> + Sync,
) -> Result<Ran<R>> {
    crate::proto::stop_reads_on(stop);
    let server = client.resolve()?;
    let started_at = misura_cli::meta::now_rfc3339();
    let run = Run {
        plan,
        server: &server,
        stop,
        t0: Instant::now(),
    };
    let results = run_clients(client.clients, |i| one(i, &run));
    let outcome = gather(results, stop)?;
    Ok(Ran {
        server,
        started_at,
        outcome,
    })
}

/// What the whole run needs to know of one client's result.
pub trait ClientResult: Sized {
    /// The row of a client that could not run its test.
    fn not_run(client: u32, e: &crate::error::ThroughputError) -> Self;
    /// Did the server accept this client's test?
    fn ran(&self) -> bool;
    fn complete(&self) -> bool;
    fn stop_reason(&self) -> &StopReason;
}

/// The clients' results, and what they make of the whole run.
pub struct Outcome<R> {
    /// In client order; a client that did not run has its row too.
    pub clients: Vec<R>,
    pub warnings: Vec<Warning>,
    pub complete: bool,
    pub stop_reason: StopReason,
}

/// The clients' results in client order, with a warning for each one that
/// did not run (when none ran, the first one's error is the run's), and
/// whether the run completed: a signal, else the first incomplete client's
/// reason, says why not.
pub fn gather<R: ClientResult>(results: Vec<Result<R>>, stop: &AtomicUsize) -> Result<Outcome<R>> {
    let mut clients = Vec::new();
    let mut warnings = Vec::new();
    let mut first_err = None;
    for (i, r) in results.into_iter().enumerate() {
        match r {
            Ok(c) => clients.push(c),
            Err(e) => {
                warnings.push(
                    Warn::ClientDidNotRun {
                        client: i as u32,
                        error: one_line(&e),
                    }
                    .into(),
                );
                clients.push(R::not_run(i as u32, &e));
                first_err.get_or_insert(e);
            }
        }
    }
    if let Some(e) = first_err.filter(|_| clients.iter().all(|c| !c.ran())) {
        return Err(e);
    }
    let complete = clients.iter().all(|c| c.complete());
    let first_incomplete = clients
        .iter()
        .find(|c| !c.complete())
        .map(|c| c.stop_reason().clone())
        .unwrap_or_else(|| StopReason::Other(String::new()));
    Ok(Outcome {
        stop_reason: run_reason(stop, complete, first_incomplete),
        clients,
        warnings,
        complete,
    })
}

/// Why a whole run stopped: a signal, else finished when complete, else
/// `otherwise`.
pub fn run_reason(stop: &AtomicUsize, complete: bool, otherwise: StopReason) -> StopReason {
    if interrupted(stop) {
        signal_reason(stop)
    } else if complete {
        StopReason::Finished
    } else {
        otherwise
    }
}

/// Implements [`ClientResult`] for a result row with the usual `test_id`,
/// `complete` and `stop_reason` fields; `$not_run` makes the row of a
/// client that did not run.
macro_rules! client_result {
    ($row:ty, $not_run:path) => {
        impl $crate::client::run::ClientResult for $row {
            fn not_run(client: u32, e: &crate::error::ThroughputError) -> Self {
                $not_run(client, e)
            }
            fn ran(&self) -> bool {
                self.test_id.is_some()
            }
            fn complete(&self) -> bool {
                self.complete
            }
            fn stop_reason(&self) -> &misura_report::StopReason {
                &self.stop_reason
            }
        }
    };
}
pub(crate) use client_result;

/// Send DONE with this side's figures and take the server's RESULT; when it
/// does not come, why not (for the stop reason).
pub fn finish(ctl: &mut Control, done: &DoneFigures) -> (Option<ServerFigures>, Option<String>) {
    match ctl.done(&done_message(done), END_GRACE + MESSAGE_TIMEOUT) {
        Ok(s) => (Some(s), None),
        Err(e) => (None, Some(one_line(&e))),
    }
}

/// Why one client's test ended: its own error first, then a missing or
/// partial RESULT, then a signal; "finished" when nothing went wrong.
pub fn end_reason(
    own_error: Option<&str>,
    server: Option<&ServerFigures>,
    no_result: Option<&str>,
    stop: &AtomicUsize,
) -> StopReason {
    if let Some(e) = own_error {
        StopReason::other(e)
    } else if let Some(e) = no_result {
        StopReason::other(format!("no result from the server: {e}"))
    } else if server.and_then(|s| s.partial).unwrap_or(false) {
        StopReason::other(format!(
            "the server marked its figures partial: {}",
            server.and_then(|s| s.reason.clone()).unwrap_or_default()
        ))
    } else if interrupted(stop) {
        signal_reason(stop)
    } else {
        StopReason::Finished
    }
}

/// The overall exit code: interrupted wins (main maps it), then any client
/// that did not complete (1), else 0.
pub fn exit_code(all_complete: bool) -> i32 {
    if all_complete {
        misura_cli::exit::OK
    } else {
        misura_cli::exit::ERROR
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::bits_per_s;
    use std::sync::atomic::Ordering;

    #[derive(Debug)]
    struct Row(Option<u64>, bool, StopReason);
    impl ClientResult for Row {
        fn not_run(_: u32, _: &crate::error::ThroughputError) -> Row {
            Row(None, false, StopReason::other("did not run"))
        }
        fn ran(&self) -> bool {
            self.0.is_some()
        }
        fn complete(&self) -> bool {
            self.1
        }
        fn stop_reason(&self) -> &StopReason {
            &self.2
        }
    }

    #[test]
    fn a_run_fails_only_when_no_client_ran() {
        let stop = AtomicUsize::new(0);
        use crate::error::Refusal;
        let refused = || {
            Refusal::ServerStreams {
                streams: 2,
                limit: 1,
            }
            .into()
        };
        let none: Vec<Result<Row>> = vec![Err(refused()), Err(Refusal::BareBurst.into())];
        let refusal = "2 streams is above the server's limit of 1";
        assert_eq!(gather(none, &stop).err().unwrap().to_string(), refusal);
        let some = || vec![Err(refused()), Ok(Row(Some(7), true, StopReason::Finished))];
        let o = gather(some(), &stop).unwrap();
        assert_eq!(o.warnings.len(), 1);
        assert_eq!(o.warnings[0].code, "client.did-not-run");
        assert_eq!(
            o.warnings[0].text,
            format!("client 0 did not run: {refusal}")
        );
        assert_eq!(o.clients.len(), 2);
        let did_not_run = StopReason::other("did not run");
        assert_eq!((o.complete, &o.stop_reason), (false, &did_not_run));
        let all = gather(vec![Ok(Row(Some(7), true, StopReason::Finished))], &stop).unwrap();
        assert_eq!(
            (all.complete, &all.stop_reason),
            (true, &StopReason::Finished)
        );
        stop.store(2, Ordering::Relaxed);
        let o = gather(some(), &stop).unwrap();
        assert_eq!(o.stop_reason, StopReason::Interrupted { signal: 2 });
    }

    #[test]
    fn a_clients_end_reason_names_the_first_problem() {
        let stop = AtomicUsize::new(0);
        let partial = ServerFigures {
            partial: Some(true),
            reason: Some("idle".into()),
            ..Default::default()
        };
        let words = |r: StopReason| r.to_string();
        assert_eq!(end_reason(None, None, None, &stop), StopReason::Finished);
        assert_eq!(
            words(end_reason(Some("lost"), Some(&partial), None, &stop)),
            "lost"
        );
        assert_eq!(
            words(end_reason(None, None, Some("timed out"), &stop)),
            "no result from the server: timed out"
        );
        assert_eq!(
            words(end_reason(None, Some(&partial), None, &stop)),
            "the server marked its figures partial: idle"
        );
        assert_eq!(bits_per_s(1000, 1_000_000_000), 8000.0);
        assert_eq!(bits_per_s(1000, 0), 0.0);
    }
}
