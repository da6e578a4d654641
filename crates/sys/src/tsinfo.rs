//! Timestamping capabilities of an interface (`ETHTOOL_GET_TS_INFO`, what
//! `ethtool -T` shows) and enabling hardware timestamping (`SIOCSHWTSTAMP`).

use crate::error::is_perm;
use crate::sys::{self, EthtoolErr, IfReq};
use crate::SysError;
use misura_wire::hwtstamp::{self, RX_FILTERS, TX_TYPES};

const SOF_TX_HARDWARE: u32 = 1 << 0;
const SOF_TX_SOFTWARE: u32 = 1 << 1;
const SOF_RX_HARDWARE: u32 = 1 << 2;
const SOF_RX_SOFTWARE: u32 = 1 << 3;
const SOF_SOFTWARE: u32 = 1 << 4;
const SOF_RAW_HARDWARE: u32 = 1 << 6;

/// `HWTSTAMP_TX_OFF` / `ON` / `ONESTEP_SYNC` / `ONESTEP_P2P`.
pub const HWTSTAMP_TX_OFF: i32 = 0;
/// Hardware TX timestamps for every outgoing packet that asks for one.
pub const HWTSTAMP_TX_ON: i32 = 1;
/// No hardware RX timestamps.
pub const HWTSTAMP_FILTER_NONE: i32 = 0;
/// Hardware RX timestamps for every packet.
pub const HWTSTAMP_FILTER_ALL: i32 = 1;
/// Hardware RX timestamps for PTPv2 event messages over L2 or UDP (what
/// NICs that cannot stamp everything offer: 82576, 82599, X710).
pub const HWTSTAMP_FILTER_PTP_V2_EVENT: i32 = 12;
/// The same over L2 only.
pub const HWTSTAMP_FILTER_PTP_V2_L2_EVENT: i32 = 9;

/// Names of the `SOF_TIMESTAMPING_*` capability bits, as `ethtool -T` prints them.
const SOF_NAMES: [(u32, &str); 7] = [
    (SOF_TX_HARDWARE, "hardware-transmit"),
    (SOF_TX_SOFTWARE, "software-transmit"),
    (SOF_RX_HARDWARE, "hardware-receive"),
    (SOF_RX_SOFTWARE, "software-receive"),
    (SOF_SOFTWARE, "software-system-clock"),
    (1 << 5, "hardware-legacy-clock"),
    (SOF_RAW_HARDWARE, "hardware-raw-clock"),
];

/// What `ETHTOOL_GET_TS_INFO` reports for an interface.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TimestampingCaps {
    /// `SOF_TIMESTAMPING_*` bits the device supports.
    pub so_timestamping: u32,
    /// PTP hardware clock index (`/dev/ptpN`), `None` when the device has none.
    pub phc_index: Option<i32>,
    /// Bit mask of supported `HWTSTAMP_TX_*` types (bit n = type n).
    pub tx_types: u32,
    /// Bit mask of supported `HWTSTAMP_FILTER_*` (bit n = filter n).
    pub rx_filters: u32,
}

impl TimestampingCaps {
    /// Software TX timestamps (the driver calls `skb_tx_timestamp`).
    pub fn sw_tx(&self) -> bool {
        self.so_timestamping & SOF_TX_SOFTWARE != 0
    }
    /// Software RX timestamps.
    pub fn sw_rx(&self) -> bool {
        self.so_timestamping & SOF_RX_SOFTWARE != 0
    }
    /// Hardware TX timestamps.
    pub fn hw_tx(&self) -> bool {
        self.so_timestamping & SOF_TX_HARDWARE != 0
    }
    /// Hardware RX timestamps.
    pub fn hw_rx(&self) -> bool {
        self.so_timestamping & SOF_RX_HARDWARE != 0
    }
    /// Hardware RX timestamps for all packets (`HWTSTAMP_FILTER_ALL`), which
    /// raw probe frames need.
    pub fn hw_rx_all(&self) -> bool {
        self.hw_rx() && self.rx_filters & (1 << HWTSTAMP_FILTER_ALL) != 0
    }
    /// Hardware RX timestamps for PTPv2 event messages over L2 (the filter
    /// `ptpv2-event` or `ptpv2-l2-event`), the best a NIC without `all` has.
    pub fn hw_rx_ptp_l2(&self) -> bool {
        self.hw_rx()
            && self.rx_filters
                & ((1 << HWTSTAMP_FILTER_PTP_V2_EVENT) | (1 << HWTSTAMP_FILTER_PTP_V2_L2_EVENT))
                != 0
    }
    /// The capability bits by name, e.g.
    /// `["software-transmit", "software-receive", "software-system-clock"]`.
    pub fn describe(&self) -> Vec<String> {
        let mut out: Vec<String> = SOF_NAMES
            .iter()
            .filter(|(bit, _)| self.so_timestamping & bit != 0)
            .map(|(_, n)| n.to_string())
            .collect();
        let unknown = self.so_timestamping & !SOF_NAMES.iter().fold(0, |a, (b, _)| a | b);
        if unknown != 0 {
            out.push(format!("other-0x{unknown:x}"));
        }
        out
    }
    /// The supported `HWTSTAMP_TX_*` types by name (`off`, `on`, ...).
    pub fn describe_tx_types(&self) -> Vec<String> {
        bit_names(self.tx_types, &TX_TYPES)
    }
    /// The supported `HWTSTAMP_FILTER_*` by name (`none`, `all`, ...).
    pub fn describe_rx_filters(&self) -> Vec<String> {
        bit_names(self.rx_filters, &RX_FILTERS)
    }
}

fn bit_names(mask: u32, names: &[&str]) -> Vec<String> {
    (0..32)
        .filter(|b| mask & (1u32 << b) != 0)
        .map(|b| {
            names
                .get(b as usize)
                .map_or_else(|| format!("bit-{b}"), |n| n.to_string())
        })
        .collect()
}

/// `struct ethtool_ts_info`.
#[repr(C)]
#[derive(Default)]
struct EthtoolTsInfo {
    cmd: u32,
    so_timestamping: u32,
    phc_index: i32,
    tx_types: u32,
    tx_reserved: [u32; 3],
    rx_filters: u32,
    rx_reserved: [u32; 3],
}

/// `ETHTOOL_GET_TS_INFO` for `ifname` (in the calling thread's namespace).
pub fn get_ts_info(ifname: &str) -> Result<TimestampingCaps, SysError> {
    let fd = sys::control_socket()?;
    get_ts_info_with(&fd, ifname)
}

/// `ETHTOOL_GET_TS_INFO` through `fd`, in the namespace `fd` was made in.
pub(crate) fn get_ts_info_with(
    fd: &std::os::fd::OwnedFd,
    ifname: &str,
) -> Result<TimestampingCaps, SysError> {
    let mut info = EthtoolTsInfo {
        cmd: sys::ETHTOOL_GET_TS_INFO,
        ..Default::default()
    };
    // SAFETY: `EthtoolTsInfo` is the kernel's `struct ethtool_ts_info`.
    match unsafe { sys::ethtool(fd, ifname, &mut info) } {
        Ok(()) => Ok(TimestampingCaps {
            so_timestamping: info.so_timestamping,
            phc_index: (info.phc_index >= 0).then_some(info.phc_index),
            tx_types: info.tx_types,
            rx_filters: info.rx_filters,
        }),
        Err(EthtoolErr::Name(e)) => Err(e),
        Err(EthtoolErr::Os(e)) => Err(match e.raw_os_error() {
            Some(libc::ENODEV) => SysError::NoSuchInterface {
                name: ifname.to_string(),
            },
            Some(libc::EOPNOTSUPP) => SysError::Unsupported {
                what: format!("reading the timestamping capabilities of `{ifname}`"),
                why: "the driver does not answer ETHTOOL_GET_TS_INFO".to_string(),
            },
            _ => SysError::io(
                format!(
                    "reading the timestamping capabilities of `{ifname}` (ETHTOOL_GET_TS_INFO)"
                ),
                e,
            ),
        }),
    }
}

/// The hardware timestamping configuration a driver granted.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HwTstampConfig {
    /// `HWTSTAMP_TX_*` granted.
    pub tx_type: i32,
    /// `HWTSTAMP_FILTER_*` granted (a driver may widen a filter, e.g. to ALL).
    pub rx_filter: i32,
}

impl HwTstampConfig {
    /// TX on, RX filter ALL: the NIC stamps every packet.
    pub const ALL: HwTstampConfig = HwTstampConfig {
        tx_type: HWTSTAMP_TX_ON,
        rx_filter: HWTSTAMP_FILTER_ALL,
    };

    /// TX hardware stamping is on.
    pub fn tx_on(&self) -> bool {
        self.tx_type == HWTSTAMP_TX_ON
    }
    /// Every received packet is hardware-stamped.
    pub fn rx_all(&self) -> bool {
        self.rx_filter == HWTSTAMP_FILTER_ALL
    }

    /// In the words `hwstamp_ctl` and `ethtool -T` use: `tx on, rx all`,
    /// `tx off, rx none`, `tx on, rx ptpv2-event`.
    pub fn describe(&self) -> String {
        hwtstamp::describe(self.tx_type, self.rx_filter)
    }

    /// Reads [`HwTstampConfig::describe`]'s words back.
    pub fn parse(s: &str) -> Option<HwTstampConfig> {
        let (tx_type, rx_filter) = hwtstamp::parse(s)?;
        Some(HwTstampConfig { tx_type, rx_filter })
    }
}

/// `SIOCGHWTSTAMP`: the hardware timestamping configuration in force.
const SIOCGHWTSTAMP: libc::c_ulong = 0x89b1;

/// The hardware timestamping configuration `ifname`'s driver has now
/// (`SIOCGHWTSTAMP`, what `hwstamp_ctl -i IF` prints). No privilege needed.
pub fn hw_timestamping(ifname: &str) -> Result<HwTstampConfig, SysError> {
    hwtstamp_ioctl(
        ifname,
        SIOCGHWTSTAMP,
        HwTstampConfig {
            tx_type: 0,
            rx_filter: 0,
        },
    )
}

/// Sets `ifname`'s hardware timestamping to `cfg` (`SIOCSHWTSTAMP`) and
/// returns what the driver granted (it may widen an RX filter). Needs
/// `CAP_NET_ADMIN`; device-wide, and stays after the process exits.
pub fn set_hw_timestamping(ifname: &str, cfg: &HwTstampConfig) -> Result<HwTstampConfig, SysError> {
    hwtstamp_ioctl(ifname, sys::SIOCSHWTSTAMP, cfg.clone())
}

fn hwtstamp_ioctl(
    ifname: &str,
    req: libc::c_ulong,
    cfg: HwTstampConfig,
) -> Result<HwTstampConfig, SysError> {
    let setting = req == sys::SIOCSHWTSTAMP;
    let what = || format!("hardware timestamping on `{ifname}`");
    let fd = sys::control_socket()?;
    let mut raw = HwtstampConfigRaw {
        flags: 0,
        tx_type: cfg.tx_type,
        rx_filter: cfg.rx_filter,
    };
    let mut ifr = IfReq::new(ifname)?;
    ifr.data.ptr = &mut raw as *mut HwtstampConfigRaw as *mut libc::c_void;
    let driver = || crate::iface::ethtool_driver(&fd, ifname).unwrap_or_else(|| "unknown".into());
    let ioctl = if setting {
        "SIOCSHWTSTAMP"
    } else {
        "SIOCGHWTSTAMP"
    };
    match sys::ifreq_ioctl(&fd, req, &mut ifr) {
        Ok(()) => Ok(HwTstampConfig {
            tx_type: raw.tx_type,
            rx_filter: raw.rx_filter,
        }),
        Err(e) => Err(match e.raw_os_error() {
            Some(libc::ENODEV) => SysError::NoSuchInterface {
                name: ifname.to_string(),
            },
            _ if is_perm(&e) => SysError::NeedCapability {
                cap: "CAP_NET_ADMIN",
                what: format!("setting hardware timestamping on `{ifname}` ({ioctl})"),
            },
            Some(libc::EOPNOTSUPP) | Some(libc::ENOTTY) => {
                let caps = get_ts_info(ifname)
                    .map(|c| c.describe().join(", "))
                    .unwrap_or_default();
                SysError::Unsupported {
                    what: what(),
                    why: format!(
                        "driver `{}` does not implement {ioctl} ({e}); it offers only [{caps}] \
                         (`ethtool -T {ifname}`); use software timestamps or a NIC with a PTP clock",
                        driver()
                    ),
                }
            }
            Some(libc::ERANGE) | Some(libc::EINVAL) if setting => SysError::Unsupported {
                what: what(),
                why: format!(
                    "driver `{}` refused {} ({e}); it cannot stamp that way \
                     (`ethtool -T {ifname}` lists its modes and filters)",
                    driver(),
                    cfg.describe()
                ),
            },
            _ => SysError::io(format!("{} ({ioctl})", what()), e),
        }),
    }
}

/// `struct hwtstamp_config`.
#[repr(C)]
struct HwtstampConfigRaw {
    flags: i32,
    tx_type: i32,
    rx_filter: i32,
}

/// Asks the driver for `HWTSTAMP_TX_ON` + `HWTSTAMP_FILTER_ALL` with
/// `SIOCSHWTSTAMP` and returns what it granted (the ioctl writes the
/// granted config back).  Raw probe frames are not PTP, so no narrower
/// filter is tried: a driver that refuses ALL yields
/// [`SysError::Unsupported`] with its answer.  Needs `CAP_NET_ADMIN`.
/// The setting is device-wide and stays after the process exits.
pub fn enable_hw_timestamping(ifname: &str) -> Result<HwTstampConfig, SysError> {
    set_hw_timestamping(ifname, &HwTstampConfig::ALL)
}

/// TX on and the RX filter `rx_filter` (`HWTSTAMP_FILTER_*`, e.g.
/// [`HWTSTAMP_FILTER_PTP_V2_EVENT`] for a NIC that stamps only PTP event
/// messages), as [`enable_hw_timestamping`]; returns what was granted.
pub fn enable_hw_timestamping_with(
    ifname: &str,
    rx_filter: i32,
) -> Result<HwTstampConfig, SysError> {
    set_hw_timestamping(
        ifname,
        &HwTstampConfig {
            tx_type: HWTSTAMP_TX_ON,
            rx_filter,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describe_names_bits() {
        let c = TimestampingCaps {
            so_timestamping: 0b1_1010,
            phc_index: None,
            tx_types: 0,
            rx_filters: 0,
        };
        assert_eq!(
            c.describe(),
            [
                "software-transmit",
                "software-receive",
                "software-system-clock"
            ]
        );
        assert!(c.sw_tx() && c.sw_rx() && !c.hw_tx() && !c.hw_rx());
        let c = TimestampingCaps {
            so_timestamping: 0x45,
            phc_index: Some(0),
            tx_types: 0b11,
            rx_filters: 0b11,
        };
        assert_eq!(
            c.describe(),
            [
                "hardware-transmit",
                "hardware-receive",
                "hardware-raw-clock"
            ]
        );
        assert_eq!(c.describe_tx_types(), ["off", "on"]);
        assert_eq!(c.describe_rx_filters(), ["none", "all"]);
        assert!(c.hw_rx_all());
    }

    #[test]
    fn configs_in_words() {
        assert_eq!(HwTstampConfig::ALL.describe(), "tx on, rx all");
        let off = HwTstampConfig {
            tx_type: HWTSTAMP_TX_OFF,
            rx_filter: HWTSTAMP_FILTER_NONE,
        };
        assert_eq!(off.describe(), "tx off, rx none");
        for c in [
            HwTstampConfig::ALL,
            off,
            HwTstampConfig {
                tx_type: 1,
                rx_filter: 12,
            },
        ] {
            assert_eq!(HwTstampConfig::parse(&c.describe()), Some(c.clone()));
        }
        assert_eq!(
            HwTstampConfig::parse("tx 7, rx 99").map(|c| c.rx_filter),
            Some(99)
        );
        assert_eq!(HwTstampConfig::parse("on"), None);
        // lo has no SIOCGHWTSTAMP: a clear error naming the interface.
        let e = hw_timestamping("lo").unwrap_err().to_string();
        assert!(e.contains("`lo`"), "{e}");
    }

    #[test]
    fn loopback_caps() {
        let c = get_ts_info("lo").expect("lo");
        assert!(c.sw_rx(), "{c:?}");
        assert!(!c.hw_tx());
    }
}
