//! `misura y1564` flags, and the `--service` description.

use crate::shared::engine_flags::EnginePorts;
use crate::shared::exit::Failure;
use crate::shared::units::{duration_ns, rate_bps, DurationArg};
use clap::Args;
use misura_bench::y1564::fit::FitError;
use misura_bench::y1564::request::Request;
use misura_bench::BenchError;
use misura_engine::MAX_FLOWS;
use misura_report::y1564::ServiceConfig;
use misura_time::Span;

#[derive(Args, Debug)]
#[command(after_help = "\
A service: --service name=NAME,frame=BYTES,cir=RATE[,eir=RATE][,vlan=ID][,pcp=0-7]
                     [,fd=DURATION][,fdv=DURATION][,flr=SHARE][,avail=SHARE]
  frame   Ethernet frame size with FCS (64 to 9018)            default 512
  cir     committed information rate, e.g. 50M (frames with FCS)
  eir     excess information rate                              default 0
  fd fdv  frame delay and its variation (p99.9 - min) at most   default 10ms, 5ms
  flr     frame loss ratio at most                              default 0.1%
  avail   share of one-second intervals available at least      default 99.9%

Each key once; names and values printable (no control characters). A service
whose CIR+EIR (or all CIRs together, in the performance test) the link cannot
carry is refused (exit 5). With the defaults (60 s steps, 15 min performance
test) a service takes about 6 min and the run 15 min more; the example below
takes about 90 s.

Examples:
  misura lab up --topology switch --shape 100M
  misura y1564 --netns misura-tester --tx p1 --rx p2 --trial 5s --duration 30s \\
      --service name=voice,frame=128,cir=10M,vlan=100,pcp=5,fd=2ms,fdv=1ms \\
      --service name=data,frame=1518,cir=50M,eir=20M,vlan=200")]
pub struct Y1564Args {
    /// A service to test (1 to 8; see below).
    #[arg(long = "service", value_name = "SPEC", required = true)]
    pub services: Vec<String>,
    #[command(flatten)]
    pub trial: crate::shared::engine_flags::TrialArgs,
    /// Length of the performance test (Y.1564: 15 min; 0 to skip it; at most 24h).
    #[arg(long, value_name = "DURATION", default_value = "15m")]
    pub duration: DurationArg,
    #[command(flatten)]
    pub p: EnginePorts,
    #[command(flatten)]
    pub out: crate::shared::output::OutputArgs,
    #[command(flatten)]
    pub ns: crate::shared::common_flags::NetnsArgs,
}

fn share(key: &str, v: &str) -> Result<f64, Failure> {
    let (num, scale) = match v.strip_suffix('%') {
        Some(n) => (n, 0.01),
        None => (v, 1.0),
    };
    let x: f64 = num.trim().parse().map_err(|_| {
        Failure::Usage(format!(
            "--service {key}={v}: not a share (e.g. 0.1% or 0.001)"
        ))
    })?;
    let x = x * scale;
    if !(0.0..=1.0).contains(&x) {
        return Err(Failure::Params(format!(
            "--service {key}={v}: must be between 0 and 100 %"
        )));
    }
    Ok(x)
}

/// Parse one `--service` value.
pub fn parse_service(spec: &str) -> Result<ServiceConfig, Failure> {
    let mut s = ServiceConfig {
        name: String::new(),
        vlan: None,
        pcp: None,
        frame_bytes: 512,
        cir_bps: 0.0,
        eir_bps: 0.0,
        fd_ns: 10_000_000,
        fdv_ns: 5_000_000,
        flr: 0.001,
        availability: 0.999,
    };
    if let Some(c) = spec.chars().find(|c| c.is_control()) {
        return Err(Failure::Usage(format!(
            "--service: a control character ({:?}) in `{}`: names and values are printable text",
            c,
            spec.escape_debug()
        )));
    }
    let mut seen: Vec<&str> = Vec::new();
    for item in spec.split(',').filter(|i| !i.trim().is_empty()) {
        let (k, v) = item.split_once('=').ok_or_else(|| {
            Failure::Usage(format!(
                "--service: `{item}` is not key=value (see misura y1564 --help)"
            ))
        })?;
        let (k, v) = (k.trim(), v.trim());
        if seen.contains(&k) {
            return Err(Failure::Usage(format!(
                "--service {spec}: `{k}` is given twice; give each key once"
            )));
        }
        seen.push(k);
        let int = |max: u64| -> Result<u64, Failure> {
            v.parse::<u64>().ok().filter(|&x| x <= max).ok_or_else(|| {
                Failure::Params(format!("--service {k}={v}: use a whole number up to {max}"))
            })
        };
        match k {
            "name" if !v.is_empty() && v.len() <= 32 => s.name = v.to_string(),
            "name" => return Err(Failure::Usage("--service name= needs 1 to 32 characters".into())),
            "frame" => s.frame_bytes = int(9018)? as usize,
            "cir" => s.cir_bps = rate_bps(v)? as f64,
            "eir" => s.eir_bps = if v == "0" { 0.0 } else { rate_bps(v)? as f64 },
            "vlan" => s.vlan = Some(int(4094)? as u16),
            "pcp" => s.pcp = Some(int(7)? as u8),
            "fd" => s.fd_ns = duration_ns(v)?,
            "fdv" => s.fdv_ns = duration_ns(v)?,
            "flr" => s.flr = share(k, v)?,
            "avail" => s.availability = share(k, v)?,
            other => {
                return Err(Failure::Usage(format!(
                    "--service: unknown key `{other}` (name, frame, cir, eir, vlan, pcp, fd, fdv, flr, avail)"
                )))
            }
        }
    }
    if s.name.is_empty() {
        return Err(Failure::Usage(format!("--service {spec}: give it a name=")));
    }
    if s.cir_bps <= 0.0 {
        return Err(Failure::Usage(format!(
            "--service {}: needs cir=RATE, e.g. cir=50M",
            s.name
        )));
    }
    if s.frame_bytes < 64 {
        return Err(Failure::Params(format!(
            "--service {}: frame={} is below 64 bytes",
            s.name, s.frame_bytes
        )));
    }
    Ok(s)
}

/// A refusal of the services by the ports, in the command's words.
fn fit_sentence(e: FitError) -> Failure {
    Failure::Params(match &e {
        FitError::OverLink { .. } => format!("{e}: lower cir/eir"),
        FitError::CirsOverLink { .. } => {
            format!("{e}: lower a cir, or --duration 0 to skip it")
        }
        FitError::OverMtu { .. } => e.to_string(),
        FitError::NoRoomInPtp {
            service,
            frame,
            min_frame,
        } => format!(
            "service {service}: a {frame}-byte frame cannot carry misura's header inside a PTP Sync message (--frame-format ptp): give frame={min_frame} or more, or --frame-format misura"
        ),
    })
}

/// Longest performance test: a day (Y.1564 names 15 min, 2 h and 24 h).
pub const MAX_PERFORMANCE_NS: i64 = 86_400_000_000_000;

impl Y1564Args {
    /// The run these flags ask, checked as far as the flags alone can be
    /// (the services, then the durations), a refusal in the flags' words.
    pub fn request(&self) -> Result<Request, Failure> {
        let services = self.services()?;
        let (step, perf) = self.durations()?;
        Ok(Request {
            ports: self.p.ports(),
            netns: self.ns.netns.clone(),
            services,
            step,
            perf,
        })
    }

    /// A run's error, its typed refusals in the flags' words.
    pub fn refusal(&self, e: BenchError) -> anyhow::Error {
        match e {
            BenchError::Fit(e) => fit_sentence(e).into(),
            e => crate::shared::engine_flags::port_refusal(e),
        }
    }

    /// The step and performance-test lengths, checked against their bounds.
    pub fn durations(&self) -> Result<(Span, Span), Failure> {
        let step = self.trial.span()?;
        if self.duration.ns > MAX_PERFORMANCE_NS {
            return Err(Failure::Usage(format!(
                "--duration {} is too long: at most 24h",
                self.duration
            )));
        }
        Ok((step, Span::from_ns(self.duration.ns.max(0))))
    }

    /// The services, checked: 1 to 8, distinct names.
    pub fn services(&self) -> Result<Vec<ServiceConfig>, Failure> {
        if self.services.len() > MAX_FLOWS {
            return Err(Failure::Params(format!(
                "{} services given: Y.1564 tests at most {MAX_FLOWS} at once",
                self.services.len()
            )));
        }
        let out = self
            .services
            .iter()
            .map(|s| parse_service(s))
            .collect::<Result<Vec<_>, _>>()?;
        for (i, s) in out.iter().enumerate() {
            if out[..i].iter().any(|o| o.name == s.name) {
                return Err(Failure::Usage(format!(
                    "two services are named `{}`",
                    s.name
                )));
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_service_parses_with_its_defaults() {
        let s =
            parse_service("name=voice,frame=128,cir=10M,vlan=100,pcp=5,fd=2ms,flr=0.01%").unwrap();
        assert_eq!((s.frame_bytes, s.vlan, s.pcp), (128, Some(100), Some(5)));
        assert_eq!(s.cir_bps, 10e6);
        assert_eq!(s.fd_ns, 2_000_000);
        assert!((s.flr - 1e-4).abs() < 1e-12);
        assert_eq!(s.availability, 0.999);
    }

    #[test]
    fn bad_services_name_what_is_wrong() {
        for (spec, says) in [
            ("frame=128,cir=1M", "name="),
            ("name=a,frame=128", "cir="),
            ("name=a,cir=1M,pcp=9", "up to 7"),
            ("name=a,cir=1M,vlan=5000", "up to 4094"),
            ("name=a,cir=1M,colour=red", "unknown key"),
            ("name=a,cir=1M,flr=150%", "between 0 and 100"),
            ("name=a,cir=1M,frame=20", "below 64"),
            ("name=a,cir=5M,cir=6M", "`cir` is given twice"),
            ("name=a\nb,cir=5M", "control character"),
            ("name=\u{1b}[31mred,cir=5M", "control character"),
        ] {
            let e = parse_service(spec).unwrap_err().to_string();
            assert!(e.contains(says), "{spec}: {e}");
        }
    }
}
