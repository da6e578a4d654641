//! Building the report once the loop is over: what the run warns about, the
//! latencies overall and per payload size, the fits, the timestamp sources
//! actually used, and the frame accounting.

use super::analysis::{Analysis, Group};
use super::consistency::{self, Conditions, Evidence};
use super::engine::Stop;
use super::fit;
use super::plan::Mode;
use super::plan::Resolved;
use super::ports::Stamping;
use super::profile::{self, Calibration};
use super::warmup::Warmup;
use misura_cli::meta::meta;
use misura_cli::warnings::Warn;
use misura_measure::oneway_session::OnewayCounters;
use misura_measure::time::Span;
use misura_report::model::summary::buckets;
use misura_report::Warning;
use misura_report::*;
use std::path::PathBuf;

/// Everything a run produced, for its report.
pub struct Measured<'a> {
    pub mode: Mode,
    pub resolved: Resolved,
    pub calibration: Option<&'a Calibration>,
    pub calibration_use: Option<CalibrationUse>,
    pub started_at: String,
    pub ports: Vec<PortInfo>,
    pub stamping: Stamping,
    /// Kernel TX stamps were waited for (granted, and seen in the warm-up).
    pub expect_tx_stamp: bool,
    pub warm: Warmup,
    pub tuning: LoopTuning,
    pub analysis: Analysis,
    pub counters: OnewayCounters,
    pub stop: Stop,
    /// The loop's error, when it failed.
    pub loop_error: Option<String>,
    pub frames_file: Option<PathBuf>,
    /// The frame engine's load stream, in engine mode.
    pub load: Option<misura_report::load::OnewayLoad>,
    /// The PTP clocks behind the hardware stamps.
    pub hardware_clocks: Option<HardwareClocks>,
}

impl Measured<'_> {
    /// Received frames that lack a kernel TX stamp, counted only where TX
    /// stamps were waited for.
    fn tx_stamp_missing(&self) -> u64 {
        if self.expect_tx_stamp {
            self.analysis.tx_stamp_missing
        } else {
            0
        }
    }
}

/// The run's report; `warnings` holds those found before the loop ran.
pub fn report(m: Measured, mut warnings: Vec<Warning>) -> OnewayReport {
    let cfg = &m.resolved.config;
    let a = &m.analysis;
    let host = misura_run::host::fingerprint_with_interfaces(m.tuning.clone(), &[&cfg.tx, &cfg.rx]);
    warn_after_run(&m, &host, &mut warnings);
    let internal_fit = match m.mode {
        Mode::Calibrate => fit::internal_fit(a, cfg, &mut warnings),
        Mode::Oneway => None,
    };
    let sut = m.calibration.map(|_| {
        let mut sut = fit::sut_fit(a, cfg);
        sut.consistency =
            consistency::check(&sut, m.calibration_use.as_ref(), &evidence(&m, &host));
        if let Some(c) = sut
            .consistency
            .as_ref()
            .filter(|c| !c.disagreements.is_empty())
        {
            warnings.push(
                Warn::SutEstimatesDisagree {
                    detail: consistency::describe(c),
                }
                .into(),
            );
        }
        sut
    });
    let timestamps = timestamps(&m);
    if let Some(c) = m.calibration {
        profile::check_timestamps(c, &timestamps, &mut warnings);
    }
    let (complete, stop_reason) = match (&m.loop_error, &m.stop) {
        (Some(e), _) | (None, Stop::Error(e)) => (false, StopReason::Error(e.to_string())),
        (None, Stop::Signal(s)) => (false, misura_cli::exit::signal_reason(*s)),
        (None, Stop::Finished) => (true, StopReason::Finished),
    };
    let (format, mode) = match m.mode {
        Mode::Calibrate => ("misura.calibration-run", "calibrate"),
        Mode::Oneway => ("misura.oneway", "oneway"),
    };
    let per_size = per_size(a, cfg);
    let overall = latencies(&a.overall);
    let totals = totals(&m);
    let loop_stats = loop_stats(&m.counters, a);
    OnewayReport {
        meta: meta(format, m.started_at),
        mode: mode.into(),
        complete,
        stop_reason,
        host,
        ports: m.ports,
        timestamps,
        totals,
        loop_stats,
        overall,
        per_size,
        internal_fit,
        calibration: m.calibration_use,
        sut,
        frames_file: m.frames_file.map(|p| p.display().to_string()),
        load: m.load,
        warnings,
        config: m.resolved.config,
    }
}

/// What the run shows beside the SUT fits, for comparing them.
fn evidence(m: &Measured, host: &HostFingerprint) -> Evidence {
    let a = &m.analysis;
    Evidence {
        rx_stamped: a.received - a.rx_stamp_missing,
        rx_inside_send: a.rx_inside_send,
        mul_median: a.overall.mul.quantile(0.5).map(Span::from_ns),
        kernel_median: a.overall.kernel.quantile(0.5).map(Span::from_ns),
        run: Conditions {
            pinned: m.tuning.cpu.is_some(),
            host_busy: host.load.as_ref().map(|l| l.mean_busy),
        },
        calibration: m.calibration.map(|c| Conditions {
            pinned: c.profile.host.tuning.cpu.is_some(),
            host_busy: c.profile.host.load.as_ref().map(|l| l.mean_busy),
        }),
        profile_mismatches: m
            .calibration_use
            .as_ref()
            .map(|c| c.mismatches.clone())
            .unwrap_or_default(),
    }
}

/// What the run itself tells about the set-up and the figures.
fn warn_after_run(m: &Measured, host: &HostFingerprint, warnings: &mut Vec<Warning>) {
    let (cfg, a, c) = (&m.resolved.config, &m.analysis, &m.counters);
    if cfg.link_speed_source == "interface"
        && [&m.resolved.tx, &m.resolved.rx]
            .iter()
            .any(|i| i.driver.as_deref() == Some("veth"))
    {
        warnings.push(
            Warn::VethWireTime {
                mbps: cfg.link.rate_bps / 1_000_000,
            }
            .into(),
        );
    }
    warnings.extend(misura_run::host::warnings_for(host, true));
    if let Some(e) = &a.frames_error {
        warnings.push(
            Warn::LogWriteFailed {
                what: "per-frame log",
                error: e.to_string(),
            }
            .into(),
        );
    }
    if c.rx_link_down > 0 || c.tx_link_down > 0 {
        warnings.push(
            Warn::LinkDown {
                rx_events: c.rx_link_down,
                tx_frames: c.tx_link_down,
            }
            .into(),
        );
    }
    if a.hw_stamp_missing > 0 {
        warnings.push(
            Warn::OnewayHardwareStampsMissing {
                missing: a.hw_stamp_missing,
                of: a.received,
            }
            .into(),
        );
    }
    let tx_missing = m.tx_stamp_missing();
    if tx_missing > 0 || (m.stamping.rx.software_rx && a.rx_stamp_missing > 0) {
        warnings.push(
            Warn::StampsMissing {
                tx: tx_missing,
                rx: a.rx_stamp_missing,
            }
            .into(),
        );
    }
    if let Some(med) = a.overall.bul.quantile(0.5) {
        if med < 0 {
            warnings.push(
                Warn::NegativeBestCase {
                    median: Span::from_ns(med),
                }
                .into(),
            );
        }
    }
    if c.tx_stamps_again > 0 {
        warnings.push(
            Warn::ExtraTxStamps {
                count: c.tx_stamps_again,
            }
            .into(),
        );
    }
    if c.postponed > 0 {
        warnings.push(Warn::Postponed { count: c.postponed }.into());
    }
}

/// The timestamp sources asked for, granted and used.
fn timestamps(m: &Measured) -> TimestampInfo {
    let s = &m.stamping;
    let mut sources_used = Vec::new();
    if s.hardware_asked && (s.tx.hardware_tx || s.rx.hardware_rx) {
        sources_used.push("NIC hardware".to_string());
    }
    if m.expect_tx_stamp || s.rx.software_rx {
        sources_used.push("kernel software".to_string());
    }
    sources_used.push("user clock".to_string());
    TimestampInfo {
        timescale: "CLOCK_REALTIME, integer ns".into(),
        user_clock: "CLOCK_REALTIME (clock_gettime, vDSO)".into(),
        kernel_software_tx: m.expect_tx_stamp && s.tx.software_tx,
        kernel_software_rx: s.rx.software_rx,
        hardware_tx: s.tx.hardware_tx,
        hardware_rx: s.rx.hardware_rx,
        hardware_note: s.hardware_note.clone(),
        warmup_frames: m.warm.sent,
        warmup_unstamped_rx: m.warm.rx_unstamped,
        warmup_unstamped_tx: m.warm.tx_unstamped,
        sources_used,
        hardware_clocks: m.hardware_clocks.clone(),
    }
}

fn totals(m: &Measured) -> Totals {
    let (a, c) = (&m.analysis, &m.counters);
    Totals {
        sent: c.sent,
        received: a.received,
        lost: a.overall.lost,
        duplicates: c.duplicates,
        late: c.late,
        reordered: c.reordered,
        foreign_frames: c.foreign + c.unknown,
        malformed_frames: c.malformed,
        postponed: c.postponed,
        skipped_slots: c.skipped_slots,
        send_retries: c.send_retries,
        tx_stamp_missing: m.tx_stamp_missing(),
        rx_stamp_missing: a.rx_stamp_missing,
        tx_stamps_again: c.tx_stamps_again,
        stalls: c.stalls,
        hw_stamp_missing: a.hw_stamp_missing,
        rx_inside_send: a.rx_inside_send,
    }
}

fn loop_stats(c: &OnewayCounters, a: &Analysis) -> LoopStats {
    let elapsed_s = (c.ended - c.started).as_ns().max(0) as f64 / 1e9;
    let send_span_s = (c.last_send - c.started).as_ns().max(1) as f64 / 1e9;
    LoopStats {
        elapsed_s,
        achieved_rate_fps: c.sent as f64 / send_span_s,
        tx_window: a.tx_window.snapshot_if_any().map(Into::into),
        rx_window: a.rx_window.snapshot_if_any().map(Into::into),
    }
}

fn per_size(a: &Analysis, cfg: &OnewayConfig) -> Vec<SizeResult> {
    let link = misura_measure::LinkModel::from(cfg.link);
    cfg.sizes
        .iter()
        .zip(&a.per_size)
        .map(|(&p, g)| SizeResult {
            payload_bytes: p,
            frame_bytes: link.frame_bytes(p),
            wire_time_ns: link.wire_time_ns(p),
            sent: g.sent,
            received: g.sent - g.lost,
            lost: g.lost,
            latency: latencies(g),
            histogram_mul: buckets(g.mul.log_histogram(10)),
            histogram_kernel: buckets(g.kernel.log_histogram(10)),
            hdr_mul: buckets(g.mul.hdr_buckets()),
            hdr_kernel: buckets(g.kernel.hdr_buckets()),
        })
        .collect()
}

fn latencies(g: &Group) -> Latencies {
    Latencies {
        mul: g.mul.snapshot().into(),
        bul: g.bul.snapshot().into(),
        wul: g.wul.snapshot().into(),
        kernel: g.kernel.snapshot_if_any().map(Into::into),
        hardware: g.hardware.snapshot_if_any().map(Into::into),
        mil: g.mil.snapshot_if_any().map(Into::into),
        kernel_internal: g.kernel_internal.snapshot_if_any().map(Into::into),
        msl: g.msl.snapshot_if_any().map(Into::into),
        kernel_sut: g.kernel_sut.snapshot_if_any().map(Into::into),
        hardware_internal: g.hardware_internal.snapshot_if_any().map(Into::into),
        hardware_sut: g.hardware_sut.snapshot_if_any().map(Into::into),
    }
}
