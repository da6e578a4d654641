//! The text lines about the PTP hardware clocks behind a run's hardware
//! stamps: which clocks, how they were related, and how sure that is.

use crate::model::meta::HardwareClocks;
use std::io::{self, Write};

/// One or two lines after the timestamp sources.
pub fn write_clocks(hc: &HardwareClocks, out: &mut dyn Write) -> io::Result<()> {
    let names = match (&hc.tx_phc, &hc.rx_phc) {
        (Some(t), Some(r)) if t == r => t.clone(),
        (t, r) => format!(
            "TX {}, RX {}",
            t.as_deref().unwrap_or("?"),
            r.as_deref().unwrap_or("?")
        ),
    };
    let steer = if hc.disciplined_by.is_empty() {
        String::new()
    } else {
        format!("; steered by {}", hc.disciplined_by.join(", "))
    };
    writeln!(out, "hardware clocks: {names}: {}{steer}", hc.relation)?;
    match &hc.fit {
        Some(f) => writeln!(
            out,
            "  fit over {} rounds ({}): RX − TX clock {:+.0} ns, drift {:+.3} ppm; each converted stamp ±{:.0} ns (≈95 %: fit {:.0} ns + sandwich bound {:.0} ns); residuals TX {:.0} ns, RX {:.0} ns",
            hc.rounds,
            hc.methods.join(" / "),
            f.offset_ns,
            f.drift_ppm,
            f.u95_ns,
            f.u95_statistical_ns,
            f.sandwich_bound_ns,
            f.tx.residual_ns,
            f.rx.residual_ns
        ),
        None => match &hc.last_error {
            Some(e) if hc.tx_phc != hc.rx_phc => writeln!(out, "  not related: {e}"),
            _ => Ok(()),
        },
    }
}
