//! Where a configuration text came from, to name the file and line of
//! each mistake: shared by the target, agent and sink tables.

/// A configuration error, already phrased for the user ("FILE:LINE: …").
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);

pub(super) fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())]
        .bytes()
        .filter(|&b| b == b'\n')
        .count()
        + 1
}

/// The text being parsed and where it came from, to name the line of an error.
pub(crate) struct Origin<'a> {
    pub(super) text: &'a str,
    pub(super) name: &'a str,
}

impl Origin<'_> {
    pub(crate) fn err(&self, span: std::ops::Range<usize>, msg: String) -> ConfigError {
        ConfigError(format!(
            "{}:{}: {msg}",
            self.name,
            line_of(self.text, span.start)
        ))
    }
}
