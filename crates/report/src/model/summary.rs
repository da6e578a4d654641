//! A latency quantity's summary and its histogram buckets, as results
//! record them: the report's own copies of `stats`'s `SummarySnapshot` and
//! `Bucket`, converted with `From`, so that a change inside `stats` cannot
//! change the JSON.

use serde::{Deserialize, Serialize};

/// One histogram bucket covering the half-open interval `[lower_ns, upper_ns)`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bucket {
    /// Inclusive lower bound (ns).
    pub lower_ns: i64,
    /// Exclusive upper bound (ns).
    pub upper_ns: i64,
    /// Number of values in the bucket.
    pub count: u64,
}

/// The summary of the values of one quantity: count, extremes, moments and
/// percentiles.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SummarySnapshot {
    /// Number of values recorded (exact).
    pub count: u64,
    /// Smallest value (exact).
    pub min_ns: Option<i64>,
    /// Largest value (exact).
    pub max_ns: Option<i64>,
    /// Arithmetic mean.
    pub mean_ns: Option<f64>,
    /// Sample standard deviation (n − 1 denominator); `None` below 2 values.
    pub std_dev_ns: Option<f64>,
    /// 50th percentile (nearest rank, HDR precision).
    pub median_ns: Option<i64>,
    /// 90th percentile.
    pub p90_ns: Option<i64>,
    /// 99th percentile.
    pub p99_ns: Option<i64>,
    /// 99.9th percentile.
    pub p999_ns: Option<i64>,
    /// Mean minus minimum: how far the typical value sits above the best
    /// case, a measure of the queueing/scheduling noise on top of the floor.
    pub mean_minus_min_ns: Option<f64>,
    /// The threshold used for [`SummarySnapshot::over_threshold`], if any.
    pub threshold_ns: Option<i64>,
    /// Number of values strictly greater than the threshold.
    pub over_threshold: u64,
    /// Number of values whose magnitude exceeded the histograms' range and
    /// were clamped for the percentiles.
    pub clamped: u64,
}

same_fields!(Bucket from misura_stats::Bucket { lower_ns, upper_ns, count });

/// A result's bucket, for `stats` to pool with others of the same run.
impl From<&Bucket> for misura_stats::Bucket {
    fn from(b: &Bucket) -> misura_stats::Bucket {
        misura_stats::Bucket {
            lower_ns: b.lower_ns,
            upper_ns: b.upper_ns,
            count: b.count,
        }
    }
}

/// The buckets of a `stats` histogram as a result records them.
pub fn buckets(list: Vec<misura_stats::Bucket>) -> Vec<Bucket> {
    list.into_iter().map(Bucket::from).collect()
}

/// Bucket lists of several groups of one run pooled into one, as `stats`
/// pools them ([`misura_stats::pool_buckets`]: exact for HDR buckets).
pub fn pool_buckets<'a>(lists: impl IntoIterator<Item = &'a Bucket>) -> Vec<Bucket> {
    let all: Vec<misura_stats::Bucket> = lists.into_iter().map(Into::into).collect();
    buckets(misura_stats::pool_buckets(&all))
}

same_fields!(SummarySnapshot from misura_stats::SummarySnapshot {
    count, min_ns, max_ns, mean_ns, std_dev_ns, median_ns, p90_ns, p99_ns, p999_ns, mean_minus_min_ns,
    threshold_ns, over_threshold, clamped,
});
