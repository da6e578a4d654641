//! A sweep resolved into one checked plan per value, and the small sums
//! the per-test sweeps make of their runs.

use super::values::Knobs;
use crate::client::ClientPlan;
use crate::error::{Class, Refusal};
use std::fmt::Display;

/// A sweep, resolved: the swept flag and one checked plan per value.
pub struct Series<P> {
    /// The swept flag's long name ("msg-size").
    pub parameter: &'static str,
    /// Each value as the user wrote it, with its plan.
    pub points: Vec<(String, P)>,
}

impl<P> Series<P> {
    /// The plan of every value of `swept`: `base` varied by `vary`, which
    /// checks it.
    pub fn new<K: Display>(
        base: P,
        swept: Knobs<K>,
        vary: fn(&P, &K) -> Result<P, Refusal>,
    ) -> Result<Series<P>, Refusal> {
        let points = swept
            .values
            .iter()
            .map(|k| match vary(&base, k) {
                Ok(p) => Ok((k.to_string(), p)),
                Err(why) if why.class() == Class::Params => Err(Refusal::SweepRun {
                    parameter: swept.flag,
                    value: k.to_string(),
                    why: Box::new(why),
                }),
                Err(e) => Err(e),
            })
            .collect::<Result<Vec<_>, Refusal>>()?;
        Ok(Series {
            parameter: swept.flag,
            points,
        })
    }
}

/// The client part of a sweep's runs (`--clients` at its first value):
/// quiet, as a run of a sweep prints no progress of its own.
pub fn runs_client(mut p: ClientPlan) -> ClientPlan {
    p.quiet = true;
    p
}

pub fn mean(it: impl Iterator<Item = f64>) -> Option<f64> {
    let v: Vec<f64> = it.collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

pub fn sum_opt(it: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    it.sum()
}
