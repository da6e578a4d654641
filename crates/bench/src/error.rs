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
    /// The one-way measurement behind the latency trial failed, or a
    /// port's lookup or the calibration profile's read before the run.
    #[error(transparent)]
    Oneway(#[from] misura_oneway::error::OnewayError),
    /// One port asked for both TX and RX: the frames must leave one and
    /// arrive on another, through the SUT.
    #[error("{port} is both the TX and the RX port: the frames must leave one port and arrive on another, through the SUT")]
    SamePort { port: String },
    /// A port is the loopback, which has no cable to an SUT.
    #[error("the {role} port is the loopback, which has no cable to an SUT")]
    Loopback { role: Role },
    /// The engine's first core asked on a CPU the host has not online.
    #[error("CPU {cpu}: this host has {online} online CPU(s)")]
    CpuOffline { cpu: usize, online: usize },
    /// A port has no Ethernet address to send the test frames to or from.
    #[error("the {role} port {port} has no Ethernet address")]
    NoMac { role: Role, port: String },
    /// No link rate given and the driver of the RX (and TX) port reports
    /// none.
    #[error("cannot read the link speed of {port} (the driver does not report it)")]
    LinkSpeedUnknown { port: String },
    /// A frame of an RFC 2544 size is over what the ports' MTU lets
    /// through (`max` bytes with Ethernet header and FCS).
    #[error(
        "size {size}: a {frame}-byte frame is over the ports' MTU ({mtu}): at most {max} bytes"
    )]
    SizeOverMtu {
        size: String,
        frame: usize,
        max: usize,
        mtu: usize,
    },
    /// The ports cannot carry Y.1564's services.
    #[error(transparent)]
    Fit(#[from] crate::y1564::fit::FitError),
}

/// Which of a benchmark's two ports.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Role {
    Tx,
    Rx,
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Role::Tx => "TX",
            Role::Rx => "RX",
        })
    }
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
