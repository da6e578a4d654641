//! The exchange the flags ask for, and what it refuses, typed: each
//! variant of [`PlanError`] says which knob and which bound, never a
//! flag's name (the binary writes the sentence).

use misura_measure::period::PeriodBounds;
use misura_measure::time::{Period, Span};
use misura_wire::MacAddr;

/// The shortest cycle period and timeout.
pub const MIN_PERIOD_NS: i64 = 1_000;
/// The smallest frame, destination address through FCS.
pub const MIN_FRAME: usize = 64;

/// `misura exchange`'s run, resolved from the flags once.
#[derive(Debug, Clone)]
pub struct ExchangePlan {
    /// The interface that faces the peer.
    pub interface: String,
    /// The peer's MAC address (only its frames are answered or counted).
    pub peer: MacAddr,
    /// Be the responder rather than the initiator.
    pub respond: bool,
    /// S1: trigger frame size in bytes, destination address through FCS.
    pub trigger: usize,
    /// S2: data frame size each side sends after the trigger.
    pub data: usize,
    /// Cycles (initiator).
    pub count: u64,
    pub period: Span,
    /// Give up on a cycle after this long without the peer's data frame.
    pub timeout: Span,
    /// Count phases longer than this.
    pub threshold: Span,
    pub ethertype: u16,
    /// Stop the responder after this long (`None`: until a signal).
    pub duration: Option<Span>,
    /// Responder: busy-poll instead of sleeping in poll(2) between frames.
    pub busy_poll: bool,
    /// Pin the loop to this CPU.
    pub cpu: Option<usize>,
    /// The namespace the run is in, for the report.
    pub netns: Option<String>,
}

/// A duration knob of the plan, for [`PlanError::TooShort`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Knob {
    Period,
    Timeout,
}

/// One of the exchange's two frame sizes, for [`PlanError::FrameSize`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frame {
    Trigger,
    Data,
}

/// Why the plan cannot run.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PlanError {
    /// The cycle period or timeout is zero or under `min`.
    #[error("{knob:?} is under {} ns", min.as_ns())]
    TooShort { knob: Knob, min: Span },
    /// A frame size outside 64 bytes to the interface's MTU plus header
    /// and FCS (`max`).
    #[error("{frame:?} frame of {bytes} B: frames on {interface} run from 64 to {max} B")]
    FrameSize {
        frame: Frame,
        bytes: usize,
        max: usize,
        interface: String,
    },
}

impl ExchangePlan {
    /// The timing's bounds, checked before anything is opened.
    pub fn check(&self) -> Result<(), PlanError> {
        for (knob, span) in [(Knob::Period, self.period), (Knob::Timeout, self.timeout)] {
            let bounds = PeriodBounds {
                min: Span::from_ns(MIN_PERIOD_NS),
                max: Span::MAX,
            };
            Period::within(span, bounds).map_err(|_| PlanError::TooShort {
                knob,
                min: Span::from_ns(MIN_PERIOD_NS),
            })?;
        }
        Ok(())
    }

    /// The frame sizes against the largest frame the interface carries.
    pub fn check_frames(&self, max_frame: usize) -> Result<(), PlanError> {
        for (frame, bytes) in [(Frame::Trigger, self.trigger), (Frame::Data, self.data)] {
            if !(MIN_FRAME..=max_frame).contains(&bytes) {
                return Err(PlanError::FrameSize {
                    frame,
                    bytes,
                    max: max_frame,
                    interface: self.interface.clone(),
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan() -> ExchangePlan {
        ExchangePlan {
            interface: "eth0".into(),
            peer: MacAddr([2, 0, 0, 0, 0, 1]),
            respond: false,
            trigger: 64,
            data: 530,
            count: 10,
            period: Span::from_millis(4),
            timeout: Span::from_millis(5),
            threshold: Span::from_ns(30_000),
            ethertype: 0x88b5,
            duration: None,
            busy_poll: false,
            cpu: None,
            netns: None,
        }
    }

    #[test]
    fn the_period_is_checked_before_the_timeout() {
        assert_eq!(plan().check(), Ok(()));
        let p = ExchangePlan {
            period: Span::ZERO,
            timeout: Span::from_ns(1),
            ..plan()
        };
        let short = |knob| PlanError::TooShort {
            knob,
            min: Span::from_ns(1_000),
        };
        assert_eq!(p.check(), Err(short(Knob::Period)));
        let p = ExchangePlan {
            timeout: Span::from_ns(999),
            ..plan()
        };
        assert_eq!(p.check(), Err(short(Knob::Timeout)));
    }

    #[test]
    fn frames_run_from_64_bytes_to_the_largest_the_interface_carries() {
        assert_eq!(plan().check_frames(1518), Ok(()));
        let p = ExchangePlan {
            trigger: 63,
            data: 2000,
            ..plan()
        };
        let e = p.check_frames(1518).unwrap_err();
        assert!(matches!(
            e,
            PlanError::FrameSize {
                frame: Frame::Trigger,
                bytes: 63,
                max: 1518,
                ..
            }
        ));
        let p = ExchangePlan {
            data: 1519,
            ..plan()
        };
        let e = p.check_frames(1518).unwrap_err();
        assert!(matches!(
            e,
            PlanError::FrameSize {
                frame: Frame::Data,
                bytes: 1519,
                ..
            }
        ));
    }
}
