//! The values of a sweepable flag, typed once as the binary parses it: one value (the same
//! in every run), a list `a,b,c`, a range `1..12`, or both `1..4,8,16`;
//! and choosing the one flag a sweep varies.

use crate::error::Refusal;
use std::fmt::Display;
use std::str::FromStr;

/// The most values one range may give.
const MAX_RANGE: u64 = 10_000;

/// A sweepable flag's values, in the order given, each parsed as the
/// flag's own type (so each keeps the text the user wrote).
#[derive(Clone, Debug, PartialEq)]
pub struct ValueList<T>(Vec<T>);

impl<T> ValueList<T> {
    pub fn values(&self) -> &[T] {
        &self.0
    }

    /// The first value: the one of the base plan.
    pub fn first(&self) -> &T {
        &self.0[0]
    }
}

/// A list of values that does not parse (a usage slip); it names no flag,
/// and a parser (clap's) adds the flag's.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ValuesError {
    #[error("`{item}` is not a range: write e.g. 1..12")]
    Range { item: String },
    #[error("`{list}` lists no values")]
    Empty { list: String },
    /// One value that its type refused, in the type's words (with the
    /// value in front when they do not quote it).
    #[error("{}", if error.contains(value.as_str()) { error.clone() } else { format!("`{value}`: {error}") })]
    Value { value: String, error: String },
}

impl<T: FromStr> FromStr for ValueList<T>
where
    T::Err: Display,
{
    type Err = ValuesError;

    fn from_str(s: &str) -> Result<Self, ValuesError> {
        let values = expand(s)?
            .iter()
            .map(|v| {
                v.parse::<T>().map_err(|e| ValuesError::Value {
                    value: v.clone(),
                    error: e.to_string(),
                })
            })
            .collect::<Result<Vec<T>, ValuesError>>()?;
        Ok(ValueList(values))
    }
}

/// "10,100", "1..4,8" → the values' texts, in order (a range's are its
/// integers, inclusive).
pub fn expand(list: &str) -> Result<Vec<String>, ValuesError> {
    let mut out = Vec::new();
    for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        if let Some((a, b)) = item.split_once("..") {
            let (a, b): (u64, u64) = match (a.trim().parse(), b.trim().parse()) {
                (Ok(a), Ok(b)) if a <= b && b - a < MAX_RANGE => (a, b),
                _ => {
                    return Err(ValuesError::Range {
                        item: item.to_string(),
                    })
                }
            };
            out.extend((a..=b).map(|v| v.to_string()));
        } else {
            out.push(item.to_string());
        }
    }
    if out.is_empty() {
        return Err(ValuesError::Empty {
            list: list.to_string(),
        });
    }
    Ok(out)
}

/// A value that is neither on nor off.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("`{value}` is neither on nor off: the sweep goes over on,off")]
pub struct NotOnOff {
    pub value: String,
}

/// The no-delay option's values in a sweep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnOff {
    On,
    Off,
}

impl OnOff {
    pub fn on(self) -> bool {
        self == OnOff::On
    }
}

impl FromStr for OnOff {
    type Err = NotOnOff;
    fn from_str(s: &str) -> Result<OnOff, NotOnOff> {
        match s.trim() {
            "on" => Ok(OnOff::On),
            "off" => Ok(OnOff::Off),
            _ => Err(NotOnOff {
                value: s.to_string(),
            }),
        }
    }
}

impl Display for OnOff {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.on() { "on" } else { "off" })
    }
}

/// A sweepable flag's name and its values as the test's knobs.
pub struct Knobs<K> {
    pub flag: &'static str,
    pub values: Vec<K>,
}

impl<K> Knobs<K> {
    /// The values of a flag, each made the test's knob by `knob`.
    pub fn of<T: Clone>(
        flag: &'static str,
        list: Option<&ValueList<T>>,
        knob: fn(T) -> K,
    ) -> Knobs<K> {
        Knobs {
            flag,
            values: list.map_or(vec![], |l| l.values().iter().cloned().map(knob).collect()),
        }
    }
}

/// The flag a sweep varies: the only one given more than one value.
pub fn the_swept<K>(flags: Vec<Knobs<K>>) -> Result<Knobs<K>, Refusal> {
    let parameters: Vec<&'static str> = flags.iter().map(|k| k.flag).collect();
    let mut swept: Vec<Knobs<K>> = flags.into_iter().filter(|k| k.values.len() > 1).collect();
    match swept.len() {
        1 => Ok(swept.remove(0)),
        0 => Err(Refusal::NothingSwept { parameters }),
        _ => Err(Refusal::SeveralSwept {
            parameters: swept.iter().map(|k| k.flag).collect(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use misura_cli::units::ByteSize;

    fn v(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn lists_and_ranges() {
        assert_eq!(expand("10,100,1000").unwrap(), v(&["10", "100", "1000"]));
        assert_eq!(expand("1..4,8").unwrap(), v(&["1", "2", "3", "4", "8"]));
        assert_eq!(expand("5").unwrap(), v(&["5"]));
        assert_eq!(expand(" 3..3 , 7").unwrap(), v(&["3", "7"]));
        assert!(expand("4..1").is_err());
        assert!(expand("1..x").is_err());
        assert!(expand("0..10000").is_err(), "too many values");
        assert!(expand(",").is_err());
    }

    #[test]
    fn values_are_typed_and_keep_their_text() {
        let l: ValueList<ByteSize> = "64K,1..2".parse().unwrap();
        let bytes: Vec<u64> = l.values().iter().map(|b| b.bytes).collect();
        assert_eq!(bytes, [65536, 1, 2]);
        assert_eq!(l.first().to_string(), "64K");
        let n: ValueList<u32> = "1..3".parse().unwrap();
        assert_eq!(n.values(), [1, 2, 3]);
        let e = "1,x".parse::<ValueList<u32>>().unwrap_err().to_string();
        assert!(e.starts_with("`x`: "), "{e}");
        let e = "1,lots"
            .parse::<ValueList<ByteSize>>()
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("`lots` is not a size"), "{e}");
        let o: ValueList<OnOff> = "on,off".parse().unwrap();
        assert_eq!(o.values(), [OnOff::On, OnOff::Off]);
        assert_eq!(o.values()[1].to_string(), "off");
        assert!("on,maybe".parse::<ValueList<OnOff>>().is_err());
    }

    #[test]
    fn exactly_one_flag_is_swept() {
        let list = |s: &str| s.parse::<ValueList<u32>>().unwrap();
        let (a, b, c) = (list("1,2"), list("7"), list("1..3"));
        let pick = |lists: [(&'static str, Option<&ValueList<u32>>); 3]| {
            the_swept(
                lists
                    .into_iter()
                    .map(|(f, l)| Knobs::of(f, l, |n| n))
                    .collect(),
            )
        };
        let one = pick([
            ("streams", Some(&a)),
            ("clients", Some(&b)),
            ("burst", None),
        ])
        .unwrap();
        assert_eq!((one.flag, one.values), ("streams", vec![1, 2]));
        let none = pick([
            ("streams", Some(&b)),
            ("clients", Some(&b)),
            ("burst", None),
        ]);
        assert_eq!(
            none.err(),
            Some(Refusal::NothingSwept {
                parameters: vec!["streams", "clients", "burst"]
            })
        );
        let two = pick([
            ("streams", Some(&a)),
            ("clients", None),
            ("burst", Some(&c)),
        ]);
        assert_eq!(
            two.err(),
            Some(Refusal::SeveralSwept {
                parameters: vec!["streams", "burst"]
            })
        );
    }
}
