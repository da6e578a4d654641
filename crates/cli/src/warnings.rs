//! Every warning misura puts in a result, as data: a stable code a script
//! can match (`host.loop-not-pinned`) and a text that says what is wrong
//! and what to do. Results carry both (`{"code": …, "text": …}`); code that
//! needs to know which warnings it has matches the variant, never the text.

use misura_report::Warning;
use misura_time::Span;
use std::fmt;

/// One warning, with what its text needs.
#[derive(Clone, Debug, PartialEq)]
pub enum Warn {
    // ---- the host -------------------------------------------------------
    GovernorNotPerformance {
        governor: String,
    },
    VirtualMachine,
    LoopNotPinned,
    MemoryNotLocked,
    /// Locking memory was tried and refused.
    MemoryLockFailed {
        error: String,
    },
    SlowClocksource {
        clocksource: String,
    },
    InterruptCoalescing {
        interface: String,
        rx_usecs: Option<u32>,
        adaptive: bool,
    },
    EnergyEfficientEthernet {
        interface: String,
    },
    ReceiveOffload {
        interface: String,
        offload: &'static str,
    },
    IdleStatesNotLimited {
        error: String,
    },
    SchedOther,
    // ---- clocks ---------------------------------------------------------
    NoConstantTsc,
    NoNonstopTsc,
    ClocksourceNotTsc {
        clocksource: String,
    },
    VirtualTsc,
    NtpRateDiffers {
        difference_ppm: f64,
        bound_ppm: f64,
    },
    CpuFlagMissing {
        flag: String,
    },
    MissedPeriods {
        missed: u64,
    },
    LoadThreadNotPinned {
        error: String,
    },
    NotMonotonic {
        clock: String,
    },
    // ---- one-way and calibration ----------------------------------------
    ProfileMismatch {
        detail: String,
    },
    ProfileTimestampsDiffer {
        profile: [bool; 4],
        run: [bool; 4],
    },
    NoTxStampInWarmup,
    RxStampsUnsettled {
        warmup: u64,
        unstamped: u64,
    },
    VethWireTime {
        mbps: u64,
    },
    LogWriteFailed {
        what: &'static str,
        error: String,
    },
    StampsMissing {
        tx: u64,
        rx: u64,
    },
    /// Frames of a one-way run that came without a hardware stamp on the
    /// TX or the RX port although both ports granted them.
    OnewayHardwareStampsMissing {
        missing: u64,
        of: u64,
    },
    /// A port's link went down during a one-way run.
    LinkDown {
        rx_events: u64,
        tx_frames: u64,
    },
    /// The two ports' PTP clocks could not be related (or only in part).
    HardwareClocks {
        detail: String,
    },
    /// The NIC's stamping was switched on but some datagrams came back
    /// without its stamps.
    HardwareStampsMissing {
        interface: String,
        tx: u64,
        rx: u64,
        of: u64,
    },
    NegativeBestCase {
        median: Span,
    },
    ExtraTxStamps {
        count: u64,
    },
    Postponed {
        count: u64,
    },
    CalibrationFitFailed {
        error: String,
    },
    CalibrationFitImpossible,
    /// Two estimates of the SUT's latency (user windows, kernel or NIC
    /// stamps) whose 95 % intervals do not overlap; the text is
    /// `misura_oneway::consistency::describe`'s.
    SutEstimatesDisagree {
        detail: String,
    },
    // ---- round trips and exchanges --------------------------------------
    RequestPadded {
        from: usize,
        to: usize,
    },
    ReflectorWithoutFollowUp,
    RequestsWithoutFollowUp,
    IcmpErrors {
        count: u64,
    },
    NoKernelRxStamps,
    VethWireTimeModel,
    // ---- throughput ------------------------------------------------------
    ClientDidNotRun {
        client: u32,
        error: String,
    },
    AboveMtuWithDf {
        mtu: u32,
        msg_size: u64,
        emsgsize: u64,
    },
    NothingArrivedWithDf {
        client: u32,
        mtu: Option<u32>,
    },
    NothingArrived {
        client: u32,
    },
    ReverseSenderUnseen,
    BytesLostAtEnd,
    SetupSamplesFailed {
        idle: Span,
        failed: usize,
        total: usize,
    },
    /// The tester itself, not the SUT, limited a load trial.
    TesterLimited {
        why: String,
    },
    /// A trial the tester itself spoiled was run again (`--tester-retries`);
    /// the repeat's own figures stand.
    TesterRepeated {
        why: String,
    },
    /// The frame engine could not use a better path.
    EngineFallback {
        note: String,
    },
    SweepPointFailed {
        parameter: String,
        value: String,
        error: String,
    },
}

/// The code of [`Warn::AboveMtuWithDf`], which a sweep looks for.
pub const ABOVE_PATH_MTU: &str = "udp.above-path-mtu";

impl Warn {
    /// The stable code: `area.what`, lower case, never reused for another meaning.
    pub fn code(&self) -> &'static str {
        use Warn::*;
        match self {
            GovernorNotPerformance { .. } => "host.governor",
            VirtualMachine => "host.virtual-machine",
            LoopNotPinned => "host.loop-not-pinned",
            MemoryNotLocked => "host.memory-not-locked",
            MemoryLockFailed { .. } => "host.memory-lock-failed",
            SlowClocksource { .. } => "host.clocksource",
            InterruptCoalescing { .. } => "interface.interrupt-coalescing",
            EnergyEfficientEthernet { .. } => "interface.eee",
            ReceiveOffload { .. } => "interface.receive-offload",
            IdleStatesNotLimited { .. } => "host.idle-states",
            SchedOther => "host.sched-other",
            NoConstantTsc => "clock.no-constant-tsc",
            NoNonstopTsc => "clock.no-nonstop-tsc",
            ClocksourceNotTsc { .. } => "clock.clocksource-not-tsc",
            VirtualTsc => "clock.virtual-tsc",
            NtpRateDiffers { .. } => "clock.ntp-rate-differs",
            CpuFlagMissing { .. } => "clock.cpu-flag-missing",
            MissedPeriods { .. } => "clock.missed-periods",
            LoadThreadNotPinned { .. } => "clock.load-not-pinned",
            NotMonotonic { .. } => "clock.not-monotonic",
            ProfileMismatch { .. } => "calibration.profile-mismatch",
            ProfileTimestampsDiffer { .. } => "calibration.timestamps-differ",
            NoTxStampInWarmup => "stamps.no-tx-stamp",
            RxStampsUnsettled { .. } => "stamps.rx-unsettled",
            VethWireTime { .. } => "link.veth-wire-time",
            LogWriteFailed { .. } => "output.log-write-failed",
            StampsMissing { .. } => "stamps.missing",
            HardwareStampsMissing { .. } => "stamps.hardware-missing",
            OnewayHardwareStampsMissing { .. } => "stamps.hardware-missing",
            HardwareClocks { .. } => "stamps.hardware-clocks",
            LinkDown { .. } => "interface.link-down",
            NegativeBestCase { .. } => "window.negative-best-case",
            ExtraTxStamps { .. } => "stamps.extra-tx",
            Postponed { .. } => "schedule.postponed",
            CalibrationFitFailed { .. } => "calibration.fit-failed",
            CalibrationFitImpossible => "calibration.fit-impossible",
            SutEstimatesDisagree { .. } => "sut.estimates-disagree",
            RequestPadded { .. } => "stamp.request-padded",
            ReflectorWithoutFollowUp => "stamp.no-follow-up",
            RequestsWithoutFollowUp => "stamp.request-too-small-for-follow-up",
            IcmpErrors { .. } => "network.icmp-errors",
            NoKernelRxStamps => "stamps.no-kernel-rx",
            VethWireTimeModel => "link.veth-wire-time-model",
            ClientDidNotRun { .. } => "client.did-not-run",
            AboveMtuWithDf { .. } => ABOVE_PATH_MTU,
            NothingArrivedWithDf { .. } => "udp.nothing-arrived-df",
            NothingArrived { .. } => "udp.nothing-arrived",
            ReverseSenderUnseen => "tcp.reverse-sender-unseen",
            BytesLostAtEnd => "tcp.bytes-lost-at-end",
            SetupSamplesFailed { .. } => "setup.samples-failed",
            SweepPointFailed { .. } => "sweep.point-failed",
            TesterLimited { .. } => "load.tester-limited",
            TesterRepeated { .. } => "load.tester-repeated",
            EngineFallback { .. } => "load.engine-fallback",
        }
    }

    /// Whether this warning is about a measuring loop's own tuning (only
    /// relevant to commands that pin or lock memory).
    pub fn is_loop_tuning(&self) -> bool {
        matches!(self, Warn::LoopNotPinned | Warn::MemoryNotLocked)
    }
}

fn on_off(b: bool) -> &'static str {
    if b {
        "on"
    } else {
        "off"
    }
}

impl fmt::Display for Warn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use Warn::*;
        match self {
            GovernorNotPerformance { governor } => write!(f, "CPU frequency governor is `{governor}`: frequency changes stretch latencies; set `performance` (cpupower frequency-set -g performance)"),
            VirtualMachine => write!(f, "running in a virtual machine: the hypervisor adds interference no guest setting removes"),
            LoopNotPinned => write!(f, "measuring loop not pinned: migrations between CPUs add jitter; use --cpu N"),
            MemoryNotLocked => write!(f, "memory not locked: page faults can stall the loop; run as root or raise `ulimit -l`"),
            MemoryLockFailed { error } => write!(f, "memory not locked ({error}): page faults can stall the loop; run as root or raise `ulimit -l`"),
            SlowClocksource { clocksource } => write!(f, "clocksource is `{clocksource}`: reading it is slow; `tsc` is best where it is stable"),
            InterruptCoalescing { interface: n, rx_usecs, adaptive } => write!(
                f,
                "interrupt coalescing on `{n}` (rx-usecs {}, adaptive-rx {}) delays receive interrupts: `ethtool -C {n} adaptive-rx off rx-usecs 0 rx-frames 1` (or misura host tune --interface {n} --apply)",
                rx_usecs.map_or("?".into(), |u| u.to_string()),
                on_off(*adaptive)
            ),
            EnergyEfficientEthernet { interface: n } => write!(f, "Energy-Efficient Ethernet is on for `{n}`: waking the link adds microseconds: `ethtool --set-eee {n} eee off`"),
            ReceiveOffload { interface: n, offload } => write!(f, "{} is on for `{n}`: merged frames share one receive timestamp: `ethtool -K {n} {offload} off`", offload.to_uppercase()),
            IdleStatesNotLimited { error } => write!(f, "CPU idle states not limited ({error}): wake-ups from deep idle states add their exit latency"),
            SchedOther => write!(f, "the loop ran under SCHED_OTHER: any runnable task can delay a wake-up; use --rt-priority 80 as cyclictest -p 80 does"),
            NoConstantTsc => write!(f, "no constant_tsc: the TSC rate follows the CPU frequency, so no single frequency converts it to time; set the governor to `performance` and disable boost, or use CLOCK_MONOTONIC_RAW"),
            NoNonstopTsc => write!(f, "no nonstop_tsc: the TSC may stop in deep idle states; limit C-states (e.g. `cpupower idle-set -D 0`) or use CLOCK_MONOTONIC_RAW"),
            ClocksourceNotTsc { clocksource } => write!(f, "the kernel's clocksource is `{clocksource}`, not `tsc`: the kernel does not trust the TSC here (or a hypervisor clock is preferred); check `dmesg | grep -i tsc`"),
            VirtualTsc => write!(f, "running in a virtual machine: the hypervisor may scale or offset the guest's TSC"),
            NtpRateDiffers { difference_ppm, bound_ppm } => write!(f, "the NTP estimate differs from MONOTONIC_RAW by {difference_ppm:+.3} ppm, more than the combined uncertainty ± {bound_ppm:.3} ppm: the server's clock runs at another rate than this host's oscillator (see realtime_vs_raw_ppm when the server is this host)"),
            CpuFlagMissing { flag } => write!(f, "the CPU does not report {flag}: the TSC's rate may change with frequency or stop in idle states; prefer CLOCK_MONOTONIC"),
            MissedPeriods { missed } => write!(f, "{missed} period(s) missed: wake-ups came later than the next target"),
            LoadThreadNotPinned { error } => write!(f, "a load thread could not be pinned: {error}"),
            NotMonotonic { clock } => write!(f, "{clock} went backwards between consecutive reads: it is not monotonic on this host"),
            ProfileMismatch { detail } => write!(f, "calibration profile mismatch: {detail}"),
            ProfileTimestampsDiffer { profile: p, run: r } => write!(
                f,
                "calibration profile mismatch: it was made with timestamps (kernel TX {}, kernel RX {}, hardware TX {}, RX {}), this run has ({}, {}, {}, {}); figures from a source the profile lacks are not corrected",
                p[0], p[1], p[2], p[3], r[0], r[1], r[2], r[3]
            ),
            NoTxStampInWarmup => write!(f, "the TX port granted SO_TIMESTAMPING but no TX stamp came back during the warm-up: kernel TX stamps not used"),
            RxStampsUnsettled { warmup, unstamped } => write!(f, "kernel RX stamps had not settled after {warmup} warm-up frames ({unstamped} unstamped): frames without them are counted in rx_stamp_missing"),
            VethWireTime { mbps } => write!(f, "veth reports {mbps} Mb/s but serialises nothing: the wire time C is a model here, not a physical delay (give --link-speed to model a real link)"),
            LogWriteFailed { what, error } => write!(f, "writing the {what} failed: {error}"),
            StampsMissing { tx, rx } => write!(f, "{tx} received frames lack a kernel TX stamp and {rx} a kernel RX stamp: kernel latency covers only the stamped frames"),
            OnewayHardwareStampsMissing { missing, of } => write!(f, "both ports granted NIC hardware stamps, yet {missing} of {of} received frames lack the TX or the RX one: the hardware figures cover only the rest{}", if missing == of { "; not one frame was stamped: the driver claims hardware stamps but delivers none (another process may have changed SIOCSHWTSTAMP, or the NIC stamps only PTP packets)" } else { " (the first frames after timestamping is switched on can come unstamped: a longer --warmup helps)" }),
            HardwareClocks { detail } => write!(f, "{detail}"),
            LinkDown { rx_events, tx_frames } => write!(f, "a port's link went down during the run (the RX port reported it {rx_events} times; {tx_frames} frames could not leave the TX port and count as sent and lost): the frames in flight then are lost, the run went on; check the cable, the SUT and `ip link`"),
            HardwareStampsMissing { interface, tx, rx, of } => write!(f, "the driver of `{interface}` has hardware timestamping on, yet of {of} received probes {tx} came without the NIC's TX stamp and {rx} without its RX stamp: those fall back to the kernel's stamps (hw_stamped 0 in the per-probe log), the hardware RTT covers only the rest{}", if tx == of || rx == of { "; no hardware stamp at all came: the driver claims them but delivers none (another process may have changed SIOCSHWTSTAMP, or the NIC stamps only PTP packets)" } else { "" }),
            NegativeBestCase { median } => write!(f, "the best-case bound Bul = RX1 − TX2 is negative (median {:.3} µs): frames were already queued when the loop polled, as on veth where delivery completes inside send(); the window is loose here and the kernel stamps are the tighter one-way figure", median.as_ns() as f64 / 1000.0),
            ExtraTxStamps { count } => write!(f, "{count} extra kernel TX stamps: frames were stamped again by another transmitting device inside this host (the SUT is software here, e.g. a veth behind a bridge); the first stamp, at the TX port, is used"),
            Postponed { count } => write!(f, "{count} frames were postponed to the next period (the loop came round late): the host could not keep the schedule"),
            CalibrationFitFailed { error } => write!(f, "calibration fit failed: {error}"),
            CalibrationFitImpossible => write!(f, "calibration fit impossible: some payload size has no received frame"),
            SutEstimatesDisagree { detail } => write!(f, "{detail}"),
            RequestPadded { from, to } => write!(f, "request padded from {from} to {to} bytes: a reflector never answers with more than it received (RFC 8762 symmetric size), so a {to}-byte response needs a {to}-byte request"),
            ReflectorWithoutFollowUp => write!(f, "the reflector does not fill Follow-Up Telemetry: its transmit time is the reply's own Timestamp field, taken before sending, so the turnaround misses its send path and the network RTT still contains it (slightly high)"),
            RequestsWithoutFollowUp => write!(f, "requests carry no Follow-Up Telemetry TLV (too small): the reflector's transmit time is its reply Timestamp field, taken before sending"),
            IcmpErrors { count } => write!(f, "{count} ICMP errors (unreachable) were received for the probes"),
            NoKernelRxStamps => write!(f, "no kernel RX stamps: t3 kernel not available"),
            VethWireTimeModel => write!(f, "veth: the wire time is a model (veth serialises nothing)"),
            ClientDidNotRun { client, error } => write!(f, "client {client} did not run: {error}"),
            AboveMtuWithDf { mtu, msg_size, emsgsize } => {
                write!(f, "nothing arrives above the path MTU of {mtu} bytes with don't-fragment set: {msg_size}-byte datagrams are {}-byte IPv4 packets", msg_size + 28)?;
                if *emsgsize > 0 {
                    write!(f, " ({emsgsize} sends failed with EMSGSIZE)")?;
                }
                Ok(())
            }
            NothingArrivedWithDf { client, mtu } => write!(f, "client {client}: nothing arrived with don't-fragment set (path MTU {})", mtu.map_or("unknown".into(), |m| format!("{m} bytes"))),
            NothingArrived { client } => write!(f, "client {client}: nothing arrived"),
            ReverseSenderUnseen => write!(f, "reverse test: retransmits and RTT are the client's sockets' (the receiving side); the server's sending side is not seen"),
            BytesLostAtEnd => write!(f, "the server counted fewer bytes than the client sent: data lost in flight at the end (peer closed early?)"),
            SetupSamplesFailed { idle, failed, total } => write!(f, "idle {:.1} s: {failed} of {total} samples failed", idle.as_secs_f64()),
            SweepPointFailed { parameter, value, error } => write!(f, "{parameter} = {value}: {error}"),
            TesterLimited { why } => write!(
                f,
                "the tester limited this run, not the SUT: {why}; figures at the rate it reached are the tester's, see scripts/bench-oneway.sh for what each engine sustains"
            ),
            TesterRepeated { why } => write!(
                f,
                "the tester itself fell behind, so the trial was run again (--tester-retries): {why}"
            ),
            EngineFallback { note } => write!(f, "frame engine: {note}"),
        }
    }
}

impl From<Warn> for Warning {
    fn from(w: Warn) -> Warning {
        Warning {
            code: w.code().to_string(),
            text: w.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_stable_and_texts_say_what_to_do() {
        let w: Warning = Warn::LoopNotPinned.into();
        assert_eq!(w.code, "host.loop-not-pinned");
        assert!(w.text.contains("--cpu N"));
        let w: Warning = Warn::AboveMtuWithDf {
            mtu: 1500,
            msg_size: 1500,
            emsgsize: 3,
        }
        .into();
        assert_eq!(w.code, "udp.above-path-mtu");
        assert!(w
            .text
            .contains("1528-byte IPv4 packets (3 sends failed with EMSGSIZE)"));
    }

    #[test]
    fn spans_are_worded_in_their_units() {
        let w: Warning = Warn::NegativeBestCase {
            median: Span::from_ns(-1_500),
        }
        .into();
        assert!(
            w.text.contains("is negative (median -1.500 µs)"),
            "{}",
            w.text
        );
        let w: Warning = Warn::SetupSamplesFailed {
            idle: Span::from_millis(2_000),
            failed: 1,
            total: 3,
        }
        .into();
        assert_eq!(w.text, "idle 2.0 s: 1 of 3 samples failed");
    }
}
