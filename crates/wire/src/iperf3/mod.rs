//! iperf3's control protocol (esnet/iperf, as Debian's 3.12 speaks it, and
//! 3.13–3.19 where they differ): a pure codec of its messages and the order
//! they come in. Nothing here opens a socket or reads a clock; the client and
//! server that use it are `misura_throughput::iperf3`'s.
//!
//! # The exchange (TCP control connection, default port 5201)
//!
//! ```text
//! client                                   server
//!   cookie (37 bytes: 36 of [a-z2-7], NUL) ->
//!                                       <- state PARAM_EXCHANGE (9)
//!   u32 BE length + parameter JSON       ->
//!                                       <- state CREATE_STREAMS (10)
//!   data connections, each to the server's port:
//!     TCP: connect, then the cookie      ->
//!     UDP: 4 bytes "9876"                ->   <- 4 bytes "6789" (UDP_CONNECT_REPLY)
//!                                       <- state TEST_START (1)
//!                                       <- state TEST_RUNNING (2)
//!   data for `time` seconds, then
//!   state TEST_END (4)                   ->
//!                                       <- state EXCHANGE_RESULTS (13)
//!   u32 BE length + results JSON         ->
//!                                       <- u32 BE length + results JSON
//!                                       <- state DISPLAY_RESULTS (14)
//!   state IPERF_DONE (16)                ->
//! ```
//!
//! A state is one signed byte. A busy server answers the cookie with
//! ACCESS_DENIED (-1); a server that fails sends SERVER_ERROR (-2) followed
//! by two u32 BE numbers (iperf3's error code and errno). Either end may
//! send SERVER_TERMINATE (11) / CLIENT_TERMINATE (12) when interrupted.
//! A TCP data connection whose cookie is not the test's is answered
//! ACCESS_DENIED and closed.
//!
//! Stream ids: iperf3 numbers its streams 1, 3, 4, 5, … (id 2 is never
//! used, kept for compatibility between its versions); the results JSON
//! names streams by these ids.
//!
//! Bounds (every length a peer gives is checked before anything is
//! allocated): a JSON message at most [`MAX_JSON_LEN`] bytes (iperf3 ≥ 3.17
//! caps the parameters at 8 KiB, 3.12 has no cap), at most
//! [`MAX_STREAMS`] streams per direction (iperf3's own limit), `time` at most
//! [`MAX_TIME_S`], a TCP block at most [`MAX_TCP_BLOCK`], a UDP block at most
//! [`MAX_UDP_BLOCK`], a window at most [`MAX_WINDOW`].
//!
//! Sources: iperf3 3.12 `src/iperf_api.c` (send_parameters, get_parameters,
//! send_results, get_results, JSON_write/JSON_read, iperf_add_stream),
//! `iperf_client_api.c` (iperf_connect, iperf_handle_message_client),
//! `iperf_server_api.c` (iperf_accept, iperf_handle_message_server),
//! `iperf_tcp.c` (the data connection's cookie), `iperf_udp.c` (the UDP
//! connect handshake and datagram header), `iperf.h` / `iperf_api.h` (the
//! constants), and 3.19's `iperf.h` (the endian-independent connect bytes,
//! MAX_PARAMS_JSON_STRING).

mod codec;
mod params;
mod results;
mod udp;

pub use codec::{
    errno, frame_json, json_len, Cookie, Iperf3Error, State, COOKIE_CHARS, COOKIE_LEN,
    DEFAULT_PORT, MAX_JSON_LEN, MAX_STREAMS, MAX_STRING, MAX_TCP_BLOCK, MAX_TIME_S, MAX_UDP_BLOCK,
    MAX_WINDOW,
};
pub use params::{Params, Protocol};
pub use results::{Results, StreamResult};
pub use udp::{
    is_connect_msg, is_connect_reply, UdpHeader, CONNECT_MSG, CONNECT_REPLY, LEGACY_CONNECT_REPLY,
    UDP_HEADER_LEN, UDP_HEADER_LEN_64,
};

#[cfg(test)]
mod tests;
