//! Speaking irtt (issue 28): `misura rtt --peer irtt` against Debian's
//! `irtt server` (0.9.0), `irtt client` against `misura reflect --irtt`,
//! with and without HMAC, and hostile peers, on the lab hosts topology
//! (h1 198.18.0.1 → h2 198.18.0.2) that each test makes.
//!
//! The RTT comparison is against irtt against itself on the same path in
//! the same test: on a machine shared with other builds the spread is wide,
//! so misura's median must fall within the spread of three irtt runs
//! widened 4× each way (and 200 µs of slack for a debug build's reflector).

#[macro_use]
mod common;
use common::*;
use serde_json::Value;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const INSTALL: &str = "apt-get install irtt";
const H2: &str = "198.18.0.2";
const PROBES: u64 = 200;

fn ip_exec(ns: &str, argv: &[&str]) -> Command {
    let mut c = Command::new("ip");
    c.args(["netns", "exec", ns]).args(argv);
    c
}

/// Waits (at most 10 s) until something listens on UDP `port` in h2.
fn wait_udp(lab: &Lab, port: u16) {
    lab.wait_port(2, "u", port);
}

/// `irtt server` in h2 on `port`, killed with the lab.
fn irtt_server(lab: &mut Lab, port: u16, extra: &[&str]) {
    let bind = format!("{H2}:{port}");
    let mut argv = vec!["irtt", "server", "-b", &bind];
    argv.extend_from_slice(extra);
    let c = ip_exec(&lab.ns(2), &argv)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("starting irtt server");
    lab.children.push(c);
    wait_udp(lab, port);
}

/// `misura reflect --irtt PORT` in h2 for `seconds`, its JSON on stdout.
fn misura_reflect(lab: &Lab, port: u16, seconds: u32, extra: &[&str]) -> Child {
    let p = port.to_string();
    let d = format!("{seconds}s");
    let c = misura()
        .args(["--no-store", "reflect", "--netns", &lab.ns(2), "--irtt", &p])
        .args(["--listen", H2, "--duration", &d, "--json", "-q"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting misura reflect --irtt");
    wait_udp(lab, port);
    c
}

/// The reflector's JSON once it stops (within 30 s).
fn reflect_json(mut c: Child) -> Value {
    let t = Instant::now();
    while c.try_wait().unwrap().is_none() {
        if t.elapsed() > Duration::from_secs(30) {
            let _ = c.kill();
            panic!("misura reflect --irtt did not stop after its --duration");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let o = c.wait_with_output().unwrap();
    assert!(
        o.status.success(),
        "reflect: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    json_of(&o)
}

/// `irtt client` from h1 to h2:`port`, 200 probes 10 ms apart: its stats.
fn irtt_client(lab: &Lab, port: u16, extra: &[&str]) -> Value {
    let to = format!("{H2}:{port}");
    let mut argv = vec!["irtt", "client", "-Q", "-o", "-", "-d", "2s", "-i", "10ms"];
    argv.extend_from_slice(extra);
    argv.push(&to);
    let o = ip_exec(&lab.ns(1), &argv).output().unwrap();
    assert!(
        o.status.success(),
        "irtt client {extra:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: Value = serde_json::from_slice(&o.stdout).expect("irtt's JSON");
    v["stats"].clone()
}

/// `misura rtt --peer irtt` from h1 to h2:`port`, 200 probes 10 ms apart.
fn misura_rtt(lab: &Lab, port: u16, extra: &[&str]) -> Value {
    let to = format!("{H2}:{port}");
    let n = PROBES.to_string();
    let o = misura()
        .args([
            "--no-store",
            "rtt",
            "--netns",
            &lab.ns(1),
            &to,
            "--peer",
            "irtt",
        ])
        .args(["--period", "10ms", "--count", &n, "--json", "-q"])
        .args(extra)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "misura rtt --peer irtt {extra:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    json_of(&o)
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// irtt against itself on the same path: the lowest and highest of three
/// RTT medians (ms), with the counts checked.
fn irtt_spread(lab: &Lab, port: u16, extra: &[&str]) -> (f64, f64) {
    let mut medians = Vec::new();
    for _ in 0..3 {
        let s = irtt_client(lab, port, extra);
        assert_eq!(s["packets_received"], s["packets_sent"], "irtt lost: {s}");
        medians.push(ms(&s["rtt"]["median"]));
    }
    let lo = medians.iter().cloned().fold(f64::INFINITY, f64::min);
    let hi = medians.iter().cloned().fold(0.0, f64::max);
    eprintln!("irtt-to-irtt medians (ms) on {port}: {medians:?}");
    (lo, hi)
}

/// `v` against irtt's spread widened to `lo / below` .. `hi * 4 + 0.2 ms`.
/// The band catches a unit or a sign, not microseconds.
fn within(what: &str, v: f64, (lo, hi): (f64, f64), below: f64) {
    let (a, b) = (lo / below, hi * 4.0 + 0.2);
    assert!(
        v >= a && v <= b,
        "{what} median {v:.3} ms outside irtt's spread {lo:.3}-{hi:.3} ms widened to {a:.3}-{b:.3}"
    );
}

#[test]
#[ignore = "needs root and irtt"]
fn misura_rtt_against_irtt_server() {
    require_root();
    require_tool("irtt", INSTALL);
    let mut lab = Lab::up("it", "c", "hosts");
    irtt_server(&mut lab, 2112, &[]);
    irtt_server(&mut lab, 2113, &["--hmac=k3y"]);
    let spread = irtt_spread(&lab, 2112, &[]);
    for (port, extra) in [(2112, &[][..]), (2113, &["--irtt-hmac", "k3y"][..])] {
        let v = misura_rtt(&lab, port, extra);
        schema_check(&v, "rtt.schema.json");
        assert_eq!(v["config"]["transport"], "irtt", "{v}");
        let c = &v["totals"];
        assert_eq!(u(&c["sent"]), PROBES, "{v}");
        assert_eq!(u(&c["received"]), PROBES, "every probe answered: {c}");
        assert_eq!(
            u(&c["lost"]) + u(&c["malformed_replies"]) + u(&c["auth_failed"]),
            0,
            "{c}"
        );
        let irtt = &v["irtt"];
        assert_eq!(u(&irtt["server_received_count"]), PROBES);
        // irtt's server returns receive and send stamps on both clocks.
        for k in [
            "receive_wall",
            "receive_monotonic",
            "send_wall",
            "send_monotonic",
        ] {
            assert_eq!(
                u(&irtt["server_stamps"][k]),
                PROBES,
                "{k}: {}",
                irtt["server_stamps"]
            );
        }
        let with = &v["timestamps"]["reflector_stamps"];
        for k in ["receive", "send", "wall_clock"] {
            assert_eq!(u(&with[k]), PROBES, "{k}: {with}");
        }
        assert_eq!(u(&with["midpoint"]), 0, "{with}");
        let net = ms(&v["overall"]["network_rtt"]["median_ns"]);
        let rtt = ms(&v["overall"]["kernel_rtt"]["median_ns"]);
        let user = ms(&v["overall"]["user_rtt"]["median_ns"]);
        let proc_ = ms(&v["overall"]["turnaround"]["median_ns"]);
        eprintln!(
            "misura rtt --peer irtt :{port}: {PROBES}/{PROBES}, user RTT median {user:.3} ms, kernel RTT {rtt:.3} ms, minus processing {net:.3} ms, processing {proc_:.4} ms"
        );
        // The kernel's stamps sit inside the user clock reads around them.
        assert!(rtt <= user && net < rtt, "{}", v["overall"]);
        // irtt's RTT is its client's user-space round trip minus the
        // server's processing: compare the same quantity of misura's. It
        // was compared with misura's kernel-stamped RTT until a CI host
        // showed that 4x below irtt's (Go) client is within reach.
        // irtt's Go client measured 2-3x misura's user RTT on an idle
        // 2-vCPU VM (wake-ups), about equal with the CPUs busy: 8x below.
        within("misura's user RTT − processing", user - proc_, spread, 8.0);
        let text: String = irtt["not_separable"].to_string();
        assert!(text.contains("user space"), "{text}");
    }
}

#[test]
#[ignore = "needs root and irtt"]
fn irtt_client_against_misura_reflect() {
    require_root();
    require_tool("irtt", INSTALL);
    let mut lab = Lab::up("it", "s", "hosts");
    irtt_server(&mut lab, 2112, &[]);
    let spread = irtt_spread(&lab, 2112, &[]);
    for (extra, refl) in [
        (&[][..], &[][..]),
        (&["--hmac=k3y"][..], &["--irtt-hmac", "k3y"][..]),
    ] {
        let r = misura_reflect(&lab, 2114, 8, refl);
        let s = irtt_client(&lab, 2114, extra);
        let midpoint = irtt_client(
            &lab,
            2114,
            &[
                &["--tstamp=midpoint", "--clock=monotonic", "-l", "200"],
                extra,
            ]
            .concat(),
        );
        let v = reflect_json(r);
        schema_check(&v, "irtt-reflect.schema.json");
        let sent = u(&s["packets_sent"]);
        assert!(sent >= 150, "irtt sent only {sent} in 2 s at 10 ms");
        assert_eq!(u(&s["packets_received"]), sent, "every probe answered: {s}");
        assert_eq!(u(&s["server_packets_received"]), sent, "{s}");
        assert_eq!(
            u(&midpoint["packets_received"]),
            u(&midpoint["packets_sent"]),
            "midpoint, 200 bytes: {midpoint}"
        );
        let c = &v["counters"];
        let all = sent + u(&midpoint["packets_sent"]);
        assert_eq!(u(&c["replies"]), all, "{c}");
        assert_eq!((u(&c["opened"]), u(&c["closed"])), (2, 2), "{c}");
        assert_eq!(u(&c["malformed"]) + u(&c["hmac_failures"]), 0, "{c}");
        let rtt = ms(&s["rtt"]["median"]);
        eprintln!(
            "irtt client {extra:?} -> misura reflect --irtt: {sent}/{sent}, RTT median {rtt:.3} ms, server processing mean {:.4} ms",
            ms(&s["server_processing_time"]["mean"])
        );
        within("irtt client against misura", rtt, spread, 4.0);
    }
}

#[test]
#[ignore = "needs root and irtt"]
fn malformed_packets_are_counted_and_dropped() {
    require_root();
    require_tool("irtt", INSTALL);
    let lab = Lab::up("it", "m", "hosts");
    let r = misura_reflect(&lab, 2115, 6, &[]);
    // 50 each: not irtt, unknown flag bits, a header cut short, an echo for
    // no session, an open with a broken parameter block, and a signed open.
    let junk = format!(
        "import socket,time\ns=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)\n\
         for p in [b'hello world', b'\\x14\\xa7\\x5b\\x30', b'\\x14\\xa7', \
         b'\\x14\\xa7\\x5b\\x00'+bytes(12), b'\\x14\\xa7\\x5b\\x01\\x02\\xff', \
         b'\\x14\\xa7\\x5b\\x09'+bytes(16)+b'\\x01\\x02']:\n  \
         for _ in range(50):\n    s.sendto(p, ('{H2}', 2115)); time.sleep(0.0005)\n"
    );
    let o = ip_exec(&lab.ns(1), &["python3", "-c", &junk])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s = irtt_client(&lab, 2115, &[]);
    let v = reflect_json(r);
    schema_check(&v, "irtt-reflect.schema.json");
    let c = &v["counters"];
    assert_eq!(u(&s["packets_received"]), u(&s["packets_sent"]), "{s}");
    assert_eq!(u(&c["malformed"]), 200, "{c}");
    assert_eq!(
        (u(&c["unknown_token"]), u(&c["hmac_failures"])),
        (50, 50),
        "{c}"
    );
    assert_eq!(u(&c["received"]), 300 + 2 + u(&s["packets_sent"]), "{c}");
}

#[test]
#[ignore = "needs root"]
fn stalled_handshake_times_out_with_a_clear_error() {
    require_root();
    let lab = Lab::up("it", "h", "hosts");
    // A peer that reads and never answers.
    let t = Instant::now();
    let o = rtt_against_script(
        &lab,
        2116,
        "while time.time()-t<20:\n  s.settimeout(1)\n  try: s.recv(9999)\n  except OSError: pass\n",
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("no irtt open reply") && err.contains("within 7 s"),
        "{err}"
    );
    assert!(
        t.elapsed() < Duration::from_secs(15),
        "took {:?}",
        t.elapsed()
    );
}

#[test]
#[ignore = "needs root and irtt"]
fn sigint_gives_a_partial_result() {
    require_root();
    require_tool("irtt", INSTALL);
    let mut lab = Lab::up("it", "i", "hosts");
    irtt_server(&mut lab, 2117, &[]);
    let c = misura()
        .args(["--no-store", "rtt", "--netns", &lab.ns(1)])
        .args([&format!("{H2}:2117"), "--peer", "irtt", "--period", "10ms"])
        .args(["--count", "100000", "--json", "-q"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(2500));
    unsafe_sigint(c.id());
    let o = c.wait_with_output().unwrap();
    assert_eq!(
        o.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: Value = serde_json::from_slice(&o.stdout).expect("the partial result's JSON");
    schema_check(&v, "rtt.schema.json");
    assert_eq!(v["complete"], false);
    let sent = u(&v["totals"]["sent"]);
    assert!(sent > 10 && sent < 100_000, "{sent}");
    assert_eq!(
        u(&v["totals"]["received"]),
        sent,
        "in-flight probes waited for"
    );
}

/// SIGINT to `pid` with kill(1) (the tests hold no unsafe code).
fn unsafe_sigint(pid: u32) {
    let s = Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .unwrap();
    assert!(s.success());
}

#[test]
#[ignore = "needs root and irtt"]
fn misura_load_probes_an_irtt_reflector() {
    require_root();
    require_tool("irtt", INSTALL);
    let mut lab = Lab::up("it", "l", "hosts");
    irtt_server(&mut lab, 2112, &[]);
    lab.server(2, "serve");
    let t = Instant::now();
    while !String::from_utf8_lossy(
        &ip_exec(&lab.ns(2), &["ss", "-ltnH"])
            .output()
            .unwrap()
            .stdout,
    )
    .contains(":5862 ")
    {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "misura serve not listening after 10 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let o = misura()
        .args(["--no-store", "load", "--netns", &lab.ns(1), H2])
        .args(["--reflector", &format!("irtt://{H2}")])
        .args([
            "--duration",
            "3s",
            "--idle",
            "1s",
            "--up",
            "1",
            "--down",
            "1",
        ])
        .args(["--json", "-q"])
        .output()
        .unwrap();
    let v = json_of(&o);
    schema_check(&v, "load.schema.json");
    for p in v["phases"].as_array().unwrap() {
        let sent = u(&p["sent"]);
        assert!(sent >= 50, "{}: {sent} probes", p["name"]);
        assert_eq!(
            u(&p["received"]),
            sent,
            "{}: every probe answered",
            p["name"]
        );
        assert!(
            p["network_rtt"]["median_ns"].as_f64().unwrap_or(0.0) > 0.0,
            "{p}"
        );
    }
}

#[test]
#[ignore = "needs root"]
fn a_peer_answering_junk_is_counted_and_named() {
    require_root();
    let lab = Lab::up("it", "j", "hosts");
    // Answers every datagram with three that are not irtt replies: bad
    // magic, a request (no reply flag), a reply cut short.
    let o = rtt_against_script(
        &lab,
        2118,
        "while time.time()-t<20:\n  s.settimeout(1)\n  try:\n    d,a=s.recvfrom(9999)\n  \
         except OSError:\n    continue\n  \
         for p in [b'junk', b'\\x14\\xa7\\x5b\\x01\\x01\\x02', b'\\x14\\xa7\\x5b\\x03\\x01']:\n    \
         s.sendto(p,a)\n",
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    // Three open requests, three junk datagrams each.
    assert!(err.contains("9 malformed datagrams came back"), "{err}");
}

/// `misura rtt --peer irtt` (5 probes) against a Python peer in h2 on
/// `port`: `body` runs with the bound socket `s` and the start time `t`.
fn rtt_against_script(lab: &Lab, port: u16, body: &str) -> std::process::Output {
    let script = format!(
        "import socket,time\ns=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)\n\
         s.bind(('{H2}',{port}))\nt=time.time()\n{body}"
    );
    let mut peer = ip_exec(&lab.ns(2), &["python3", "-c", &script])
        .spawn()
        .unwrap();
    wait_udp(lab, port);
    let o = misura()
        .args(["--no-store", "rtt", "--netns", &lab.ns(1)])
        .args([
            &format!("{H2}:{port}"),
            "--peer",
            "irtt",
            "--count",
            "5",
            "-q",
        ])
        .output()
        .unwrap();
    let _ = peer.kill();
    let _ = peer.wait();
    o
}

/// A hostile irtt server in Python (issue 33 items 8 and 9): it grants
/// what the client asked with `grant` (irtt parameter type → value)
/// written over it, and answers each echo with receive and send stamps
/// `proc_ns` apart on both clocks; it prints how many echoes came.
fn hostile_server(grant: &str, proc_ns: i64, count: &str) -> String {
    format!(
        "import struct\nGRANT={{{grant}}}\nPROC={proc_ns}\nechoes=0\n\
         def uv(n):\n  b=b''\n  while True:\n    c=n&0x7f; n>>=7\n    \
         if n: b+=bytes([c|0x80])\n    else: return b+bytes([c])\n\
         def zz(v): return v*2 if v>=0 else -2*v-1\n\
         def rd(b,i):\n  n=0; k=0\n  while True:\n    c=b[i]; i+=1; n|=(c&0x7f)<<k; k+=7\n    \
         if c<0x80: return n,i\n\
         def params(b):\n  p={{}}; i=0\n  while i<len(b):\n    t,i=rd(b,i); v,i=rd(b,i)\n    \
         p[t]=(v>>1) if v%2==0 else -((v+1)>>1)\n  return p\n\
         while time.time()-t<30:\n  s.settimeout(1)\n  try:\n    d,a=s.recvfrom(9999)\n  \
         except OSError:\n    continue\n  \
         if d[:3]!=b'\\x14\\xa7\\x5b': continue\n  f=d[3]\n  \
         if f&1:\n    p=params(d[4:]); p.update(GRANT)\n    \
         body=b''.join(uv(k)+uv(zz(v)) for k,v in sorted(p.items()) if v)\n    \
         s.sendto(b'\\x14\\xa7\\x5b\\x03'+struct.pack('<Q',0x1234567)+body,a)\n  \
         elif f==0 and len(d)>=60:\n    echoes+=1\n    r=bytearray(d); r[3]=2\n    \
         w=time.time_ns(); m=time.monotonic_ns()\n    \
         struct.pack_into('<I8xqqqq',r,16,{count},w,m,w+PROC,m+PROC)\n    s.sendto(bytes(r),a)\n    \
         print(echoes, flush=True)\n"
    )
}

/// `misura rtt --peer irtt` with `args` against [`hostile_server`] on
/// `port`: misura's output, how long it took, and the echoes the server saw.
fn rtt_against_hostile(
    lab: &Lab,
    port: u16,
    server: &str,
    args: &[&str],
) -> (std::process::Output, Duration, u64) {
    let script = format!(
        "import socket,time\ns=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)\n\
         s.bind(('{H2}',{port}))\nt=time.time()\n{server}"
    );
    let mut peer = ip_exec(&lab.ns(2), &["python3", "-c", &script])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    wait_udp(lab, port);
    let t = Instant::now();
    let mut c = misura()
        .args(["--no-store", "rtt", "--netns", &lab.ns(1)])
        .args([&format!("{H2}:{port}"), "--peer", "irtt", "--json", "-q"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The attack before the fix ran until killed: 20 s is the bound.
    while c.try_wait().unwrap().is_none() && t.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = c.kill();
    let o = c.wait_with_output().unwrap();
    let took = t.elapsed();
    let _ = peer.kill();
    let out = peer.wait_with_output().unwrap();
    let echoes = String::from_utf8_lossy(&out.stdout)
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or(0);
    (o, took, echoes)
}

#[test]
#[ignore = "needs root"]
fn a_grant_past_the_request_ends_the_session() {
    require_root();
    let lab = Lab::up("it", "g", "hosts");
    // (grant, misura's args, what the error names): a duration of 10^18 ns
    // for 2 s ran until killed; an interval of 1 ns for 10 ms sent 95 000
    // probes a second; 3 600 s sent 1 of 5 and said "finished".
    let cases: [(&str, &[&str], &[&str]); 3] = [
        (
            "2: 10**18",
            &["--duration", "2s", "--period", "10ms"],
            &["duration", "2s", "1000000000s"],
        ),
        (
            "3: 1",
            &["--count", "200", "--period", "10ms"],
            &["interval", "1ns", "10ms", "faster"],
        ),
        (
            "3: 3600 * 10**9",
            &["--count", "5", "--period", "10ms"],
            &["interval", "3600s", "15 s maximum"],
        ),
    ];
    for (i, (grant, args, names)) in cases.into_iter().enumerate() {
        let port = 2120 + i as u16;
        let (o, took, echoes) =
            rtt_against_hostile(&lab, port, &hostile_server(grant, 1000, "echoes"), args);
        let err = String::from_utf8_lossy(&o.stderr);
        eprintln!(
            "grant {grant}: exit {:?} after {took:?}, {echoes} probes: {err}",
            o.status.code()
        );
        assert_eq!(o.status.code(), Some(5), "grant {grant}: {err}");
        for n in names {
            assert!(err.contains(n), "grant {grant}: {n:?} not in {err}");
        }
        assert_eq!(echoes, 0, "grant {grant}: probes sent at a refused grant");
        assert!(
            took < Duration::from_secs(5),
            "grant {grant}: took {took:?}"
        );
    }
    // A restriction within the request (1 s for 10 ms, 5 probes in 50 ms:
    // one probe) runs, and is not "finished".
    let (o, _, echoes) = rtt_against_hostile(
        &lab,
        2124,
        &hostile_server("3: 10**9", 1000, "echoes"),
        &["--count", "5", "--period", "10ms"],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let v = json_of(&o);
    schema_check(&v, "rtt.schema.json");
    assert_eq!(echoes, 1, "{v}");
    assert_eq!(v["complete"], false, "{v}");
    let why = v["stop_reason"].as_str().unwrap_or_default();
    assert!(why.contains("1 of the 5"), "{why}");
}

#[test]
#[ignore = "needs root"]
fn impossible_server_processing_is_flagged_and_kept_out() {
    require_root();
    let lab = Lab::up("it", "p", "hosts");
    // −1 s, and 10 s (longer than any round trip here).
    for (port, proc_ns) in [(2125u16, -1_000_000_000i64), (2126, 10_000_000_000)] {
        let (o, _, echoes) = rtt_against_hostile(
            &lab,
            port,
            &hostile_server("", proc_ns, "4000000000"),
            &["--count", "5", "--period", "10ms"],
        );
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{err}");
        let v = json_of(&o);
        schema_check(&v, "rtt.schema.json");
        let irtt = &v["irtt"];
        eprintln!(
            "processing {proc_ns} ns: {}",
            irtt["implausible_server_processing"]
        );
        assert_eq!(echoes, 5);
        assert_eq!(u(&v["totals"]["received"]), 5, "{v}");
        assert_eq!(u(&irtt["implausible_processing"]), 5, "{v}");
        assert!(v["overall"]["turnaround"].is_null(), "{v}");
        assert!(v["overall"]["network_rtt"].is_null(), "{v}");
        assert_eq!(
            irtt["implausible_server_processing"]["min_ns"], proc_ns,
            "{v}"
        );
        assert!(
            v["overall"]["kernel_rtt"]["median_ns"].as_i64().unwrap() > 0,
            "{v}"
        );
        assert!(err.contains("cannot be"), "{err}");
        assert!(
            irtt["not_separable"].to_string().contains("cannot be"),
            "{v}"
        );
        // It also claims 4 000 000 000 probes received of 5 sent.
        assert_eq!(u(&irtt["implausible_received_count"]), 5, "{v}");
        assert!(irtt["server_received_count"].is_null(), "{v}");
    }
}

/// An attacker in h1 at 198.18.0.10 (issue 33 item 3): 4 096 valid opens
/// from one port in about 0.7 s, then 1 000 header-only (4-byte) opens;
/// prints the replies to each kind and the most bytes a reply had over
/// its open, as JSON.
const OPEN_FLOOD: &str = "import socket,time,json\n\
def uv(n):\n  b=b''\n  while True:\n    c=n&0x7f; n>>=7\n    \
if n: b+=bytes([c|0x80])\n    else: return b+bytes([c])\n\
p=b''.join(uv(t)+uv(2*v) for t,v in [(1,1),(2,60*10**9),(3,10**9),(5,3),(6,3),(7,3)])\n\
op=b'\\x14\\xa7\\x5b\\x01'+p\n\
s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM); s.bind(('198.18.0.10',0))\n\
s.setblocking(False)\nr={'full':0,'short':0,'over':-9999}\n\
def drain(kind,n):\n  while True:\n    try: d=s.recv(9999)\n    except OSError: return\n    \
r[kind]+=1; r['over']=max(r['over'],len(d)-n)\n\
t=time.time()\nfor i in range(4096):\n  s.sendto(op,(H2,PORT)); drain('full',len(op))\n  \
time.sleep(max(0,t+0.7*i/4096-time.time()))\n\
time.sleep(0.2); drain('full',len(op))\n\
for i in range(1000):\n  s.sendto(b'\\x14\\xa7\\x5b\\x01',(H2,PORT)); time.sleep(0.0002)\n\
time.sleep(0.2); drain('short',4)\nprint(json.dumps(r))\n";

#[test]
#[ignore = "needs root and irtt"]
fn one_source_cannot_exhaust_the_reflector() {
    require_root();
    require_tool("irtt", INSTALL);
    let lab = Lab::up("it", "x", "hosts");
    let ns1 = lab.ns(1);
    let add = ip_exec(&ns1, &["ip", "addr", "add", "198.18.0.10/24", "dev", "m0"])
        .status()
        .unwrap();
    assert!(add.success());
    let r = misura_reflect(&lab, 2127, 8, &[]);
    let script = OPEN_FLOOD
        .replace("H2", &format!("'{H2}'"))
        .replace("PORT", "2127");
    let o = ip_exec(&ns1, &["python3", "-c", &script]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let a: Value = serde_json::from_slice(&o.stdout).unwrap();
    // A real client from another address right after: served in full.
    let s = irtt_client(&lab, 2127, &[]);
    let v = reflect_json(r);
    schema_check(&v, "irtt-reflect.schema.json");
    let c = &v["counters"];
    eprintln!(
        "attacker saw {a}; client {}/{}; reflector {c}",
        s["packets_received"], s["packets_sent"]
    );
    assert_eq!(u(&s["packets_received"]), u(&s["packets_sent"]), "{s}");
    assert!(u(&s["packets_sent"]) >= 150, "{s}");
    // The flood got at most the per-source burst and rate, 8 sessions.
    assert!(u(&a["full"]) <= 20, "{a}");
    assert_eq!(u(&a["short"]), 0, "4-byte opens answered: {a}");
    assert!(
        a["over"].as_i64().unwrap() <= 8,
        "a reply over its open + token: {a}"
    );
    assert_eq!(u(&c["opened"]), 8 + 1, "{c}");
    assert!(u(&c["open_rate_limited"]) >= 4000, "{c}");
    // Every other open: over the rate, or (4-byte ones) unanswered.
    let dropped = u(&c["open_unanswered"]) + u(&c["open_rate_limited"]);
    assert_eq!(dropped + u(&a["full"]), 4096 + 1000, "{c}");
}

/// `misura rtt` to a STAMP reflector and `misura rtt --peer irtt` to an
/// irtt one at the same address are one kind of run (issue 34 point 6):
/// both are rtt results, so `history` lists them alike and `compare`
/// judges one against the other on the same figure.
#[test]
fn stamp_and_irtt_runs_are_one_kind() {
    let dir = TempDir::new("irtt-kind");
    let store = dir.path("results.sqlite");
    let store = store.to_str().unwrap();
    let port = free_port().to_string();
    let to = format!("127.0.0.1:{port}");
    let rtt = |extra: &[&str]| {
        let o = misura()
            .args(["--store", store, "rtt", &to, "--period", "10ms"])
            .args(["--count", "20", "-q"])
            .args(extra)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    for irtt in [false, true] {
        let mut c = misura();
        c.args(["--no-store", "reflect", "--listen", "127.0.0.1", "-q"]);
        if irtt {
            c.args(["--irtt", &port]);
        } else {
            c.args(["--port", &port]);
        }
        let mut r = c
            .args(["--duration", "8s"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(300));
        rtt(if irtt { &["--peer", "irtt"] } else { &[] });
        let _ = r.kill();
        let _ = r.wait();
    }
    let history = json_of(&run(&["--store", store, "history", "--json"]));
    let runs = history.as_array().expect("history's runs");
    assert_eq!(runs.len(), 2, "{history}");
    for h in runs {
        assert_eq!(h["subcommand"], "rtt", "{h}");
        assert_eq!(h["target"], to.as_str(), "{h}");
    }
    let ids: Vec<String> = runs.iter().map(|h| h["id"].to_string()).collect();
    let o = run(&["--store", store, "compare", &ids[0], &ids[1], "--json"]);
    let rows = json_of(&o);
    eprintln!("{rows}");
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["figure"], "network RTT", "{rows:?}");
    assert_eq!(rows[1]["figure"], "network RTT", "{rows:?}");
    let verdict = rows[1]["verdict"].as_str().unwrap();
    assert!(
        verdict.contains("spread") && !verdict.contains("not comparable"),
        "{verdict}"
    );
}
