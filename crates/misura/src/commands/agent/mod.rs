//! `misura agent`: continuous monitoring. Measures every configured target on
//! its own interval, each run a child `misura rtt`/`misura oneway`, and keeps
//! the results as OpenMetrics series on `/metrics` for Prometheus to scrape.

pub mod archive;
pub mod config;
pub mod fleet;
pub mod http;
pub mod keep;
pub mod metrics;
pub mod runner;
pub mod sinks;

use crate::shared::exit::{self, Failure};
use anyhow::{Context, Result};
use config::{Config, Target};
use metrics::{AgentCounters, ErrorReason, TargetMetrics};
use misura_report::rtt::RttReport;
use misura_report::OnewayReport;
use runner::RunOutput;
use std::collections::{BTreeMap, HashMap};
use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

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

#[derive(clap::Args, Debug, Clone)]
pub struct AgentArgs {
    /// TOML configuration: the agent's name and labels, its targets and
    /// sinks (see examples/agent.toml and examples/fleet-agent.toml).
    #[arg(long, value_name = "FILE", required_unless_present = "config_url")]
    pub config: Option<PathBuf>,
    /// Do not create missing ClickHouse tables (misura_runs, misura_probes):
    /// for a database where the agent's user may only insert.
    #[arg(long)]
    pub no_create: bool,
    /// Fleet template URL (http:// or https://): its [[target]] tables that
    /// select this agent (by `agents = [NAME…]` or `labels = {…}`) run beside
    /// the local file's. Fetched with If-None-Match on every
    /// --template-interval and on SIGHUP; the last good copy is kept on disk.
    #[arg(long, value_name = "URL")]
    pub config_url: Option<String>,
    /// How often the fleet template is fetched.
    #[arg(long, value_name = "DURATION", default_value = "60s")]
    pub template_interval: crate::shared::units::DurationArg,
    /// Address and port of the HTTP endpoint (/metrics, /healthz).
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:9862")]
    pub listen: SocketAddr,
    /// Check the configuration, print the targets and exit.
    #[arg(long)]
    pub check: bool,
    #[command(flatten)]
    pub ns: crate::shared::netns::NetnsArgs,
}

type Shared = Arc<Mutex<(BTreeMap<String, TargetMetrics>, AgentCounters)>>;

struct Slot {
    target: Target,
    next_due: Instant,
    running: bool,
}

struct Finished {
    name: String,
    target: Target,
    output: RunOutput,
    /// The per-probe log the run wrote, when a sink wants probes.
    frames: Option<PathBuf>,
}

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

fn address_of(t: &Target) -> String {
    match &t.kind {
        config::TargetKind::Rtt { address } => address.clone(),
        config::TargetKind::Oneway { tx, rx } => format!("{tx}->{rx}"),
        config::TargetKind::Throughput { address, .. } => address.clone(),
    }
}

/// Bring the metric records in line with `config`: same name and kind keep
/// their series, removed targets drop theirs, new ones start at zero.
fn reconcile(metrics: &mut BTreeMap<String, TargetMetrics>, config: &Config) {
    metrics.retain(|name, m| {
        config
            .targets
            .iter()
            .any(|t| &t.name == name && t.kind.label() == m.kind)
    });
    for t in &config.targets {
        let m = metrics
            .entry(t.name.clone())
            .or_insert_with(|| TargetMetrics::new(t.kind.label(), address_of(t)));
        m.address = address_of(t);
    }
}

fn slots_for(config: &Config, old: &mut HashMap<String, Slot>) -> HashMap<String, Slot> {
    let now = Instant::now();
    config
        .targets
        .iter()
        .map(|t| {
            // A target that stays keeps its schedule and its running flag.
            let (next_due, running) = match old.remove(&t.name) {
                Some(s) if s.target == *t => (s.next_due, s.running),
                Some(s) => (now, s.running),
                None => (now, false),
            };
            (
                t.name.clone(),
                Slot {
                    target: t.clone(),
                    next_due,
                    running,
                },
            )
        })
        .collect()
}

fn record(shared: &Shared, f: &Finished) {
    let now = unix_now();
    let mut guard = shared.lock().unwrap_or_else(|p| p.into_inner());
    let Some(m) = guard.0.get_mut(&f.name) else {
        return;
    };
    if m.kind != f.target.kind.label() {
        return;
    }
    match &f.output {
        RunOutput::Stopped => {}
        RunOutput::Failed { reason, detail } => {
            m.error(*reason);
            eprintln!(
                "misura agent: target {}: {}: {detail}",
                f.name,
                reason.label()
            );
        }
        RunOutput::Done {
            stdout,
            success,
            stderr_tail,
        } => {
            let ok = match f.target.kind {
                config::TargetKind::Rtt { .. } => {
                    serde_json::from_slice::<RttReport>(stdout).map(|r| m.add_rtt(&r, now))
                }
                config::TargetKind::Oneway { .. } => {
                    serde_json::from_slice::<OnewayReport>(stdout).map(|r| m.add_oneway(&r, now))
                }
                config::TargetKind::Throughput { .. } => {
                    serde_json::from_slice::<serde_json::Value>(stdout)
                        .map(|v| m.add_throughput(&v, now))
                }
            };
            if !success {
                m.error(ErrorReason::ExitStatus);
                eprintln!(
                    "misura agent: target {}: exit_status: {stderr_tail}",
                    f.name
                );
            }
            match ok {
                Ok(true) => {}
                Ok(false) => {
                    m.error(ErrorReason::NoReplies);
                    eprintln!(
                        "misura agent: target {}: no_replies: every probe was lost",
                        f.name
                    );
                }
                Err(e) if *success => {
                    m.error(ErrorReason::BadOutput);
                    eprintln!("misura agent: target {}: bad_output: {e}", f.name);
                }
                Err(_) => {}
            }
        }
    }
}

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

/// The scheduler's state: the configuration, one slot per target, the runs
/// under way, and the channel their threads report on.
struct Agent<'a> {
    args: &'a AgentArgs,
    config: Config,
    shared: Shared,
    slots: HashMap<String, Slot>,
    running: usize,
    exe: PathBuf,
    stop: &'a Arc<AtomicUsize>,
    done: mpsc::Sender<Finished>,
    /// The store and outbox every result goes to first (`None`: --no-store).
    keeper: Option<keep::Keeper>,
    /// Some sink wants per-probe rows.
    per_probe: bool,
    /// The fleet template (--config-url).
    template: Option<fleet::Template>,
}

impl Agent<'_> {
    /// SIGHUP: read the configuration again; one with errors is refused and
    /// the running one kept.
    fn reload(&mut self) {
        match load_local(self.args).and_then(|c| self.with_template(c)) {
            Ok(c) => {
                eprintln!("misura agent: reloaded: {} targets", c.targets.len());
                if c.sinks != self.config.sinks || c.name != self.config.name {
                    eprintln!("misura agent: changes to [[sink]] or [agent] name take effect when the agent restarts");
                }
                let mut g = self.shared.lock().unwrap_or_else(|p| p.into_inner());
                reconcile(&mut g.0, &c);
                g.1.reloads_ok += 1;
                drop(g);
                self.slots = slots_for(&c, &mut self.slots);
                self.config = c;
            }
            Err(e) => {
                eprintln!("misura agent: reload refused, keeping the running configuration: {e}");
                self.shared
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .1
                    .reloads_failed += 1;
            }
        }
    }

    /// The fleet template's targets joined to the local ones.
    fn with_template(&mut self, c: Config) -> Result<Config, config::ConfigError> {
        match &self.template {
            Some(t) => t.join(c),
            None => Ok(c),
        }
    }

    /// Fetch the fleet template (when one is configured) and apply a new
    /// one; a failure keeps the running configuration and is counted.
    fn fetch_template(&mut self) {
        let Some(t) = &mut self.template else { return };
        let local = match load_local(self.args) {
            Ok(l) => l,
            Err(e) => {
                eprintln!("misura agent: fleet template not applied: the local configuration has errors: {e}");
                return;
            }
        };
        let outcome = t.fetch(&local);
        let applied = match outcome {
            fleet::Fetch::New => t.join(local),
            fleet::Fetch::NotModified => {
                self.shared
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .1
                    .template_not_modified += 1;
                return;
            }
            fleet::Fetch::Failed(e) => Err(config::ConfigError(e)),
        };
        let mut g = self.shared.lock().unwrap_or_else(|p| p.into_inner());
        match applied {
            Ok(c) => {
                g.1.template_ok += 1;
                eprintln!(
                    "misura agent: fleet template applied: {} targets",
                    c.targets.len()
                );
                reconcile(&mut g.0, &c);
                drop(g);
                self.slots = slots_for(&c, &mut self.slots);
                self.config = c;
            }
            Err(e) => {
                g.1.template_failed += 1;
                eprintln!(
                    "misura agent: fleet template refused, keeping the running configuration: {e}"
                );
            }
        }
    }

    /// A run ended: free its slot, fold its result in and keep it in the
    /// store and outbox.
    fn finished(&mut self, f: Finished) {
        self.running -= 1;
        if let Some(s) = self.slots.get_mut(&f.name) {
            s.running = false;
        }
        record(&self.shared, &f);
        let probes = f.frames.as_deref().and_then(keep::read_frames);
        if let (Some(k), RunOutput::Done { stdout, .. }) = (&mut self.keeper, &f.output) {
            // A document that does not parse was counted as bad_output.
            if let Ok(v) = serde_json::from_slice::<serde_json::Value>(stdout) {
                k.keep(&f.name, f.target.kind.label(), v, probes);
                self.shared
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .1
                    .store_errors = k.errors;
            }
        }
    }

    /// Start the targets that are due, oldest first, up to `parallel` runs.
    /// An exclusive (throughput) target starts only when nothing runs, and
    /// nothing starts beside it; once one is due, later ones wait for it.
    /// A target kept waiting for a whole interval has missed a slot:
    /// counted, and its schedule moves on.
    fn start_due(&mut self) {
        let now = Instant::now();
        let mut due: Vec<(Instant, String)> = self
            .slots
            .values()
            .filter(|s| !s.running && s.next_due <= now)
            .map(|s| (s.next_due, s.target.name.clone()))
            .collect();
        due.sort();
        let mut exclusive = self.slots.values().any(|s| s.running && s.target.exclusive);
        let mut draining = false;
        for (_, name) in due {
            if self.keeper.as_ref().is_some_and(|k| k.blocked()) {
                break;
            }
            let Some(s) = self.slots.get(&name) else {
                continue;
            };
            let fits = if s.target.exclusive {
                self.running == 0
            } else {
                self.running < self.config.parallel
            };
            if fits && !exclusive && !draining {
                exclusive = s.target.exclusive;
                self.start(&name, now);
                continue;
            }
            // Waits: an exclusive one due holds back those after it.
            draining |= s.target.exclusive;
            self.missed(&name, now);
        }
    }

    /// Count the whole slots `name` has missed while waiting to start.
    fn missed(&mut self, name: &str, now: Instant) {
        let Some(s) = self.slots.get_mut(name) else {
            return;
        };
        let interval = Duration::from_nanos(s.target.interval_ns.max(1) as u64);
        let late = now.saturating_duration_since(s.next_due);
        let slots = (late.as_nanos() / interval.as_nanos()) as u32;
        if slots == 0 {
            return;
        }
        s.next_due += interval * slots;
        let mut g = self.shared.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(m) = g.0.get_mut(name) {
            m.skipped += u64::from(slots);
        }
        drop(g);
        eprintln!("misura agent: target {name}: {slots} slot(s) missed, waiting for an exclusive run or a free run slot (counted in misura_target_skipped_slots_total)");
    }

    /// Run one target on a thread of its own; a thread that cannot start
    /// is counted as a spawn error.
    fn start(&mut self, name: &str, now: Instant) {
        let Some(s) = self.slots.get_mut(name) else {
            return;
        };
        s.running = true;
        self.running += 1;
        // Fixed-rate schedule without catch-up: a late run moves the next one.
        let interval = Duration::from_nanos(s.target.interval_ns as u64);
        s.next_due = (s.next_due + interval).max(now);
        let (target, exe, stop, tx) = (
            s.target.clone(),
            self.exe.clone(),
            self.stop.clone(),
            self.done.clone(),
        );
        // A sink that wants every probe: the run logs them to a file.
        let frames =
            (self.per_probe && self.keeper.is_some()).then(|| keep::frames_path(&target.name));
        let spawned = std::thread::Builder::new()
            .name("agent-run".into())
            .spawn(move || {
                let extra: Vec<String> = frames
                    .iter()
                    .flat_map(|f| ["--frames".to_string(), f.display().to_string()])
                    .collect();
                let output = runner::run(&exe, &target, &extra, &stop);
                let _ = tx.send(Finished {
                    name: target.name.clone(),
                    target,
                    output,
                    frames,
                });
            });
        if let Err(e) = spawned {
            self.running -= 1;
            s.running = false;
            let f = Finished {
                name: s.target.name.clone(),
                target: s.target.clone(),
                output: RunOutput::Failed {
                    reason: ErrorReason::Spawn,
                    detail: e.to_string(),
                },
                frames: None,
            };
            record(&self.shared, &f);
        }
    }
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

/// The local configuration file, or an agent with no targets of its own
/// when only --config-url is given.
fn load_local(args: &AgentArgs) -> Result<Config, config::ConfigError> {
    match &args.config {
        Some(path) => config::load_with(path, args.config_url.is_none()),
        None => config::parse_local("", "(no --config)", false),
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
    for t in sink_threads {
        let _ = t.join();
    }
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
