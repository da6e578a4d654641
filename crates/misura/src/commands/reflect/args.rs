//! Flags of `misura reflect`.

use crate::shared::units::{DurationArg, Ethertype};
use clap::Args;
use std::net::IpAddr;

/// Flags of `misura reflect`.
#[derive(Args, Debug, Clone)]
pub struct ReflectArgs {
    /// Address to listen on (IPv4 or IPv6; `::` listens on IPv6 only).
    #[arg(long, default_value = "0.0.0.0")]
    pub listen: ListenIp,
    /// UDP port (RFC 8762 assigns 862; below 1024 needs root).
    #[arg(long, default_value_t = 862)]
    pub port: u16,
    /// Authenticated mode: HMAC-SHA-256 key file (hex on the first line, or raw bytes).
    #[arg(long, value_name = "FILE")]
    pub key_file: Option<std::path::PathBuf>,
    /// Stateful reflection: the reflector numbers its replies per session
    /// (RFC 8762 §4.3.1); default stateless (echo the sender's sequence number).
    #[arg(long)]
    pub stateful: bool,
    /// Reflect raw Ethernet probes on this interface instead of UDP.
    #[arg(long, value_name = "IF")]
    pub l2: Option<String>,
    /// Ethertype of raw probes (with --l2).
    #[arg(long, default_value = "0x88B5")]
    pub ethertype: Ethertype,
    /// Replies per second allowed per source address.
    #[arg(long, default_value_t = 10_000)]
    pub rate_limit: u64,
    /// Most sources tracked at once (bounded state).
    #[arg(long, default_value_t = 4096)]
    pub max_sources: usize,
    /// Stop after this long (e.g. 60s); default: until SIGINT/SIGTERM.
    #[arg(long)]
    pub duration: Option<DurationArg>,
    /// Pin the reflector to this CPU.
    #[arg(long)]
    pub cpu: Option<usize>,
    /// Spin on the socket instead of sleeping until a request comes, with
    /// SO_BUSY_POLL where the kernel grants it: the lowest turnaround (no
    /// wake-up inside it), one CPU at 100 %. Pin it to a CPU of its own.
    #[arg(long)]
    pub busy_poll: bool,
    /// Clock of the reflector's stamps: kernel (the default: precise RX
    /// and TX stamps, follow-ups, and the NIC's stamps where the
    /// interface has them), hardware (the NIC's, or fail), software (the
    /// kernel's only) or user (user clock only, no follow-ups; about a µs
    /// cheaper per reply, for comparing with a sockperf server; UDP only).
    #[arg(long, value_enum, default_value = "kernel", value_name = "CLOCK")]
    pub timestamps: crate::shared::stamping::Timestamps,
    /// The interface whose NIC stamps requests and replies in hardware
    /// (SIOCSHWTSTAMP, device-wide); default: the one holding --listen's
    /// address (none for a wildcard), or --l2's.
    #[arg(long, value_name = "IF")]
    pub interface: Option<String>,
    #[command(flatten)]
    pub out: crate::shared::output::OutputArgs,
    #[command(flatten)]
    pub ns: crate::shared::netns::NetnsArgs,
}

/// The address `--listen` names: an IP address, IPv6 with or without brackets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListenIp(pub IpAddr);

impl std::str::FromStr for ListenIp {
    type Err = String;
    fn from_str(s: &str) -> Result<ListenIp, String> {
        let t = s.trim().trim_start_matches('[').trim_end_matches(']');
        t.parse().map(ListenIp).map_err(|_| {
            format!("`{s}` is not an IP address: write e.g. 0.0.0.0, :: or 198.18.0.2")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listen_addresses() {
        let v6: ListenIp = "[::]".parse().unwrap();
        assert_eq!(v6.0, "::".parse::<IpAddr>().unwrap());
        assert_eq!(
            " 198.18.0.2".parse::<ListenIp>().unwrap().0,
            "198.18.0.2".parse::<IpAddr>().unwrap()
        );
        let e = "localhost".parse::<ListenIp>().unwrap_err();
        assert!(e.contains("`localhost` is not an IP address"), "{e}");
    }
}
