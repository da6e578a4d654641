//! Everything that can go wrong while building, inspecting, shaping or
//! removing the lab, typed; a shape's refusal names the setting and the
//! topology, and the binary words it with `lab up`'s flags.

use crate::Topology;

/// Everything that can go wrong while building, inspecting or removing the lab.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    /// The process lacks CAP_NET_ADMIN / CAP_SYS_ADMIN.
    #[error("building the lab needs CAP_NET_ADMIN: run as root (sudo misura lab up)")]
    NotPermitted,
    /// `ip` could not be found or started.
    #[error("`ip` (iproute2) not found: apt-get install iproute2")]
    IpMissing,
    /// A namespace with one of the lab's names exists but the lab did not make it.
    #[error(
        "network namespace {netns} exists but was not created by the misura lab; \
         it was left alone. If it is yours to remove, remove it yourself \
         (ip netns del {netns}) and try again"
    )]
    NotOurs {
        /// The namespace's name.
        netns: String,
    },
    /// A command failed.
    #[error("command `{cmd}` failed ({}): {}", status_text(*.status), .stderr.trim())]
    Command {
        /// The command line.
        cmd: String,
        /// Exit status, `None` if killed by a signal or timed out.
        status: Option<i32>,
        /// What it printed on standard error.
        stderr: String,
    },
    /// The namespace prefix is unusable.
    #[error("bad lab prefix {prefix:?}: {reason}")]
    BadPrefix {
        /// The rejected prefix.
        prefix: String,
        /// Why.
        reason: String,
    },
    /// `tc` could not be found.
    #[error("`tc` (iproute2) not found: apt-get install iproute2")]
    TcMissing,
    /// A shape was asked of a lab that is not wired as the switch topology.
    #[error(
        "lab {prefix} is not wired as the {topology} topology, so it has no {topology} port \
         to shape: build that topology with the shape"
    )]
    NotShapeable {
        /// The lab's prefix.
        prefix: String,
        /// The topology whose bottleneck was asked for.
        topology: Topology,
    },
    /// A shape asked of a topology that has no bottleneck to shape (only
    /// the switch's and the routed topology's have), or a managed queue
    /// (`managed_queue`: `qdisc=fq_codel`) of one other than the routed
    /// topology's router.
    #[error("{}", shape_refusal(*topology, *managed_queue))]
    ShapeNotApplicable {
        /// The topology the shape was asked of.
        topology: Topology,
        /// The refusal is of the managed queue, not of the shape.
        managed_queue: bool,
    },
    /// The kernel lacks a queueing discipline the shape asks for.
    #[error(
        "this kernel has no {qdisc} queueing discipline (CONFIG_NET_SCH_{config} is not set), so \
         the router cannot run a managed queue; the shape was not applied. A small tbf queue \
         (e.g. 16 KB at 20 Mbit/s: 6.5 ms) bounds the delay instead, without flow isolation"
    )]
    QdiscMissing {
        /// The qdisc's name.
        qdisc: String,
        /// Its kernel configuration name.
        config: String,
    },
    /// Any other I/O error (marker files, starting processes).
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// The lab's rule for a shape, in the setting's words (the binary names
/// its flags).
fn shape_refusal(topology: Topology, managed_queue: bool) -> String {
    if managed_queue {
        format!(
            "a managed queue (qdisc=fq_codel) applies to the routed topology (the router's \
             queue); the {topology} topology's port takes a plain tbf: RATE[,queue=BYTES][,burst=BYTES]"
        )
    } else {
        format!(
            "a shape applies to the switch topology (the SUT bridge's port towards p2) and the \
             routed one (the router's ports); the {topology} topology has nothing to shape"
        )
    }
}

fn status_text(status: Option<i32>) -> String {
    match status {
        Some(code) => format!("exit status {code}"),
        None => "killed or timed out".to_string(),
    }
}
