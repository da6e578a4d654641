//! What a trial sends: flows (one for RFC 2544, up to eight Y.1564
//! services), each a rate, its frame sizes and an optional 802.1Q tag, and
//! the pre-built frames the loop copies and patches.

use anyhow::{bail, Context, Result};
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
}

impl FlowTemplate {
    /// Frames from `src` to `dst` for `flow`, sent as `stream` of `session`.
    pub fn build(
        flow: &Flow,
        dst: MacAddr,
        src: MacAddr,
        ethertype: u16,
        session_id: u32,
        stream: u16,
    ) -> Result<FlowTemplate> {
        if flow.payloads.is_empty() {
            bail!("a flow needs at least one frame size");
        }
        let eth = EthernetRepr {
            dst,
            src,
            vlan: flow.vlan,
            ethertype,
        };
        let mut frames = Vec::with_capacity(flow.payloads.len());
        for (i, &p) in flow.payloads.iter().enumerate() {
            let repr = ProbeRepr {
                flags: ProbeFlags::SENDER_TIMESTAMP,
                payload_len: p as u16,
                session_id,
                stream,
                size_index: i as u16,
                seq: 0,
                sender_timestamp: 0,
                aux_timestamp: 0,
            };
            let mut buf =
                vec![0u8; (eth.header_len() + p).max(misura_wire::ethernet::MIN_FRAME_LEN)];
            let n = probe::emit_frame(&eth, &repr, &mut buf).context("building a load frame")?;
            buf.truncate(n);
            frames.push(buf);
        }
        Ok(FlowTemplate {
            frames,
            header_at: eth.header_len(),
        })
    }

    /// Write frame `i` (size index `i % sizes`) with `seq` and sender time
    /// `now` into `buf`; the frame's length, or 0 if `buf` is too short.
    #[inline]
    pub fn write(&self, i: u64, seq: u64, now: i64, buf: &mut [u8]) -> usize {
        let f = &self.frames[(i % self.frames.len() as u64) as usize];
        let Some(dst) = buf.get_mut(..f.len()) else {
            return 0;
        };
        dst.copy_from_slice(f);
        let mut h = ProbeHeader::new_unchecked(&mut dst[self.header_at..]);
        h.set_seq(seq);
        h.set_sender_timestamp(now as u64);
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
        let n = t.write(1, 42, 1_000, &mut buf);
        assert_eq!(n, 14 + 100);
        let (_, p) = probe::parse_frame(&buf[..n], 0x88B5).unwrap();
        assert_eq!(
            (p.stream, p.seq, p.sender_timestamp, p.session_id),
            (0x123, 42, 1_000, 7)
        );
        assert_eq!(p.size_index, 1);
        // A buffer too short is refused, not overrun.
        assert_eq!(t.write(1, 0, 0, &mut buf[..50]), 0);
    }
}
