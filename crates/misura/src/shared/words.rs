//! The one step that words the libraries' typed errors with the flags that
//! asked for what they refuse (issue 34, point 2): the libraries say what
//! was wrong with the figures (`cores 99: use 1 to 64`), and this says it
//! as the command line's sentence (`--cores 99: use 1 to 64`). main prints
//! every error of a chain through [`sentence`]; the exit class stays
//! `shared::exit::code_for`'s.
//!
//! A variant not named keeps its own message. It looks inside the
//! libraries' enums that carry one of these errors
//! transparently (their message is the inner one's), as `code_for` does;
//! an error with a message of its own is worded only where it embeds one
//! of these (the load's checks before measuring, rtt's silent reflector).
//! `exit` does not use this module (only its `Chain`, the other way), so
//! the two make no import cycle.

use misura_bench::BenchError;
use misura_cli::report_page::ReportError;
use misura_engine::{CoresError, EngineError};
use misura_exchange::error::ExchangeError;
use misura_lab::LabError;
use misura_load::{LoadError, PlanError, ProbePlanError, ReflectorWhy};
use misura_oneway::error::{LoopError, OnewayError, ProfileError};
use misura_rtt::plan::{PeriodError, SessionPlanError};
use misura_rtt::{NoReplyWhy, RttError};
use misura_run::cpuload::TooManyThreads;
use misura_run::stamping::HardwareRequired;
use misura_store::StoreError;
use misura_sys::SysError;
use misura_throughput::error::{Refusal, ThroughputError};
use std::error::Error;

use super::throughput_words;

/// The sentence naming the flags for `cause` (one error of a chain, its
/// own message only), if it is one the libraries leave to the binary to
/// word; `None`: its own message is the sentence.
pub fn sentence(cause: &(dyn Error + 'static)) -> Option<String> {
    if let Some(e) = cause.downcast_ref::<LabError>() {
        return lab(e);
    }
    if let Some(e) = cause.downcast_ref::<CoresError>() {
        return Some(cores(e));
    }
    if let Some(e) = cause.downcast_ref::<HardwareRequired>() {
        return Some(hardware(e));
    }
    if let Some(e) = cause.downcast_ref::<TooManyThreads>() {
        return Some(cpu_load(e));
    }
    if let Some(e) = cause.downcast_ref::<LoopError>() {
        return Some(per_frame_loop(e));
    }
    if let Some(e) = cause.downcast_ref::<ProfileError>() {
        return profile(e);
    }
    if let Some(e) = cause.downcast_ref::<ProbePlanError>() {
        return probe_plan(e);
    }
    if let Some(e) = cause.downcast_ref::<StoreError>() {
        return store(e);
    }
    if let Some(e) = cause.downcast_ref::<SysError>() {
        return sys(e);
    }
    if let Some(e) = cause.downcast_ref::<EngineError>() {
        return engine(e);
    }
    if let Some(e) = cause.downcast_ref::<OnewayError>() {
        return oneway(e);
    }
    if let Some(e) = cause.downcast_ref::<BenchError>() {
        return match e {
            BenchError::Engine(e) => engine(e),
            BenchError::Oneway(e) => oneway(e),
            _ => None,
        };
    }
    if let Some(e) = cause.downcast_ref::<RttError>() {
        return rtt(e);
    }
    if let Some(e) = cause.downcast_ref::<ExchangeError>() {
        return match e {
            ExchangeError::Hardware(h) => Some(hardware(h)),
            _ => None,
        };
    }
    if let Some(e) = cause.downcast_ref::<Refusal>() {
        return Some(throughput_words::words(e));
    }
    if let Some(ThroughputError::Refusal(e)) = cause.downcast_ref() {
        return Some(throughput_words::words(e));
    }
    if let Some(e) = cause.downcast_ref::<LoadError>() {
        return load(e);
    }
    if let Some(misura_agent::AgentError::Store(e)) = cause.downcast_ref() {
        return store(e);
    }
    if let Some(PlanError::CpuLoad(t)) = cause.downcast_ref::<PlanError>() {
        return Some(cpu_load(t));
    }
    if let Some(e) = cause.downcast_ref::<ReportError>() {
        return report(e);
    }
    if let Some(e) = cause.downcast_ref::<Box<ReportError>>() {
        // What the PNG plots failed on.
        return report(e);
    }
    if let Some(crate::shared::exit::Chain(e)) = cause.downcast_ref() {
        // Its message is its top error's.
        return e.chain().next().and_then(sentence);
    }
    None
}

/// `misura report`'s refusals that name its flags; a stored run's failure
/// as the store hook worded it.
fn report(e: &ReportError) -> Option<String> {
    Some(match e {
        ReportError::OneInput { given } => {
            format!("give one RUN or FILE.json ({given} given); several only with --vs-load")
        }
        ReportError::TooManyRuns { given, max } => {
            format!("--vs-load draws at most {max} runs; {given} given")
        }
        ReportError::NoConverter => "--png needs an SVG converter: install rsvg-convert \
             (librsvg2-bin), chromium or imagemagick, or use --svg"
            .into(),
        ReportError::Run(e) => return sentence(&**e),
        _ => return None,
    })
}

/// One error (its own message only) as the user reads it: its sentence,
/// or its own message where it has none.
pub fn said(e: &(dyn Error + 'static)) -> String {
    sentence(e).unwrap_or_else(|| e.to_string())
}

/// Each error of `e`'s chain in its sentence, the top one first (what
/// main prints).
pub fn chain(e: &anyhow::Error) -> Vec<String> {
    e.chain().map(said).collect()
}

/// An error and its causes on one line, `: ` between them, each in its
/// sentence (what `misura_cli::exit::one_line` gives, worded).
pub fn one_line(e: &(dyn Error + 'static)) -> String {
    let mut words = Vec::new();
    let mut cause = Some(e);
    while let Some(c) = cause {
        words.push(said(c));
        cause = c.source();
    }
    words.join(": ")
}

/// The lab's refusals of a shape, with `lab up`'s flags.
fn lab(e: &LabError) -> Option<String> {
    Some(match e {
        LabError::ShapeNotApplicable {
            topology,
            managed_queue: false,
        } => format!(
            "--shape applies to --topology switch (the SUT bridge's port towards p2) and \
             routed (the router's ports); the {topology} topology has nothing to shape"
        ),
        LabError::ShapeNotApplicable {
            topology,
            managed_queue: true,
        } => format!(
            "qdisc=fq_codel applies to --topology routed (the router's queue); the {topology} \
             topology's port takes a plain tbf: RATE[,queue=BYTES][,burst=BYTES]"
        ),
        LabError::NotShapeable { prefix, topology } => format!(
            "lab {prefix} is not wired as the {topology} topology, so it has no {topology} port \
             to shape: misura lab up --topology {topology} --shape RATE builds it and shapes it"
        ),
        LabError::QdiscMissing { qdisc, config } => format!(
            "this kernel has no {qdisc} queueing discipline (CONFIG_NET_SCH_{config} is not set), so \
             the router cannot run a managed queue; the shape was not applied. A small tbf queue \
             (e.g. --shape 20M,queue=16K: 6.5 ms at 20 Mbit/s) bounds the delay instead, without \
             flow isolation"
        ),
        _ => return None,
    })
}

fn cores(e: &CoresError) -> String {
    match e {
        CoresError::OutOfRange { cores, max } => format!(
            "--cores {cores}: use 1 to {max} (each core drives one transmit path and one receive ring)"
        ),
        CoresError::OverOnline { cores, online } => {
            format!("--cores {cores}: this host has {online} CPUs online; use at most {online}")
        }
    }
}

fn hardware(e: &HardwareRequired) -> String {
    format!(
        "--timestamps hardware: {}; use --timestamps kernel to fall back to software stamps",
        e.why
    )
}

fn cpu_load(e: &TooManyThreads) -> String {
    format!(
        "--cpu-load {} is more than this host can run usefully: at most {} busy threads (4 per online CPU)",
        e.threads, e.max
    )
}

fn per_frame_loop(e: &LoopError) -> String {
    match e {
        LoopError::TooFast {
            rate_fps,
            max_fps,
            forced,
        } => {
            let why = if *forced {
                "--engine loop"
            } else {
                "calibration and the demo always use the loop"
            };
            format!(
                "{rate_fps:.0} frames/s is more than the per-frame loop sustains ({why}; it measured 0.48 M frames/s send + receive on the lab's veth, scripts/bench-oneway.sh): use `misura oneway --engine auto` (the frame engine, for rates up to line rate) or a rate below {max_fps:.0}"
            )
        }
        LoopError::LatencyEvery => {
            "--latency-every needs the frame engine: drop --engine loop".into()
        }
    }
}

fn profile(e: &ProfileError) -> Option<String> {
    match e {
        ProfileError::CreateDir { .. } | ProfileError::NotWritable { .. } => {
            Some(format!("{e}; choose --profile FILE"))
        }
        ProfileError::Mismatch {
            path,
            mismatches,
            calibrate,
        } => Some(format!(
            "calibration profile {} was made on another set-up: {}. Calibrate this set-up ({calibrate}), or pass --accept-profile-mismatch to use it anyway",
            path.display(),
            mismatches.join("; ")
        )),
        _ => None,
    }
}

/// Load's probes' plan, in load's flags (`--period`, `--timeout`).
fn probe_plan(e: &ProbePlanError) -> Option<String> {
    match e.error {
        SessionPlanError::Period {
            error: error @ PeriodError::TooShort { .. },
            ..
        } => Some(e.period.period_failure("--period", error).to_string()),
        SessionPlanError::TimeoutNotPositive => Some("--timeout must be positive".into()),
        _ => None,
    }
}

fn store(e: &StoreError) -> Option<String> {
    match e {
        StoreError::Foreign { path } => Some(format!(
            "{}: not a misura results store (another program's SQLite database); choose another file with --store, or --no-store",
            path.display()
        )),
        StoreError::Newer { path, found } => Some(format!(
            "{}: written by a newer misura (store version {found}, this one reads up to {}); upgrade misura or use another --store",
            path.display(),
            misura_store::SCHEMA_VERSION
        )),
        _ => None,
    }
}

/// A UDP port that could not be bound, with the flag that chooses it.
fn sys(e: &SysError) -> Option<String> {
    match e {
        SysError::PrivilegedPort { port } => Some(format!(
            "binding UDP port {port} (a privileged port; or choose a port >= 1024 with --port) needs CAP_NET_BIND_SERVICE: run as root or grant it with `setcap cap_net_bind_service+ep $(which misura)`"
        )),
        SysError::PortInUse { addr, source } => Some(format!(
            "binding {addr}: the port is in use (see `ss -uanp`), or choose another with --port: {source}"
        )),
        _ => None,
    }
}

fn engine(e: &EngineError) -> Option<String> {
    match e {
        EngineError::Cores(c) => Some(cores(c)),
        EngineError::NoPath { forced: Some(c), .. } => Some(
            format!(
                "--engine {c:?} could not be opened (try --engine auto, which picks the best path that opens)"
            )
            .to_lowercase(),
        ),
        EngineError::PtpFrameTooSmall { frame, min } => Some(format!(
            "a {frame}-byte frame cannot carry misura's header inside a PTP Sync message: PTP-wrapped frames are {min} bytes or more (FCS included); use larger frames or --frame-format misura"
        )),
        EngineError::Latency(b) => sentence(b.as_ref()),
        _ => None,
    }
}

fn oneway(e: &OnewayError) -> Option<String> {
    match e {
        OnewayError::Loop(l) => Some(per_frame_loop(l)),
        OnewayError::Profile(p) => profile(p),
        OnewayError::Hardware(h) => Some(hardware(h)),
        OnewayError::CpuLoad(t) => Some(cpu_load(t)),
        OnewayError::Engine(e) => engine(e),
        // A request is worded at the call sites (`oneway_words`).
        _ => None,
    }
}

fn rtt(e: &RttError) -> Option<String> {
    match e {
        RttError::Hardware(h) => Some(hardware(h)),
        RttError::CpuLoad(t) => Some(cpu_load(t)),
        RttError::Sys(s) => sys(s),
        RttError::NoReply { target, why } => {
            Some(format!("no reply from {target}: {}", no_reply(why)))
        }
        // Its own message (a request and a session plan are worded at the
        // call site, `commands/rtt/args.rs`; the others name no flag).
        _ => None,
    }
}

fn no_reply(why: &NoReplyWhy) -> String {
    match why {
        NoReplyWhy::Silent {
            wait_ms,
            probes,
            target,
        } => format!(
            "no reply within {wait_ms:.0} ms to {probes} probes: is a reflector running at {target}, reachable, and using the same mode (authenticated: --key-file)?"
        ),
        NoReplyWhy::PortUnreachable => why.to_string(),
    }
}

fn load(e: &LoadError) -> Option<String> {
    match e {
        LoadError::Plan(PlanError::CpuLoad(t)) => Some(cpu_load(t)),
        LoadError::Plan(PlanError::Refusal(r)) => Some(throughput_words::words(r)),
        LoadError::ProbePlan(p) => probe_plan(p),
        LoadError::Probe(p) => sentence(p.as_ref()),
        LoadError::ServerMissing { host, rr, why } => Some(format!(
            "checked before measuring: {why}. Start `misura serve` on {host} (the load's server{}), or give its port as HOST:PORT",
            if *rr { " and the --rr transactions'" } else { "" }
        )),
        LoadError::ReflectorMissing { reflector, why } => {
            let why = match why {
                ReflectorWhy::Plan(p) => probe_plan(p).unwrap_or_else(|| p.to_string()),
                ReflectorWhy::Said(s) => s.clone(),
                ReflectorWhy::Probe(e) => one_line(e.as_ref()),
            };
            Some(format!(
                "checked before measuring: the probes' reflector {reflector}: {why}. Start `misura reflect` there (port 862), or name another with --reflector HOST[:PORT]"
            ))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests;
