//! `misura agent`: continuous monitoring, the `misura-agent` library run
//! with this command's flags; here are the flags, the help and `--check`'s
//! listing of the targets and sinks.

mod args;

use crate::shared::exit::{self, Failure};
use anyhow::Result;
pub use args::AgentArgs;
use misura_agent::config::Config;
use misura_agent::AgentError;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

/// Long help for the subcommand (shown by `--help`).
pub const LONG_ABOUT: &str = "\
Run scheduled measurements indefinitely and expose them to Prometheus.

Each [[target]] of the TOML configuration is measured on its own interval:
`kind = \"rtt\"` runs STAMP round trips to a reflector (`misura rtt`),
`kind = \"oneway\"` a one-way run between two local ports (`misura oneway`),
`kind = \"tcp\"`, `\"udp\"` or `\"rr\"` a throughput test against `misura
serve` (exclusive: nothing runs beside it unless `background = true`).
A target that fails is counted (misura_target_errors_total{reason=…}) and
tried again at its next interval; the others carry on.

GET /metrics serves OpenMetrics text: latency histograms per target and
figure (misura_rtt_{user,kernel,network}_seconds,
misura_oneway_{user,kernel}_seconds; 1 µs … 1 s, five buckets per decade,
cumulative since the agent started), probe counters (sent, received, lost,
duplicates, reordered), delay variation, the timestamp source
(misura_target_info), and the last success time. GET /healthz answers 200.

SIGHUP re-reads the configuration: targets that keep their name keep their
series; a configuration with errors is refused and the running one kept.

Archive: every result is kept first in the results store (--store) with a
run id, then delivered to each [[sink]] (kind = \"clickhouse\",
\"remote-write\" or \"http\") at least once, retried with back-off while
a sink is down; `misura archive status` shows what waits. --config-url
fetches a fleet template whose [[target]] tables select agents by name or
labels ([agent] name, labels). See docs/fleet.md.
SIGINT/SIGTERM stop the agent cleanly (exit 130/143): running measurements are
ended and reaped.

Example:
  misura agent --config /etc/misura/agent.toml --listen 0.0.0.0:9862
  misura agent --config fleet-agent.toml --config-url https://cfg.example.net/fleet.toml
See examples/agent.toml, examples/fleet-agent.toml, docs/monitoring.md
(Prometheus set-up) and docs/fleet.md (sinks, ClickHouse tables, templates).";

/// `--check`: the targets and the command each runs.
fn print_targets(config: &Config) {
    for t in &config.targets {
        println!(
            "{}: {} every {:.3} s: misura {}",
            t.name,
            t.kind.label(),
            t.interval.as_ns() as f64 / 1e9,
            t.child_args().join(" ")
        );
    }
    for s in &config.sinks {
        println!(
            "sink {}: {} {} (batches of {}{})",
            s.name,
            s.kind_label(),
            s.url,
            s.batch,
            if s.per_probe() {
                ", per-probe rows"
            } else {
                ""
            }
        );
    }
}

/// Returns the process exit code.
pub fn run(args: &AgentArgs, stop: &Arc<AtomicUsize>) -> Result<i32> {
    let options = args.options();
    if args.check {
        let config = misura_agent::load_local(&options).map_err(|e| Failure::Usage(e.0))?;
        print_targets(&config);
        return Ok(exit::OK);
    }
    misura_agent::run(&options, stop).map_err(agent_failure)
}

/// The agent's refusal with its exit class, in the command line's words
/// where the command line is the cause.
fn agent_failure(e: AgentError) -> anyhow::Error {
    match e {
        AgentError::Config(c) => Failure::Usage(c.0).into(),
        AgentError::SinksWithoutStore => Failure::Usage(
            "--no-store with [[sink]]: results reach the sinks through the store (the outbox); drop --no-store".into(),
        )
        .into(),
        AgentError::Store(s) => crate::shared::store::store_failure(s).into(),
        AgentError::Sys(s) => s.into(),
        e => e.into(),
    }
}
