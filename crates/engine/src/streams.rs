//! Which probe `stream` each (flow, core) pair sends with.

/// Probe `stream` of the first load flow; flow `f` on core `c` sends with
/// stream `LOAD_STREAM_BASE + f * MAX_CORES + c`, so each (flow, core) pair
/// has its own sequence numbers and per-core counts merge exactly. Stream 0
/// is the latency stream (`oneway_session::MEASURE_STREAM`), 0xFFFF warm-up.
pub const LOAD_STREAM_BASE: u16 = 0x100;
/// Most cores one trial spreads over.
pub const MAX_CORES: usize = 16;
/// Most flows (Y.1564 services) in one trial.
pub const MAX_FLOWS: usize = 8;

/// The stream id of flow `flow` on core `core`.
pub fn stream_id(flow: usize, core: usize) -> u16 {
    LOAD_STREAM_BASE + (flow * MAX_CORES + core) as u16
}

/// The (flow, core) of a load stream id, if it is one.
pub fn flow_core(stream: u16) -> Option<(usize, usize)> {
    let i = stream.checked_sub(LOAD_STREAM_BASE)? as usize;
    let (flow, core) = (i / MAX_CORES, i % MAX_CORES);
    (flow < MAX_FLOWS).then_some((flow, core))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_ids_round_trip_and_never_meet_the_latency_or_warmup_streams() {
        for f in 0..MAX_FLOWS {
            for c in 0..MAX_CORES {
                let s = stream_id(f, c);
                assert_ne!(s, misura_measure::oneway_session::MEASURE_STREAM);
                assert_ne!(s, misura_measure::oneway_session::WARMUP_STREAM);
                assert_eq!(flow_core(s), Some((f, c)));
            }
        }
        assert_eq!(flow_core(0), None);
        assert_eq!(flow_core(0xFFFF), None);
    }
}
