//! Command-line flags. Parsing here only checks shapes; values are resolved
//! against the interfaces and the link later (`oneway::resolve`).

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

const ABOUT: &str = "Precise network latency measurement with an ordinary Linux PC.";

const LONG_ABOUT: &str = "\
Precise network latency measurement with an ordinary Linux PC.

The method (Cena, Cibrario Bertolotti, Valenzano): two ports of this PC are
cabled to the system under test (SUT). misura sends test frames on one port and
receives them on the other, on one clock. Each frame's user-level latency
UL = C + IL + SL (wire time + the tester's internal latency + the SUT's) is
bracketed by a TX window around send() and an RX window around the receive, and
kernel (and, where the NIC has them, hardware) timestamps are recorded beside.
A calibration on a short cable measures IL once; then the SUT's latency is
Msl = Mul − Amil(P) − C, and its slope over frame length tells
store-and-forward from cut-through.

No hardware? `misura demo` builds a virtual lab (network namespaces, veth cables,
a Linux bridge as the SUT), calibrates, measures the bridge and cleans up.";

const AFTER_HELP: &str = "\
Examples:
  misura demo                                   # the whole method on a virtual lab
  misura lab up --topology direct               # build the lab's calibration cable
  misura calibrate --netns misura-tester --tx p1 --rx p2
  misura lab up --topology switch               # put a bridge between the ports
  misura oneway --netns misura-tester --tx p1 --rx p2 --calibration PROFILE.json

Exit codes: 0 ok, 1 error, 2 bad usage, 3 missing privilege, 4 interface or
namespace problem, 5 impossible measurement parameters, 6 output not writable,
7 calibration profile unusable, 130/143 interrupted (partial results written).";

#[derive(Parser, Debug)]
#[command(name = "misura", version, about = ABOUT, long_about = LONG_ABOUT, after_help = AFTER_HELP)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Results store (SQLite) where every run is kept (default: the user's data directory).
    #[arg(long, global = true, value_name = "PATH")]
    pub store: Option<PathBuf>,
    /// Do not keep this run in the results store.
    #[arg(long, global = true)]
    pub no_store: bool,
}

/// Flags of `misura history`.
#[derive(Args, Debug, Clone)]
pub struct HistoryArgs {
    /// Only runs of this subcommand (oneway, calibrate, rtt, exchange, …).
    #[arg(long)]
    pub subcommand: Option<String>,
    /// Only runs whose target contains this text.
    #[arg(long)]
    pub target: Option<String>,
    /// Only runs started at or after this time (RFC 3339 prefix, e.g. 2026-11-22).
    #[arg(long)]
    pub since: Option<String>,
    /// Only runs started at or before this time (RFC 3339 prefix).
    #[arg(long)]
    pub until: Option<String>,
    /// At most this many runs, newest first.
    #[arg(long, default_value_t = 50)]
    pub limit: u32,
    #[arg(long)]
    pub json: bool,
}

/// Flags of `misura show`.
#[derive(Args, Debug, Clone)]
pub struct ShowArgs {
    /// Run id (see misura history).
    pub run: i64,
    #[arg(long)]
    pub json: bool,
}

/// Flags of `misura compare`.
#[derive(Args, Debug, Clone)]
pub struct CompareArgs {
    /// Run ids; the first is the baseline.
    #[arg(required = true, num_args = 2..)]
    pub runs: Vec<i64>,
    #[arg(long)]
    pub json: bool,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run the whole method on the built-in virtual lab: calibrate on a cable, measure a bridge, clean up.
    #[command(long_about = "\
Run the whole method on the built-in virtual lab, without hardware:
  1. build the lab's direct topology (two tester ports joined by a veth cable),
  2. calibrate the tester over seven payload sizes (Amil(P) = α + β·P),
  3. rewire to the switch topology (a Linux bridge in its own namespace is the SUT),
  4. measure the bridge and fit its latency over frame length (store-and-forward?),
  5. print the report and take the lab down, also when interrupted.
Needs root (network namespaces, raw sockets).

Example:
  misura demo --count 1000 --export-json demo.json")]
    Demo(DemoArgs),
    /// Build, inspect or remove the virtual lab (namespaces misura-*).
    #[command(subcommand)]
    Lab(LabCommand),
    /// Measure one-way latency from one port to another through the SUT.
    #[command(long_about = "\
Measure one-way latency: send test frames out of --tx, receive them on --rx
(unicast to the RX port's MAC), all timestamps on one clock (CLOCK_REALTIME).

Per frame: the TX window [TX1, TX2] around send(), the RX window [RX1, RX2]
(RX1 before the last empty poll, RX2 after the receive), the kernel software
stamps (SO_TIMESTAMPING) and NIC hardware stamps where the driver has them.
Derived: Bul = RX1 − TX2 (RX1 no earlier than TX1), Wul = RX2 − TX1,
Mul = (Bul + Wul)/2, kernel latency,
and with --calibration the SUT latency Msl = Mul − Amil(P) − C with a fit over
frame length and a store-and-forward / cut-through verdict.

The loop is one busy-polling thread; a late frame is postponed to the next
period (no catch-up bursts).

Example:
  misura oneway --netns misura-tester --tx p1 --rx p2 --rate 2000 --count 20000 \\
      --sizes 46,64,128,256,512,1024,1500 --frames frames.csv --json")]
    Oneway(OnewayArgs),
    /// Calibrate the tester on a cable: fit its internal latency Amil(P) = α + β·P.
    #[command(long_about = "\
Calibrate the tester: with its two ports joined by a short cable (SUT latency 0),
measure over at least seven payload sizes, compute each frame's internal latency
Mil = Mul − C and its mean per size Amil(P), and fit Amil(P) = α + β·P by least
squares, with standard deviations and 95 % confidence intervals (Student t,
n − 2 degrees of freedom). The same is done for the kernel-timestamp latency.
The result is saved as a calibration profile for `misura oneway --calibration`.

Example:
  misura lab up --topology direct
  misura calibrate --netns misura-tester --tx p1 --rx p2 --profile cal.json")]
    Calibrate(CalibrateArgs),
    /// Answer STAMP (RFC 8762/8972) test packets over UDP, or misura's raw probes on an interface.
    #[command(long_about = "\
A STAMP Session-Reflector (RFC 8762, with the RFC 8972 TLVs): it answers each
test packet with its receive and transmit timestamps, taken by the kernel (or
the NIC) and named in a Timestamp Information TLV; the precise transmit stamp
of a reply is only known after sending, so it comes in the next reply's
Follow-Up Telemetry TLV (like PTP's two-step mode).

Safe to leave running: a reply is never larger than its request; no reply to
group addresses, to replies, to malformed packets, or (with --key-file) to
packets failing the HMAC; a per-source rate limit; bounded state; every drop
is counted. SIGTERM stops it cleanly and prints the counters.

Examples:
  misura reflect                                  # UDP port 862, all IPv4 addresses
  misura reflect --listen :: --port 8620 --key-file stamp.key
  misura reflect --l2 p2 --netns misura-tester    # raw Ethernet probes")]
    Reflect(ReflectArgs),
    /// Measure round trips to a STAMP reflector: user, kernel and network RTT, one-way delays.
    #[command(long_about = "\
Measure round-trip times to a STAMP reflector and take the hosts out of them.
Per probe, on one timescale: the user-level RTT (what ping sees), the kernel
RTT (kernel TX stamp to kernel RX stamp), the reflector's turnaround (its RX to
its TX stamp, reported in the reply and its follow-up) and the network RTT =
kernel RTT − turnaround. Forward and backward one-way delays use the
reflector's stamps and a clock offset estimated from the minimum-RTT probes
(unless both clocks are known to be synchronised), with its uncertainty.

Examples:
  misura rtt 198.18.0.2 --count 1000 --period 10ms
  misura rtt [2001:2::2]:862 --request 64,512,1500 --frames probes.csv
  misura rtt --l2 --interface m0 --peer 02:6d:73:00:02:02 --netns misura-h1")]
    Rtt(RttArgs),
    /// Seed 002's exchange: a trigger frame, then both ends send data frames at once; time each phase.
    #[command(long_about = "\
Reproduce the request/response sequence of a real-time exchange on raw
Ethernet frames (seed 002): the initiator sends a trigger of S1 bytes and at
once its own data frame of S2 bytes; the responder answers each trigger with
its S2-byte data frame, so both directions carry data at the same time.
The initiator times each cycle from just before the trigger's send():
  t1  the trigger's send() has returned
  t2  the initiator's own data frame's send() has returned
  t3  the responder's data frame has been received (the exchange is complete)
and also t3 from kernel stamps (trigger TX stamp to data RX stamp). Each phase
is reported as the seed did: average, max, min, average − min, and the count
over a threshold (30 µs).

Examples (the lab's hosts topology):
  misura exchange --respond --netns misura-h2 --interface m0 --peer 02:6d:73:00:02:01
  misura exchange --netns misura-h1 --interface m0 --peer 02:6d:73:00:02:02 --count 1000")]
    Exchange(ExchangeArgs),
    /// Serve throughput, request/response and set-up tests to many clients at once, within limits.
    #[command(long_about = crate::commands::throughput::serve::LONG_ABOUT)]
    Serve(crate::commands::throughput::serve::ServeArgs),
    /// TCP throughput against `misura serve`: streams, direction, buffers, Nagle, CPU cost.
    #[command(long_about = crate::commands::throughput::tcp::LONG_ABOUT)]
    Tcp(crate::commands::throughput::tcp::TcpArgs),
    /// Paced UDP against `misura serve`: received rate, loss, duplicates, reordering, jitter.
    #[command(long_about = crate::commands::throughput::udp::LONG_ABOUT)]
    Udp(crate::commands::throughput::udp::UdpArgs),
    /// Request/response transactions (netperf TCP_RR/UDP_RR/TCP_CRR): rate, latency, CPU per transaction.
    #[command(long_about = crate::commands::throughput::rr::LONG_ABOUT)]
    Rr(crate::commands::throughput::rr::RrArgs),
    /// Set-up delay of a new path: first-packet RTT minus the next, after idle gaps; TCP handshake time.
    #[command(long_about = crate::commands::throughput::setup::LONG_ABOUT)]
    Setup(crate::commands::throughput::setup::SetupArgs),
    /// Run tcp, udp or rr across a parameter list or range and tabulate (seed 001's curves).
    #[command(long_about = crate::commands::throughput::sweep::LONG_ABOUT)]
    Sweep(crate::commands::throughput::sweep::SweepArgs),
    /// A self-contained HTML page (and SVG/PNG plots) of a stored run or a result file.
    #[command(long_about = crate::commands::report::LONG_ABOUT)]
    Report(crate::commands::report::ReportArgs),
    /// Measure many paths continuously and expose OpenMetrics for Prometheus.
    #[command(long_about = crate::commands::agent::LONG_ABOUT)]
    Agent(crate::commands::agent::AgentArgs),
    /// List the runs kept in the results store.
    History(HistoryArgs),
    /// Print a stored run as it was printed then (or its JSON).
    Show(ShowArgs),
    /// Put stored runs side by side: main figure, its spread, and whether a change exceeds the spread.
    Compare(CompareArgs),
    /// Know the instrument's clocks: read cost, interference, TSC frequency, timer wake-up latency.
    #[command(subcommand)]
    Clock(ClockCommand),
    /// What on this host affects timing precision, and how to change it.
    #[command(subcommand)]
    Host(HostCommand),
}

#[derive(Subcommand, Debug)]
pub enum ClockCommand {
    /// Every usable time source: read cost, resolution, smallest step, monotonicity.
    #[command(long_about = crate::commands::clock::sources::LONG_ABOUT)]
    Sources(crate::commands::clock::sources::SourcesArgs),
    /// Seed 000's interference test: histogram of the steps between consecutive clock reads.
    #[command(long_about = crate::commands::clock::interference::LONG_ABOUT)]
    Interference(crate::commands::clock::interference::InterferenceArgs),
    /// The TSC's frequency and stability, against CLOCK_MONOTONIC_RAW or an NTP server.
    #[command(long_about = crate::commands::clock::tsc::LONG_ABOUT)]
    Tsc(crate::commands::clock::tsc::TscArgs),
    /// Wake-up latency of periodic absolute sleeps, as cyclictest measures it.
    #[command(long_about = crate::commands::clock::timer::LONG_ABOUT)]
    Timer(crate::commands::clock::timer::TimerArgs),
}

#[derive(Subcommand, Debug)]
pub enum HostCommand {
    /// Check everything that affects timing precision, with the command that changes each.
    #[command(long_about = crate::commands::host::check::CHECK_LONG_ABOUT)]
    Check(crate::commands::host::check::CheckArgs),
    /// Apply (or revert) the safe tuning changes; without --apply only print the plan.
    #[command(long_about = crate::commands::host::check::TUNE_LONG_ABOUT)]
    Tune(crate::commands::host::check::TuneArgs),
}

/// Flags of `misura reflect`.
#[derive(Args, Debug, Clone)]
pub struct ReflectArgs {
    /// Address to listen on (IPv4 or IPv6; `::` listens on IPv6 only).
    #[arg(long, default_value = "0.0.0.0")]
    pub listen: String,
    /// UDP port (RFC 8762 assigns 862; below 1024 needs root).
    #[arg(long, default_value_t = 862)]
    pub port: u16,
    /// Run inside this network namespace.
    #[arg(long, value_name = "NAME")]
    pub netns: Option<String>,
    /// Authenticated mode: HMAC-SHA-256 key file (hex on the first line, or raw bytes).
    #[arg(long, value_name = "FILE")]
    pub key_file: Option<std::path::PathBuf>,
    /// Stateful reflection: the reflector numbers its replies per session
    /// (RFC 8762 §4.3.1); default stateless (echo the sender's sequence number).
    #[arg(long)]
    pub stateful: bool,
    /// Reflect raw Ethernet probes on this interface instead of UDP.
    #[arg(long, value_name = "IF")]
    pub l2: Option<String>,
    /// Ethertype of raw probes (with --l2).
    #[arg(long, default_value = "0x88B5")]
    pub ethertype: String,
    /// Replies per second allowed per source address.
    #[arg(long, default_value_t = 10_000)]
    pub rate_limit: u64,
    /// Most sources tracked at once (bounded state).
    #[arg(long, default_value_t = 4096)]
    pub max_sources: usize,
    /// Stop after this long (e.g. 60s); default: until SIGINT/SIGTERM.
    #[arg(long)]
    pub duration: Option<String>,
    /// Pin the reflector to this CPU.
    #[arg(long)]
    pub cpu: Option<usize>,
    /// Busy-poll instead of sleeping in poll(2) (lowest turnaround, one CPU at 100 %).
    #[arg(long)]
    pub busy_poll: bool,
    /// Print counters as JSON when stopping.
    #[arg(long)]
    pub json: bool,
    #[arg(long, short)]
    pub quiet: bool,
}

/// Flags of `misura rtt`.
#[derive(Args, Debug, Clone)]
pub struct RttArgs {
    /// The reflector: HOST or HOST:PORT (IPv6 as [ADDR]:PORT). Not with --l2.
    pub target: Option<String>,
    /// UDP port of the reflector when HOST has none.
    #[arg(long, default_value_t = 862)]
    pub port: u16,
    /// Run inside this network namespace.
    #[arg(long, value_name = "NAME")]
    pub netns: Option<String>,
    /// Raw Ethernet probes instead of STAMP over UDP.
    #[arg(long, requires_all = ["interface", "peer"])]
    pub l2: bool,
    /// Interface for --l2.
    #[arg(long, value_name = "IF")]
    pub interface: Option<String>,
    /// MAC address of the reflector for --l2.
    #[arg(long, value_name = "MAC")]
    pub peer: Option<String>,
    /// Ethertype of raw probes (with --l2).
    #[arg(long, default_value = "0x88B5")]
    pub ethertype: String,
    /// Authenticated mode: the reflector's HMAC-SHA-256 key file.
    #[arg(long, value_name = "FILE")]
    pub key_file: Option<std::path::PathBuf>,
    /// Traffic pattern: periodic, burst:N or poisson.
    #[arg(long, default_value = "periodic")]
    pub pattern: String,
    /// Probe period, e.g. 10ms (default 100ms).
    #[arg(long, conflicts_with = "rate")]
    pub period: Option<String>,
    /// Probes per second.
    #[arg(long)]
    pub rate: Option<f64>,
    /// Number of probes (default 100 unless --duration).
    #[arg(long)]
    pub count: Option<u64>,
    /// Run for this long, e.g. 60s, 24h (with --count: whichever first).
    #[arg(long)]
    pub duration: Option<String>,
    /// Request sizes in bytes (UDP payload; STAMP minimum 44, 112 authenticated), comma separated.
    #[arg(long = "request", alias = "size", value_delimiter = ',')]
    pub request: Vec<usize>,
    /// Response size in bytes (at most the request: a reply is never larger than its request).
    #[arg(long)]
    pub response: Option<usize>,
    /// A probe not answered within this time is lost.
    #[arg(long, default_value = "1s")]
    pub timeout: String,
    /// Print a summary line every interval, e.g. 10s.
    #[arg(long)]
    pub interval: Option<String>,
    /// Count probes whose RTT exceeds this, e.g. 30us.
    #[arg(long)]
    pub threshold: Option<String>,
    /// Link rate for the ideal RTT, e.g. 1G (default: read from the interface).
    #[arg(long)]
    pub link_speed: Option<String>,
    /// Pin the client to this CPU.
    #[arg(long)]
    pub cpu: Option<usize>,
    /// Seed for the Poisson pattern.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write one CSV row per probe to this file.
    #[arg(long, value_name = "FILE.csv")]
    pub frames: Option<PathBuf>,
    #[arg(long)]
    pub json: bool,
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<PathBuf>,
    #[arg(long, value_name = "FILE")]
    pub export_csv: Option<PathBuf>,
    #[arg(long, short)]
    pub quiet: bool,
}

/// Flags of `misura exchange`.
#[derive(Args, Debug, Clone)]
pub struct ExchangeArgs {
    /// Interface that faces the peer.
    #[arg(long, value_name = "IF")]
    pub interface: String,
    /// MAC address of the peer (only its frames are answered or counted).
    #[arg(long, value_name = "MAC")]
    pub peer: String,
    /// Run inside this network namespace.
    #[arg(long, value_name = "NAME")]
    pub netns: Option<String>,
    /// Be the responder (the seed's slave): answer each trigger with a data frame.
    #[arg(long)]
    pub respond: bool,
    /// S1: trigger frame size in bytes, destination address through FCS.
    #[arg(long, default_value_t = 64)]
    pub trigger: usize,
    /// S2: data frame size each side sends after the trigger.
    #[arg(long, default_value_t = 530)]
    pub data: usize,
    /// Number of cycles (initiator).
    #[arg(long, default_value_t = 1000)]
    pub count: u64,
    /// Cycle period (the seed: about 4 ms).
    #[arg(long, default_value = "4ms")]
    pub period: String,
    /// Give up on a cycle after this long without the peer's data frame.
    #[arg(long, default_value = "5ms")]
    pub timeout: String,
    /// Count phases longer than this (the seed counted over 30 µs).
    #[arg(long, default_value = "30us")]
    pub threshold: String,
    /// Ethertype of the frames.
    #[arg(long, default_value = "0x88B5")]
    pub ethertype: String,
    /// Stop the responder after this long (default: until SIGINT/SIGTERM).
    #[arg(long)]
    pub duration: Option<String>,
    /// Responder: busy-poll instead of sleeping in poll(2) between frames.
    #[arg(long)]
    pub busy_poll: bool,
    /// Pin to this CPU.
    #[arg(long)]
    pub cpu: Option<usize>,
    #[arg(long)]
    pub json: bool,
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<PathBuf>,
}

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
    /// direct, switch or hosts.
    #[arg(long, short, default_value = "direct")]
    pub topology: String,
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

/// Flags shared by every command that sends test frames.
#[derive(Args, Debug, Clone)]
pub struct MeasureArgs {
    /// Port that sends the test frames.
    #[arg(long)]
    pub tx: String,
    /// Port that receives them.
    #[arg(long)]
    pub rx: String,
    /// Run inside this network namespace (name in /run/netns, or a path).
    #[arg(long, value_name = "NAME")]
    pub netns: Option<String>,
    /// Traffic pattern: periodic, burst:N (N frames back to back each period) or poisson.
    #[arg(long, default_value = "periodic")]
    pub pattern: String,
    /// Sending period, e.g. 500us, 1ms, 0.2ms (one of --period, --rate, --load).
    #[arg(long, conflicts_with_all = ["rate", "load"])]
    pub period: Option<String>,
    /// Frames per second (periods per second for bursts).
    #[arg(long, conflicts_with = "load")]
    pub rate: Option<f64>,
    /// Offered load Γ as a share of link capacity: 0.1 or 10%.
    #[arg(long)]
    pub load: Option<String>,
    /// Number of frames to measure (default 10000 unless --duration).
    #[arg(long)]
    pub count: Option<u64>,
    /// Measure for this long, e.g. 30s, 5m, 24h (with --count: whichever comes first).
    #[arg(long)]
    pub duration: Option<String>,
    /// Payload sizes P in bytes (misura's header included; 40..=MTU), comma separated.
    #[arg(long = "sizes", alias = "size", value_delimiter = ',')]
    pub sizes: Vec<usize>,
    /// Cycle through sizes frame by frame (interleaved) or one block per size (blocks).
    #[arg(long, default_value = "interleaved")]
    pub order: String,
    /// A frame not received within this time is lost, e.g. 100ms.
    #[arg(long, default_value = "100ms")]
    pub timeout: String,
    /// How late a frame may leave before it is postponed to the start of the
    /// next period (default: until its own period ends, so at most one frame
    /// leaves per period and the schedule never bursts to catch up).
    #[arg(long)]
    pub late_tolerance: Option<String>,
    /// Count frames whose latency exceeds this, e.g. 30us.
    #[arg(long)]
    pub threshold: Option<String>,
    /// Link rate for the wire time C, e.g. 100M, 1G, 10G (default: read from the RX interface).
    #[arg(long)]
    pub link_speed: Option<String>,
    /// Every frame carries an 802.1Q tag (adds 4 bytes to the wire time).
    #[arg(long)]
    pub vlan: bool,
    /// Ethertype of the test frames (0x88B5 IEEE local experimental; 0x6006 as the original paper).
    #[arg(long, default_value = "0x88B5")]
    pub ethertype: String,
    /// Frames sent after enabling timestamping and before measuring.
    #[arg(long, default_value_t = 64)]
    pub warmup: u64,
    /// Pin the measuring loop to this CPU.
    #[arg(long)]
    pub cpu: Option<usize>,
    /// Run the loop with SCHED_FIFO at this priority (1-99).
    #[arg(long, value_parser = clap::value_parser!(i32).range(1..=99))]
    pub rt_priority: Option<i32>,
    /// Do not lock memory (mlockall).
    #[arg(long)]
    pub no_mlock: bool,
    /// Seed for the Poisson pattern.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write one CSV row per frame to this file (columns in the README).
    #[arg(long, value_name = "FILE.csv")]
    pub frames: Option<PathBuf>,
    /// Print the result as JSON on stdout instead of tables.
    #[arg(long)]
    pub json: bool,
    /// Also write the JSON result to this file.
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<PathBuf>,
    /// Also write the summary as CSV to this file.
    #[arg(long, value_name = "FILE")]
    pub export_csv: Option<PathBuf>,
    /// No progress line on stderr.
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Args, Debug)]
pub struct OnewayArgs {
    #[command(flatten)]
    pub m: MeasureArgs,
    /// Calibration profile from `misura calibrate`: report SUT latency Msl.
    #[arg(long, value_name = "FILE")]
    pub calibration: Option<PathBuf>,
    /// Use the profile even if it was made on another set-up (warn instead of failing).
    #[arg(long)]
    pub accept_profile_mismatch: bool,
}

#[derive(Args, Debug)]
pub struct CalibrateArgs {
    #[command(flatten)]
    pub m: MeasureArgs,
    /// Where to save the profile (default: the user's data directory).
    #[arg(long, value_name = "FILE")]
    pub profile: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Frames per payload size in each phase.
    #[arg(long, default_value_t = 1000)]
    pub count: u64,
    /// Frames per second.
    #[arg(long, default_value_t = 2000.0)]
    pub rate: f64,
    /// Pin the loop to this CPU.
    #[arg(long)]
    pub cpu: Option<usize>,
    /// Namespace prefix of the lab the demo builds.
    #[arg(long, default_value = "misura-")]
    pub prefix: String,
    /// Where to save the calibration profile (default: a temporary file).
    #[arg(long, value_name = "FILE")]
    pub profile: Option<PathBuf>,
    /// Print the SUT result as JSON.
    #[arg(long)]
    pub json: bool,
    /// Write the SUT result as JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<PathBuf>,
    /// Write the SUT per-frame log to this file.
    #[arg(long, value_name = "FILE.csv")]
    pub frames: Option<PathBuf>,
    #[arg(long, short)]
    pub quiet: bool,
}
