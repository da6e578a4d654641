//! The result model: the serde types of every result misura writes, one
//! module per command, with what every result carries in `meta`. Field names
//! are the SPEC's words; all times are integer or fractional nanoseconds with
//! the unit in the name. Nothing here renders: the text, CSV and HTML forms
//! are in `text`, `csv`, `html` and `figures`.

/// `From` between a type the report owns and the method's type it stands
/// for, field by field, written once. Both sides are destructured or built
/// whole, so a field added to one and not the other does not compile.
/// `both` converts back too, for types the method takes again as input
/// (a profile's calibration line, a result's link).
macro_rules! same_fields {
    ($ours:ident from $($theirs:ident)::+ { $($f:ident),+ $(,)? }) => {
        impl From<$($theirs)::+> for $ours {
            fn from(v: $($theirs)::+) -> $ours {
                let $($theirs)::+ { $($f),+ } = v;
                $ours { $($f),+ }
            }
        }
    };
    ($ours:ident both $($theirs:ident)::+ { $($f:ident),+ $(,)? }) => {
        same_fields!($ours from $($theirs)::+ { $($f),+ });
        impl From<$ours> for $($theirs)::+ {
            fn from(v: $ours) -> $($theirs)::+ {
                let $ours { $($f),+ } = v;
                $($theirs)::+ { $($f),+ }
            }
        }
    };
}

pub mod calibration;
pub mod clock;
pub mod clock_fit;
pub mod exchange;
pub mod host;
pub mod host_facts;
pub mod load;
pub mod meta;
pub mod oneway;
pub mod pacing;
pub mod reflect;
pub mod rfc2544;
pub mod rtt;
pub mod run;
pub mod schedule;
pub mod serve;
pub mod summary;
pub mod throughput;
pub mod tsc;
pub mod under_load;
pub mod warning;
pub mod y1564;

pub use calibration::{CalibrationLine, LinearFit, SizePoint, SutVerdict};
pub use clock_fit::{ClockFit, PairFit};
pub use meta::*;
pub use oneway::*;
pub use run::{Envelope, StopReason};
pub use schedule::{LinkModel, Pattern, SizeOrder};
pub use summary::{Bucket, SummarySnapshot};
pub use warning::Warning;
