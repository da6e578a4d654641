//! A request `misura-oneway` refused, worded with the flags `oneway`,
//! `calibrate` and `demo` share, in its exit class. Its own module (on
//! misura-cli's `Failure`, not the binary's exit module) so that `code_for`
//! can ask it for the class without an import cycle.

use misura_cli::exit::Failure;
use misura_oneway::plan::RequestError;

/// What the library refused, as the flags `oneway`, `calibrate` and `demo`
/// share name it (exit 2 for a usage slip, 5 for a parameter).
pub fn request_sentence(e: &RequestError) -> Failure {
    use RequestError as E;
    match e {
        E::TimeoutNotPositive => Failure::Usage("--timeout must be positive".into()),
        E::OnePort { port } => Failure::Usage(format!(
            "--tx and --rx are both `{port}`: the method needs two ports (use the lab: misura lab up)"
        )),
        E::NoFrames => Failure::Usage("--count must be at least 1".into()),
        E::PtpPayloadTooSmall { min, .. } => Failure::Params(format!(
            "{e} (sizes from {min}; --frame-format misura keeps smaller frames, with software RX stamps where the NIC stamps only PTP)"
        )),
        E::TooFewSizes { .. } => Failure::Params(format!(
            "{e}: omit --sizes for the seven sizes of Cena et al.: {:?}",
            misura_oneway::SEED_SIZES
        )),
        E::NoLinkSpeed { .. } => {
            Failure::Params(format!("{e}: give it with --link-speed, e.g. --link-speed 1G"))
        }
        E::RateNotPositive { rate } => Failure::Params(format!(
            "--rate {rate} must be a positive number of frames per second"
        )),
        E::PeriodTooLong {
            period,
            frames_per_period,
        } => Failure::Params(format!(
            "--period/--rate/--load give {:.3e} s between frames, more than the longest allowed (1 hour, {frames_per_period} frame(s) per hour)",
            period.as_secs_f64()
        )),
        E::OverLink { .. } => Failure::Params(format!("{e} (or --load 50%)")),
        E::BelowHeader { .. } | E::OverMtu { .. } | E::PeriodTooShort => {
            Failure::Params(e.to_string())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_request_is_worded_with_its_flags_and_class() {
        use RequestError as E;
        let cases = [
            (E::TimeoutNotPositive, 2, "--timeout must be positive"),
            (
                E::OnePort { port: "p1".into() },
                2,
                "--tx and --rx are both `p1`",
            ),
            (E::NoFrames, 2, "--count must be at least 1"),
            (
                E::PtpPayloadTooSmall { size: 50, min: 84 },
                5,
                "--frame-format misura",
            ),
            (E::TooFewSizes { got: 2 }, 5, "omit --sizes"),
            (E::NoLinkSpeed { rx: "p2".into() }, 5, "--link-speed 1G"),
            (E::RateNotPositive { rate: 0.0 }, 5, "--rate 0 must be"),
            (
                E::PeriodTooLong {
                    period: misura_measure::time::Span::from_secs(7_200),
                    frames_per_period: 1,
                },
                5,
                "--period/--rate/--load give 7.200e3 s",
            ),
            (
                E::OverLink {
                    rate_fps: 2e6,
                    offered_load: 1.3,
                    link_bps: 1_000_000_000,
                    max_fps: 1_488_095.0,
                },
                5,
                "(or --load 50%)",
            ),
            (E::PeriodTooShort, 5, "the period must be at least 1 ns"),
        ];
        for (e, code, words) in cases {
            let f = request_sentence(&e);
            assert_eq!(crate::shared::exit::code(f.class()), code, "{e:?}");
            // The class the library gives it, which the chain walk uses.
            use misura_cli::exit::Classed;
            assert_eq!(e.class(), Some(f.class()), "{e:?}");
            assert!(f.to_string().contains(words), "{f}");
        }
    }
}
