//! The envelope every measuring run's result shares: its metadata, whether
//! it completed and why it stopped, the host it ran on, the command's
//! configuration, the command's own figures, and the warnings. In JSON the
//! envelope adds no level: `Meta` and the body are flattened, so a result
//! reads `format`, …, `complete`, `stop_reason`, `host`, `config`, the
//! body's fields, then `warnings`, as the results written before it did.

use super::meta::{HostFingerprint, Meta};
use super::warning::Warning;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// Why a run stopped. In JSON it is the sentence it always was:
/// `"finished"`, `"interrupted by signal 2; partial results"`, or another
/// reason in words (a phase that did not complete, an error). Any sentence
/// reads back, so results stored before the type existed still read, and
/// each writes back byte for byte.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum StopReason {
    /// The run did all it was asked to.
    #[default]
    Finished,
    /// A signal (SIGINT, SIGTERM) stopped it; what was measured before it
    /// is kept.
    Interrupted {
        /// The signal's number.
        signal: i64,
    },
    /// An error ended the loop (`"error: …"`); the figures cover what was
    /// measured until then.
    Error(String),
    /// Stopped short for another reason, in words (a failed sample, a
    /// phase that did not complete, a peer's error).
    Other(String),
}

const INTERRUPTED: (&str, &str) = ("interrupted by signal ", "; partial results");
const ERROR: &str = "error: ";

impl StopReason {
    /// Stopped by `signal` (its number).
    pub fn interrupted(signal: impl TryInto<i64>) -> StopReason {
        match signal.try_into() {
            Ok(signal) => StopReason::Interrupted { signal },
            Err(_) => StopReason::Other("interrupted by a signal; partial results".into()),
        }
    }

    /// Another reason, in words.
    pub fn other(why: impl fmt::Display) -> StopReason {
        StopReason::parse(&why.to_string())
    }

    /// The run did all it was asked to.
    pub fn is_finished(&self) -> bool {
        *self == StopReason::Finished
    }

    /// A signal stopped the run.
    pub fn is_interrupted(&self) -> bool {
        matches!(self, StopReason::Interrupted { .. })
    }

    /// The reason a sentence names: the inverse of `Display`, for every
    /// sentence (`Display` of the result is that sentence again).
    pub fn parse(s: &str) -> StopReason {
        if s == "finished" {
            return StopReason::Finished;
        }
        if let Some(why) = s.strip_prefix(ERROR) {
            return StopReason::Error(why.to_string());
        }
        let signal = s
            .strip_prefix(INTERRUPTED.0)
            .and_then(|r| r.strip_suffix(INTERRUPTED.1))
            .and_then(|n| n.parse::<i64>().ok().filter(|v| v.to_string() == n));
        match signal {
            Some(signal) => StopReason::Interrupted { signal },
            None => StopReason::Other(s.to_string()),
        }
    }
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StopReason::Finished => f.write_str("finished"),
            StopReason::Interrupted { signal } => {
                write!(f, "{}{signal}{}", INTERRUPTED.0, INTERRUPTED.1)
            }
            StopReason::Error(why) => write!(f, "{ERROR}{why}"),
            StopReason::Other(why) => f.write_str(why),
        }
    }
}

impl Serialize for StopReason {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for StopReason {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<StopReason, D::Error> {
        let s = String::deserialize(d)?;
        Ok(StopReason::parse(&s))
    }
}

/// One run's result: the envelope around the command's configuration `C`
/// and its figures `B`. The body's fields read through it (`run.wakeups`
/// for `run.body.wakeups`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Envelope<C, B> {
    #[serde(flatten)]
    pub meta: Meta,
    pub complete: bool,
    pub stop_reason: StopReason,
    pub host: HostFingerprint,
    pub config: C,
    #[serde(flatten)]
    pub body: B,
    pub warnings: Vec<Warning>,
}

impl<C, B> std::ops::Deref for Envelope<C, B> {
    type Target = B;
    fn deref(&self) -> &B {
        &self.body
    }
}

impl<C, B> std::ops::DerefMut for Envelope<C, B> {
    fn deref_mut(&mut self) -> &mut B {
        &mut self.body
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_sentence_reads_back_as_it_was() {
        for s in [
            "finished",
            "interrupted by signal 2; partial results",
            "interrupted by signal 15; partial results",
            "interrupted by signal 02; partial results",
            "interrupted by signal SIGINT; partial results",
            "some samples failed",
            "error: peer closed the connection",
            "error: ",
            "",
        ] {
            let r = StopReason::parse(s);
            assert_eq!(r.to_string(), s);
            let json = serde_json::to_string(&r).unwrap();
            assert_eq!(json, serde_json::to_string(s).unwrap());
            assert_eq!(serde_json::from_str::<StopReason>(&json).unwrap(), r);
        }
        assert!(StopReason::parse("finished").is_finished());
        assert_eq!(
            StopReason::parse("interrupted by signal 2; partial results"),
            StopReason::Interrupted { signal: 2 }
        );
        assert_eq!(
            StopReason::interrupted(15usize).to_string(),
            "interrupted by signal 15; partial results"
        );
        assert_eq!(
            StopReason::parse("error: link down"),
            StopReason::Error("link down".into())
        );
        assert!(matches!(
            StopReason::parse("interrupted by signal 02; partial results"),
            StopReason::Other(_)
        ));
    }
}
