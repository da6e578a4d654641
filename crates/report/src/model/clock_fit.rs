//! A PTP hardware clock tracked against system time during a run, as
//! results record it: one clock's fit, and the relation of a TX port's
//! clock to an RX port's. The report's own copies of `measure`'s
//! `phc_track` figures, converted with `From`.

use serde::{Deserialize, Serialize};

/// One clock's fit, as results report it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClockFit {
    /// Points in the fit (one per accepted round).
    pub points: u64,
    /// Rounds refused (sandwich inverted or wider than 1 ms).
    pub rejected_rounds: u64,
    /// System time from the first to the last point.
    pub span_ns: i64,
    /// `phc − system time` at the run's middle.
    pub offset_ns: f64,
    /// Frequency against system time, parts per million.
    pub drift_ppm: f64,
    /// Its standard error.
    pub drift_se_ppm: f64,
    /// Residual standard deviation of the points about the line.
    pub residual_ns: f64,
    /// Median half-width of the sandwiches (0 for the precise method).
    pub median_half_width_ns: i64,
}

/// The two clocks' relation, as results report it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PairFit {
    /// `rx clock − tx clock` at the run's middle (ns).
    pub offset_ns: f64,
    /// The RX clock's frequency relative to the TX clock's (ppm).
    pub drift_ppm: f64,
    /// ≈95 % uncertainty of a converted stamp at the run's middle (ns).
    pub u95_ns: f64,
    /// Its statistical part, `2·√(se_tx² + se_rx²)`.
    pub u95_statistical_ns: f64,
    /// Its bound on where within the sandwiches the PHCs were read.
    pub sandwich_bound_ns: f64,
    pub tx: ClockFit,
    pub rx: ClockFit,
}

impl From<misura_measure::phc_track::ClockFit> for ClockFit {
    fn from(v: misura_measure::phc_track::ClockFit) -> ClockFit {
        ClockFit {
            points: v.points,
            rejected_rounds: v.rejected_rounds,
            span_ns: v.span.as_ns(),
            offset_ns: v.offset_ns,
            drift_ppm: v.drift_ppm,
            drift_se_ppm: v.drift_se_ppm,
            residual_ns: v.residual_ns,
            median_half_width_ns: v.median_half_width.as_ns(),
        }
    }
}

impl From<misura_measure::phc_track::PairFit> for PairFit {
    fn from(f: misura_measure::phc_track::PairFit) -> PairFit {
        PairFit {
            offset_ns: f.offset_ns,
            drift_ppm: f.drift_ppm,
            u95_ns: f.u95_ns,
            u95_statistical_ns: f.u95_statistical_ns,
            sandwich_bound_ns: f.sandwich_bound_ns,
            tx: f.tx.into(),
            rx: f.rx.into(),
        }
    }
}
