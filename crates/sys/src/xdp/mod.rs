//! AF_XDP: not in this build yet. `open` says so, so that `--engine xdp`
//! is refused with the reason instead of falling back silently.
use crate::SysError;

/// Where to bind.
#[derive(Clone, Debug, Default)]
pub struct XdpConfig {
    pub queue: u32,
}

/// An AF_XDP socket (none can be made in this build).
pub struct XdpSocket {
    _private: (),
}

impl XdpSocket {
    pub fn open(_ifname: &str, _cfg: &XdpConfig) -> Result<XdpSocket, SysError> {
        Err(SysError::Unsupported {
            what: "AF_XDP".into(),
            why: "this build of misura has no AF_XDP path".into(),
        })
    }
    pub fn tx_push_with(&mut self, _f: impl FnOnce(&mut [u8]) -> usize) -> bool {
        false
    }
    pub fn tx_flush(&mut self) -> Result<usize, SysError> {
        Ok(0)
    }
}
