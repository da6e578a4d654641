//! Flags of `misura lab`.

use clap::{Args, Subcommand, ValueEnum};
use misura_lab::Topology;

#[derive(Subcommand, Debug)]
pub enum LabCommand {
    /// Build (or rewire to) a topology. Idempotent.
    #[command(long_about = "\
Build the virtual lab in network namespaces named misura-*:
  direct  tester namespace with ports p1, p2 joined by a veth cable (calibration)
  switch  p1 and p2 each cabled to a Linux bridge br0 in namespace misura-sut (the SUT)
  hosts   two namespaces misura-h1/misura-h2, one veth, 198.18.0.1-2/24 and 2001:2::1-2/64
Running it again changes nothing; switching between direct and switch rewires.
Never touches a namespace it did not create. Needs CAP_NET_ADMIN (root).

Example:
  misura lab up --topology switch")]
    Up(LabArgs),
    /// Remove everything the lab made (and nothing else).
    #[command(long_about = "\
Remove the lab's namespaces (and with them its veth cables and bridge). Only
namespaces the lab created itself (marked in /run/misura/lab) are removed; a
namespace with a lab name that misura did not make is reported and left alone.

Example:
  misura lab down")]
    Down(LabPrefix),
    /// Show what the lab currently holds.
    #[command(long_about = "\
Show the lab's namespaces, which topology the tester is wired in, and each
interface with its MAC and state.

Example:
  misura lab status --json")]
    Status(LabStatusArgs),
}

#[derive(Args, Debug)]
pub struct LabPrefix {
    /// Namespace name prefix (must start with "misura-").
    #[arg(long, default_value = "misura-")]
    pub prefix: String,
}

#[derive(Args, Debug)]
pub struct LabArgs {
    /// The topology to build.
    #[arg(long, short, value_enum, ignore_case = true, default_value = "direct")]
    pub topology: TopologyArg,
    #[command(flatten)]
    pub prefix: LabPrefix,
}

#[derive(Args, Debug)]
pub struct LabStatusArgs {
    #[command(flatten)]
    pub prefix: LabPrefix,
    /// Print the status as JSON.
    #[arg(long)]
    pub json: bool,
}

/// The lab's topologies, as `--topology` names them.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum TopologyArg {
    /// The tester's ports p1 and p2 joined by a veth cable (calibration).
    Direct,
    /// p1 and p2 each cabled to the bridge br0 in misura-sut (the SUT).
    Switch,
    /// Two hosts misura-h1 and misura-h2 with addresses, one cable between them.
    Hosts,
}

impl From<TopologyArg> for Topology {
    fn from(t: TopologyArg) -> Topology {
        match t {
            TopologyArg::Direct => Topology::Direct,
            TopologyArg::Switch => Topology::Switch,
            TopologyArg::Hosts => Topology::Hosts,
        }
    }
}
