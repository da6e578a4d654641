//! What can be wrong with an irtt packet or parameter block (the `irtt` and
//! `irtt_params` modules).

/// What is wrong with an irtt packet or parameter block.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IrttError {
    #[error("irtt {what} truncated: need {need} bytes, have {have}")]
    Truncated {
        what: &'static str,
        need: usize,
        have: usize,
    },
    #[error("irtt packet of {len} bytes is over the limit of {max} bytes")]
    TooLong { len: usize, max: usize },
    #[error("output buffer too small for the irtt packet: need {need} bytes, have {have}")]
    BufferTooSmall { need: usize, have: usize },
    #[error("not an irtt packet: magic {0:02x?}, expected 14 a7 5b")]
    BadMagic([u8; 3]),
    #[error("irtt packet with unknown flag bits set: {0:#04x} (known: 0x0f)")]
    BadFlags(u8),
    #[error("irtt packet without an HMAC, but a key is set: give both ends the same --hmac key")]
    HmacMissing,
    #[error("irtt packet carries an HMAC, but no key is set: give the key (--hmac / --irtt-hmac)")]
    HmacUnexpected,
    #[error("irtt packet's HMAC-MD5 does not match: the two ends have different keys")]
    HmacMismatch,
    #[error("irtt HMAC key of {len} bytes is over the limit of {max} bytes")]
    KeyTooLong { len: usize, max: usize },
    #[error("irtt parameter block of {len} bytes is over the limit of {max} bytes")]
    ParamsTooLong { len: usize, max: usize },
    #[error("irtt parameter varint overflows 64 bits")]
    ParamOverflow,
    #[error("irtt parameter {name} = {value} is invalid: {why}")]
    ParamValue {
        name: &'static str,
        value: i64,
        why: &'static str,
    },
    #[error("irtt packet's reply flag is {}, expected {}", if *.found { "set" } else { "clear" }, if *.found { "clear (a request)" } else { "set (a reply)" })]
    ReplyFlag { found: bool },
    #[error("irtt open reply with a zero connection token")]
    ZeroToken,
}
