//! Command-line flags. Parsing here only checks shapes; values are resolved
//! against the interfaces and the link later (`oneway::plan::resolve`).

use crate::commands::clock::ClockCommand;
use crate::commands::demo::DemoArgs;
use crate::commands::exchange::ExchangeArgs;
use crate::commands::host::HostCommand;
use crate::commands::lab::LabCommand;
use crate::commands::oneway::{CalibrateArgs, OnewayArgs};
use crate::commands::reflect::ReflectArgs;
use crate::commands::rfc2544::Rfc2544Args;
use crate::commands::rtt::RttArgs;
use crate::commands::store::{CompareArgs, HistoryArgs, ShowArgs};
use crate::commands::y1564::Y1564Args;
use clap::{Parser, Subcommand};
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
namespace problem, 5 impossible measurement parameters, 6 output or results store
not usable (or the run asked for is not in it), 7 calibration profile unusable,
8 inconclusive (rfc2544, y1564: part of the result is the tester's own limit),
9 FAIL (y1564: the SUT missed an acceptance criterion; misura itself worked),
130/143 interrupted (partial results written).";

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
    /// Latency under load: idle, loaded (TCP or UDP through misura serve), idle; RPM.
    #[command(long_about = crate::commands::load::LONG_ABOUT)]
    Load(crate::commands::load::LoadArgs),
    /// The raw-frame exchange of Ichiki (2022): a trigger frame, then both ends send data frames at once; time each phase.
    #[command(long_about = "\
Reproduce the request/response sequence of a real-time exchange on raw
Ethernet frames (Ichiki, 2022): the initiator sends a trigger of S1 bytes and at
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
    /// RFC 2544 on the frame engine: throughput (NDR/PDR), latency, frame loss, back-to-back.
    #[command(long_about = "\
RFC 2544 benchmarking of the device between two ports, on misura's frame engine
(TPACKET_V3 receive ring with a kernel RX stamp on every frame; PACKET_TX_RING,
sendmmsg or AF_XDP to transmit). Per frame size (64 ... 1518, or imix):

  throughput  §26.1  the highest rate without loss (NDR) and with at most --pdr
                     loss (PDR), by a search in the spirit of MLRsearch: short
                     trials bracket the rate, full-length trials confirm it
  latency     §26.2  `misura oneway` in engine mode at the NDR rate: tagged
                     frames with TX/RX windows and kernel stamps inside the
                     load; min, median, p99.9 and PDV (RFC 8219); SUT latency
                     Msl with --calibration
  loss        §26.3  frame loss rate from 100 % of the line rate down in 10 %
                     steps until two steps lose nothing
  b2b         §26.4  the longest lossless burst at line rate, and RFC 9004's
                     implied and corrected buffer time

Every trial lists its offered and achieved rate. A trial the tester itself could
not send (its transmit path fell short, its ring overran) is run again, up to
--tester-retries times; the search never takes one such trial as its ceiling,
and stops after three in a row. A figure that still rests on the tester's limit
is INCONCLUSIVE (text, JSON `inconclusive`, exit 8), never the SUT's.")]
    Rfc2544(Rfc2544Args),
    /// ITU-T Y.1564 service activation: configuration and performance tests, pass/fail per service.
    #[command(long_about = "\
ITU-T Y.1564 service activation between two ports, on misura's frame engine.
Up to 8 services, each a frame size, a VLAN and PCP, a committed (CIR) and
excess (EIR) information rate and thresholds for frame delay (FD), delay
variation (FDV), loss ratio (FLR) and availability.

  configuration test  per service alone: 25, 50, 75 and 100 % of CIR, then
                      CIR+EIR, then an overshoot step above it (a policer must
                      hold the received rate at CIR+EIR)
  performance test    all services at once at their CIR for --duration
                      (default 15 min), counted per second for availability

Each step and service is judged PASS or FAIL with the thresholds it missed.
Exit codes: 0 PASS, 9 FAIL (the SUT missed a criterion: the tool worked), 8
INCONCLUSIVE, 1 misura failed. A step is judged at the rate the tester really
sent: loss or delay beyond the criteria at or below CIR is a FAIL even when the
tester fell short of the step's rate (the SUT failed at less); a step that
passed but never reached its rate (on every --tester-retries attempt) is
INCONCLUSIVE, never PASS. With no FAIL, such a run is inconclusive, exit 8.
The Linux bridge of `misura lab up --topology switch` does not police, so its
overshoot step FAILs (exit 9); `--police RATE` makes it a policer. Frame delay is the load frames' transit from
the sender's user clock (carried in each frame) to their RX stamp: the NIC's
where the RX port has hardware stamps (its PTP clock tracked against system
time; --frame-format auto wraps the frames in PTP where the NIC stamps only
that), the kernel's otherwise. Each step says which (fd_source) and how many
frames it covers; either way an upper bound that includes the tester's own
send path.")]
    Y1564(Y1564Args),
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
    /// Run tcp, udp or rr across a parameter list or range and tabulate (the curves of Alborghetti et al., INFN 1998).
    #[command(long_about = crate::commands::throughput::sweep::LONG_ABOUT)]
    Sweep(crate::commands::throughput::sweep::SweepArgs),
    /// A self-contained HTML page (and SVG/PNG plots) of a stored run or a result file.
    #[command(long_about = crate::commands::report::LONG_ABOUT)]
    Report(crate::commands::report::ReportArgs),
    /// Measure many paths continuously and expose OpenMetrics for Prometheus.
    #[command(long_about = crate::commands::agent::LONG_ABOUT)]
    Agent(crate::commands::agent::AgentArgs),
    /// The agent's archive: what each sink has received and what waits for it.
    #[command(subcommand)]
    Archive(crate::commands::archive::ArchiveCommand),
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
    /// Print the shell completion script for bash, zsh, fish, elvish or PowerShell.
    #[command(long_about = crate::commands::completions::LONG_ABOUT)]
    Completions(crate::commands::completions::CompletionsArgs),
    /// Print a manual page, or write one per command into a directory.
    #[command(long_about = crate::commands::man::LONG_ABOUT)]
    Man(crate::commands::man::ManArgs),
}
