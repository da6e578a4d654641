//! The agent's scheduler: one slot per target, runs started when due (up
//! to `parallel`, an exclusive throughput run alone), missed slots counted,
//! and each finished run folded into the target's series and kept.

use super::config::{self, Config, Target};
use super::metrics::{AgentCounters, ErrorReason, TargetMetrics};
use super::runner::{self, RunOutput};
use super::{fleet, keep};
use crate::Options;
use misura_report::rtt::RttReport;
use misura_report::OnewayReport;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::atomic::AtomicUsize;
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

pub(super) type Shared = Arc<Mutex<(BTreeMap<String, TargetMetrics>, AgentCounters)>>;

pub(super) struct Slot {
    target: Target,
    next_due: Instant,
    running: bool,
}

pub(super) struct Finished {
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
pub(super) fn reconcile(metrics: &mut BTreeMap<String, TargetMetrics>, config: &Config) {
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

pub(super) fn slots_for(config: &Config, old: &mut HashMap<String, Slot>) -> HashMap<String, Slot> {
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
            log::warn!(
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
                log::warn!(
                    "misura agent: target {}: exit_status: {stderr_tail}",
                    f.name
                );
            }
            match ok {
                Ok(true) => {}
                Ok(false) => {
                    m.error(ErrorReason::NoReplies);
                    log::warn!(
                        "misura agent: target {}: no_replies: every probe was lost",
                        f.name
                    );
                }
                Err(e) if *success => {
                    m.error(ErrorReason::BadOutput);
                    log::warn!("misura agent: target {}: bad_output: {e}", f.name);
                }
                Err(_) => {}
            }
        }
    }
}

/// The scheduler's state: the configuration, one slot per target, the runs
/// under way, and the channel their threads report on.
pub(super) struct Agent<'a> {
    pub(super) options: &'a Options,
    pub(super) config: Config,
    pub(super) shared: Shared,
    pub(super) slots: HashMap<String, Slot>,
    pub(super) running: usize,
    pub(super) exe: PathBuf,
    pub(super) stop: &'a Arc<AtomicUsize>,
    pub(super) done: mpsc::Sender<Finished>,
    /// The store and outbox every result goes to first (`None`: --no-store).
    pub(super) keeper: Option<keep::Keeper>,
    /// Some sink wants per-probe rows.
    pub(super) per_probe: bool,
    /// The fleet template (--config-url).
    pub(super) template: Option<fleet::Template>,
}

impl Agent<'_> {
    /// A run ended: free its slot, fold its result in and keep it in the
    /// store and outbox.
    pub(super) fn finished(&mut self, f: Finished) {
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
    pub(super) fn start_due(&mut self) {
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
        let interval = Duration::from_nanos(s.target.interval.as_ns().max(1) as u64);
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
        log::warn!("misura agent: target {name}: {slots} slot(s) missed, waiting for an exclusive run, a free run slot or the scheduler (counted in misura_target_skipped_slots_total)");
    }

    /// Run one target on a thread of its own; a thread that cannot start
    /// is counted as a spawn error.
    fn start(&mut self, name: &str, now: Instant) {
        // Started a whole interval late or more (the agent was held up):
        // the slots in between are missed, and counted.
        self.missed(name, now);
        let Some(s) = self.slots.get_mut(name) else {
            return;
        };
        s.running = true;
        self.running += 1;
        // Fixed-rate schedule without catch-up: a late run moves the next one.
        let interval = Duration::from_nanos(s.target.interval.as_ns() as u64);
        s.next_due = (s.next_due + interval).max(now);
        let (target, exe, stop, tx) = (
            s.target.clone(),
            self.exe.clone(),
            self.stop.clone(),
            self.done.clone(),
        );
        // A sink that wants every probe: the run logs them to a file.
        let frames = match self.keeper.as_mut().filter(|_| self.per_probe) {
            Some(k) => match k.frames_file(&target.name) {
                Ok(f) => Some(f),
                Err(e) => {
                    log::warn!("misura agent: target {}: cannot make its per-probe log: {e}; the run is archived without its probes", target.name);
                    None
                }
            },
            None => None,
        };
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
