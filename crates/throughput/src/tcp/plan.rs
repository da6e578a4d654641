//! The plan of a `misura tcp` run: the knobs a sweep can vary and the rest of
//! its shape (plain values: the binary's clap groups convert into them),
//! checked into the plan (the bounds named in each error, by the flag).

use crate::client::{ClientPlan, Direction, TcpOpts};
use crate::error::{Refusal, Timed};
use misura_cli::units::{ByteSize, DurationArg};

/// `--msg-size` when not given (a sweep's default list too).
pub const DEFAULT_MSG_SIZE: &str = "128K";
/// `--streams` when not given (a sweep's default list too).
pub const DEFAULT_STREAMS: &str = "1";
/// The most data connections one client opens.
const MAX_STREAMS: u32 = 1024;
/// The largest single write.
const MAX_MSG_SIZE: u64 = 64 << 20;

/// The flags of `misura tcp` that `misura sweep tcp` can vary (with
/// `--clients`).
#[derive(Debug, Clone)]
pub struct TcpKnobs {
    /// Parallel data connections.
    pub streams: u32,
    /// Size of each write (e.g. 1400, 64K).
    pub msg_size: ByteSize,
    /// SO_SNDBUF to ask for (default: the kernel's autotuning).
    pub sndbuf: Option<ByteSize>,
    /// SO_RCVBUF to ask for (default: the kernel's autotuning).
    pub rcvbuf: Option<ByteSize>,
    /// Set TCP_NODELAY (no Nagle) on the data connections of both ends.
    pub nodelay: bool,
}

/// The other flags of `misura tcp`: the same in every run of a sweep.
#[derive(Debug, Clone)]
pub struct TcpShape {
    /// The server sends, the client receives.
    pub reverse: bool,
    /// Both send at once on every connection (full duplex).
    pub bidir: bool,
    /// Length of the test.
    pub duration: DurationArg,
    /// Also report the bytes moved in every interval of this length.
    pub interval: Option<DurationArg>,
    /// One thread per stream, for multi-core hosts (default: one thread
    /// drives all streams of a client with non-blocking sockets and poll(2)).
    pub threads: bool,
    /// While the client receives (--reverse, --bidir), its poll(2) loop
    /// keeps polling for up to this long before it sleeps (at most 1ms; 0
    /// sleeps at once). Data that comes within it is read without a
    /// wake-up; on a VM each wake-up of an idle CPU costs the sender's CPU
    /// an interrupt through the hypervisor. It costs client CPU (cpu_local
    /// shows it); --threads readers block and do not use it.
    pub busy_poll: DurationArg,
}

/// How a client's data connections are driven.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Threads {
    /// One thread writes (and reads) every stream: non-blocking sockets and
    /// one poll(2) loop, as iperf3 3.12+ and nuttcp do. The default: on a
    /// host where the streams share a CPU, threads only time-share it.
    One,
    /// One blocking thread per stream (two for bidir): `--threads`, for
    /// streams spread over several CPUs.
    PerStream,
}

impl Threads {
    pub fn of(per_stream: bool) -> Threads {
        if per_stream {
            Threads::PerStream
        } else {
            Threads::One
        }
    }

    /// The name in the result.
    pub fn as_str(self) -> &'static str {
        match self {
            Threads::One => "one",
            Threads::PerStream => "per-stream",
        }
    }
}

/// One `misura tcp` run, checked. A sweep sets one field and checks again.
#[derive(Clone, Debug)]
pub struct TcpPlan {
    pub client: ClientPlan,
    pub direction: Direction,
    pub streams: u32,
    pub msg_size: ByteSize,
    pub sndbuf: Option<ByteSize>,
    pub rcvbuf: Option<ByteSize>,
    pub nodelay: bool,
    pub duration: DurationArg,
    pub interval: Option<DurationArg>,
    pub threads: Threads,
    /// `--busy-poll`, checked.
    pub busy_poll: std::time::Duration,
}

impl TcpPlan {
    pub fn new(client: ClientPlan, k: &TcpKnobs, s: &TcpShape) -> Result<TcpPlan, Refusal> {
        let p = TcpPlan {
            client,
            direction: Direction::of(s.reverse, s.bidir),
            streams: k.streams,
            msg_size: k.msg_size.clone(),
            sndbuf: k.sndbuf.clone(),
            rcvbuf: k.rcvbuf.clone(),
            nodelay: k.nodelay,
            duration: s.duration.clone(),
            interval: s.interval.clone(),
            threads: Threads::of(s.threads),
            busy_poll: crate::poll_window::window(&s.busy_poll)?,
        };
        p.check()?;
        Ok(p)
    }

    /// Every bound, in the order the binary's flags list them.
    pub fn check(&self) -> Result<(), Refusal> {
        self.client.check()?;
        if self.msg_size.bytes == 0 || self.msg_size.bytes > MAX_MSG_SIZE {
            return Err(Refusal::TcpMsgSize {
                size: self.msg_size.clone(),
            });
        }
        Refusal::at_least_1ns(&self.duration, Timed::Duration)?;
        if let Some(iv) = &self.interval {
            Refusal::at_least_1ns(iv, Timed::Interval)?;
        }
        if self.streams == 0 || self.streams > MAX_STREAMS {
            return Err(Refusal::Streams {
                given: self.streams,
                max: MAX_STREAMS,
            });
        }
        Ok(())
    }

    pub fn duration_ns(&self) -> u64 {
        self.duration.ns as u64
    }

    pub fn interval_ns(&self) -> Option<u64> {
        self.interval.as_ref().map(|d| d.ns as u64)
    }

    /// Socket options of the data connections.
    pub fn opts(&self) -> TcpOpts {
        TcpOpts {
            sndbuf: self.sndbuf.as_ref().map(|b| b.bytes as usize),
            rcvbuf: self.rcvbuf.as_ref().map(|b| b.bytes as usize),
            nodelay: self.nodelay,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(streams: u32, msg_size: &str, duration: &str) -> Result<TcpPlan, Refusal> {
        let client = crate::client::on_host("h");
        let knobs = TcpKnobs {
            streams,
            msg_size: msg_size.parse().unwrap(),
            sndbuf: None,
            rcvbuf: None,
            nodelay: false,
        };
        let shape = TcpShape {
            reverse: false,
            bidir: true,
            duration: duration.parse().unwrap(),
            interval: None,
            threads: false,
            busy_poll: "5us".parse().unwrap(),
        };
        TcpPlan::new(client, &knobs, &shape)
    }

    #[test]
    fn plain_knobs_are_checked_into_a_plan() {
        let p = plan(4, "64K", "1s").unwrap();
        assert_eq!((p.direction, p.threads), (Direction::Bidir, Threads::One));
        assert_eq!(p.busy_poll, std::time::Duration::from_micros(5));
        let e = |r: Result<TcpPlan, Refusal>| r.err().unwrap();
        assert_eq!(
            e(plan(0, "1", "1s")),
            Refusal::Streams {
                given: 0,
                max: 1024
            }
        );
        assert!(
            matches!(e(plan(1, "65M", "1s")), Refusal::TcpMsgSize { size } if size.bytes == 65 << 20)
        );
        assert!(matches!(
            e(plan(1, "1", "0s")),
            Refusal::Duration { of: Timed::Duration, value, .. } if value.ns == 0
        ));
    }
}
