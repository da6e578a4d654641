//! The PTP clocks behind a run's hardware stamps: one shared clock needs
//! nothing; two are tracked against the system clock for the whole run
//! (`shared::phc_tracker`) so RX stamps can be converted into the TX clock.

use super::ports::Stamping;
use misura_cli::warnings::Warn;
use misura_report::{HardwareClocks, Warning};
use misura_run::phc_tracker::{PhcConverter, PhcTracker};
use misura_stats::Summary;
use misura_sys::phc_cross::CrossMethod;
use std::path::PathBuf;

/// The clocks as the run found them.
pub struct Clocks {
    phcs: Option<(i32, i32)>,
    tracker: Option<PhcTracker>,
    /// Two clocks that could not be related: no hardware latency.
    pub unrelated: bool,
    error: Option<String>,
}

fn dev(i: i32) -> PathBuf {
    PathBuf::from(format!("/dev/ptp{i}"))
}

/// Start tracking when the ports have two clocks.
pub fn start(s: &Stamping, methods: &[CrossMethod], warnings: &mut Vec<Warning>) -> Clocks {
    let mut c = Clocks {
        phcs: s.phcs,
        tracker: None,
        unrelated: false,
        error: None,
    };
    if !(s.hardware_asked && s.tx.hardware_tx && s.rx.hardware_rx) {
        return c;
    }
    match s.phcs {
        Some((t, r)) if t != r => match PhcTracker::start(&dev(t), &dev(r), methods) {
            Ok(tr) => c.tracker = Some(tr),
            Err(e) => {
                let detail = format!(
                    "the ports have two PTP clocks (/dev/ptp{t}, /dev/ptp{r}) and they could not be related: {}; no hardware latency is reported (kernel and user figures are)",
                    misura_cli::exit::one_line(&e)
                );
                warnings.push(
                    Warn::HardwareClocks {
                        detail: detail.clone(),
                    }
                    .into(),
                );
                c.error = Some(detail);
                c.unrelated = true;
            }
        },
        Some(_) => {}
        None => c.unrelated = true,
    }
    c
}

impl Clocks {
    /// What the analysis converts RX stamps with (two clocks only).
    pub fn converter(&self) -> Option<PhcConverter> {
        self.tracker.as_ref().map(PhcTracker::converter)
    }

    /// Stop tracking; what the result says of the clocks. `mid_sys` is
    /// the run's middle on CLOCK_REALTIME, where the fit is evaluated.
    pub fn finish(
        self,
        mid_sys: i64,
        per_frame_u95: &Summary,
        warnings: &mut Vec<Warning>,
    ) -> Option<HardwareClocks> {
        let (t, r) = self.phcs?;
        let daemons = misura_run::ptp::daemons();
        let mut disciplined_by = Vec::new();
        for d in misura_sys::phc::list() {
            if misura_sys::phc::index(&d.name).is_some_and(|i| i == t || i == r) {
                for x in misura_run::ptp::disciplining(&d, &daemons) {
                    if !disciplined_by.contains(&x) {
                        disciplined_by.push(x);
                    }
                }
            }
        }
        let mut hc = HardwareClocks {
            tx_phc: Some(dev(t).display().to_string()),
            rx_phc: Some(dev(r).display().to_string()),
            relation: if t == r {
                "one clock: both ports share it, RX − TX needs no conversion".into()
            } else {
                "two clocks, related through system time: RX stamps converted into the TX clock"
                    .into()
            },
            methods: Vec::new(),
            disciplined_by,
            rounds: 0,
            read_errors: 0,
            last_error: self.error,
            fit: None,
            per_frame_u95: None,
        };
        if let Some(tr) = self.tracker {
            let (pair, end) = tr.finish();
            hc.methods = end
                .methods
                .iter()
                .map(|m| m.map_or("none".to_string(), |m| m.name().to_string()))
                .collect();
            hc.rounds = end.rounds;
            hc.read_errors = end.read_errors;
            hc.last_error = end.last_error.clone();
            hc.fit = pair.describe(mid_sys).map(Into::into);
            hc.per_frame_u95 = per_frame_u95.snapshot_if_any().map(Into::into);
            if end.read_errors > 0 {
                warnings.push(
                    Warn::HardwareClocks {
                        detail: format!(
                            "{} of {} cross-timestamp reads of the PTP clocks failed (last: {}); the fit uses the others",
                            end.read_errors,
                            2 * end.rounds,
                            end.last_error.as_deref().unwrap_or("?")
                        ),
                    }
                    .into(),
                );
            }
            if hc.fit.is_none() {
                warnings.push(
                    Warn::HardwareClocks {
                        detail: "the two PTP clocks' fit has fewer than two points on a clock: no hardware latency".into(),
                    }
                    .into(),
                );
            }
        }
        Some(hc)
    }
}
