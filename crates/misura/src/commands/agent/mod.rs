//! `misura agent`: continuous monitoring. Measures every configured target on
//! its own interval, each run a child `misura rtt`/`misura oneway`, and keeps
//! the results as OpenMetrics series on `/metrics` for Prometheus to scrape.

pub mod archive;
mod args;
pub mod config;
pub mod fleet;
pub mod http;
pub mod keep;
pub mod metrics;
mod reload;
pub mod runner;
mod schedule;
pub mod sinks;

use crate::shared::exit::{self, Failure};
use anyhow::{Context, Result};
use args::load_local;
use config::Config;
use metrics::AgentCounters;
use schedule::{reconcile, slots_for, Agent, Finished, Shared};
use std::collections::{BTreeMap, HashMap};
use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

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

pub use args::AgentArgs;
fn render(shared: &Shared, sinks: &archive::SinkStats) -> Vec<u8> {
    let mut families = {
        let guard = shared.lock().unwrap_or_else(|p| p.into_inner());
        metrics::families::families(&guard.0, &guard.1)
    };
    families.extend(metrics::families::sink_families(
        &sinks.lock().unwrap_or_else(|p| p.into_inner()),
    ));
    let mut out = Vec::new();
    if let Err(e) = misura_report::metrics::write_openmetrics(&families, &mut out) {
        // Only a bug can get here (names and label values are checked at load).
        eprintln!("misura agent: cannot render metrics: {e}");
        out.clear();
        out.extend_from_slice(b"# EOF\n");
    }
    out
}

/// `--check`: the targets and the command each runs.
fn print_targets(config: &Config) {
    for t in &config.targets {
        println!(
            "{}: {} every {:.3} s: misura {}",
            t.name,
            t.kind.label(),
            t.interval_ns as f64 / 1e9,
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
    let config = load_local(args).map_err(|e| Failure::Usage(e.0))?;
    if args.check {
        print_targets(&config);
        return Ok(exit::OK);
    }
    if let Some(ns) = &args.ns.netns {
        // Before any thread or child exists, so all of them live in it.
        misura_sys::netns::enter(ns)?;
    }
    let exe = std::env::current_exe().context("locating the misura binary to run measurements")?;
    let hup = Arc::new(AtomicBool::new(false));
    signal_hook::flag::register(signal_hook::consts::SIGHUP, hup.clone())
        .context("installing the SIGHUP handler")?;
    let listener = TcpListener::bind(args.listen).with_context(|| {
        format!(
            "cannot listen on {}: is another agent running there?",
            args.listen
        )
    })?;
    eprintln!(
        "misura agent: {} targets, serving http://{}/metrics",
        config.targets.len(),
        args.listen
    );

    let store = crate::shared::store::config();
    if !store.enabled && !config.sinks.is_empty() {
        return Err(Failure::Usage(
            "--no-store with [[sink]]: results reach the sinks through the store (the outbox); drop --no-store".into(),
        )
        .into());
    }
    let keeper = if store.enabled {
        let mut k = keep::Keeper::open(&store.path, &config.name)
            .map_err(crate::shared::store::store_failure)?;
        let names: Vec<String> = config.sinks.iter().map(|s| s.name.clone()).collect();
        k.store()
            .register_sinks(&names)
            .map_err(crate::shared::store::store_failure)?;
        k.bound_by(&config.sinks);
        eprintln!(
            "misura agent: {}: keeping every result in {}{}",
            config.name,
            store.path.display(),
            if names.is_empty() {
                String::new()
            } else {
                format!(" and delivering to {}", names.join(", "))
            }
        );
        Some(k)
    } else {
        None
    };
    let sink_stats: archive::SinkStats = Arc::default();
    let sink_threads = archive::start(
        &config.sinks,
        &archive::Options {
            store: store.path.clone(),
            labels: config.labels.clone(),
            create: !args.no_create,
            stop: stop.clone(),
            stats: sink_stats.clone(),
        },
    )?;

    let shared: Shared = Arc::new(Mutex::new((BTreeMap::new(), AgentCounters::default())));
    reconcile(&mut shared.lock().unwrap().0, &config);
    let http = {
        let (shared, stop, sinks) = (shared.clone(), stop.clone(), sink_stats.clone());
        std::thread::Builder::new()
            .name("agent-http".into())
            .spawn(move || agent_http_serve(listener, &stop, &shared, &sinks))?
    };
    let (done_tx, done_rx) = mpsc::channel::<Finished>();
    let config_per_probe = config.sinks.iter().any(|s| s.per_probe());
    // The fleet template's last good copy runs until a fetch brings another.
    let template = args.config_url.as_ref().map(|url| {
        fleet::Template::new(
            url,
            store.path.with_extension("fleet-template.toml"),
            Duration::from_nanos(args.template_interval.ns.max(1_000_000_000) as u64),
        )
    });
    let config = match &template {
        Some(t) => t.join(config.clone()).unwrap_or_else(|e| {
            eprintln!("misura agent: the kept fleet template does not apply: {e}");
            config
        }),
        None => config,
    };
    reconcile(&mut shared.lock().unwrap().0, &config);
    let mut agent = Agent {
        args,
        slots: slots_for(&config, &mut HashMap::new()),
        config,
        shared,
        running: 0,
        exe,
        stop,
        done: done_tx,
        per_probe: config_per_probe,
        keeper,
        template,
    };
    while stop.load(Ordering::Relaxed) == 0 {
        if hup.swap(false, Ordering::Relaxed) {
            agent.reload();
            agent.fetch_template();
        } else if agent.template.as_ref().is_some_and(|t| t.due()) {
            agent.fetch_template();
        }
        agent.template_done();
        if let Some(k) = agent.keeper.as_mut().filter(|k| k.blocked()) {
            k.flush();
        }
        while let Ok(f) = done_rx.try_recv() {
            agent.finished(f);
        }
        agent.start_due();
        std::thread::sleep(Duration::from_millis(50));
    }
    // Stopping: the runs see `stop`, kill and reap their children.
    let deadline = Instant::now() + Duration::from_secs(10);
    while agent.running > 0 && Instant::now() < deadline {
        if let Ok(f) = done_rx.recv_timeout(Duration::from_millis(100)) {
            agent.finished(f);
        }
    }
    let _ = http.join();
    archive::join(sink_threads);
    eprintln!("misura agent: stopped");
    Ok(exit::OK)
}

fn agent_http_serve(
    listener: TcpListener,
    stop: &AtomicUsize,
    shared: &Shared,
    sinks: &archive::SinkStats,
) {
    if let Err(e) = crate::commands::agent::http::serve(listener, stop, &|| render(shared, sinks)) {
        eprintln!("misura agent: HTTP endpoint failed: {e}");
    }
}
