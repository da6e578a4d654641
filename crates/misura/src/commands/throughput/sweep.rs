//! `misura sweep`: run `tcp`, `udp` or `rr` once per value of one
//! parameter and tabulate the headline figures (seed 001's curves:
//! throughput against message size, socket buffer, streams, TCP_NODELAY).

use crate::commands::throughput::client;
use crate::shared::exit::Failure;
use crate::shared::output::{CsvArgs, Finished, OutputArgs, Report};
use anyhow::Result;
use clap::Parser;
use misura_report::throughput::{SweepFigures, SweepPoint, SweepReport};
use misura_report::LoopTuning;
use std::path::PathBuf;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

/// Long help for the subcommand (shown by `--help`).
pub const LONG_ABOUT: &str = "Run one test across a list or range of one parameter and tabulate the results (seed 001's curves).

  misura sweep tcp|udp|rr HOST --PARAM LIST [other flags of that test]

The swept flag is the one given a list (comma-separated: 10,100,1000) or a range (1..12, integers, \
inclusive, or mixed: 1..4,8,16); --nodelay takes on,off. Sweepable: --msg-size, --sndbuf, --rcvbuf, \
--streams, --nodelay (tcp); --msg-size, --rate (udp); --request, --response, --burst (rr); --clients \
(all). Every other flag goes to each run unchanged. A run that fails (refused, lost) is kept as a row \
with its error and the sweep goes on.

Output: the table (one row per value: throughput, transactions/s, retransmits, RTT, loss, jitter, \
latency, CPU of both ends and service demand); --json prints the curve data (format \"misura.sweep\": \
`points` is the array of {parameter, value, figures}); --export-csv writes one row per value.

Examples:
  misura sweep tcp 198.18.0.2 --msg-size 10,100,1000,10000,65536,100000,500000 --duration 5s
  misura sweep tcp 198.18.0.2 --streams 1..12 --duration 5s --export-csv streams.csv
  misura sweep tcp 198.18.0.2 --nodelay on,off --msg-size 100
  misura sweep udp 198.18.0.2 --rate 10M --msg-size 1000,2000,4000,9000 --df
  misura sweep rr 198.18.0.2 --proto udp --request 1,64,512,1024";

#[derive(clap::Args, Debug, Clone)]
pub struct SweepArgs {
    /// The test to run: tcp, udp or rr.
    #[arg(value_parser = ["tcp", "udp", "rr"])]
    pub test: String,
    /// HOST, the swept flag with its list, the test's other flags, and
    /// --json / --export-json FILE / --export-csv FILE / --quiet for the sweep.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 1.., value_name = "ARGS")]
    pub args: Vec<String>,
}

const SWEEPABLE: &[(&str, &[&str])] = &[
    ("--msg-size", &["tcp", "udp"]),
    ("--sndbuf", &["tcp"]),
    ("--rcvbuf", &["tcp"]),
    ("--streams", &["tcp"]),
    ("--nodelay", &["tcp"]),
    ("--rate", &["udp"]),
    ("--request", &["rr"]),
    ("--response", &["rr"]),
    ("--burst", &["rr"]),
    ("--clients", &["tcp", "udp", "rr"]),
];

/// The sweep's own flags and the rest.
#[derive(Debug, Default, PartialEq)]
struct Split {
    json: bool,
    quiet: bool,
    export_json: Option<PathBuf>,
    export_csv: Option<PathBuf>,
    parameter: String,
    values: Vec<String>,
    rest: Vec<String>,
}

/// "10,100", "1..4,8" → the values, in order.
pub fn expand(list: &str) -> Result<Vec<String>, Failure> {
    let mut out = Vec::new();
    for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        if let Some((a, b)) = item.split_once("..") {
            let (a, b): (u64, u64) = match (a.trim().parse(), b.trim().parse()) {
                (Ok(a), Ok(b)) if a <= b && b - a < 10_000 => (a, b),
                _ => {
                    return Err(Failure::Usage(format!(
                        "`{item}` is not a range: write e.g. 1..12"
                    )))
                }
            };
            out.extend((a..=b).map(|v| v.to_string()));
        } else {
            out.push(item.to_string());
        }
    }
    if out.is_empty() {
        return Err(Failure::Usage(format!("`{list}` lists no values")));
    }
    Ok(out)
}

fn split(test: &str, args: &[String]) -> Result<Split, Failure> {
    let mut s = Split::default();
    let mut it = args.iter().peekable();
    let mut swept: Option<(String, String)> = None;
    while let Some(a) = it.next() {
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (a.clone(), None),
        };
        let value =
            |it: &mut std::iter::Peekable<std::slice::Iter<String>>| -> Result<String, Failure> {
                inline
                    .clone()
                    .or_else(|| it.next().cloned())
                    .ok_or_else(|| Failure::Usage(format!("{flag} needs a value")))
            };
        match flag.as_str() {
            "--json" => s.json = true,
            "-q" | "--quiet" => s.quiet = true,
            "--export-json" => s.export_json = Some(PathBuf::from(value(&mut it)?)),
            "--export-csv" => s.export_csv = Some(PathBuf::from(value(&mut it)?)),
            "--nodelay" if test == "tcp" => {
                // Swept only with on/off values; a bare --nodelay is a plain flag.
                match it.peek().map(|v| v.as_str()) {
                    Some(v) if v.split(',').all(|x| matches!(x, "on" | "off")) => {
                        let v = value(&mut it)?;
                        swept = match swept {
                            None => Some((flag, v)),
                            Some(_) => {
                                return Err(Failure::Usage("sweep one parameter at a time".into()))
                            }
                        };
                    }
                    _ => s.rest.push(a.clone()),
                }
            }
            f if SWEEPABLE.iter().any(|(n, t)| *n == f && t.contains(&test)) => {
                let v = value(&mut it)?;
                if v.contains(',') || v.contains("..") {
                    if swept.is_some() {
                        return Err(Failure::Usage(
                            "sweep one parameter at a time: give a list to only one flag".into(),
                        ));
                    }
                    swept = Some((flag, v));
                } else {
                    s.rest.push(flag);
                    s.rest.push(v);
                }
            }
            _ => s.rest.push(a.clone()),
        }
    }
    let Some((flag, list)) = swept else {
        let names: Vec<&str> = SWEEPABLE
            .iter()
            .filter(|(_, t)| t.contains(&test))
            .map(|(n, _)| *n)
            .collect();
        return Err(Failure::Usage(format!(
            "give one of {} a list (10,100,1000) or a range (1..12) to sweep",
            names.join(", ")
        )));
    };
    s.parameter = flag.trim_start_matches('-').to_string();
    s.values = expand(&list)?;
    if flag == "--nodelay" && s.values.iter().any(|v| v != "on" && v != "off") {
        return Err(Failure::Usage("--nodelay sweeps over on,off".into()));
    }
    Ok(s)
}

#[derive(Parser)]
#[command(no_binary_name = true)]
struct TcpW {
    #[command(flatten)]
    a: crate::commands::throughput::tcp::TcpArgs,
}
#[derive(Parser)]
#[command(no_binary_name = true)]
struct UdpW {
    #[command(flatten)]
    a: crate::commands::throughput::udp::UdpArgs,
}
#[derive(Parser)]
#[command(no_binary_name = true)]
struct RrW {
    #[command(flatten)]
    a: crate::commands::throughput::rr::RrArgs,
}

fn argv(s: &Split, value: &str) -> Vec<String> {
    let mut v = s.rest.clone();
    if s.parameter == "nodelay" {
        if value == "on" {
            v.push("--nodelay".into());
        }
    } else {
        v.push(format!("--{}", s.parameter));
        v.push(value.into());
    }
    v.push("--quiet".into());
    v
}

fn usage(e: clap::Error) -> Failure {
    Failure::Usage(format!(
        "in the sweep's test flags: {}",
        e.to_string()
            .lines()
            .next()
            .unwrap_or("")
            .trim_start_matches("error: ")
    ))
}

/// Run one point; a failure becomes the point's error.
fn point(test: &str, args: &[String], stop: &Arc<AtomicUsize>) -> Result<SweepFigures, Failure> {
    let fig = match test {
        "tcp" => {
            let a = TcpW::try_parse_from(args).map_err(usage)?.a;
            crate::commands::throughput::tcp::measure(&a, stop).map(|r| {
                let c = &r.clients;
                SweepFigures {
                    complete: r.complete,
                    throughput_bps: Some(r.throughput_bps),
                    retransmits: Some(r.retransmits),
                    rtt_us_mean: mean(c.iter().filter_map(|c| c.rtt_us_mean)),
                    cpu_local_pct: Some(c.iter().map(|c| c.cpu_local.utilisation_pct).sum()),
                    cpu_remote_pct: sum_opt(
                        c.iter().map(|c| c.cpu_remote.map(|x| x.utilisation_pct)),
                    ),
                    service_demand_local: mean(
                        c.iter().filter_map(|c| c.service_demand_local_us_per_kb),
                    ),
                    service_demand_remote: mean(
                        c.iter().filter_map(|c| c.service_demand_remote_us_per_kb),
                    ),
                    error: (!r.complete).then(|| r.stop_reason.clone()),
                    ..Default::default()
                }
            })
        }
        "udp" => {
            let a = UdpW::try_parse_from(args).map_err(usage)?.a;
            crate::commands::throughput::udp::measure(&a, stop).map(|r| {
                let c = &r.clients;
                SweepFigures {
                    complete: r.complete,
                    throughput_bps: Some(r.throughput_bps),
                    loss_ratio: Some(r.loss_ratio),
                    jitter_ns: c.iter().filter_map(|c| c.jitter_ns).max(),
                    cpu_local_pct: Some(c.iter().map(|c| c.cpu_local.utilisation_pct).sum()),
                    cpu_remote_pct: sum_opt(
                        c.iter().map(|c| c.cpu_remote.map(|x| x.utilisation_pct)),
                    ),
                    service_demand_local: mean(
                        c.iter().filter_map(|c| c.cpu_local.us_per_kb(c.sent_bytes)),
                    ),
                    error: if !r.complete {
                        Some(r.stop_reason.clone())
                    } else {
                        r.warnings
                            .iter()
                            .find(|w| w.starts_with("nothing arrives"))
                            .cloned()
                    },
                    ..Default::default()
                }
            })
        }
        _ => {
            let a = RrW::try_parse_from(args).map_err(usage)?.a;
            crate::commands::throughput::rr::measure(&a, stop).map(|r| {
                let c = &r.clients;
                SweepFigures {
                    complete: r.complete,
                    transactions_per_s: Some(r.transactions_per_s),
                    latency_median_ns: c.iter().filter_map(|c| c.latency.median_ns).max(),
                    latency_p99_ns: c.iter().filter_map(|c| c.latency.p99_ns).max(),
                    cpu_local_pct: Some(c.iter().map(|c| c.cpu_local.utilisation_pct).sum()),
                    cpu_remote_pct: sum_opt(
                        c.iter().map(|c| c.cpu_remote.map(|x| x.utilisation_pct)),
                    ),
                    service_demand_local: mean(
                        c.iter()
                            .filter_map(|c| c.service_demand_local_us_per_transaction),
                    ),
                    service_demand_remote: mean(
                        c.iter()
                            .filter_map(|c| c.service_demand_remote_us_per_transaction),
                    ),
                    error: (!r.complete).then(|| r.stop_reason.clone()),
                    ..Default::default()
                }
            })
        }
    };
    match fig {
        Ok(f) => Ok(f),
        // Bad flags are the whole sweep's problem; the rest is this point's.
        Err(e) => match e.downcast::<Failure>() {
            Ok(f @ (Failure::Usage(_) | Failure::Output(_))) => Err(f),
            Ok(f) => Ok(SweepFigures {
                error: Some(f.to_string()),
                ..Default::default()
            }),
            Err(e) => Ok(SweepFigures {
                error: Some(format!("{e:#}")),
                ..Default::default()
            }),
        },
    }
}

fn mean(it: impl Iterator<Item = f64>) -> Option<f64> {
    let v: Vec<f64> = it.collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

fn sum_opt(it: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    it.sum()
}

/// `misura sweep`.
pub fn run(args: &SweepArgs, stop: &Arc<AtomicUsize>) -> Result<Finished> {
    let s = split(&args.test, &args.args)?;
    // Enter the namespace of the runs once (threads of the runs inherit it).
    let first = argv(&s, &s.values[0]);
    let netns = match args.test.as_str() {
        "tcp" => TcpW::try_parse_from(&first).map_err(usage)?.a.c.ns.netns,
        "udp" => UdpW::try_parse_from(&first).map_err(usage)?.a.c.ns.netns,
        _ => RrW::try_parse_from(&first).map_err(usage)?.a.c.ns.netns,
    };
    crate::shared::netns::enter_netns(&netns)?;
    let started_at = crate::shared::meta::now_rfc3339();
    let mut points = Vec::new();
    for v in &s.values {
        if client::interrupted(stop) {
            break;
        }
        if !s.quiet && !s.json {
            eprintln!("misura sweep: {} {} = {v}", args.test, s.parameter);
        }
        let figures = point(&args.test, &argv(&s, v), stop)?;
        points.push(SweepPoint {
            parameter: s.parameter.clone(),
            value: v.clone(),
            figures,
        });
    }
    let complete = !client::interrupted(stop)
        && points.len() == s.values.len()
        && points.iter().all(|p| p.figures.complete);
    let warnings = points
        .iter()
        .filter_map(|p| {
            p.figures
                .error
                .as_ref()
                .map(|e| format!("{} = {}: {e}", p.parameter, p.value))
        })
        .collect();
    let r = SweepReport {
        meta: crate::shared::meta::meta("misura.sweep", started_at),
        complete,
        stop_reason: if client::interrupted(stop) {
            client::signal_reason(stop)
        } else if complete {
            "finished".into()
        } else {
            "some runs did not complete".into()
        },
        host: crate::shared::host::fingerprint(LoopTuning {
            netns,
            ..Default::default()
        }),
        test: args.test.clone(),
        parameter: s.parameter.clone(),
        base_args: s.rest.clone(),
        points,
        warnings,
    };
    // A sweep whose runs all happened exits 0 even if some failed (their rows say why).
    let target = r.base_args.first().cloned().unwrap_or_default();
    Ok(Finished::ok(
        Report::new(
            r,
            "sweep",
            target,
            misura_report::throughput::write_sweep_text,
        )
        .with_csv(misura_report::throughput::write_sweep_csv),
    ))
}

/// The sweep's own output flags, from among its trailing arguments.
pub fn output_flags(args: &SweepArgs) -> Result<(OutputArgs, CsvArgs)> {
    let s = split(&args.test, &args.args)?;
    Ok((
        OutputArgs {
            json: s.json,
            export_json: s.export_json,
            quiet: s.quiet,
        },
        CsvArgs {
            export_csv: s.export_csv,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn lists_and_ranges() {
        assert_eq!(expand("10,100,1000").unwrap(), v(&["10", "100", "1000"]));
        assert_eq!(expand("1..4,8").unwrap(), v(&["1", "2", "3", "4", "8"]));
        assert!(expand("4..1").is_err());
        assert!(expand(",").is_err());
    }

    #[test]
    fn the_swept_flag_is_the_one_with_a_list() {
        let s = split(
            "tcp",
            &v(&[
                "h",
                "--duration",
                "1s",
                "--msg-size",
                "10,100",
                "--json",
                "--export-csv",
                "x.csv",
                "--streams",
                "2",
            ]),
        )
        .unwrap();
        assert_eq!(s.parameter, "msg-size");
        assert_eq!(s.values, v(&["10", "100"]));
        assert_eq!(s.rest, v(&["h", "--duration", "1s", "--streams", "2"]));
        assert!(s.json);
        assert_eq!(s.export_csv, Some(PathBuf::from("x.csv")));
        assert_eq!(
            argv(&s, "10"),
            v(&[
                "h",
                "--duration",
                "1s",
                "--streams",
                "2",
                "--msg-size",
                "10",
                "--quiet"
            ])
        );
        let n = split("tcp", &v(&["h", "--nodelay", "on,off"])).unwrap();
        assert_eq!(
            (n.parameter.as_str(), n.values.clone()),
            ("nodelay", v(&["on", "off"]))
        );
        assert_eq!(argv(&n, "on"), v(&["h", "--nodelay", "--quiet"]));
        assert_eq!(argv(&n, "off"), v(&["h", "--quiet"]));
        assert!(
            split("tcp", &v(&["h", "--msg-size", "10"])).is_err(),
            "nothing swept"
        );
        assert!(
            split("tcp", &v(&["h", "--msg-size", "1,2", "--streams", "1..3"])).is_err(),
            "two swept"
        );
        assert!(
            split("udp", &v(&["h", "--streams", "1..3"])).is_err(),
            "not a udp flag"
        );
        // The resolved arguments parse as the test's own.
        let s = split("rr", &v(&["h", "--proto", "udp", "--request=16,64"])).unwrap();
        RrW::try_parse_from(argv(&s, "16")).unwrap();
    }
}
