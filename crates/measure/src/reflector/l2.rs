//! misura's raw-frame STAMP reflection (`misura reflect --l2 IF`).
//!
//! A request is an Ethernet frame of misura's ethertype (default 0x88B5)
//! carrying misura's 40-byte probe header (see `misura_wire::probe`) with
//! the REPLY flag clear, followed by a whole STAMP Session-Sender packet
//! (base packet and TLVs, in the configured mode). The probe header's
//! payload_len P covers header and STAMP packet, so NIC padding of short
//! frames is not mistaken for TLVs:
//!
//! ```text
//! +----------------------+  0
//! | dst MAC | src MAC    |
//! | [VLAN tag] | 0x88B5  |  Ethernet, 14 (18) bytes
//! +----------------------+  14
//! | probe header (40)    |  magic MSRA, version, flags (REPLY = 0x04 in replies),
//! |                      |  payload_len P, session, stream, size index, seq, ts
//! +----------------------+  54
//! | STAMP Session-Sender |  44 (112 authenticated) + TLVs = P − 40 bytes
//! | packet + TLVs        |  (a Session-Reflector packet in replies)
//! +----------------------+  14 + P
//! | zero padding to 60   |  only when 14 + P < 60
//! +----------------------+
//! ```
//!
//! The reply swaps the addresses (dst = the request's source MAC, src = the
//! reflector's), keeps the VLAN tag, copies the probe header with REPLY
//! set, and carries the STAMP reply built exactly as over UDP, of the same
//! length: the reply frame is never longer than the request frame.
//!
//! PTP-wrapped requests (EtherType 0x88F7, for NICs that stamp only PTP
//! event messages; `misura_wire::ptp`) carry misura's PTPv2 Sync header
//! (domain 127) between the Ethernet header and the probe header. Their
//! reply is wrapped the same way: the request's Sync header with the
//! reflector's port identity, so it is as long as the request and the
//! sender's NIC stamps it too. Any other PTP frame (another instance's
//! Announce or Sync, a malformed header, a Sync carrying no probe) is
//! dropped and counted as [`DropReason::ForeignPtp`], never answered.

use misura_wire::ethernet::{EthernetFrame, EthernetRepr, MacAddr};
use misura_wire::probe::{self, ProbeFlags, ProbeRepr};
use misura_wire::ptp;

use super::{ClockState, Decision, DropReason, Peer, Reflector, RequestMeta};
use crate::time::Instant;

/// Frame length without FCS below which frames are padded (64 − 4).
pub const MIN_FRAME_NO_FCS: usize = 60;

/// Offset of the STAMP packet in a frame without a VLAN tag.
pub const STAMP_OFFSET: usize = misura_wire::ethernet::HEADER_LEN + misura_wire::probe::HEADER_LEN;

impl Reflector {
    /// Handles one raw frame (see [the module](self) for the format) and writes the
    /// reply frame into `out`; `Decision::Reply::len` is then the reply
    /// frame's length, never more than `frame.len()`. `meta.src` is
    /// ignored: the frame's source MAC is the peer.
    #[allow(clippy::too_many_arguments)]
    pub fn handle_l2_frame(
        &mut self,
        frame: &[u8],
        ethertype: u16,
        our_mac: MacAddr,
        meta: &RequestMeta,
        now: Instant,
        clock: &ClockState,
        out: &mut [u8],
    ) -> Decision {
        self.counters.received += 1;
        let Ok(f) = EthernetFrame::new_checked(frame) else {
            return self.drop(DropReason::TooShort);
        };
        let Ok(eth) = EthernetRepr::parse(&f) else {
            return self.drop(DropReason::TooShort);
        };
        let peer = Peer::L2(eth.src);
        if peer.is_group_or_unspecified() {
            return self.drop(DropReason::GroupSource);
        }
        let hl = eth.header_len();
        // A PTP-wrapped probe (misura_wire::ptp): only misura's Sync, in its
        // domain, carrying a probe; anything else PTP is someone else's.
        let (payload, ptp_len) = if eth.ethertype == ptp::ETHERTYPE_PTP {
            match ptp::strip_misura_sync(f.payload()) {
                Ok(inner) => (inner, f.payload().len() - inner.len()),
                Err(_) => return self.drop(DropReason::ForeignPtp),
            }
        } else if eth.ethertype != ethertype {
            return self.drop(DropReason::Malformed);
        } else {
            (f.payload(), 0)
        };
        if payload.len() < probe::HEADER_LEN {
            return self.drop(if ptp_len > 0 {
                DropReason::ForeignPtp
            } else {
                DropReason::TooShort
            });
        }
        let Ok(p) = ProbeRepr::parse(payload) else {
            return self.drop(if ptp_len > 0 {
                DropReason::ForeignPtp
            } else {
                DropReason::Malformed
            });
        };
        if p.flags.contains(ProbeFlags::REPLY) {
            return self.drop(DropReason::LooksLikeReply);
        }
        let body = &payload[probe::HEADER_LEN..usize::from(p.payload_len)];
        let reply_eth = EthernetRepr {
            dst: eth.src,
            src: our_mac,
            vlan: eth.vlan,
            ethertype: eth.ethertype,
        };
        // The probe header's offset: after the PTP message, if any.
        let ph = hl + ptp_len;
        // Padded to the 60-byte minimum as a sender's emit_frame pads, but
        // never beyond the request (a path that did not pad, such as veth).
        let frame_len = (ph + usize::from(p.payload_len))
            .max(MIN_FRAME_NO_FCS)
            .min(frame.len());
        if out.len() < frame_len {
            return self.drop(DropReason::Malformed);
        }
        let meta = RequestMeta { src: peer, ..*meta };
        // The STAMP body's checks and counters are the UDP ones.
        let start = ph + probe::HEADER_LEN;
        let d = self.reflect(body, &meta, now, clock, &mut out[start..]);
        if let Decision::Reply { reply_seq, .. } = d {
            reply_eth.emit(out).expect("a parsed header re-emits");
            if ptp_len > 0 {
                // The request's Sync header (its sequenceId and length), from
                // the reflector's port: the reply is a Sync too, so the
                // sender's NIC stamps it on receive.
                out[hl..ph].copy_from_slice(&f.payload()[..ptp_len]);
                out[hl + ptp::PORT_IDENTITY..hl + ptp::PORT_IDENTITY + 8]
                    .copy_from_slice(&ptp::clock_identity(our_mac.0));
            }
            out[ph..start].copy_from_slice(&payload[..probe::HEADER_LEN]);
            let mut flags = p.flags;
            flags.insert(ProbeFlags::REPLY);
            out[ph + 5] = flags.bits();
            let end = ph + usize::from(p.payload_len);
            out[end..frame_len].fill(0);
            return Decision::Reply {
                len: frame_len,
                reply_seq,
            };
        }
        d
    }
}
