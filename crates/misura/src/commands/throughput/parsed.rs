//! Tests' help: a test's flag groups parsed from a command line, on a
//! client part with the target and `--clients`, as the commands flatten
//! them.

use crate::shared::exit::Failure;
use crate::shared::throughput_words::sentence;
use clap::{Args, Parser};
use misura_throughput::client::{ClientPlan, DEFAULT_CLIENTS};
use misura_throughput::error::Refusal;

/// HOST, `--clients`, then the test's knobs and shape.
#[derive(Parser)]
pub struct Parsed<K: Args, S: Args> {
    host: String,
    #[arg(long, default_value = DEFAULT_CLIENTS)]
    clients: u32,
    #[command(flatten)]
    pub knobs: K,
    #[command(flatten)]
    pub shape: S,
}

impl<K: Args, S: Args> Parsed<K, S> {
    /// The arguments as a command line (the first is the program's name).
    pub fn of(args: &[&str]) -> Result<Self, clap::Error> {
        Self::try_parse_from(args)
    }

    /// The client part, checked as the binary checks it.
    pub fn client(&self) -> Result<ClientPlan, Refusal> {
        client(&self.host, self.clients)
    }

    /// The plan `new` makes of the parsed flags, converted into the
    /// library's knobs and shape (the command line must parse).
    pub fn plan<P, LK, LS>(
        args: &[&str],
        new: fn(ClientPlan, &LK, &LS) -> Result<P, Refusal>,
    ) -> Result<P, Failure>
    where
        for<'a> &'a K: Into<LK>,
        for<'a> &'a S: Into<LS>,
    {
        let w = Self::of(args).unwrap();
        w.client()
            .and_then(|c| new(c, &(&w.knobs).into(), &(&w.shape).into()))
            .map_err(|r| sentence(&r))
    }
}

/// The client part on `host`, checked as the binary checks it.
pub fn client(host: &str, clients: u32) -> Result<ClientPlan, Refusal> {
    let p = ClientPlan {
        host: host.into(),
        key_file: None,
        netns: None,
        clients,
        quiet: false,
    };
    p.check()?;
    Ok(p)
}

/// HOST, then flags that have `--clients` of their own (a sweep's).
#[derive(Parser)]
pub struct OnHost<K: Args> {
    pub host: String,
    #[command(flatten)]
    pub flags: K,
}

impl<K: Args> OnHost<K> {
    /// `args` after the program's name.
    pub fn of(args: &[&str]) -> Self {
        Self::try_parse_from(std::iter::once("t").chain(args.iter().copied())).unwrap()
    }
}
