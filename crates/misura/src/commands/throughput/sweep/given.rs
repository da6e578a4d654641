//! A command's flags as clap parsed them, with the arguments the user wrote
//! kept beside them (in the order written, defaults left out): a sweep
//! records them as its `base_args`. They are read off clap's own matches
//! while it builds the typed flags, so nothing is parsed twice.

use clap::parser::ValueSource;
use clap::{ArgMatches, Args, Command, FromArgMatches};

/// Flags `T` and the arguments they were parsed from.
#[derive(Clone, Debug)]
pub struct Given<T> {
    pub args: T,
    written: Vec<Written>,
}

/// One argument as written: the flag's long name (none for a positional)
/// and its words ("--duration", "5s").
#[derive(Clone, Debug, PartialEq)]
struct Written {
    long: Option<String>,
    words: Vec<String>,
}

impl<T> Given<T> {
    /// The arguments as written, without the flags named in `leave_out`
    /// (long names).
    pub fn written_except(&self, leave_out: &[&str]) -> Vec<String> {
        self.written
            .iter()
            .filter(|w| !w.long.as_deref().is_some_and(|l| leave_out.contains(&l)))
            .flat_map(|w| w.words.iter().cloned())
            .collect()
    }
}

/// The arguments of `T` that `m` took from the command line, in order.
fn written<T: Args>(m: &ArgMatches) -> Vec<Written> {
    let cmd = T::augment_args(Command::new("given"));
    let mut found: Vec<(usize, Written)> = cmd
        .get_arguments()
        .filter(|a| {
            m.try_contains_id(a.get_id().as_str()).unwrap_or(false)
                && m.value_source(a.get_id().as_str()) == Some(ValueSource::CommandLine)
        })
        .map(|a| {
            let id = a.get_id().as_str();
            let values: Vec<String> = m
                .try_get_raw(id)
                .ok()
                .flatten()
                .map(|raw| raw.map(|v| v.to_string_lossy().into_owned()).collect())
                .unwrap_or_default();
            let long = a.get_long().map(str::to_string);
            let words = match &long {
                None => values,
                Some(l) if a.get_action().takes_values() => {
                    std::iter::once(format!("--{l}")).chain(values).collect()
                }
                Some(l) => vec![format!("--{l}")],
            };
            (
                m.index_of(id).unwrap_or(usize::MAX),
                Written { long, words },
            )
        })
        .collect();
    found.sort_by_key(|(at, _)| *at);
    found.into_iter().map(|(_, w)| w).collect()
}

impl<T: FromArgMatches + Args> FromArgMatches for Given<T> {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        Ok(Given {
            args: T::from_arg_matches(m)?,
            written: written::<T>(m),
        })
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        self.args.update_from_arg_matches(m)?;
        self.written = written::<T>(m);
        Ok(())
    }
}

impl<T: Args> Args for Given<T> {
    fn augment_args(cmd: Command) -> Command {
        T::augment_args(cmd)
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        T::augment_args_for_update(cmd)
    }

    fn group_id() -> Option<clap::Id> {
        T::group_id()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(clap::Args, Debug, Clone)]
    struct Flags {
        host: String,
        #[arg(long, default_value = "10s")]
        duration: String,
        #[arg(long)]
        json: bool,
        #[arg(long)]
        streams: Option<u32>,
    }

    #[derive(Parser)]
    struct W {
        #[command(flatten)]
        g: Given<Flags>,
    }

    #[test]
    fn the_arguments_as_written_in_order_without_defaults() {
        let w = W::try_parse_from(["w", "--streams=3", "h", "--json"]).unwrap();
        assert_eq!(w.g.args.duration, "10s");
        assert_eq!(w.g.args.streams, Some(3));
        assert_eq!(w.g.written_except(&[]), ["--streams", "3", "h", "--json"]);
        assert_eq!(w.g.written_except(&["json", "streams"]), ["h"]);
        let w = W::try_parse_from(["w", "h", "--duration", "1s"]).unwrap();
        assert_eq!(w.g.written_except(&["json"]), ["h", "--duration", "1s"]);
    }
}
