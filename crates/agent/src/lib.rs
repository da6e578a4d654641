//! `misura agent`: continuous monitoring. Measures every configured target on
//! its own interval, each run a child `misura rtt`/`misura oneway`, and keeps
//! the results as OpenMetrics series on `/metrics` for Prometheus to scrape.
//!
//! Here are the configuration ([`config`], [`sinks`], the fleet template in
//! [`fleet`]), the schedule and its runs (`schedule`, [`runner`], `reload`),
//! the store and outbox every result goes to first ([`keep`]), the sinks'
//! delivery ([`archive`]) and the HTTP endpoint ([`http`], [`metrics`]).
//! [`run`] is the agent until it is stopped; the binary's `commands/agent`
//! holds its flags, `--check`'s listing and the help.
#![forbid(unsafe_code)]

pub mod archive;
pub mod config;
pub mod error;
pub mod fleet;
pub mod http;
pub mod http_client;
pub mod keep;
pub mod metrics;
mod reload;
pub mod runner;
mod schedule;
pub mod sinks;

use config::Config;
pub use error::AgentError;
use metrics::AgentCounters;
use misura_cli::exit;
use misura_store::StoreConfig;
use schedule::{reconcile, slots_for, Agent, Finished, Shared};
use std::collections::{BTreeMap, HashMap};
use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

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
        log::error!("misura agent: cannot render metrics: {e}");
        out.clear();
        out.extend_from_slice(b"# EOF\n");
    }
    out
}

/// What the agent runs with: `misura agent`'s flags, resolved.
#[derive(Debug, Clone)]
pub struct Options {
    /// The local configuration file (`--config`).
    pub config: Option<PathBuf>,
    /// The fleet template's URL (`--config-url`).
    pub config_url: Option<String>,
    /// How often the template is fetched (at least a second is used).
    pub template_interval: misura_measure::time::Span,
    /// The HTTP endpoint's address (`--listen`).
    pub listen: SocketAddr,
    /// Do not create missing ClickHouse tables (`--no-create`).
    pub no_create: bool,
    /// The network namespace to run in (`--netns`).
    pub netns: Option<String>,
    /// Where results are kept first (`--store`, `--no-store`).
    pub store: StoreConfig,
}

/// The local configuration file, or an agent with no targets of its own
/// when only a template URL is given.
pub fn load_local(options: &Options) -> Result<Config, config::ConfigError> {
    match &options.config {
        Some(path) => config::load_with(path, options.config_url.is_none()),
        None => config::parse_local("", "(no --config)", false),
    }
}

/// The agent, until `stop` is set; returns the process exit code.
pub fn run(options: &Options, stop: &Arc<AtomicUsize>) -> Result<i32, AgentError> {
    let config = load_local(options)?;
    if let Some(ns) = &options.netns {
        // Before any thread or child exists, so all of them live in it.
        misura_sys::netns::enter(ns)?;
    }
    let exe = std::env::current_exe().map_err(AgentError::process(
        "locating the misura binary to run measurements",
    ))?;
    let hup = Arc::new(AtomicBool::new(false));
    signal_hook::flag::register(signal_hook::consts::SIGHUP, hup.clone())
        .map_err(AgentError::process("installing the SIGHUP handler"))?;
    let listener = TcpListener::bind(options.listen).map_err(|source| AgentError::Listen {
        addr: options.listen,
        source,
    })?;
    log::info!(
        "misura agent: {} targets, serving http://{}/metrics",
        config.targets.len(),
        options.listen
    );

    let store = &options.store;
    if !store.enabled && !config.sinks.is_empty() {
        return Err(AgentError::SinksWithoutStore);
    }
    let keeper = if store.enabled {
        let mut k = keep::Keeper::open(&store.path, &config.name)?;
        let names: Vec<String> = config.sinks.iter().map(|s| s.name.clone()).collect();
        k.store().register_sinks(&names)?;
        k.bound_by(&config.sinks);
        log::info!(
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
            create: !options.no_create,
            stop: stop.clone(),
            stats: sink_stats.clone(),
        },
    )
    .map_err(AgentError::process("starting the sinks' threads"))?;

    let shared: Shared = Arc::new(Mutex::new((BTreeMap::new(), AgentCounters::default())));
    reconcile(&mut shared.lock().unwrap().0, &config);
    let http = {
        let (shared, stop, sinks) = (shared.clone(), stop.clone(), sink_stats.clone());
        std::thread::Builder::new()
            .name("agent-http".into())
            .spawn(move || agent_http_serve(listener, &stop, &shared, &sinks))
            .map_err(AgentError::process("starting the HTTP endpoint's thread"))?
    };
    let (done_tx, done_rx) = mpsc::channel::<Finished>();
    let config_per_probe = config.sinks.iter().any(|s| s.per_probe());
    // The fleet template's last good copy runs until a fetch brings another.
    let template = options.config_url.as_ref().map(|url| {
        fleet::Template::new(
            url,
            store.path.with_extension("fleet-template.toml"),
            Duration::from_nanos(options.template_interval.as_ns().max(1_000_000_000) as u64),
        )
    });
    let config = match &template {
        Some(t) => t.join(config.clone()).unwrap_or_else(|e| {
            log::warn!("misura agent: the kept fleet template does not apply: {e}");
            config
        }),
        None => config,
    };
    reconcile(&mut shared.lock().unwrap().0, &config);
    let mut agent = Agent {
        options,
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
    log::info!("misura agent: stopped");
    Ok(exit::OK)
}

fn agent_http_serve(
    listener: TcpListener,
    stop: &AtomicUsize,
    shared: &Shared,
    sinks: &archive::SinkStats,
) {
    if let Err(e) = crate::http::serve(listener, stop, &|| render(shared, sinks)) {
        log::error!("misura agent: HTTP endpoint failed: {e}");
    }
}
