//! A warning in a result: a stable code that scripts can match and a text
//! that says what is wrong and what to do. Results written before format
//! version 2 carried bare strings; they still read, with the code
//! `unclassified`.

use serde::{Deserialize, Deserializer, Serialize};
use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Warning {
    /// Stable identifier, `area.what` (e.g. `host.loop-not-pinned`).
    pub code: String,
    /// What is wrong and what to do about it.
    pub text: String,
}

/// The code of a warning read from a result older than the codes.
pub const UNCLASSIFIED: &str = "unclassified";

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for Warning {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Either {
            Coded { code: String, text: String },
            Text(String),
        }
        Ok(match Either::deserialize(d)? {
            Either::Coded { code, text } => Warning { code, text },
            Either::Text(text) => Warning {
                code: UNCLASSIFIED.into(),
                text,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_shapes_and_writes_the_coded_one() {
        let old: Vec<Warning> = serde_json::from_str(r#"["memory not locked"]"#).unwrap();
        assert_eq!(old[0].code, UNCLASSIFIED);
        assert_eq!(old[0].text, "memory not locked");
        let new: Vec<Warning> =
            serde_json::from_str(r#"[{"code":"host.vm","text":"a VM"}]"#).unwrap();
        assert_eq!(new[0].code, "host.vm");
        assert_eq!(
            serde_json::to_string(&new[0]).unwrap(),
            r#"{"code":"host.vm","text":"a VM"}"#
        );
        assert!(serde_json::from_str::<Warning>("3").is_err());
    }
}
