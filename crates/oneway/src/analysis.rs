//! The analysis thread: takes completed frame records off the loop's queue,
//! keeps the streaming statistics per payload size, writes the per-frame CSV
//! and shows progress. Memory is bounded: a fixed set of summaries whatever
//! the number of frames.

use crate::error::{OnewayError, Result};
use crossbeam_queue::ArrayQueue;
use misura_cli::outfile::RowLog;
use misura_measure::time::Span;
use misura_measure::{calibration, CalibrationLine, FrameRecord, LinkModel};
use misura_report::frames;
use misura_run::phc_tracker::PhcConverter;
use misura_stats::Summary;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The summaries of one group of frames (one payload size, or all).
pub struct Group {
    pub sent: u64,
    pub lost: u64,
    pub mul: Summary,
    pub bul: Summary,
    pub wul: Summary,
    pub kernel: Summary,
    pub hardware: Summary,
    pub mil: Summary,
    pub kernel_internal: Summary,
    pub msl: Summary,
    pub kernel_sut: Summary,
    pub hardware_internal: Summary,
    pub hardware_sut: Summary,
}

impl Group {
    fn new(threshold: Option<i64>) -> Group {
        let s = || Summary::with_threshold(threshold);
        Group {
            sent: 0,
            lost: 0,
            mul: s(),
            bul: s(),
            wul: s(),
            kernel: s(),
            hardware: s(),
            mil: s(),
            kernel_internal: s(),
            msl: s(),
            kernel_sut: s(),
            hardware_internal: s(),
            hardware_sut: s(),
        }
    }
}

/// What the analysis needs to derive per-frame quantities.
pub struct AnalysisPlan {
    pub sizes: Vec<usize>,
    pub link: LinkModel,
    pub threshold: Option<Span>,
    /// Calibration run: record Mil = Mul − C and kernel − C.
    pub calibrating: bool,
    /// Measurement with a calibration: Amil lines for Msl.
    pub user_line: Option<CalibrationLine>,
    pub kernel_line: Option<CalibrationLine>,
    pub hardware_line: Option<CalibrationLine>,
    /// Hardware stamps were granted on both ports: count frames without.
    pub hardware_expected: bool,
    /// Two PTP clocks: RX stamps go through this into the TX clock. With
    /// one clock (or none) it is `None` and RX − TX is used as it is.
    pub phc: Option<PhcConverter>,
    /// Two PTP clocks but no way to relate them: no hardware latency.
    pub hardware_unrelated: bool,
    pub progress: bool,
    pub expected_frames: Option<u64>,
}

/// The analysis result.
pub struct Analysis {
    pub per_size: Vec<Group>,
    pub overall: Group,
    pub tx_window: Summary,
    pub rx_window: Summary,
    pub received: u64,
    /// Received frames lacking a kernel TX / RX stamp.
    pub tx_stamp_missing: u64,
    pub rx_stamp_missing: u64,
    /// Received frames lacking a hardware TX or RX stamp (when expected).
    pub hw_stamp_missing: u64,
    /// Received frames whose kernel RX stamp precedes the return of their
    /// `send()` (TX2): they crossed the path inside `send()`.
    pub rx_inside_send: u64,
    /// The ≈95 % uncertainty of each converted hardware latency.
    pub hw_u95: Summary,
    pub frames_error: Option<String>,
}

/// The per-frame quantities derived from calibrations and clocks.
#[derive(Copy, Clone, Default)]
struct Derived {
    msl: Option<i64>,
    ksl: Option<i64>,
    hw: Option<i64>,
    hsl: Option<i64>,
}

fn add(g: &mut Group, f: &FrameRecord, wire_ps: u64, plan: &AnalysisPlan, d: Derived) {
    g.sent += 1;
    if f.lost {
        g.lost += 1;
        return;
    }
    let (Some(bul), Some(wul), Some(mul)) = (f.bul(), f.wul(), f.mul()) else {
        return;
    };
    g.bul.record(bul.as_ns());
    g.wul.record(wul.as_ns());
    g.mul.record(mul.as_ns());
    if let Some(k) = f.kernel_latency() {
        g.kernel.record(k.as_ns());
        if plan.calibrating {
            g.kernel_internal
                .record(calibration::internal_latency(k, wire_ps).as_ns());
        }
    }
    if let Some(h) = d.hw {
        g.hardware.record(h);
        if plan.calibrating {
            g.hardware_internal
                .record(calibration::internal_latency(Span::from_ns(h), wire_ps).as_ns());
        }
    }
    if plan.calibrating {
        g.mil
            .record(calibration::internal_latency(mul, wire_ps).as_ns());
    }
    if let Some(m) = d.msl {
        g.msl.record(m);
    }
    if let Some(k) = d.ksl {
        g.kernel_sut.record(k);
    }
    if let Some(h) = d.hsl {
        g.hardware_sut.record(h);
    }
}

/// The analysis thread beside the loop, and the queue that feeds it.
pub struct AnalysisThread {
    queue: Arc<ArrayQueue<FrameRecord>>,
    done: Arc<AtomicBool>,
    thread: JoinHandle<Analysis>,
}

impl AnalysisThread {
    /// Start the thread; the per-frame log, when asked for, reaches its
    /// file at least once a second.
    pub fn start(plan: AnalysisPlan, frames_out: Option<RowLog>) -> Result<AnalysisThread> {
        let queue = Arc::new(ArrayQueue::new(1 << 16));
        let done = Arc::new(AtomicBool::new(false));
        let thread = {
            let (q, d) = (queue.clone(), done.clone());
            std::thread::Builder::new()
                .name("misura-analysis".into())
                .spawn(move || consume(q, d, plan, frames_out))
                .map_err(OnewayError::Thread)?
        };
        Ok(AnalysisThread {
            queue,
            done,
            thread,
        })
    }

    /// Where the loop hands over completed frame records.
    pub fn queue(&self) -> &ArrayQueue<FrameRecord> {
        &self.queue
    }

    /// The loop is over: let the thread empty the queue, and take its result.
    pub fn finish(self) -> Result<Analysis> {
        self.done.store(true, Ordering::Release);
        self.thread
            .join()
            .map_err(|_| OnewayError::AnalysisPanicked)
    }
}

/// Consume records until `done` is set and the queue is empty.
fn consume(
    queue: Arc<ArrayQueue<FrameRecord>>,
    done: Arc<AtomicBool>,
    plan: AnalysisPlan,
    mut frames_out: Option<RowLog>,
) -> Analysis {
    let wire_ps: Vec<u64> = plan
        .sizes
        .iter()
        .map(|&p| plan.link.wire_time_ps(p))
        .collect();
    let mut a = Analysis {
        per_size: plan
            .sizes
            .iter()
            .map(|_| Group::new(plan.threshold.map(Span::as_ns)))
            .collect(),
        overall: Group::new(plan.threshold.map(Span::as_ns)),
        tx_window: Summary::new(),
        rx_window: Summary::new(),
        received: 0,
        tx_stamp_missing: 0,
        rx_stamp_missing: 0,
        hw_stamp_missing: 0,
        rx_inside_send: 0,
        hw_u95: Summary::new(),
        frames_error: None,
    };
    if let Some(log) = frames_out.as_mut() {
        log.row(|w| frames::write_header(w));
    }
    let started = Instant::now();
    let mut last_progress = Instant::now();
    loop {
        let mut got = false;
        while let Some(f) = queue.pop() {
            got = true;
            let si = f.size_index as usize;
            let p = plan.sizes[si];
            let mut d = Derived::default();
            let mut hw_u95 = None;
            if !f.lost {
                a.received += 1;
                if f.tx_kernel.is_none() {
                    a.tx_stamp_missing += 1;
                }
                match f.rx_kernel {
                    None => a.rx_stamp_missing += 1,
                    Some(rx) if rx < f.tx2 => a.rx_inside_send += 1,
                    Some(_) => {}
                }
                if plan.hardware_expected && (f.tx_hw.is_none() || f.rx_hw.is_none()) {
                    a.hw_stamp_missing += 1;
                }
                (d.hw, hw_u95) = hardware_latency(&f, &plan);
                if let Some(u) = hw_u95 {
                    a.hw_u95.record(u);
                }
                let sut = |line: &Option<CalibrationLine>, v: Option<Span>| {
                    let (line, v) = (line.as_ref()?, v?);
                    Some(calibration::sut_latency(v, line.at(p as f64), wire_ps[si]).as_ns())
                };
                d.msl = sut(&plan.user_line, f.mul());
                d.ksl = sut(&plan.kernel_line, f.kernel_latency());
                d.hsl = sut(&plan.hardware_line, d.hw.map(Span::from_ns));
                if let Some(r) = f.rx_window() {
                    a.rx_window.record(r.as_ns());
                }
            }
            a.tx_window.record(f.tx_window().as_ns());
            add(&mut a.per_size[si], &f, wire_ps[si], &plan, d);
            add(&mut a.overall, &f, wire_ps[si], &plan, d);
            if let Some(log) = frames_out.as_mut() {
                let hw = frames::HardwareCells {
                    hw_ns: d.hw,
                    hw_u95_ns: hw_u95,
                    hsl_ns: d.hsl,
                };
                log.row(|w| frames::write_row(w, &f, d.msl, hw));
            }
        }
        if plan.progress && last_progress.elapsed() >= Duration::from_secs(1) {
            last_progress = Instant::now();
            progress_line(&a, plan.expected_frames, started.elapsed());
        }
        if !got {
            if let Some(log) = frames_out.as_mut() {
                log.tick();
            }
            if done.load(Ordering::Acquire) && queue.is_empty() {
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    if plan.progress {
        misura_cli::progress::draw("\r\x1b[2K");
    }
    a.frames_error = frames_out.as_mut().and_then(RowLog::finish);
    a
}

/// The frame's hardware one-way latency, with its ≈95 % uncertainty when
/// it went through two clocks.
fn hardware_latency(f: &FrameRecord, plan: &AnalysisPlan) -> (Option<i64>, Option<i64>) {
    if plan.hardware_unrelated {
        return (None, None);
    }
    let (Some(tx), Some(rx)) = (f.tx_hw, f.rx_hw) else {
        return (None, None);
    };
    match &plan.phc {
        None => (f.hw_latency().map(Span::as_ns), None),
        Some(c) => match c.rx_to_tx(rx) {
            Some(conv) => (
                Some((conv.tx_clock - tx).as_ns()),
                Some(conv.u95_ns.ceil() as i64),
            ),
            None => (None, None),
        },
    }
}

fn progress_line(a: &Analysis, expected: Option<u64>, elapsed: Duration) {
    let n = a.overall.sent;
    let rate = n as f64 / elapsed.as_secs_f64().max(1e-9);
    let eta = expected
        .filter(|&e| e > n && rate > 0.0)
        .map(|e| format!(", {:.0} s left", (e - n) as f64 / rate))
        .unwrap_or_default();
    let pct = expected
        .map(|e| {
            let f = (n as f64 / e.max(1) as f64).clamp(0.0, 1.0);
            let filled = (f * 20.0).round() as usize;
            format!(
                " [{}{}] {:.0} %",
                "#".repeat(filled),
                "-".repeat(20 - filled),
                f * 100.0
            )
        })
        .unwrap_or_default();
    let med = |s: &Summary| {
        s.quantile(0.5)
            .map_or("-".into(), |v| format!("{:.3}", v as f64 / 1000.0))
    };
    let p99 = |s: &Summary| {
        s.quantile(0.99)
            .map_or("-".into(), |v| format!("{:.3}", v as f64 / 1000.0))
    };
    misura_cli::progress::draw(&format!(
        "\r\x1b[2K{n} frames{pct}, {rate:.0}/s, {:.0} s elapsed{eta}; lost {}; Mul median {} µs p99 {} µs",
        elapsed.as_secs_f64(),
        a.overall.lost,
        med(&a.overall.mul),
        p99(&a.overall.mul)
    ));
}
