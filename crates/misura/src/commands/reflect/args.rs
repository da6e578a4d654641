//! Flags of `misura reflect`.

use crate::shared::units::{DurationArg, Ethertype, ListenAddr};
use clap::Args;
use misura_rtt::reflect::{Listen, ReflectRequest};
use std::net::IpAddr;

/// Flags of `misura reflect`.
#[derive(Args, Debug, Clone)]
pub struct ReflectArgs {
    /// Address and UDP port to listen on, ADDR[:PORT] (IPv4 or IPv6; `::`
    /// listens on IPv6 only; RFC 8762 assigns port 862, the default; below
    /// 1024 needs root), e.g. 198.18.0.2:862 or [::1]:8620.
    #[arg(long, default_value = "0.0.0.0", value_name = "ADDR[:PORT]")]
    pub listen: ListenAddr,
    /// The UDP port, as --listen ADDR:PORT gives it (the older form, kept).
    #[arg(long, hide = true)]
    pub port: Option<u16>,
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
    /// Raw probes (--l2) to answer: misura (--ethertype), ptp (after a
    /// PTPv2 Sync header, EtherType 0x88F7, for a NIC that stamps only PTP
    /// event messages) or auto (both, each reply in its request's format).
    #[arg(long, value_enum, default_value = "auto", value_name = "FORMAT")]
    pub frame_format: crate::shared::common_flags::FrameFormatFlag,
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
    pub timestamps: crate::shared::common_flags::TimestampsFlag,
    /// The interface whose NIC stamps requests and replies in hardware
    /// (SIOCSHWTSTAMP, device-wide); default: the one holding --listen's
    /// address (none for a wildcard), or --l2's.
    #[arg(long, value_name = "IF")]
    pub interface: Option<String>,
    /// Answer `irtt client` (irtt's protocol, version 1 as in irtt 0.9)
    /// instead of STAMP, on this UDP port (default irtt's 2112) of
    /// --listen's address; --rate-limit and --max-sources bound it.
    #[arg(long, value_name = "PORT", num_args = 0..=1, default_missing_value = "2112")]
    pub irtt: Option<u16>,
    /// With --irtt: irtt's HMAC-MD5 key, as `irtt client --hmac=KEY` gives it
    /// (at most 1024 bytes); requests without it (or with another) are dropped.
    #[arg(long, value_name = "KEY", requires = "irtt")]
    pub irtt_hmac: Option<String>,
    #[command(flatten)]
    pub out: crate::shared::output::OutputArgs,
    #[command(flatten)]
    pub ns: crate::shared::common_flags::NetnsArgs,
}

impl ReflectArgs {
    /// The address `--listen` names (every IPv4 address for `:PORT`).
    pub fn ip(&self) -> IpAddr {
        self.listen.ip.unwrap_or(IpAddr::from([0, 0, 0, 0]))
    }

    /// The port: `--listen`'s, else `--port`'s, else 862.
    pub fn port(&self) -> u16 {
        self.listen.port.or(self.port).unwrap_or(862)
    }

    /// The STAMP reflector's request, the flags' values as given.
    pub fn request(&self) -> ReflectRequest {
        ReflectRequest {
            listen: match &self.l2 {
                Some(interface) => Listen::L2 {
                    interface: interface.clone(),
                    ethertype: self.ethertype.value,
                },
                None => Listen::Udp {
                    ip: self.ip(),
                    port: self.port(),
                },
            },
            frame_format: self.frame_format.into(),
            key_file: self.key_file.clone(),
            stateful: self.stateful,
            rate_limit: self.rate_limit,
            max_sources: self.max_sources,
            duration: self.duration.as_ref().map(|d| d.std()),
            cpu: self.cpu,
            busy_poll: self.busy_poll,
            timestamps: self.timestamps.into(),
            interface: self.interface.clone(),
            netns: self.ns.netns.clone(),
        }
    }

    /// `--irtt PORT`'s request, the flags' values as given.
    pub fn irtt_request(&self, port: u16) -> misura_irtt::reflect::ReflectRequest {
        misura_irtt::reflect::ReflectRequest {
            ip: self.ip(),
            port,
            key: self.irtt_hmac.as_ref().map(|k| k.as_bytes().to_vec()),
            max_sessions: self.max_sources,
            rate_limit: self.rate_limit,
            duration: self.duration.as_ref().map(|d| d.span()),
            stamp_options: self.l2.is_some() || self.key_file.is_some() || self.stateful,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        a: ReflectArgs,
    }

    #[test]
    fn listen_names_the_port_as_the_agent_does_and_port_still_works() {
        let a = |v: &[&str]| Cli::try_parse_from([&["x"], v].concat()).unwrap().a;
        let d = a(&[]);
        assert_eq!((d.ip().to_string(), d.port()), ("0.0.0.0".into(), 862));
        let l = a(&["--listen", "[::1]:8620"]);
        assert_eq!((l.ip().to_string(), l.port()), ("::1".into(), 8620));
        let old = a(&["--listen", "198.18.0.2", "--port", "8621"]);
        assert_eq!(
            (old.ip().to_string(), old.port()),
            ("198.18.0.2".into(), 8621)
        );
        let e = Cli::try_parse_from(["x", "--listen", "localhost"])
            .err()
            .unwrap();
        assert!(e.to_string().contains("is not ADDR or ADDR:PORT"), "{e}");
    }
}
