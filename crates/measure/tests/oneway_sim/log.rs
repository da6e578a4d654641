//! What the simulation saw: every frame sent, delivered and stamped.

use super::Stray;
use misura_measure::oneway_session::{OnewayCounters, OnewayPlan, Received};
use misura_measure::{Arrival, FrameRecord, TxStampMatch};

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum What {
    Probe(u64),
    Stray(Stray),
}

/// One sent frame as the simulation saw it.
#[derive(Clone, Debug, Default)]
pub struct FrameTruth {
    pub size_index: usize,
    /// The `now` of the `poll_transmit` that handed it out.
    pub polled_at: i64,
    pub tx1: i64,
    pub tx2: i64,
    pub depart_true: i64,
    pub depart_host: i64,
    pub dropped: bool,
    pub reordered_by_sut: bool,
    pub late_by_sut: bool,
    pub copies: u32,
    pub stamp_withheld: bool,
    /// A second stamp (a bridge port's) was queued.
    pub stamped_again: bool,
    /// Clock steps applied before it was sent.
    pub steps_before: usize,
    pub sent_iter: u64,
    pub released_iter: Option<u64>,
}

/// One frame handed to `handle_received`.
#[derive(Clone, Debug)]
pub struct Delivery {
    pub iter: u64,
    pub what: What,
    pub arrive_true: i64,
    pub arrive_host: i64,
    /// The host time of the last empty poll before it.
    pub last_empty: i64,
    pub rx2: i64,
    pub steps_before: usize,
    pub result: Received,
}

/// One TX stamp handed to `handle_tx_stamp`.
#[derive(Clone, Debug)]
pub struct StampRead {
    pub iter: u64,
    pub seq: Option<u64>,
    pub software: Option<i64>,
    pub result: TxStampMatch,
}

/// Everything that happened in one run.
pub struct Outcome {
    pub plan: OnewayPlan,
    pub started_host: i64,
    pub counters: OnewayCounters,
    pub records: Vec<FrameRecord>,
    pub frames: Vec<FrameTruth>,
    pub deliveries: Vec<Delivery>,
    pub stamps: Vec<StampRead>,
    pub send_refusals: u64,
    pub was_stopped: bool,
    /// Host time at which the stop flag was read.
    pub stopped_at: Option<i64>,
    pub end_true: i64,
    pub end_host: i64,
    /// Turns in which `poll_transmit` met a full ring while frames were due.
    pub full_turns: u64,
    /// After a stall or a clock step following frame `k`: `(k, host time
    /// of the next poll)`.
    pub disruptions: Vec<(u64, i64)>,
    /// Stamps still on the error queue at the end.
    pub unread_stamps: usize,
    /// The `now` of the turn in which the session said it was finished.
    pub finished_at: i64,
}

impl Outcome {
    /// Sequence numbers of the records marked lost.
    pub fn lost(&self) -> Vec<u64> {
        self.records
            .iter()
            .filter(|r| r.lost)
            .map(|r| r.seq)
            .collect()
    }

    /// Deliveries of measured probes whose result was `a`.
    pub fn arrivals(&self, a: Arrival) -> u64 {
        let hit = |d: &&Delivery| d.result == Received::Probe(a);
        self.deliveries.iter().filter(hit).count() as u64
    }

    /// The first schedule slot: the session's start plus the start delay.
    pub fn first_due(&self) -> i64 {
        self.started_host + self.plan.start_delay.as_ns()
    }
}
