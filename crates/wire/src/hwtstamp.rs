//! The names of the kernel's hardware timestamping settings
//! (`struct hwtstamp_config` of `linux/net_tstamp.h`): `HWTSTAMP_TX_*` types
//! and `HWTSTAMP_FILTER_*` receive filters, by value, in the words
//! `ethtool -T` and linuxptp's `hwstamp_ctl` use. One table for the socket
//! layer (`sys::tsinfo`) and the host tuning plan (`report::model::host`).

/// `HWTSTAMP_TX_*` by value: `off` is 0, `on` 1.
pub const TX_TYPES: [&str; 4] = ["off", "on", "onestep-sync", "onestep-p2p"];

/// `HWTSTAMP_FILTER_*` by value: `none` is 0, `all` 1, `ptpv2-event` 12.
pub const RX_FILTERS: [&str; 16] = [
    "none",
    "all",
    "some",
    "ptpv1-l4-event",
    "ptpv1-l4-sync",
    "ptpv1-l4-delay-req",
    "ptpv2-l4-event",
    "ptpv2-l4-sync",
    "ptpv2-l4-delay-req",
    "ptpv2-l2-event",
    "ptpv2-l2-sync",
    "ptpv2-l2-delay-req",
    "ptpv2-event",
    "ptpv2-sync",
    "ptpv2-delay-req",
    "ntp-all",
];

/// `tx on, rx all` for a TX type and an RX filter (a value without a name
/// shows as its number).
pub fn describe(tx_type: i32, rx_filter: i32) -> String {
    let name = |v: i32, names: &[&str]| {
        usize::try_from(v)
            .ok()
            .and_then(|i| names.get(i))
            .map_or_else(|| v.to_string(), |n| n.to_string())
    };
    format!(
        "tx {}, rx {}",
        name(tx_type, &TX_TYPES),
        name(rx_filter, &RX_FILTERS)
    )
}

/// The value of a name in `names` (`TX_TYPES` or `RX_FILTERS`), or the
/// number itself.
pub fn value_of(word: &str, names: &[&str]) -> Option<i32> {
    let word = word.trim();
    names
        .iter()
        .position(|n| *n == word)
        .map(|i| i as i32)
        .or_else(|| word.parse().ok())
}

/// Reads [`describe`]'s words back: `(tx_type, rx_filter)`.
pub fn parse(s: &str) -> Option<(i32, i32)> {
    let (tx, rx) = s.split_once(',')?;
    Some((
        value_of(tx.trim().strip_prefix("tx ")?, &TX_TYPES)?,
        value_of(rx.trim().strip_prefix("rx ")?, &RX_FILTERS)?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_back() {
        assert_eq!(describe(1, 1), "tx on, rx all");
        assert_eq!(describe(1, 12), "tx on, rx ptpv2-event");
        assert_eq!(describe(0, 99), "tx off, rx 99");
        assert_eq!(parse("tx on, rx ptpv2-l2-event"), Some((1, 9)));
        assert_eq!(parse("tx 1, rx 99"), Some((1, 99)));
        assert_eq!(parse("tx on"), None);
        assert_eq!(parse("tx sideways, rx all"), None);
    }
}
