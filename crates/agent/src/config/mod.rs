//! The agent's configuration file (TOML): parsed strictly (unknown keys are
//! errors), then validated against what a measurement can do, each error
//! naming the line it comes from.

pub mod origin;
mod target;

pub use origin::ConfigError;
use origin::{line_of, Origin};
use serde::Deserialize;
use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use target::RawTarget;
pub use target::{too_many_for_one_agent, Target, TargetKind};
use toml::Spanned;

/// Most concurrent measurements when the file does not say.
const DEFAULT_PARALLEL: usize = 2;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    agent: Option<RawAgent>,
    #[serde(default)]
    target: Vec<RawTarget>,
    #[serde(default)]
    sink: Vec<super::sinks::RawSink>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAgent {
    parallel: Option<Spanned<i64>>,
    name: Option<Spanned<String>>,
    labels: Option<Spanned<BTreeMap<String, String>>>,
}

/// A validated configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    pub parallel: usize,
    /// `[agent] name`: labels every archived result (default: the host name).
    pub name: String,
    /// `[agent] labels`: matched by a fleet template's entries, and carried
    /// on remote-written series.
    pub labels: BTreeMap<String, String>,
    pub targets: Vec<Target>,
    pub sinks: Vec<super::sinks::Sink>,
}

/// Read and validate `path`; `need_targets` is false when a fleet template
/// brings them.
pub fn load_with(path: &Path, need_targets: bool) -> Result<Config, ConfigError> {
    let text = misura_cli::files::read_string_bounded(path, misura_cli::files::CONFIG_MAX)
        .map_err(|e| {
            ConfigError(format!(
                "{}: cannot read the configuration: {e}",
                path.display()
            ))
        })?;
    parse_local(&text, &path.display().to_string(), need_targets)
}

fn toml_of(text: &str, origin: &str) -> Result<RawFile, ConfigError> {
    toml::from_str(text).map_err(|e| {
        let line = e.span().map(|s| line_of(text, s.start));
        let msg = e.message().trim().to_string();
        match line {
            Some(l) => ConfigError(format!("{origin}:{l}: {msg}")),
            None => ConfigError(format!("{origin}: {msg}")),
        }
    })
}

/// The host's name, the agent's name when `[agent] name` is not given.
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| plain_name(s))
        .unwrap_or_else(|| "misura-agent".into())
}

fn plain_name(n: &str) -> bool {
    !n.is_empty()
        && n.len() <= 64
        && n.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.:".contains(c))
}

/// Parse and validate a local configuration; `origin` names it in messages.
#[cfg(test)]
pub fn parse(text: &str, origin: &str) -> Result<Config, ConfigError> {
    parse_local(text, origin, true)
}

/// As [`parse`]; `need_targets` is false when a fleet template brings them.
pub fn parse_local(text: &str, origin: &str, need_targets: bool) -> Result<Config, ConfigError> {
    let raw = toml_of(text, origin)?;
    let o = Origin { text, name: origin };
    let (parallel, name, labels) = match raw.agent {
        None => (None, None, None),
        Some(a) => (a.parallel, a.name, a.labels),
    };
    let parallel = match parallel {
        None => DEFAULT_PARALLEL,
        Some(p) if (1..=64).contains(p.get_ref()) => *p.get_ref() as usize,
        Some(p) => {
            return Err(o.err(
                p.span(),
                format!(
                    "parallel = {} is impossible: use 1 to 64 concurrent measurements",
                    p.get_ref()
                ),
            ))
        }
    };
    let name = match name {
        None => host_name(),
        Some(n) if plain_name(n.get_ref()) => n.into_inner(),
        Some(n) => {
            return Err(o.err(
                n.span(),
                format!(
                    "agent name `{}`: use 1 to 64 letters, digits, `-`, `_`, `.` or `:`",
                    n.get_ref()
                ),
            ))
        }
    };
    let labels = match labels {
        None => BTreeMap::new(),
        Some(l) => {
            let bad = l.get_ref().len() > 16
                || l.get_ref().iter().any(|(k, v)| {
                    !plain_name(k)
                        || k.contains(':')
                        || k.contains('.')
                        || k.contains('-')
                        || v.len() > 128
                        || v.chars().any(char::is_control)
                });
            if bad {
                return Err(o.err(
                    l.span(),
                    "labels: at most 16, names of letters, digits and `_`, values up to 128 characters".into(),
                ));
            }
            l.into_inner()
        }
    };
    if raw.target.is_empty() && need_targets {
        return Err(ConfigError(format!(
            "{origin}: no [[target]]: add at least one, see examples/agent.toml"
        )));
    }
    let targets = o.targets(raw.target, &name, &labels)?;
    let mut sink_names = HashSet::new();
    let mut sinks = Vec::new();
    for s in raw.sink {
        let sink = o.sink(s)?;
        if !sink_names.insert(sink.name.clone()) {
            return Err(ConfigError(format!(
                "{origin}: sink name `{}` is used twice: give each [[sink]] its own name = \"…\"",
                sink.name
            )));
        }
        sinks.push(sink);
    }
    Ok(Config {
        parallel,
        name,
        labels,
        targets,
        sinks,
    })
}

/// A fleet template: `[[target]]` tables only (the agent's own settings and
/// sinks stay in its local file); returns the targets that select this
/// agent.
pub fn parse_template(
    text: &str,
    origin: &str,
    agent: &str,
    labels: &BTreeMap<String, String>,
) -> Result<Vec<Target>, ConfigError> {
    let raw = toml_of(text, origin)?;
    if raw.agent.is_some() || !raw.sink.is_empty() {
        return Err(ConfigError(format!(
            "{origin}: a fleet template holds [[target]] tables only: [agent] and [[sink]] belong in each agent's --config file"
        )));
    }
    let o = Origin { text, name: origin };
    o.targets(raw.target, agent, labels)
}

#[cfg(test)]
mod tests;
