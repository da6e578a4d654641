//! Opening the two ports: NIC hardware timestamps where both ports can give
//! them, kernel software stamps otherwise, the raw sockets, and the test
//! frames built once per payload size.

use super::engine::{self, Frames, Ports};
use super::plan::{FrameFormat, Request, Resolved};
use crate::error::{OnewayError, Result};
use misura_report::PortInfo;
use misura_sys::iface::InterfaceInfo;
use misura_sys::packet::{PacketSocket, TimestampingGranted};
use misura_wire::MacAddr;

/// The timestamping asked for and what each port granted.
pub struct Stamping {
    /// Hardware stamps were asked for (both ports have them).
    pub hardware_asked: bool,
    /// Why hardware stamps are not used, or what to mind when they are.
    pub hardware_note: Option<String>,
    /// The TX and RX ports' PTP clocks (`/dev/ptpN`), when hardware stamps
    /// were asked for.
    pub phcs: Option<(i32, i32)>,
    pub tx: TimestampingGranted,
    pub rx: TimestampingGranted,
}

/// The open ports, with their frames and stamps.
pub struct Opened {
    pub ports: Ports,
    pub frames: Frames,
    pub stamping: Stamping,
}

/// `--frame-format auto` decided: PTP-wrapped probes exactly when both
/// ports stamp in hardware and the RX port stamps only PTP event messages.
/// A PTP format also sets the PTP EtherType.
pub fn settle_frame_format(req: &Request) -> Request {
    let mut r = req.clone();
    if r.frame_format == FrameFormat::Auto {
        let caps = |n: &str| misura_sys::tsinfo::get_ts_info(n).ok();
        r.frame_format = match (caps(&r.tx), caps(&r.rx)) {
            (Some(a), Some(b)) if a.hw_tx() && !b.hw_rx_all() && b.hw_rx_ptp_l2() => {
                FrameFormat::Ptp
            }
            _ => FrameFormat::Misura,
        };
    }
    if r.frame_format == FrameFormat::Ptp {
        r.ethertype = misura_wire::ptp::ETHERTYPE_PTP;
    }
    r
}

/// The port as the result describes it.
pub fn port_info(role: &str, i: &InterfaceInfo) -> PortInfo {
    let caps = misura_sys::tsinfo::get_ts_info(&i.name).ok();
    PortInfo {
        role: role.to_string(),
        name: i.name.clone(),
        mac: MacAddr(i.mac).to_string(),
        driver: i.driver.clone(),
        mtu: i.mtu,
        speed_mbps: i.speed_mbps,
        timestamping_caps: caps.as_ref().map(|c| c.describe()).unwrap_or_default(),
        phc_index: caps.and_then(|c| c.phc_index),
    }
}

/// Open both ports with timestamping on, and build the frames: addressed
/// to the RX port's MAC, so the SUT forwards them to it.
pub fn open(r: &Resolved) -> Result<Opened> {
    let cfg = &r.config;
    let ptp = cfg.ethertype == misura_wire::ptp::ETHERTYPE_PTP;
    let (hardware_asked, hardware_note, phcs) = hardware_timestamping(&cfg.tx, &cfg.rx, ptp);
    let ports = Ports {
        tx: PacketSocket::open(&cfg.tx, cfg.ethertype)?,
        rx: PacketSocket::open(&cfg.rx, cfg.ethertype)?,
    };
    let tx = ports
        .tx
        .enable_timestamping(hardware_asked)
        .map_err(OnewayError::step("enabling timestamping on the TX port"))?;
    let rx = ports
        .rx
        .enable_timestamping(hardware_asked)
        .map_err(OnewayError::step("enabling timestamping on the RX port"))?;
    let _ = ports.tx.set_qdisc_bypass(true);
    let _ = ports.rx.set_recv_buffer(4 << 20);
    let frames = engine::build_frames(
        MacAddr(r.rx.mac),
        MacAddr(r.tx.mac),
        cfg.ethertype,
        cfg.session_id,
        &cfg.sizes,
    )?;
    Ok(Opened {
        ports,
        frames,
        stamping: Stamping {
            hardware_asked,
            hardware_note,
            phcs,
            tx,
            rx,
        },
    })
}

/// Ask for NIC hardware stamps where both ports can give them; otherwise
/// say why not. With them, the ports' PTP clocks (one, or two to relate).
fn hardware_timestamping(
    tx: &str,
    rx: &str,
    ptp: bool,
) -> (bool, Option<String>, Option<(i32, i32)>) {
    use misura_sys::tsinfo::{
        HWTSTAMP_FILTER_ALL, HWTSTAMP_FILTER_NONE, HWTSTAMP_FILTER_PTP_V2_EVENT,
    };
    let caps = |n: &str| misura_sys::tsinfo::get_ts_info(n).ok();
    // The RX filter each port can take: everything, PTP event messages (the
    // frames are then PTP-wrapped), or nothing (a TX-only port).
    let filter = |c: &misura_sys::tsinfo::TimestampingCaps| {
        if c.hw_rx_all() && !ptp {
            HWTSTAMP_FILTER_ALL
        } else if c.hw_rx_ptp_l2() {
            HWTSTAMP_FILTER_PTP_V2_EVENT
        } else if c.hw_rx_all() {
            HWTSTAMP_FILTER_ALL
        } else {
            HWTSTAMP_FILTER_NONE
        }
    };
    match (caps(tx), caps(rx)) {
        (Some(_), Some(b)) if b.hw_rx() && !b.hw_rx_all() && !ptp && b.hw_rx_ptp_l2() => (
            false,
            Some(format!(
                "the RX port {rx} stamps only PTP event messages in hardware (ethtool -T: no `all` filter): software stamps used; the frame format ptp (or auto) wraps the probes in PTP Sync messages to get hardware stamps"
            )),
            None,
        ),
        (Some(a), Some(b)) if a.hw_tx() && b.hw_rx() => {
            for (n, c) in [(tx, &a), (rx, &b)] {
                if let Err(e) = misura_sys::tsinfo::enable_hw_timestamping_with(n, filter(c)) {
                    return (
                        false,
                        Some(format!("enabling hardware timestamping on {n} failed: {e}")),
                        None,
                    );
                }
            }
            let phcs = a.phc_index.zip(b.phc_index);
            let note = match phcs {
                None => Some(
                    "a port reports no PTP clock index: its hardware stamps cannot be related to the other's"
                        .into(),
                ),
                Some((t, r)) if t != r => Some(format!(
                    "two PTP clocks (TX /dev/ptp{t}, RX /dev/ptp{r}): RX stamps converted to the TX clock through cross-timestamps against system time"
                )),
                Some(_) => None,
            };
            (true, note, phcs)
        }
        (Some(a), Some(b)) if a.hw_tx() || a.hw_rx() || b.hw_tx() || b.hw_rx() => (
            false,
            Some(format!(
                "hardware stamps on one side only (TX port {tx}: transmit {}, RX port {rx}: receive {}): software stamps used",
                if a.hw_tx() { "yes" } else { "no" },
                if b.hw_rx() { "yes" } else { "no" }
            )),
            None,
        ),
        (Some(_), Some(_)) => (
            false,
            Some("the drivers report no hardware timestamping (software stamps used)".into()),
            None,
        ),
        _ => (
            false,
            Some("ETHTOOL_GET_TS_INFO failed; hardware timestamping unknown, not used".into()),
            None,
        ),
    }
}
