//! `misura y1564`: ITU-T Y.1564 service activation on the frame engine: per
//! service the configuration test (steps at 25/50/75/100 % of CIR, then
//! CIR+EIR, then an overshoot step) and, for all services at once, the
//! performance test, each judged pass/fail against the service's
//! thresholds.

use crate::load::{EngineFacts, LoadTrial};
use crate::{HostFingerprint, Meta, PortInfo};
use serde::{Deserialize, Serialize};
use std::io::{self, Write};

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Y1564Report {
    #[serde(flatten)]
    pub meta: Meta,
    pub complete: bool,
    pub stop_reason: String,
    pub host: HostFingerprint,
    pub ports: Vec<PortInfo>,
    pub config: Y1564Config,
    pub engine: EngineFacts,
    pub services: Vec<ServiceReport>,
    pub performance: Option<PerformanceReport>,
    /// Every service passed every test that ran.
    pub pass: bool,
    /// No step failed on its own measurement, but one rests on the tester's
    /// limit: no verdict on the SUT (exit 8). False in older results.
    #[serde(default)]
    pub inconclusive: bool,
    pub elapsed_s: f64,
    pub warnings: Vec<crate::Warning>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Y1564Config {
    pub tx: String,
    pub rx: String,
    pub netns: Option<String>,
    pub step_s: f64,
    pub performance_s: f64,
    /// How information rates are counted: Ethernet frames with FCS.
    pub rate_basis: String,
    /// Where frame delay comes from: the sender's user clock in the frame
    /// to the kernel RX stamp (an upper bound).
    pub delay_source: String,
    pub ethertype: u16,
    /// `--tester-retries`: repeats allowed for a configuration step the
    /// tester spoiled (0 in results from before the flag).
    #[serde(default)]
    pub tester_retries: u32,
}

/// A service as configured.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ServiceConfig {
    pub name: String,
    pub vlan: Option<u16>,
    pub pcp: Option<u8>,
    pub frame_bytes: usize,
    pub cir_bps: f64,
    pub eir_bps: f64,
    pub fd_ns: i64,
    pub fdv_ns: i64,
    pub flr: f64,
    pub availability: f64,
}

/// One step (or the performance test) of one service.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StepReport {
    /// "25% CIR" … "CIR+EIR", "overshoot", "performance".
    pub label: String,
    pub offered_bps: f64,
    /// Information rate received (frames with FCS, bit/s).
    pub received_bps: f64,
    pub frames_sent: u64,
    pub frames_lost: u64,
    pub flr: f64,
    pub fd_mean_ns: Option<f64>,
    pub fd_max_ns: Option<i64>,
    /// p99.9 − min of the frame delay.
    pub fdv_ns: Option<i64>,
    /// The smallest frame delay, the RX stamps it rests on ("nic_hardware":
    /// the RX port's PTP clock converted to system time; "kernel_software"),
    /// how many frames it covers, and with NIC stamps the largest ≈95 %
    /// uncertainty of a conversion, ns. Absent in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fd_min_ns: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fd_source: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fd_frames: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fd_u95_ns: Option<f64>,
    pub pass: bool,
    /// The tester could not send the step on any attempt: its figures are
    /// the tester's limit, neither a PASS nor a FAIL of the SUT. False in
    /// older results (where `tester_limit` says the same).
    #[serde(default)]
    pub inconclusive: bool,
    /// Why it failed, one sentence per threshold missed as measured (empty
    /// on a pass).
    pub reasons: Vec<String>,
    pub tester_limit: Option<String>,
    /// Why each earlier attempt of this step was repeated: the tester
    /// itself fell behind (`--tester-retries`). Empty when the first kept up
    /// (and in results from before it was kept).
    #[serde(default)]
    pub spoiled_attempts: Vec<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ServiceReport {
    pub service: ServiceConfig,
    pub config_test: Vec<StepReport>,
    pub config_pass: bool,
    /// No step failed on its own measurement, but one is inconclusive.
    #[serde(default)]
    pub config_inconclusive: bool,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PerformanceReport {
    pub duration_s: f64,
    /// One row per service, in the order of `services`.
    pub services: Vec<PerformanceRow>,
    pub load: LoadTrial,
    pub pass: bool,
    /// No service failed on its own measurement, but one is inconclusive.
    #[serde(default)]
    pub inconclusive: bool,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PerformanceRow {
    pub name: String,
    pub step: StepReport,
    /// Share of one-second intervals that were available.
    pub availability: f64,
    pub unavailable_s: u64,
}

fn mbps(v: f64) -> String {
    format!("{:.3} Mb/s", v / 1e6)
}

fn ns(v: Option<i64>) -> String {
    v.map_or("-".into(), |v| crate::clock::human_ns(v as f64))
}

fn verdict(p: bool, inconclusive: bool) -> &'static str {
    match (p, inconclusive) {
        (true, _) => "PASS",
        (false, true) => "INCONCLUSIVE",
        (false, false) => "FAIL",
    }
}

/// A step rests on the tester's limit (older results say so only by
/// `tester_limit`).
fn step_inconclusive(s: &StepReport) -> bool {
    s.inconclusive || (!s.pass && s.tester_limit.is_some())
}

fn write_step(out: &mut dyn Write, s: &StepReport) -> io::Result<()> {
    writeln!(
        out,
        "  {:<12} offered {:>14}  received {:>14}  FLR {:.4} %  FD mean {}  max {}  FDV {}  {}{}",
        s.label,
        mbps(s.offered_bps),
        mbps(s.received_bps),
        100.0 * s.flr,
        s.fd_mean_ns.map_or("-".into(), crate::clock::human_ns),
        ns(s.fd_max_ns),
        ns(s.fdv_ns),
        verdict(s.pass, step_inconclusive(s)),
        match (s.reasons.is_empty(), step_inconclusive(s)) {
            (true, _) => String::new(),
            (false, true) => format!(
                " (the tester could not send the step; as measured: {})",
                s.reasons.join("; ")
            ),
            (false, false) => format!(" ({})", s.reasons.join("; ")),
        }
    )?;
    for (i, w) in s.spoiled_attempts.iter().enumerate() {
        writeln!(
            out,
            "      attempt {} repeated, the tester fell behind: {w}",
            i + 1
        )?;
    }
    if let Some(t) = &s.tester_limit {
        writeln!(out, "      tester limit: {t}")?;
    }
    Ok(())
}

/// The text report.
pub fn write_text(r: &Y1564Report, out: &mut dyn Write) -> io::Result<()> {
    let c = &r.config;
    writeln!(
        out,
        "misura y1564: {} -> {}{}, engine {} on {} core(s): {}{}",
        c.tx,
        c.rx,
        c.netns
            .as_deref()
            .map(|n| format!(" (netns {n})"))
            .unwrap_or_default(),
        r.engine.engine,
        r.engine.cores,
        verdict(r.pass, r.inconclusive),
        if r.complete {
            String::new()
        } else {
            format!("  [PARTIAL: {}]", r.stop_reason)
        }
    )?;
    writeln!(out, "rates: {}; delay: {}", c.rate_basis, c.delay_source)?;
    if r.inconclusive {
        writeln!(
            out,
            "INCONCLUSIVE: no step failed, but the tester could not send every step (tester limit below): no verdict on the SUT; free the tester's CPUs, give it --cores or --cpu, or lower the rates"
        )?;
    }
    for s in &r.services {
        let v = &s.service;
        writeln!(
            out,
            "\nservice {} (vlan {}, pcp {}, {} B): CIR {} EIR {}; FD ≤ {} FDV ≤ {} FLR ≤ {:.4} %  configuration test {}",
            v.name,
            v.vlan.map_or("-".into(), |x| x.to_string()),
            v.pcp.map_or("-".into(), |x| x.to_string()),
            v.frame_bytes,
            mbps(v.cir_bps),
            mbps(v.eir_bps),
            crate::clock::human_ns(v.fd_ns as f64),
            crate::clock::human_ns(v.fdv_ns as f64),
            100.0 * v.flr,
            verdict(s.config_pass, s.config_inconclusive)
        )?;
        for st in &s.config_test {
            write_step(out, st)?;
        }
    }
    if let Some(p) = &r.performance {
        writeln!(
            out,
            "\nperformance test, {:.0} s, all services at CIR: {}",
            p.duration_s,
            verdict(p.pass, p.inconclusive)
        )?;
        for row in &p.services {
            write!(out, "  {:<10}", row.name)?;
            writeln!(
                out,
                " availability {:.3} % ({} s unavailable)",
                100.0 * row.availability,
                row.unavailable_s
            )?;
            write_step(out, &row.step)?;
        }
    }
    for w in &r.warnings {
        writeln!(out, "warning: {w}")?;
    }
    Ok(())
}
