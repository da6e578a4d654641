//! `misura oneway` and the measurement shared with `misura calibrate`:
//! resolve the flags against the interfaces, open the ports, warm up, run the
//! loop with the analysis thread beside it, and build the report.

pub mod args;
pub use args::{CalibrateArgs, MeasureArgs, OnewayArgs};

pub mod analysis;
pub mod calibrate;
pub mod engine;

use crate::shared::exit::Failure;
use crate::shared::meta::{meta, now_rfc3339};
use crate::shared::output::{Finished, Report};
use crate::shared::units;
use analysis::{Analysis, AnalysisPlan, Group};
use anyhow::{Context, Result};
use crossbeam_queue::ArrayQueue;
use engine::{Ports, Stop};
use misura_measure::oneway_session::{OnewayCounters, OnewayPlan};
use misura_measure::{sut_verdict, CalibrationLine, LinkModel, Pattern, SizeOrder, SizePoint};
use misura_report::*;
use misura_stats::Summary;
use misura_sys::iface::InterfaceInfo;
use misura_sys::packet::PacketSocket;
use misura_wire::MacAddr;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

/// The seed's seven payload sizes.
pub const SEED_SIZES: [usize; 7] = [46, 64, 128, 256, 512, 1024, 1500];
const DEFAULT_RATE: f64 = 1000.0;
const DEFAULT_COUNT: u64 = 10_000;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    Oneway,
    Calibrate,
}

/// A calibration profile and where it came from.
pub struct Calibration {
    pub path: PathBuf,
    pub profile: CalibrationProfile,
    pub accept_mismatch: bool,
}

/// The per-frame log, opened (and so checked writable) before anything is
/// measured. The result's own files are `shared::output`'s.
pub struct Outputs {
    pub frames: Option<(PathBuf, File)>,
}

impl Outputs {
    pub fn open(m: &MeasureArgs) -> Result<Outputs> {
        Ok(Outputs {
            frames: crate::shared::output::open_file(&m.frames, "per-frame log")?,
        })
    }
}

/// The report as `main` prints, exports and keeps it.
pub fn finished(report: OnewayReport) -> Finished {
    let mode = report.mode.clone();
    let target = format!("{}->{}", report.config.tx, report.config.rx);
    Finished::ok(
        Report::new(report, &mode, target, text::write_oneway)
            .with_csv(misura_report::csv::write_oneway_summary),
    )
}

/// `misura oneway`.
pub fn run(a: &OnewayArgs, stop: &Arc<AtomicUsize>) -> Result<Finished> {
    let cal = a
        .calibration
        .as_ref()
        .map(|p| {
            read_profile(p).map(|profile| Calibration {
                path: p.clone(),
                profile,
                accept_mismatch: a.accept_profile_mismatch,
            })
        })
        .transpose()?;
    let mut outputs = Outputs::open(&a.m)?;
    let report = measure(&a.m, Mode::Oneway, cal.as_ref(), &mut outputs, stop)?;
    Ok(finished(report))
}

/// Everything resolved before the ports are opened.
pub struct Resolved {
    pub config: OnewayConfig,
    pub tx: InterfaceInfo,
    pub rx: InterfaceInfo,
    pub expected_frames: Option<u64>,
}

fn interface(name: &str) -> Result<InterfaceInfo> {
    let info = misura_sys::iface::interface_info(name)?;
    if !info.admin_up || !info.oper_up {
        return Err(misura_sys::SysError::InterfaceDown {
            name: name.to_string(),
        }
        .into());
    }
    Ok(info)
}

/// Check the flags against the interfaces and the link.
pub fn resolve(m: &MeasureArgs, default_sizes: &[usize], mode: Mode) -> Result<Resolved> {
    let ethertype = units::ethertype(&m.ethertype)?;
    let pattern: Pattern = m.pattern.parse().map_err(Failure::Usage)?;
    let order = match m.order.as_str() {
        "interleaved" => SizeOrder::Interleaved,
        "blocks" => SizeOrder::Blocks,
        o => {
            return Err(
                Failure::Usage(format!("unknown --order `{o}`: use interleaved or blocks")).into(),
            )
        }
    };
    let timeout_ns = units::duration_ns(&m.timeout)?;
    if timeout_ns <= 0 {
        return Err(Failure::Usage("--timeout must be positive".into()).into());
    }
    let threshold_ns = m.threshold.as_deref().map(units::duration_ns).transpose()?;
    if m.tx == m.rx {
        return Err(Failure::Usage(format!(
            "--tx and --rx are both `{}`: the method needs two ports (use the lab: misura lab up)",
            m.tx
        ))
        .into());
    }
    let tx = interface(&m.tx)?;
    let rx = interface(&m.rx)?;

    let sizes: Vec<usize> = if m.sizes.is_empty() {
        default_sizes.to_vec()
    } else {
        m.sizes.clone()
    };
    let mtu = tx.mtu.min(rx.mtu) as usize;
    for &p in &sizes {
        if p < misura_wire::probe::HEADER_LEN {
            return Err(Failure::Params(format!(
                "payload size {p} is below misura's {}-byte probe header: use at least {} (46 fills the 64-byte minimum frame)",
                misura_wire::probe::HEADER_LEN,
                misura_wire::probe::HEADER_LEN
            ))
            .into());
        }
        if p > mtu || p > misura_wire::probe::MAX_PAYLOAD {
            return Err(Failure::Params(format!(
                "payload size {p} is over the MTU ({mtu} bytes on {}/{}): use sizes up to {mtu}, or raise the MTU (ip link set {} mtu 9000)",
                m.tx, m.rx, m.tx
            ))
            .into());
        }
    }
    if mode == Mode::Calibrate && sizes.len() < 7 {
        return Err(Failure::Params(format!(
            "calibration needs at least 7 payload sizes for a trustworthy fit, got {}: omit --sizes for the seed's {:?}",
            sizes.len(),
            SEED_SIZES
        ))
        .into());
    }

    let (rate_bps, link_speed_source) = match &m.link_speed {
        Some(s) => (units::rate_bps(s)?, "--link-speed".to_string()),
        None => match rx.speed_mbps.or(tx.speed_mbps) {
            Some(mbps) if mbps > 0 => (mbps * 1_000_000, "interface".to_string()),
            _ => {
                return Err(Failure::Params(format!(
                    "cannot read the link speed of {} (the driver does not report it): give it with --link-speed, e.g. --link-speed 1G",
                    m.rx
                ))
                .into())
            }
        },
    };
    let link = LinkModel::new(rate_bps, m.vlan);
    let fpp = pattern.frames_per_period();
    let period_ns = if let Some(p) = &m.period {
        units::duration_ns(p)?
    } else if let Some(r) = m.rate {
        if !(r > 0.0 && r.is_finite()) {
            return Err(Failure::Params(format!(
                "--rate {r} must be a positive number of frames per second"
            ))
            .into());
        }
        (1e9 * fpp as f64 / r).round() as i64
    } else if let Some(l) = &m.load {
        let gamma = units::share(l)?;
        link.period_for_load(&sizes, gamma)
            .map(|p| p * fpp as i64)
            .unwrap_or(1)
    } else {
        (1e9 * fpp as f64 / DEFAULT_RATE).round() as i64
    };
    if period_ns < 1 {
        return Err(Failure::Params("the period must be at least 1 ns".into()).into());
    }
    let offered_load = link.load_of_period(&sizes, period_ns, fpp);
    if offered_load > 1.0 {
        let max_fps = sizes
            .iter()
            .map(|&p| link.max_frame_rate(p))
            .fold(f64::INFINITY, f64::min);
        return Err(Failure::Params(format!(
            "{:.0} frames/s offers {:.0} % of the {} Mb/s link, more than it carries: use at most {:.0} frames/s for these sizes (or --load 50%)",
            1e9 * fpp as f64 / period_ns as f64,
            offered_load * 100.0,
            rate_bps / 1_000_000,
            max_fps
        ))
        .into());
    }
    let rate_fps = 1e9 * fpp as f64 / period_ns as f64;
    let duration_ns = m.duration.as_deref().map(units::duration_ns).transpose()?;
    let count = match (m.count, duration_ns) {
        (Some(0), _) => return Err(Failure::Usage("--count must be at least 1".into()).into()),
        (Some(n), _) => Some(n),
        (None, Some(_)) => None,
        (None, None) => Some(DEFAULT_COUNT),
    };
    let expected_frames = count.or_else(|| duration_ns.map(|d| (d as f64 / 1e9 * rate_fps) as u64));
    let late_tolerance_ns = match &m.late_tolerance {
        Some(t) => units::duration_ns(t)?,
        // The paper's rule: a frame that cannot leave within its own period
        // goes at the start of the next one.
        None => period_ns - 1,
    };
    let session_id =
        (misura_sys::clock::realtime_ns() as u64 ^ (std::process::id() as u64) << 16) as u32;
    Ok(Resolved {
        config: OnewayConfig {
            tx: m.tx.clone(),
            rx: m.rx.clone(),
            netns: m.ns.netns.clone(),
            ethertype,
            session_id,
            pattern,
            period_ns,
            rate_fps,
            offered_load,
            count,
            duration_s: duration_ns.map(|d| d as f64 / 1e9),
            sizes,
            order,
            timeout_ns,
            late_tolerance_ns,
            threshold_ns,
            link,
            link_speed_source,
            warmup: m.warmup,
            seed: m.seed,
        },
        tx,
        rx,
        expected_frames,
    })
}

pub fn port_info(role: &str, i: &InterfaceInfo) -> PortInfo {
    let caps = misura_sys::tsinfo::get_ts_info(&i.name).ok();
    PortInfo {
        role: role.to_string(),
        name: i.name.clone(),
        mac: MacAddr(i.mac).to_string(),
        driver: i.driver.clone(),
        mtu: i.mtu,
        speed_mbps: i.speed_mbps,
        timestamping_caps: caps.as_ref().map(|c| c.describe()).unwrap_or_default(),
        phc_index: caps.and_then(|c| c.phc_index),
    }
}

/// Ask for NIC hardware stamps where both ports can give them; otherwise
/// say why not.
fn hardware_timestamping(tx: &str, rx: &str) -> (bool, Option<String>) {
    let caps = |n: &str| misura_sys::tsinfo::get_ts_info(n).ok();
    match (caps(tx), caps(rx)) {
        (Some(a), Some(b)) if a.hw_tx() && b.hw_rx() => {
            for n in [tx, rx] {
                if let Err(e) = misura_sys::tsinfo::enable_hw_timestamping(n) {
                    return (
                        false,
                        Some(format!("enabling hardware timestamping on {n} failed: {e}")),
                    );
                }
            }
            if a.phc_index != b.phc_index {
                return (
                    true,
                    Some("the ports have different PTP clocks: hardware latency mixes two clocks unless they are synchronised (phc2sys)".into()),
                );
            }
            (true, None)
        }
        (Some(_), Some(_)) => (
            false,
            Some("the drivers report no hardware timestamping (software stamps used)".into()),
        ),
        _ => (
            false,
            Some("ETHTOOL_GET_TS_INFO failed; hardware timestamping unknown, not used".into()),
        ),
    }
}

fn snap(s: &Summary) -> Option<misura_stats::SummarySnapshot> {
    (s.count() > 0).then(|| s.snapshot())
}

fn latencies(g: &Group) -> Latencies {
    Latencies {
        mul: g.mul.snapshot(),
        bul: g.bul.snapshot(),
        wul: g.wul.snapshot(),
        kernel: snap(&g.kernel),
        hardware: snap(&g.hardware),
        mil: snap(&g.mil),
        kernel_internal: snap(&g.kernel_internal),
        msl: snap(&g.msl),
        kernel_sut: snap(&g.kernel_sut),
    }
}

fn points(
    a: &Analysis,
    sizes: &[usize],
    link: &LinkModel,
    pick: impl Fn(&Group) -> &Summary,
) -> Option<Vec<SizePoint>> {
    let mut v = Vec::new();
    for (g, &p) in a.per_size.iter().zip(sizes) {
        let s = pick(g);
        v.push(SizePoint {
            payload_bytes: p,
            frame_bytes: link.frame_bytes(p),
            count: s.count(),
            mean_ns: s.mean()?,
            std_dev_ns: s.std_dev(),
        });
    }
    Some(v)
}

/// Run one measurement. Returns the report even when interrupted (then
/// `complete` is false).
pub fn measure(
    m: &MeasureArgs,
    mode: Mode,
    calibration: Option<&Calibration>,
    outputs: &mut Outputs,
    stop: &Arc<AtomicUsize>,
) -> Result<OnewayReport> {
    let default_sizes: Vec<usize> = match (mode, calibration) {
        (Mode::Calibrate, _) => SEED_SIZES.to_vec(),
        (Mode::Oneway, Some(c)) => c.profile.sizes.clone(),
        (Mode::Oneway, None) => vec![misura_wire::probe::MIN_PAYLOAD],
    };
    let r = resolve(m, &default_sizes, mode)?;
    let cfg = r.config.clone();
    let started_at = now_rfc3339();
    let ports_info = vec![port_info("tx", &r.tx), port_info("rx", &r.rx)];

    let mut warnings = Vec::new();
    let mut calibration_use = None;
    if let Some(c) = calibration {
        let host_now = crate::shared::host::fingerprint(LoopTuning::default());
        let mism = c
            .profile
            .mismatches(&host_now, &ports_info, cfg.ethertype, &cfg.link);
        if !mism.is_empty() && !c.accept_mismatch {
            return Err(Failure::Profile(format!(
                "calibration profile {} was made on another set-up: {}. Calibrate this set-up (misura calibrate --tx {} --rx {}), or pass --accept-profile-mismatch to use it anyway",
                c.path.display(),
                mism.join("; "),
                cfg.tx,
                cfg.rx
            ))
            .into());
        }
        for x in &mism {
            warnings.push(format!("calibration profile mismatch: {x}"));
        }
        calibration_use = Some(CalibrationUse {
            profile: c.path.display().to_string(),
            created_at: c.profile.meta.started_at.clone(),
            user: c.profile.user.clone(),
            kernel: c.profile.kernel.clone(),
            mismatches: mism,
        });
    }

    // Ports and timestamping.
    let (hw_ok, hw_note) = hardware_timestamping(&cfg.tx, &cfg.rx);
    let ports = Ports {
        tx: PacketSocket::open(&cfg.tx, cfg.ethertype)?,
        rx: PacketSocket::open(&cfg.rx, cfg.ethertype)?,
    };
    let tx_granted = ports
        .tx
        .enable_timestamping(hw_ok)
        .context("enabling timestamping on the TX port")?;
    let rx_granted = ports
        .rx
        .enable_timestamping(hw_ok)
        .context("enabling timestamping on the RX port")?;
    let _ = ports.tx.set_qdisc_bypass(true);
    let _ = ports.rx.set_recv_buffer(4 << 20);
    let mut frames = engine::build_frames(
        MacAddr(r.rx.mac),
        MacAddr(r.tx.mac),
        cfg.ethertype,
        cfg.session_id,
        &cfg.sizes,
    )?;
    let ring_capacity =
        ((cfg.rate_fps * cfg.timeout_ns as f64 / 1e9 * 2.0) as usize).clamp(1024, 1 << 18);
    let mut plan = OnewayPlan {
        session_id: cfg.session_id,
        ethertype: cfg.ethertype,
        sizes: cfg.sizes.clone(),
        order: cfg.order,
        vlan: cfg.link.vlan,
        pattern: cfg.pattern,
        period_ns: cfg.period_ns,
        late_tolerance_ns: cfg.late_tolerance_ns,
        seed: cfg.seed,
        start_delay_ns: 1_000_000,
        count: cfg.count,
        duration_ns: cfg.duration_s.map(|d| (d * 1e9) as i64),
        expected_frames: r.expected_frames,
        timeout_ns: cfg.timeout_ns,
        expect_tx_stamp: tx_granted.software_tx || tx_granted.hardware_tx,
        ring_capacity,
    };
    let warm = engine::warm_up(&ports, &mut frames, &plan, cfg.warmup, stop)?;
    if plan.expect_tx_stamp && warm.tx_unstamped == warm.sent && warm.sent > 0 {
        plan.expect_tx_stamp = false;
        warnings.push("the TX port granted SO_TIMESTAMPING but no TX stamp came back during the warm-up: kernel TX stamps not used".into());
    }
    if !warm.rx_stamps_settled && rx_granted.software_rx {
        warnings.push(format!(
            "kernel RX stamps had not settled after {} warm-up frames ({} unstamped): frames without them are counted in rx_stamp_missing",
            warm.sent, warm.rx_unstamped
        ));
    }

    // Analysis thread, started before the loop thread is pinned so it keeps
    // the default affinity.
    let queue = Arc::new(ArrayQueue::new(1 << 16));
    let done = Arc::new(AtomicBool::new(false));
    let user_line = calibration.map(|c| c.profile.user.clone());
    let kernel_line = calibration.and_then(|c| c.profile.kernel.clone());
    let aplan = AnalysisPlan {
        sizes: cfg.sizes.clone(),
        link: cfg.link,
        threshold_ns: cfg.threshold_ns,
        calibrating: mode == Mode::Calibrate,
        user_line,
        kernel_line,
        progress: !m.out.quiet && std::io::IsTerminal::is_terminal(&std::io::stderr()),
        expected_frames: r.expected_frames,
    };
    let frames_out: Option<Box<dyn Write + Send>> = match outputs.frames.take() {
        Some((_, f)) => Some(Box::new(BufWriter::with_capacity(1 << 20, f))),
        None => None,
    };
    let consumer = {
        let (q, d) = (queue.clone(), done.clone());
        std::thread::Builder::new()
            .name("misura-analysis".into())
            .spawn(move || analysis::consume(q, d, aplan, frames_out))
            .context("starting the analysis thread")?
    };

    // Tune the loop thread.
    let mut tuning = LoopTuning {
        netns: cfg.netns.clone(),
        ..Default::default()
    };
    if let Some(cpu) = m.cpu {
        misura_sys::sched::pin_to_cpu(cpu)?;
        tuning.cpu = Some(cpu);
    }
    if let Some(p) = m.rt_priority {
        misura_sys::sched::set_fifo_priority(p)?;
        tuning.rt_priority = Some(p);
    }
    if !m.no_mlock {
        match misura_sys::sched::lock_memory() {
            Ok(()) => tuning.memory_locked = true,
            Err(e) => warnings.push(format!("memory not locked: {e}")),
        }
    }

    let result = engine::run(&ports, &mut frames, &plan, &queue, stop);
    done.store(true, Ordering::Release);
    let a = consumer
        .join()
        .map_err(|_| anyhow::anyhow!("the analysis thread panicked"))?;
    if tuning.rt_priority.is_some() {
        let _ = misura_sys::sched::set_normal_scheduling();
    }
    let (counters, stop_reason, loop_error) = match result {
        Ok((c, s)) => (c, s, None),
        Err(e) => (
            OnewayCounters::default(),
            Stop::Finished,
            Some(format!("{e:#}")),
        ),
    };

    if std::env::var_os("MISURA_DEBUG").is_some() {
        eprintln!("debug: {counters:?}");
    }
    let host = crate::shared::host::fingerprint_with_interfaces(tuning, &[&cfg.tx, &cfg.rx]);
    if cfg.link_speed_source == "interface"
        && [&r.tx, &r.rx]
            .iter()
            .any(|i| i.driver.as_deref() == Some("veth"))
    {
        warnings.push(format!(
            "veth reports {} Mb/s but serialises nothing: the wire time C is a model here, not a physical delay (give --link-speed to model a real link)",
            cfg.link.rate_bps / 1_000_000
        ));
    }
    warnings.extend(
        crate::shared::host::warnings(&host)
            .iter()
            .map(|w| w.to_string()),
    );
    if let Some(e) = &a.frames_error {
        warnings.push(format!("writing the per-frame log failed: {e}"));
    }
    let tx_missing = if plan.expect_tx_stamp {
        a.tx_stamp_missing
    } else {
        0
    };
    if tx_missing > 0 || (rx_granted.software_rx && a.rx_stamp_missing > 0) {
        warnings.push(format!(
            "{} received frames lack a kernel TX stamp and {} a kernel RX stamp: kernel latency covers only the stamped frames",
            tx_missing, a.rx_stamp_missing
        ));
    }
    if let Some(med) = a.overall.bul.quantile(0.5) {
        if med < 0 {
            warnings.push(format!(
                "the best-case bound Bul = RX1 − TX2 is negative (median {:.3} µs): frames were already queued when the loop polled, as on veth where delivery completes inside send(); the window is loose here and the kernel stamps are the tighter one-way figure",
                med as f64 / 1000.0
            ));
        }
    }
    if counters.tx_stamps_again > 0 {
        warnings.push(format!(
            "{} extra kernel TX stamps: frames were stamped again by another transmitting device inside this host (the SUT is software here, e.g. a veth behind a bridge); the first stamp, at the TX port, is used",
            counters.tx_stamps_again
        ));
    }
    if counters.postponed > 0 {
        warnings.push(format!(
            "{} frames were postponed to the next period (the loop came round late): the host could not keep the schedule",
            counters.postponed
        ));
    }

    let per_size: Vec<SizeResult> = cfg
        .sizes
        .iter()
        .zip(&a.per_size)
        .map(|(&p, g)| SizeResult {
            payload_bytes: p,
            frame_bytes: cfg.link.frame_bytes(p),
            wire_time_ns: cfg.link.wire_time_ns(p),
            sent: g.sent,
            received: g.sent - g.lost,
            lost: g.lost,
            latency: latencies(g),
            histogram_mul: g.mul.log_histogram(10),
            histogram_kernel: g.kernel.log_histogram(10),
        })
        .collect();

    let mut internal_fit = None;
    if mode == Mode::Calibrate {
        let user = points(&a, &cfg.sizes, &cfg.link, |g| &g.mil).map(CalibrationLine::internal);
        let kernel = points(&a, &cfg.sizes, &cfg.link, |g| &g.kernel_internal)
            .map(CalibrationLine::internal);
        match user {
            Some(Ok(u)) => {
                internal_fit = Some(InternalFit {
                    user: u,
                    kernel: kernel.and_then(|k| k.ok()),
                });
            }
            Some(Err(e)) => warnings.push(format!("calibration fit failed: {e}")),
            None => warnings
                .push("calibration fit impossible: some payload size has no received frame".into()),
        }
    }
    let mut sut = None;
    if calibration.is_some() {
        let byte_time_ns = cfg.link.byte_time_ns();
        let mut note = None;
        let user = match points(&a, &cfg.sizes, &cfg.link, |g| &g.msl).map(CalibrationLine::sut) {
            Some(Ok(l)) => Some(l),
            Some(Err(e)) => {
                note = Some(format!(
                    "SUT fit over frame length impossible: {e} (measure at least 3 sizes)"
                ));
                None
            }
            None => {
                note = Some("SUT fit impossible: some payload size has no received frame".into());
                None
            }
        };
        let kernel = points(&a, &cfg.sizes, &cfg.link, |g| &g.kernel_sut)
            .and_then(|p| CalibrationLine::sut(p).ok());
        sut = Some(SutResult {
            byte_time_ns,
            user_verdict: user.as_ref().map(|l| sut_verdict(&l.fit, byte_time_ns)),
            kernel_verdict: kernel.as_ref().map(|l| sut_verdict(&l.fit, byte_time_ns)),
            user,
            kernel,
            note,
        });
    }

    if let Some(c) = calibration {
        let t = &c.profile.timestamps;
        let now = (
            plan.expect_tx_stamp && tx_granted.software_tx,
            rx_granted.software_rx,
            tx_granted.hardware_tx,
            rx_granted.hardware_rx,
        );
        if (
            t.kernel_software_tx,
            t.kernel_software_rx,
            t.hardware_tx,
            t.hardware_rx,
        ) != now
        {
            warnings.push(format!(
                "calibration profile mismatch: it was made with timestamps (kernel TX {}, kernel RX {}, hardware TX {}, RX {}), this run has ({}, {}, {}, {}); figures from a source the profile lacks are not corrected",
                t.kernel_software_tx, t.kernel_software_rx, t.hardware_tx, t.hardware_rx, now.0, now.1, now.2, now.3
            ));
        }
    }
    let elapsed_s = (counters.ended_ns - counters.started_ns).max(0) as f64 / 1e9;
    let send_span_s = (counters.last_send_ns - counters.started_ns).max(1) as f64 / 1e9;
    let (complete, stop_text) = match (&loop_error, stop_reason) {
        (Some(e), _) => (false, format!("error: {e}")),
        (None, Stop::Signal(s)) => (false, format!("interrupted by signal {s}; partial results")),
        (None, Stop::Finished) => (true, "finished".to_string()),
    };
    let mut sources_used = Vec::new();
    if hw_ok && (tx_granted.hardware_tx || rx_granted.hardware_rx) {
        sources_used.push("NIC hardware".to_string());
    }
    if plan.expect_tx_stamp || rx_granted.software_rx {
        sources_used.push("kernel software".to_string());
    }
    sources_used.push("user clock".to_string());

    let report = OnewayReport {
        meta: meta(
            if mode == Mode::Calibrate {
                "misura.calibration-run"
            } else {
                "misura.oneway"
            },
            started_at,
        ),
        mode: if mode == Mode::Calibrate {
            "calibrate"
        } else {
            "oneway"
        }
        .into(),
        complete,
        stop_reason: stop_text,
        host,
        ports: ports_info,
        timestamps: TimestampInfo {
            timescale: "CLOCK_REALTIME, integer ns".into(),
            user_clock: "CLOCK_REALTIME (clock_gettime, vDSO)".into(),
            kernel_software_tx: plan.expect_tx_stamp && tx_granted.software_tx,
            kernel_software_rx: rx_granted.software_rx,
            hardware_tx: tx_granted.hardware_tx,
            hardware_rx: rx_granted.hardware_rx,
            hardware_note: hw_note,
            warmup_frames: warm.sent,
            warmup_unstamped_rx: warm.rx_unstamped,
            warmup_unstamped_tx: warm.tx_unstamped,
            sources_used,
        },
        totals: Totals {
            sent: counters.sent,
            received: a.received,
            lost: a.overall.lost,
            duplicates: counters.duplicates,
            late: counters.late,
            reordered: counters.reordered,
            foreign_frames: counters.foreign + counters.unknown,
            malformed_frames: counters.malformed,
            postponed: counters.postponed,
            skipped_slots: counters.skipped_slots,
            send_retries: counters.send_retries,
            tx_stamp_missing: tx_missing,
            rx_stamp_missing: a.rx_stamp_missing,
            tx_stamps_again: counters.tx_stamps_again,
            stalls: counters.stalls,
        },
        loop_stats: LoopStats {
            elapsed_s,
            achieved_rate_fps: counters.sent as f64 / send_span_s,
            tx_window: snap(&a.tx_window),
            rx_window: snap(&a.rx_window),
        },
        overall: latencies(&a.overall),
        per_size,
        internal_fit,
        calibration: calibration_use,
        sut,
        frames_file: m.frames.as_ref().map(|p| p.display().to_string()),
        warnings,
        config: cfg,
    };
    Ok(report)
}

pub fn read_profile(path: &Path) -> Result<CalibrationProfile> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Failure::Profile(format!(
            "cannot read calibration profile {}: {e}; run `misura calibrate` first",
            path.display()
        ))
    })?;
    let v: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| Failure::Profile(format!("{} is not JSON: {e}", path.display())))?;
    if v.get("format").and_then(|f| f.as_str()) != Some("misura.calibration") {
        return Err(Failure::Profile(format!(
            "{} is not a misura calibration profile",
            path.display()
        ))
        .into());
    }
    let ver = v
        .get("format_version")
        .and_then(|f| f.as_u64())
        .unwrap_or(0);
    if ver > FORMAT_VERSION as u64 {
        return Err(Failure::Profile(format!(
            "{} has format version {ver}, newer than this misura understands ({FORMAT_VERSION}): upgrade misura",
            path.display()
        ))
        .into());
    }
    serde_json::from_value(v)
        .map_err(|e| Failure::Profile(format!("{} is damaged: {e}", path.display())).into())
}
