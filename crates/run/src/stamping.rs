//! `--timestamps kernel|hardware|software|user` of `misura rtt` and
//! `misura reflect`: whether a UDP socket asks the kernel for its RX and
//! TX stamps, and whether the NIC stamps them.
//!
//! Kernel stamps (the default) are what the network RTT, the one-way
//! delays and the reflector's follow-ups are made of. They cost each end
//! about a µs per datagram on a small VM (the send clones the packet onto
//! the error queue, the receive carries one more control message, and the
//! reflector reads its TX stamp back). Where the interface the datagrams
//! leave by has a PTP hardware clock that stamps every packet, the
//! default also switches the NIC's stamping on (`SIOCSHWTSTAMP`, TX on and
//! RX filter ALL, device-wide, as ptp4l does) and takes its stamps beside
//! the kernel's. `user` gives all that up: only user clock readings
//! remain, as in sockperf or ping -U.
//!
//! The flags themselves are the binary's, which converts them to the
//! plain `Timestamps` and `FrameFormat` here with `From`.

use misura_sys::packet::TimestampingGranted;
use misura_sys::udp::{ReceiveInfo, UdpTsSocket};
use misura_sys::SysError;

/// Which clock stamps a UDP socket's datagrams (`--timestamps`,
/// the binary's `TimestampsFlag`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Timestamps {
    /// The kernel's software RX and TX stamps, and the NIC's hardware
    /// stamps too where the interface offers them.
    #[default]
    Kernel,
    /// The NIC's hardware stamps (and the kernel's beside them): fails
    /// when the interface has no hardware timestamping.
    Hardware,
    /// The kernel's software stamps only, never the NIC's.
    Software,
    /// The user clock only: no kernel stamps, no follow-ups.
    User,
}

/// What was found out about the NIC's stamps on one interface.
#[derive(Clone, Debug, Default)]
pub struct Hardware {
    /// The interface the datagrams leave by (None: not known).
    pub interface: Option<String>,
    /// Its PTP hardware clock, `/dev/ptpN`.
    pub phc_index: Option<i32>,
    /// The NIC stamps every packet in both directions now.
    pub enabled: bool,
    /// Why the NIC's stamps are not used, when they are not.
    pub note: Option<String>,
}

impl Hardware {
    fn off(interface: Option<&str>, note: String) -> Hardware {
        Hardware {
            interface: interface.map(String::from),
            note: Some(note),
            ..Hardware::default()
        }
    }
}

/// How misura's frames travel, for every command that sends them: the
/// frame engine's load (`rfc2544`, `y1564`, `oneway`'s engine mode), the
/// one-way probes and the raw probes of `rtt --l2` and `reflect --l2`
/// (`--frame-format`, the binary's `FrameFormatFlag`). `auto` is settled
/// per run: [`FrameFormat::settle`] for raw probes, the engine's and
/// oneway's own rules for theirs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FrameFormat {
    /// PTP where the RX port stamps only PTP event messages in hardware
    /// (and the frames can carry the envelope), misura's own frames
    /// otherwise (a reflector answers both, each in its own format).
    #[default]
    Auto,
    /// misura's frames as the Ethernet payload under the run's EtherType.
    Misura,
    /// misura's frames after a PTPv2 Sync header (EtherType 0x88F7,
    /// domain 127), so that a NIC that stamps only PTP event messages
    /// stamps them.
    Ptp,
}

/// Whether `interface` stamps in hardware on TX but on RX only PTP event
/// messages (no `all` filter): there, raw probes travel PTP-wrapped.
pub fn stamps_only_ptp(interface: &str) -> bool {
    misura_sys::tsinfo::get_ts_info(interface)
        .is_ok_and(|c| c.hw_tx() && !c.hw_rx_all() && c.hw_rx_ptp_l2())
}

impl FrameFormat {
    /// `auto` decided for `interface` with `mode`: PTP where it brings the
    /// NIC's stamps (never when the NIC's stamps are not asked for).
    pub fn settle(self, interface: &str, mode: Timestamps) -> FrameFormat {
        match self {
            FrameFormat::Auto
                if matches!(mode, Timestamps::Kernel | Timestamps::Hardware)
                    && stamps_only_ptp(interface) =>
            {
                FrameFormat::Ptp
            }
            FrameFormat::Auto => FrameFormat::Misura,
            f => f,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            FrameFormat::Auto => "auto",
            FrameFormat::Misura => "misura",
            FrameFormat::Ptp => "ptp",
        }
    }
}

/// The NIC's stamps were required (`Timestamps::Hardware`) and cannot be
/// had: `why` says what the interface lacks. Its exit class is a parameter
/// to change (the binary's `shared::exit::code_for`), and the binary words
/// it with the flags (`shared::words`).
#[derive(Debug, thiserror::Error)]
#[error("hardware stamps required: {why}")]
pub struct HardwareRequired {
    pub why: String,
}

/// Switches the NIC's stamping on for `interface` when `mode` wants it
/// and the driver offers it (hardware TX and RX of every packet). Fails
/// only for `--timestamps hardware`; otherwise says why not in `note`.
pub fn hardware(interface: Option<&str>, mode: Timestamps) -> Result<Hardware, HardwareRequired> {
    hardware_for(interface, mode, false)
}

/// [`hardware`] for raw probes that may travel PTP-wrapped (`ptp`): on a
/// NIC that stamps only PTP event messages on receive, its RX filter is
/// set to PTPv2 event messages (`SIOCSHWTSTAMP`, as ptp4l and hwstamp_ctl
/// -r 12 do) instead of every packet.
pub fn hardware_for(
    interface: Option<&str>,
    mode: Timestamps,
    ptp: bool,
) -> Result<Hardware, HardwareRequired> {
    let hw = match mode {
        Timestamps::Software | Timestamps::User => {
            return Ok(Hardware::off(
                interface,
                format!(
                    "{} timestamps chosen: the NIC's stamps are not asked for",
                    if mode == Timestamps::User {
                        "user"
                    } else {
                        "software"
                    }
                ),
            ))
        }
        Timestamps::Kernel | Timestamps::Hardware => try_hardware(interface, ptp),
    };
    if mode == Timestamps::Hardware && !hw.enabled {
        return Err(HardwareRequired {
            why: hw
                .note
                .as_deref()
                .unwrap_or("no hardware timestamps")
                .trim_end_matches(": software stamps")
                .to_string(),
        });
    }
    Ok(hw)
}

fn try_hardware(interface: Option<&str>, ptp: bool) -> Hardware {
    let Some(ifname) = interface else {
        return Hardware::off(
            None,
            "the interface towards the peer is not known (no route?): software stamps".into(),
        );
    };
    let caps = match misura_sys::tsinfo::get_ts_info(ifname) {
        Ok(c) => c,
        Err(e) => return Hardware::off(interface, format!("{e}: software stamps")),
    };
    if ptp && caps.hw_tx() && !caps.hw_rx_all() && caps.hw_rx_ptp_l2() {
        use misura_sys::tsinfo::{HWTSTAMP_FILTER_NONE, HWTSTAMP_FILTER_PTP_V2_EVENT};
        return switch_on(
            ifname,
            caps.phc_index,
            HWTSTAMP_FILTER_PTP_V2_EVENT,
            "on/ptpv2-event",
            |cfg| cfg.tx_on() && cfg.rx_filter != HWTSTAMP_FILTER_NONE,
        );
    }
    if caps.hw_tx() && caps.hw_rx() && !caps.hw_rx_all() {
        return Hardware::off(
            interface,
            format!(
                "`{ifname}` stamps received packets in hardware only for its RX filters ({}), not every packet, so no datagram of this run would get the NIC's RX stamp: software stamps",
                caps.describe_rx_filters().join(", ")
            ),
        );
    }
    if !(caps.hw_tx() && caps.hw_rx_all()) {
        return Hardware::off(
            interface,
            format!(
                "`{ifname}` offers no hardware stamps (ethtool -T: {}): software stamps",
                caps.describe().join(", ")
            ),
        );
    }
    switch_on(
        ifname,
        caps.phc_index,
        misura_sys::tsinfo::HWTSTAMP_FILTER_ALL,
        "on/all",
        |cfg| cfg.tx_on() && cfg.rx_all(),
    )
}

/// `SIOCSHWTSTAMP` with TX on and `rx_filter`; the NIC's stamps are used
/// when what the driver granted passes `enough` (`wanted` names it).
fn switch_on(
    ifname: &str,
    phc_index: Option<i32>,
    rx_filter: i32,
    wanted: &str,
    enough: impl Fn(&misura_sys::tsinfo::HwTstampConfig) -> bool,
) -> Hardware {
    let interface = Some(ifname);
    match misura_sys::tsinfo::enable_hw_timestamping_with(ifname, rx_filter) {
        Ok(cfg) if enough(&cfg) => Hardware {
            interface: interface.map(String::from),
            phc_index,
            enabled: true,
            note: None,
        },
        Ok(cfg) => Hardware::off(
            interface,
            format!(
                "the driver of `{ifname}` granted TX type {} and RX filter {} instead of {wanted}: software stamps",
                cfg.tx_type, cfg.rx_filter
            ),
        ),
        Err(e) => Hardware::off(interface, format!("{e}: software stamps")),
    }
}

/// Turns on what `mode` asks for (hardware stamps only when `hw` was
/// enabled) and the control messages either way (the TTL and pktinfo
/// ones as `info` says: only those the reader uses); says what the kernel
/// granted.
pub fn enable(
    sock: &UdpTsSocket,
    mode: Timestamps,
    hw: &Hardware,
    info: ReceiveInfo,
) -> Result<TimestampingGranted, SysError> {
    let granted = match mode {
        Timestamps::User => TimestampingGranted::NONE,
        _ => sock.enable_stamps(hw.enabled)?,
    };
    sock.enable_control_messages(info)?;
    Ok(granted)
}

/// The interface the route to `ip` leaves by (`ip route get`), in the
/// calling thread's network namespace.
pub fn route_interface(ip: std::net::IpAddr) -> Option<String> {
    let out = std::process::Command::new("ip")
        .args(["-j", "route", "get", &ip.to_string()])
        .output()
        .ok()?;
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    v.get(0)?.get("dev")?.as_str().map(String::from)
}

/// The interface holding the local address `ip` (`ip addr show to`), in
/// the calling thread's network namespace.
pub fn address_interface(ip: std::net::IpAddr) -> Option<String> {
    let out = std::process::Command::new("ip")
        .args(["-j", "addr", "show", "to", &ip.to_string()])
        .output()
        .ok()?;
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    v.get(0)?.get("ifname")?.as_str().map(String::from)
}
