//! `misura archive status`: what each of the agent's sinks has acknowledged
//! and what waits for it, read from the store (the agent's outbox).

use crate::shared::exit;
use anyhow::Result;
use serde_json::json;

#[derive(clap::Subcommand, Debug, Clone)]
pub enum ArchiveCommand {
    /// Per sink: results waiting, the oldest waiting one, sent, dropped, the last error.
    Status(StatusArgs),
}

#[derive(clap::Args, Debug, Clone)]
pub struct StatusArgs {
    /// JSON on stdout: {"sinks": [{name, waiting, oldest_waiting_ns, sent, dropped, last_error, …}]}.
    #[arg(long)]
    pub json: bool,
}

fn ago(ns: Option<i64>, now: i64) -> String {
    match ns {
        None => "-".into(),
        Some(t) => format!("{:.0} s ago", (now - t) as f64 / 1e9),
    }
}

pub fn run(c: &ArchiveCommand) -> Result<i32> {
    let ArchiveCommand::Status(a) = c;
    let store = crate::shared::store::open_for_reading()?;
    let sinks = store
        .sink_status()
        .map_err(crate::shared::store::store_failure)?;
    if a.json {
        let list: Vec<_> = sinks
            .iter()
            .map(|s| {
                json!({
                    "name": s.name,
                    "waiting": s.waiting,
                    "oldest_waiting_ns": s.oldest_waiting_ns,
                    "sent": s.sent,
                    "dropped": s.dropped,
                    "last_error": s.last_error,
                    "last_error_ns": s.last_error_ns,
                    "last_ok_ns": s.last_ok_ns,
                })
            })
            .collect();
        let doc = json!({
            "format": "misura.archive-status",
            "format_version": 1,
            "store": store.path().display().to_string(),
            "timescale": "CLOCK_REALTIME, integer ns since the Unix epoch",
            "sinks": list,
        });
        println!("{}", serde_json::to_string_pretty(&doc)?);
        return Ok(exit::OK);
    }
    if sinks.is_empty() {
        println!(
            "no sinks in {}: an agent with [[sink]] tables records them there",
            store.path().display()
        );
        return Ok(exit::OK);
    }
    let now = misura_agent::archive::now_ns();
    println!(
        "{:<20} {:>9} {:>16} {:>10} {:>9}  last error",
        "sink", "waiting", "oldest waiting", "sent", "dropped"
    );
    for s in &sinks {
        let err = match (&s.last_error, s.last_error_ns) {
            (Some(e), t) => format!("{e} ({})", ago(t, now)),
            (None, _) => "-".into(),
        };
        println!(
            "{:<20} {:>9} {:>16} {:>10} {:>9}  {err}",
            s.name,
            s.waiting,
            ago(s.oldest_waiting_ns, now),
            s.sent,
            s.dropped
        );
    }
    Ok(exit::OK)
}
