//! Flags of `misura lab`.

use clap::{Args, Subcommand, ValueEnum};
use misura_lab::{Shape, Topology};

use crate::shared::exit::Failure;

#[derive(Subcommand, Debug)]
pub enum LabCommand {
    /// Build (or rewire to) a topology. Idempotent.
    #[command(long_about = "\
Build the virtual lab in network namespaces named misura-*:
  direct  tester namespace with ports p1, p2 joined by a veth cable (calibration)
  switch  p1 and p2 each cabled to a Linux bridge br0 in namespace misura-sut (the SUT)
  hosts   two namespaces misura-h1/misura-h2, one veth, 198.18.0.1-2/24 and 2001:2::1-2/64
  routed  misura-h1 (198.18.0.1/24) - router misura-r - misura-h2 (198.18.1.2/24),
          IPv6 2001:2::1 and 2001:2:0:1::2: a bottleneck in the middle of the path
Running it again changes nothing; switching between direct and switch rewires.
Never touches a namespace it did not create. Needs CAP_NET_ADMIN (root).
misura processes running in a namespace it deletes or rewires are stopped
first and named (see `misura lab down --help`).

--shape RATE[,queue=BYTES][,burst=BYTES] (switch only) gives the SUT a known
throughput limit: a tbf qdisc on the bridge port s2, so frames p1 -> br0 -> p2
leave at most at RATE (8k .. 100G bit/s). queue (tbf limit, default 64K or one
burst if larger) is what may wait before frames drop; burst (default 1 ms at
RATE, at least 1600 bytes) what may leave back to back. `--shape none` removes
it; without --shape a shape in place stays. `misura lab status` shows it.

--police RATE (switch only) makes the bridge a policer at RATE instead: the
Linux bridge forwards whatever it is given, and Y.1564's overshoot step fails
on it. This kernel has no act_police, so it is a tbf whose queue holds two
full-size frames (3000 bytes): what exceeds RATE and its bucket (MEF 10.3's
smallest CBS, 12176 bytes, or 1 ms at RATE if larger) is dropped, not queued.
A Y.1564 service with cir=RATE passes on it.

On the routed topology --shape puts the same bucket on both router ports'
egress (towards h2 and towards h1), the queue in the middle of the path where
latency under load shows it: queue=BYTES a plain tbf queue (a large one is
bufferbloat: 500K at 20M is 200 ms), or ,qdisc=fq_codel a well-managed queue
(flows kept apart, 5 ms target) at the same rate.

Examples:
  misura lab up --topology switch
  misura lab up --topology switch --shape 100M,queue=64K
  misura lab up --topology switch --police 50M
  misura lab up --topology routed --shape 20M,queue=500K
  misura lab up --topology routed --shape 20M,qdisc=fq_codel")]
    Up(LabArgs),
    /// Remove everything the lab made (and nothing else).
    #[command(long_about = "\
Remove the lab's namespaces (and with them its veth cables and bridge). Only
namespaces the lab created itself (marked in /run/misura/lab) are removed; a
namespace with a lab name that misura did not make is reported and left alone.

misura processes still running inside a namespace it removes (a `serve` or
`reflect` started with ip netns exec) would run on, detached, on an address
nothing reaches: they are stopped first (SIGTERM, which saves what they
measured; SIGKILL after 3 s) and named on standard error. `lab up` does the
same for the namespaces it deletes or rewires to another topology.

Example:
  misura lab down")]
    Down(LabPrefix),
    /// Show what the lab currently holds.
    #[command(long_about = "\
Show the lab's namespaces, which topology the tester is wired in, each
interface with its MAC, state and addresses, and every shape in place (the
switch's and the router's).

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
    /// Shape the switch's port towards p2, or the router's ports:
    /// RATE[,queue=BYTES][,burst=BYTES][,qdisc=fq_codel], e.g. 20M,queue=32K, or none.
    #[arg(long, value_name = "RATE[,queue=BYTES][,burst=BYTES][,qdisc=fq_codel]")]
    pub shape: Option<ShapeArg>,
    /// Make the switch a policer at RATE (bit/s, e.g. 50M): tbf with a
    /// two-frame queue, as this kernel has no act_police.
    #[arg(long, value_name = "RATE", conflicts_with = "shape")]
    pub police: Option<PoliceArg>,
    #[command(flatten)]
    pub prefix: LabPrefix,
}

impl LabArgs {
    /// The shape asked for, by --shape or --police.
    pub fn shape(&self) -> Option<Option<Shape>> {
        match (&self.shape, &self.police) {
            (Some(s), _) => Some(s.0),
            (None, Some(p)) => Some(Some(p.0)),
            (None, None) => None,
        }
    }
}

/// `--police RATE`: a policer-like shape (see [`Shape::police`]).
#[derive(Clone, Debug, PartialEq)]
pub struct PoliceArg(pub Shape);

impl std::str::FromStr for PoliceArg {
    type Err = Failure;
    fn from_str(s: &str) -> Result<Self, Failure> {
        let rate = misura_lab::shape::parse_rate(s).map_err(|why| {
            Failure::Usage(format!(
                "police rate `{s}`: {why}; write a rate in bit/s, e.g. 50M"
            ))
        })?;
        Shape::police(rate)
            .map(PoliceArg)
            .map_err(|e| Failure::Params(format!("police {e}")))
    }
}

/// `--shape`: a throughput limit, or `none` to remove one.
#[derive(Clone, Debug, PartialEq)]
pub struct ShapeArg(pub Option<Shape>);

impl std::str::FromStr for ShapeArg {
    type Err = Failure;
    fn from_str(s: &str) -> Result<Self, Failure> {
        Shape::parse(s).map(ShapeArg).map_err(|e| {
            if e.is_out_of_range() {
                Failure::Params(e.to_string())
            } else {
                Failure::Usage(e.to_string())
            }
        })
    }
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
    /// misura-h1 — router misura-r — misura-h2, on two subnets.
    Routed,
}

impl From<TopologyArg> for Topology {
    fn from(t: TopologyArg) -> Topology {
        match t {
            TopologyArg::Direct => Topology::Direct,
            TopologyArg::Switch => Topology::Switch,
            TopologyArg::Hosts => Topology::Hosts,
            TopologyArg::Routed => Topology::Routed,
        }
    }
}
