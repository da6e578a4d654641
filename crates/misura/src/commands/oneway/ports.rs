//! Opening the two ports: NIC hardware timestamps where both ports can give
//! them, kernel software stamps otherwise, the raw sockets, and the test
//! frames built once per payload size.

use super::engine::{self, Frames, Ports};
use super::plan::Resolved;
use anyhow::{Context, Result};
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
    pub tx: TimestampingGranted,
    pub rx: TimestampingGranted,
}

/// The open ports, with their frames and stamps.
pub struct Opened {
    pub ports: Ports,
    pub frames: Frames,
    pub stamping: Stamping,
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
    let (hardware_asked, hardware_note) = hardware_timestamping(&cfg.tx, &cfg.rx);
    let ports = Ports {
        tx: PacketSocket::open(&cfg.tx, cfg.ethertype)?,
        rx: PacketSocket::open(&cfg.rx, cfg.ethertype)?,
    };
    let tx = ports
        .tx
        .enable_timestamping(hardware_asked)
        .context("enabling timestamping on the TX port")?;
    let rx = ports
        .rx
        .enable_timestamping(hardware_asked)
        .context("enabling timestamping on the RX port")?;
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
            tx,
            rx,
        },
    })
}

/// Ask for NIC hardware stamps where both ports can give them; otherwise
/// say why not.
fn hardware_timestamping(tx: &str, rx: &str) -> (bool, Option<String>) {
    let caps = |n: &str| misura_sys::tsinfo::get_ts_info(n).ok();
    match (caps(tx), caps(rx)) {
        (Some(a), Some(b)) if a.hw_tx() && b.hw_rx() => {
            for n in [tx, rx] {
                if let Err(e) = misura_sys::tsinfo::enable_hw_timestamping(n) {
                    return (
                        false,
                        Some(format!("enabling hardware timestamping on {n} failed: {e}")),
                    );
                }
            }
            if a.phc_index != b.phc_index {
                return (
                    true,
                    Some("the ports have different PTP clocks: hardware latency mixes two clocks unless they are synchronised (phc2sys)".into()),
                );
            }
            (true, None)
        }
        (Some(_), Some(_)) => (
            false,
            Some("the drivers report no hardware timestamping (software stamps used)".into()),
        ),
        _ => (
            false,
            Some("ETHTOOL_GET_TS_INFO failed; hardware timestamping unknown, not used".into()),
        ),
    }
}
