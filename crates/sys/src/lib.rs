//! The thin Linux edge of misura.
//!
//! This is the only crate of the workspace that may use `unsafe`; every
//! `unsafe` block carries a `// SAFETY:` comment.  Everything else in the
//! workspace talks to the kernel through the safe functions here:
//!
//! * [`clock`]: `clock_gettime`/`clock_getres` as `i64` nanoseconds;
//! * [`netns`]: entering a network namespace (per thread);
//! * [`iface`]: facts about one interface, read through sockets (ioctl and
//!   rtnetlink) so that they are right inside a namespace entered with
//!   [`netns::enter`], where `/sys/class/net` still shows the namespace that
//!   mounted sysfs;
//! * [`tsinfo`]: `ETHTOOL_GET_TS_INFO` and `SIOCSHWTSTAMP`;
//! * [`packet`]: a non-blocking `AF_PACKET` socket with `SO_TIMESTAMPING`,
//!   RX stamps from `SCM_TIMESTAMPING` and TX stamps from the error queue;
//! * [`udp`]: a UDP socket (STAMP) with `SO_TIMESTAMPING`, OPT_ID-numbered
//!   TX stamps, TTL/hop limit and pktinfo;
//! * [`tcpinfo`]: `TCP_INFO`, the path MTU (`IP_MTU`) and don't-fragment;
//! * [`poll`]: `ppoll` over several descriptors (one thread, many sockets);
//! * [`rusage`]: CPU time of the process and of a thread (`getrusage`);
//! * [`sched`]: CPU pinning, `SCHED_FIFO`, `mlockall`;
//! * [`host`]: best-effort facts about the host that affect timing;
//! * [`hostinfo`]: the sysfs/procfs items `misura host check` reads and tunes;
//! * [`ethtool`]: link mode, EEE, interrupt coalescing and offloads;
//! * [`ring`]: the high-rate paths: `TPACKET_V3` RX ring, `PACKET_TX_RING`,
//!   `sendmmsg`, fanout, and a probe of which the interface offers;
//! * [`phc`], [`phc_cross`]: NIC PTP hardware clocks, read and
//!   cross-timestamped against the system clock (`PTP_SYS_OFFSET*`);
//! * [`xdp`]: AF_XDP transmit (zero-copy where the driver has it, else copy).

// libc field types (time_t, socklen_t, msg_controllen, ...) differ between
// targets; the casts that are no-ops on x86_64 are needed elsewhere.
#![allow(clippy::unnecessary_cast)]

mod cmsg;
mod error;
mod sockaddr;
mod sys;

pub mod clock;
pub mod clocks;
pub mod ethtool;
mod fd;
pub mod host;
pub mod hostinfo;
pub mod iface;
pub mod netns;
pub mod packet;
pub mod phc;
pub mod phc_cross;
pub mod poll;
pub mod ring;
pub mod rusage;
pub mod sched;
pub mod tcpinfo;
pub mod timer;
pub mod timesync;
pub mod tsc;
pub mod tsinfo;
pub mod udp;
pub mod wake;

pub use error::SysError;
pub mod xdp;
