//! `--timestamps kernel|user` of `misura rtt` and `misura reflect`: whether
//! a UDP socket asks the kernel for its RX and TX stamps.
//!
//! Kernel stamps (the default) are what the network RTT, the one-way
//! delays and the reflector's follow-ups are made of. They cost each end
//! about a µs per datagram on a small VM (the send clones the packet onto
//! the error queue, the receive carries one more control message, and the
//! reflector reads its TX stamp back). `user` gives that up: only user
//! clock readings remain, as in sockperf or ping -U, for a user who wants
//! the cheapest round trip and needs nothing finer than the user RTT.

use anyhow::Result;
use clap::ValueEnum;
use misura_sys::packet::TimestampingGranted;
use misura_sys::udp::UdpTsSocket;

/// Which clock stamps a UDP socket's datagrams.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Timestamps {
    /// The kernel's software (or the NIC's) RX and TX stamps.
    #[default]
    Kernel,
    /// The user clock only: no kernel stamps, no follow-ups.
    User,
}

/// Turns on what `mode` asks for and the control messages either way (the
/// TTL and pktinfo ones only when `receive_info`: a reader that uses
/// them); says what the kernel granted.
pub fn enable(
    sock: &UdpTsSocket,
    mode: Timestamps,
    receive_info: bool,
) -> Result<TimestampingGranted> {
    let granted = match mode {
        Timestamps::Kernel => sock.enable_stamps(false)?,
        Timestamps::User => TimestampingGranted::NONE,
    };
    sock.enable_control_messages(receive_info)?;
    Ok(granted)
}
