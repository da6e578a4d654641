//! `--frame-format` for the frame engine: misura's own frames, or the same
//! inside a PTPv2 Sync header for NICs that stamp only PTP event messages
//! in hardware (Intel 82576, 82599, X710 and others). `auto` takes PTP only
//! when that is what it takes to get NIC RX stamps and every frame is large
//! enough to carry the envelope; the choice and its reason go in the notes.

use super::flows::PTP_MIN_PAYLOAD;
use misura_sys::tsinfo;

/// How the engine's frames travel (module documentation): the one
/// frame format of every command that sends misura's frames.
pub use misura_run::stamping::FrameFormat;

/// What the engine is opened with.
#[derive(Clone, Debug, PartialEq)]
pub struct Settled {
    pub format: FrameFormat,
    pub ethertype: u16,
    /// Ask the rings for NIC RX stamps.
    pub hardware_stamps: bool,
    /// Why the choice was made, when it is not the obvious one.
    pub note: Option<String>,
}

/// Settle `format` for the RX port `rx` and the payloads P the run sends.
pub fn settle(format: FrameFormat, rx: &str, ethertype: u16, payloads: &[usize]) -> Settled {
    let caps = tsinfo::get_ts_info(rx).ok();
    let hw_all = caps.as_ref().is_some_and(|c| c.hw_rx_all());
    let hw_ptp = caps.as_ref().is_some_and(|c| c.hw_rx_ptp_l2());
    let smallest = payloads.iter().copied().min().unwrap_or(0);
    let ptp = Settled {
        format: FrameFormat::Ptp,
        ethertype: misura_wire::ptp::ETHERTYPE_PTP,
        hardware_stamps: hw_all || hw_ptp,
        note: None,
    };
    let own = |hardware_stamps: bool, note: Option<String>| Settled {
        format: FrameFormat::Misura,
        ethertype,
        hardware_stamps,
        note,
    };
    match format {
        FrameFormat::Ptp => ptp,
        FrameFormat::Misura if !hw_all && hw_ptp => own(
            false,
            Some(format!(
                "{rx} stamps only PTP event messages in hardware: kernel stamps used for the load frames (the frame format ptp or auto gives NIC stamps)"
            )),
        ),
        FrameFormat::Misura => own(hw_all, None),
        FrameFormat::Auto if hw_all => own(true, None),
        FrameFormat::Auto if hw_ptp && smallest >= PTP_MIN_PAYLOAD => Settled {
            note: Some(format!(
                "{rx} stamps only PTP event messages in hardware: the load frames travel inside PTPv2 Sync headers (EtherType 0x88F7, domain 127) to get NIC RX stamps"
            )),
            ..ptp
        },
        FrameFormat::Auto if hw_ptp => own(
            false,
            Some(format!(
                "{rx} stamps only PTP event messages in hardware, and a {}-byte frame is too small to carry misura's header inside one: kernel stamps used (frames of 102 bytes or more get NIC stamps)",
                smallest + 18
            )),
        ),
        FrameFormat::Auto => own(false, None),
    }
}
