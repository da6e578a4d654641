//! What a trial sends: flows (one for RFC 2544, up to eight Y.1564
//! services), each a rate, its frame sizes and an optional 802.1Q tag, and
//! the pre-built frames the loop copies and patches.

use crate::error::EngineError;
use misura_measure::time::Instant;
use misura_wire::probe::{self, ProbeFlags, ProbeHeader, ProbeRepr};
use misura_wire::{EthernetRepr, MacAddr, VlanTag};

/// One flow of a trial.
#[derive(Clone, Debug, PartialEq)]
pub struct Flow {
    /// Offered frames per second, all cores together.
    pub rate_fps: f64,
    /// Payload sizes P (misura's header included), cycled frame by frame.
    pub payloads: Vec<usize>,
    /// 802.1Q tag (VLAN id and PCP) on every frame of the flow.
    pub vlan: Option<VlanTag>,
}

/// A flow's frames, built once: one per payload size.
#[derive(Clone, Debug)]
pub struct FlowTemplate {
    pub frames: Vec<Vec<u8>>,
    /// Where the probe header starts in each frame.
    pub header_at: usize,
    /// Where the PTPv2 Sync header starts, when the frames travel inside
    /// PTP (its sequenceId follows the probe's).
    pub ptp_at: Option<usize>,
}

/// Smallest payload P inside PTP: the Sync header and misura's header (a
/// 102-byte frame with FCS).
pub const PTP_MIN_PAYLOAD: usize = misura_wire::ptp::SYNC_LEN + probe::HEADER_LEN;

impl FlowTemplate {
    /// Frames from `src` to `dst` for `flow`, sent as `stream` of `session`.
    pub fn build(
        flow: &Flow,
        dst: MacAddr,
        src: MacAddr,
        ethertype: u16,
        session_id: u32,
        stream: u16,
    ) -> Result<FlowTemplate, EngineError> {
        if flow.payloads.is_empty() {
            return Err(EngineError::Flow {
                why: "a flow needs at least one frame size".into(),
            });
        }
        let eth = EthernetRepr {
            dst,
            src,
            vlan: flow.vlan,
            ethertype,
        };
        let ptp = ethertype == misura_wire::ptp::ETHERTYPE_PTP;
        let envelope = if ptp { misura_wire::ptp::SYNC_LEN } else { 0 };
        let mut frames = Vec::with_capacity(flow.payloads.len());
        for (i, &p) in flow.payloads.iter().enumerate() {
            if ptp && p < PTP_MIN_PAYLOAD {
                return Err(EngineError::PtpFrameTooSmall {
                    frame: p + eth.header_len() + 4,
                    min: PTP_MIN_PAYLOAD + eth.header_len() + 4,
                });
            }
            let repr = ProbeRepr {
                flags: ProbeFlags::SENDER_TIMESTAMP,
                payload_len: (p - envelope) as u16,
                session_id,
                stream,
                size_index: i as u16,
                seq: 0,
                sender_timestamp: 0,
                aux_timestamp: 0,
            };
            let mut buf =
                vec![0u8; (eth.header_len() + p).max(misura_wire::ethernet::MIN_FRAME_LEN)];
            let n = if ptp {
                misura_wire::ptp::emit_ptp_frame(&eth, &repr, &mut buf)
            } else {
                probe::emit_frame(&eth, &repr, &mut buf)
            }
            .map_err(EngineError::Frame)?;
            buf.truncate(n);
            frames.push(buf);
        }
        Ok(FlowTemplate {
            frames,
            header_at: eth.header_len() + envelope,
            ptp_at: ptp.then(|| eth.header_len()),
        })
    }

    /// Write frame `i` (size index `i % sizes`) with `seq` and sender time
    /// `now` into `buf`; the frame's length, or 0 if `buf` is too short.
    #[inline]
    pub fn write(&self, i: u64, seq: u64, now: Instant, buf: &mut [u8]) -> usize {
        let f = &self.frames[(i % self.frames.len() as u64) as usize];
        let Some(dst) = buf.get_mut(..f.len()) else {
            return 0;
        };
        dst.copy_from_slice(f);
        let mut h = ProbeHeader::new_unchecked(&mut dst[self.header_at..]);
        h.set_seq(seq);
        h.set_sender_timestamp(now.as_ns() as u64);
        if let Some(at) = self.ptp_at {
            misura_wire::ptp::set_sequence(&mut dst[at..self.header_at], seq);
        }
        f.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_carry_their_stream_sequence_and_sender_time() {
        let flow = Flow {
            rate_fps: 1000.0,
            payloads: vec![46, 100],
            vlan: None,
        };
        let mac = MacAddr([2, 0, 0, 0, 0, 1]);
        let t = FlowTemplate::build(&flow, mac, mac, 0x88B5, 7, 0x123).unwrap();
        let mut buf = [0u8; 256];
        let n = t.write(1, 42, Instant::from_ns(1_000), &mut buf);
        assert_eq!(n, 14 + 100);
        let (_, p) = probe::parse_frame(&buf[..n], 0x88B5).unwrap();
        assert_eq!(
            (p.stream, p.seq, p.sender_timestamp, p.session_id),
            (0x123, 42, 1_000, 7)
        );
        assert_eq!(p.size_index, 1);
        // A buffer too short is refused, not overrun.
        assert_eq!(t.write(1, 0, Instant::from_ns(0), &mut buf[..50]), 0);
    }

    #[test]
    fn ptp_wrapped_frames_keep_their_size_and_carry_the_probe_after_a_sync() {
        let flow = Flow {
            rate_fps: 1000.0,
            payloads: vec![PTP_MIN_PAYLOAD, 200],
            vlan: None,
        };
        let mac = MacAddr([2, 0, 0, 0, 0, 1]);
        let pt = misura_wire::ptp::ETHERTYPE_PTP;
        let t = FlowTemplate::build(&flow, mac, mac, pt, 7, 0x123).unwrap();
        let mut buf = [0u8; 256];
        let n = t.write(1, 0x1_0005, Instant::from_ns(99), &mut buf);
        assert_eq!(n, 14 + 200, "the frame's size is the one asked for");
        let rest = misura_wire::ptp::strip_misura_sync(&buf[14..n]).unwrap();
        let h = ProbeHeader::new_checked(rest).unwrap();
        assert_eq!(
            (h.stream(), h.seq(), h.sender_timestamp()),
            (0x123, 0x1_0005, 99)
        );
        // The Sync's sequenceId follows the probe's, modulo 2^16.
        assert_eq!(&buf[14 + 30..14 + 32], &[0, 5]);
        // Too small a frame for the envelope is refused, naming the bound.
        let small = Flow {
            payloads: vec![46],
            ..flow
        };
        let e = FlowTemplate::build(&small, mac, mac, pt, 7, 1)
            .unwrap_err()
            .to_string();
        assert!(e.contains("102 bytes"), "{e}");
    }
}
