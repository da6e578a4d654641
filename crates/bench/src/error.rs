//! Why a benchmark stops before its figures, typed: a service's figures
//! or a plan the trials' decisions refuse (exit 5), the trials' own engine or latency measurement
//! failing (their errors carried whole: their chain, their exit class).

/// Why a benchmark (`rfc2544::measure`, `y1564::measure`) failed.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// A service's configuration test refuses its figures (exit 5).
    #[error("service {service}: {error}")]
    Service {
        service: String,
        error: misura_measure::load::LoadError,
    },
    /// The trials' decisions (search, frame loss, back-to-back) refuse
    /// the plan's figures.
    #[error("{0}")]
    Trials(misura_measure::load::LoadError),
    /// A trial was asked for after the frame engine was closed.
    #[error("the frame engine is closed")]
    EngineClosed,
    /// The latency trial's result has no load stream.
    #[error("the latency trial ran without the frame engine (no load stream)")]
    NoLoadStream,
    /// A step's trial gave no figures for its service's flow.
    #[error("a trial without its flow")]
    NoFlow,
    /// The frame engine failed.
    #[error(transparent)]
    Engine(#[from] misura_engine::EngineError),
    /// The one-way measurement behind the latency trial failed.
    #[error(transparent)]
    Oneway(#[from] misura_oneway::error::OnewayError),
}

pub(crate) type Result<T, E = BenchError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_services_refusal_names_the_service_and_no_flag() {
        let e = BenchError::Service {
            service: "voice".into(),
            error: misura_measure::load::LoadError::OutOfRange {
                what: "rate",
                value: 0.0,
                min: 1.0,
                max: 2.0,
            },
        };
        let text = e.to_string();
        assert!(text.starts_with("service voice: "), "{text}");
        assert!(!text.contains("--"), "{text}");
    }
}
