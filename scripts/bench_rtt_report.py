#!/usr/bin/env python3
"""Table and JSON for scripts/bench-rtt.sh (standard library only).

Reads the raw outputs that bench-rtt.sh left in its work directory (ping,
ping -U, sockperf's full log, irtt's JSON, misura rtt's JSON and per-probe
CSV, /proc/stat snapshots), prints one table of round-trip figures (min /
median / p99, idle and with the CPUs loaded, and the ratios) and writes the
numbers as JSON.

    python3 scripts/bench_rtt_report.py --work /tmp/misura-bench-rtt.XXXXXX --out bench-rtt.json
"""

import csv
import json
import math
import os
import re
import sys

from bench_common import fx, parse_args, print_notes, ratio, read, write_result

PHASES = ("idle", "loaded")
ROWS = (
    ("ping", "ping"),
    ("ping_u", "ping -U"),
    ("sockperf", "sockperf"),
    ("irtt", "irtt"),
    ("misura_user", "misura user"),
    ("misura_kernel", "misura kernel"),
    ("misura_network", "misura network"),
)
EXTRA_ROWS = (("misura_turnaround", "(misura turnaround)"),)
MISURA_FIELDS = {
    "misura_user": ("user_rtt", "user_rtt_ns"),
    "misura_kernel": ("kernel_rtt", "kernel_rtt_ns"),
    "misura_network": ("network_rtt", "network_rtt_ns"),
    "misura_turnaround": ("turnaround", "turnaround_ns"),
}


def nearest_rank(sorted_vals, p):
    if not sorted_vals:
        return None
    k = max(1, math.ceil(p / 100.0 * len(sorted_vals)))
    return sorted_vals[min(k, len(sorted_vals)) - 1]


def summarize(samples_ns, **extra):
    """min / median / p99 (nearest rank) of a list of ns values."""
    v = sorted(samples_ns)
    out = {
        "count": len(v),
        "min_ns": v[0] if v else None,
        "median_ns": nearest_rank(v, 50),
        "p99_ns": nearest_rank(v, 99),
        "max_ns": v[-1] if v else None,
        "mean_ns": sum(v) / len(v) if v else None,
        "percentiles": "nearest rank over the samples (this report)",
    }
    out.update(extra)
    return out


def parse_ping(path, count):
    text = read(path)
    samples = [round(float(t) * 1e6) for t in re.findall(r"icmp_seq=\d+ ttl=\d+ time=([\d.]+) ms", text)]
    m = re.search(r"(\d+) packets transmitted, (\d+) received", text)
    if not m or not samples:
        raise ValueError(f"cannot parse ping's output {path}:\n{text[-2000:]}")
    return summarize(samples[:count], sent=int(m.group(1)), received=int(m.group(2)),
                     lost=int(m.group(1)) - int(m.group(2)), resolution_ns=1000)


def parse_sockperf(log_path, txt_path, count):
    rows = []
    in_data = False
    for line in read(log_path).splitlines():
        if line.startswith("packet,"):
            in_data = True
            continue
        if in_data:
            if line.startswith("---"):
                break
            parts = [p.strip() for p in line.split(",")]
            if len(parts) >= 4:
                try:
                    rows.append(round(float(parts[3]) * 1000))
                except ValueError:
                    pass
    text = read(txt_path)
    valid = re.search(r"\[Valid Duration\].*?SentMessages=(\d+); ReceivedMessages=(\d+)", text)
    dropped = re.search(r"# dropped messages = (\d+)", text)
    if not rows:
        raise ValueError(f"no round trips in sockperf's full log {log_path}")
    return summarize(rows[:count], valid_sent=int(valid.group(1)) if valid else None,
                     valid_received=int(valid.group(2)) if valid else None,
                     lost=int(dropped.group(1)) if dropped else None,
                     samples_in_log=len(rows), resolution_ns=1)


def parse_irtt(path, count):
    j = json.load(open(path))
    rts = sorted(j.get("round_trips", []), key=lambda r: r.get("seqno", 0))[:count]
    rtt = [r["delay"]["rtt"] for r in rts if r.get("lost") == "false" and "rtt" in r.get("delay", {})]
    raw = []
    for r in rts:
        c = r.get("timestamps", {}).get("client", {})
        try:
            raw.append(c["receive"]["monotonic"] - c["send"]["monotonic"])
        except KeyError:
            pass
    st = j.get("stats", {})
    out = summarize(rtt, sent=st.get("packets_sent"), received=st.get("packets_received"),
                    lost=len(rts) - len(rtt), resolution_ns=1)
    out["client_rtt_before_server_time_subtracted"] = summarize(raw)
    sp = st.get("server_processing_time") or {}
    out["server_processing_median_ns"] = sp.get("median")
    out["server_processing_mean_ns"] = sp.get("mean")
    return out


def parse_misura(d, count):
    """Returns ({row: summary}, meta) or (None, reason)."""
    if os.path.exists(os.path.join(d, "misura_unavailable")):
        err = read(os.path.join(d, "misura_reflect.json.err")).strip() if os.path.exists(
            os.path.join(d, "misura_reflect.json.err")) else ""
        return None, "misura reflect did not start: " + (err.splitlines()[-1] if err else "no message")
    rc_path = os.path.join(d, "misura_rtt.rc")
    rc = int(read(rc_path).strip() or "0") if os.path.exists(rc_path) else None
    jpath = os.path.join(d, "misura_rtt.json")
    try:
        j = json.load(open(jpath))
    except (OSError, ValueError):
        err = read(jpath + ".err").strip() if os.path.exists(jpath + ".err") else ""
        return None, f"misura rtt failed (status {rc}): " + (err.splitlines()[-1] if err else "no JSON")
    ov = j.get("overall", {})
    # The same figures recomputed from the per-probe CSV, as a cross-check of
    # misura's own summaries (its percentiles are HDR-histogram based).
    csv_vals = {k: [] for k in MISURA_FIELDS}
    cpath = os.path.join(d, "misura_probes.csv")
    if os.path.exists(cpath):
        with open(cpath, newline="") as f:
            for r in csv.DictReader(f):
                if r.get("lost") not in ("", "0", "false", None):
                    continue
                for k, (_, col) in MISURA_FIELDS.items():
                    if r.get(col):
                        csv_vals[k].append(int(r[col]))
    rows = {}
    for k, (field, _) in MISURA_FIELDS.items():
        s = ov.get(field)
        if not s:
            rows[k] = None
            continue
        rows[k] = {
            "count": s.get("count"), "min_ns": s.get("min_ns"), "median_ns": s.get("median_ns"),
            "p99_ns": s.get("p99_ns"), "max_ns": s.get("max_ns"), "mean_ns": s.get("mean_ns"),
            "percentiles": "misura's JSON (HDR histogram, nearest rank)",
            "from_probe_csv": summarize(csv_vals[k]) if csv_vals[k] else None,
        }
    meta = {
        "exit_status": rc,
        "complete": j.get("complete"),
        "stop_reason": j.get("stop_reason"),
        "totals": j.get("totals"),
        "timestamps": j.get("timestamps"),
        "warnings": j.get("warnings"),
        "tool_version": j.get("tool_version"),
        "host": j.get("host"),
    }
    return rows, meta


def cpu_busy(start_path, end_path):
    """Per-CPU busy and steal shares between two /proc/stat snapshots."""
    def load(p):
        out = {}
        for line in read(p).splitlines():
            f = line.split()
            out[f[0]] = [int(x) for x in f[1:9]]
        return out
    if not (os.path.exists(start_path) and os.path.exists(end_path)):
        return {}
    a, b = load(start_path), load(end_path)
    res = {}
    for cpu in sorted(a):
        if cpu not in b:
            continue
        d = [y - x for x, y in zip(a[cpu], b[cpu])]
        total = sum(d)
        if total <= 0:
            continue
        idle = d[3] + d[4]
        res[cpu] = {"busy": (total - idle) / total, "steal": d[7] / total}
    return res


def us(ns):
    return "-" if ns is None else f"{ns / 1000:.1f}"


def main():
    a, p, commands = parse_args(__doc__, "bench-rtt.sh", "bench-rtt.json")
    w = a.work
    count = int(p.get("count", "500"))
    period_ms = int(p.get("period_ms", "10"))

    data = {}
    misura_meta = {}
    misura_missing = {}
    for ph in PHASES:
        d = os.path.join(w, ph)
        r = {
            "ping": parse_ping(os.path.join(d, "ping.txt"), count),
            "ping_u": parse_ping(os.path.join(d, "ping_u.txt"), count),
            "sockperf": parse_sockperf(os.path.join(d, "sockperf_log.csv"), os.path.join(d, "sockperf.txt"), count),
            "irtt": parse_irtt(os.path.join(d, "irtt.json"), count),
        }
        rows, meta = parse_misura(d, count)
        if rows is None:
            misura_missing[ph] = meta
            for k in MISURA_FIELDS:
                r[k] = None
        else:
            r.update(rows)
            misura_meta[ph] = meta
        data[ph] = r
    busy = {ph: cpu_busy(os.path.join(w, f"{ph}_cpu_start.txt"), os.path.join(w, f"{ph}_cpu_end.txt"))
            for ph in PHASES}
    tool_busy = {ph: {t: cpu_busy(os.path.join(w, ph, f"{t}_cpu_start.txt"), os.path.join(w, ph, f"{t}_cpu_end.txt"))
                      for t in ("ping", "ping_u", "sockperf", "irtt", "misura")} for ph in PHASES}

    def med(ph, k):
        s = data[ph].get(k)
        return s and s.get("median_ns")

    def p99(ph, k):
        s = data[ph].get(k)
        return s and s.get("p99_ns")

    ratios = {}
    for k, _ in ROWS + EXTRA_ROWS:
        ratios[k] = {
            "median_over_misura_network_idle": ratio(med("idle", k), med("idle", "misura_network")),
            "median_over_misura_network_loaded": ratio(med("loaded", k), med("loaded", "misura_network")),
            "loaded_over_idle_median": ratio(med("loaded", k), med("idle", k)),
            "loaded_over_idle_p99": ratio(p99("loaded", k), p99("idle", k)),
        }

    # ---- table
    host = next((m.get("host") for m in misura_meta.values() if m.get("host")), None) or {}
    print(f"misura rtt vs peer tools: round trip {p.get('h2_addr')} (misura-bench-h1 -> h2, hosts topology, veth), "
          f"{count} round trips every {period_ms} ms per tool and phase")
    print(f"host: {p.get('cpu_model')}, {p.get('ncpu')} CPUs, kernel {p.get('kernel')}, "
          f"virtualization {p.get('virtualization')}, clocksource {p.get('clocksource')}; clients on CPU {p.get('cpu')}, "
          f"servers on CPU {p.get('server_cpu')}; loaded = {p.get('hog')} hog on each of CPUs {p.get('hog_cpus')}")
    for ph in PHASES:
        b = busy[ph]
        if b:
            print(f"CPU time during {ph:6}: " + ", ".join(
                f"{c} busy {100 * v['busy']:.0f} % (steal {100 * v['steal']:.1f} %)" for c, v in b.items()))
        tb = {t: v for t, v in tool_busy[ph].items() if v}
        if tb:
            print(f"  busy while each client ran ({ph}): " + "; ".join(
                f"{t.replace('_u', ' -U')} " + "/".join(f"{100 * v['busy']:.0f}" for v in cpus.values()) + " %"
                for t, cpus in tb.items()) + "  (" + "/".join(next(iter(tb.values())).keys()) + ")")
    not_idle = [f"{t.replace('_u', ' -U')} " + "/".join(f"{100 * v['busy']:.0f}" for v in cpus.values()) + " %"
                for t, cpus in tool_busy["idle"].items() if cpus and max(v["busy"] for v in cpus.values()) > 0.25]
    if not_idle:
        print("WARNING: the 'idle' phase was not idle (CPU busy > 25 % while " + ", ".join(not_idle) +
              "): a client that spins, or other work on this machine; its idle figures are not a clean baseline")
    print("all figures in microseconds (us); ratios of medians (and of p99 where stated)")
    hdr1 = (f"{'':19} | {'idle':^23} | {'loaded':^23} | {'median / misura net':^19} | {'loaded / idle':^15} | "
            f"{'samples':^11}")
    hdr2 = (f"{'tool / figure':19} | {'min':>7} {'median':>7} {'p99':>7} | {'min':>7} {'median':>7} {'p99':>7} | "
            f"{'idle':>9} {'loaded':>9} | {'median':>7} {'p99':>7} | {'idle':>5} {'load':>5}")
    rule = "-" * len(hdr2)
    print(rule)
    print(hdr1)
    print(hdr2)
    print(rule)

    def row(k, label):
        cells = []
        for ph in PHASES:
            s = data[ph].get(k)
            if s is None:
                cells.append(f"{'n/a':>7} {'n/a':>7} {'n/a':>7}")
            else:
                cells.append(f"{us(s['min_ns']):>7} {us(s['median_ns']):>7} {us(s['p99_ns']):>7}")
        r = ratios[k]
        n = [str(data[ph][k]["count"]) if data[ph].get(k) else "-" for ph in PHASES]
        print(f"{label:19} | {cells[0]} | {cells[1]} | {fx(r['median_over_misura_network_idle']):>9} "
              f"{fx(r['median_over_misura_network_loaded']):>9} | {fx(r['loaded_over_idle_median']):>7} "
              f"{fx(r['loaded_over_idle_p99']):>7} | {n[0]:>5} {n[1]:>5}")

    for k, label in ROWS:
        row(k, label)
    print(rule)
    for k, label in EXTRA_ROWS:
        row(k, label)
    print(rule)
    for ph in PHASES:
        parts = []
        for k in ("ping", "ping_u"):
            s = data[ph][k]
            parts.append(f"{k.replace('_u', ' -U')} lost {s.get('lost')}")
        s = data[ph]["irtt"]
        parts.append(f"irtt sent {s.get('sent')} (of {count} periods) lost {s.get('lost')}")
        parts.append(f"sockperf dropped {data[ph]['sockperf'].get('lost')}")
        if ph in misura_meta:
            t = misura_meta[ph].get("totals") or {}
            parts.append(f"misura sent {t.get('sent')} received {t.get('received')} lost {t.get('lost')}")
        else:
            parts.append("misura: " + misura_missing.get(ph, "not measured"))
        print(f"{ph:6} losses: " + "; ".join(parts))
    for ph, m in misura_meta.items():
        ts = m.get("timestamps") or {}
        if ts:
            print(f"{ph:6} misura stamps: client TX {ts.get('client_tx')} / RX {ts.get('client_rx')}; reflector RX "
                  f"{ts.get('reflector_rx')} / TX {ts.get('reflector_tx')}; two-step {ts.get('reflector_two_step')}")
        if m.get("warnings"):
            for wmsg in m["warnings"]:
                print(f"{ph:6} misura warning: {wmsg}")
        if m.get("exit_status"):
            print(f"{ph:6} misura rtt exit status {m['exit_status']} ({m.get('stop_reason')})")
    # Cross-check misura's summaries against its own per-probe CSV.
    checks = []
    for ph in misura_meta:
        for k in MISURA_FIELDS:
            s = data[ph].get(k)
            c = s and s.get("from_probe_csv")
            if s and c and s.get("median_ns") and c.get("median_ns"):
                dev = abs(s["median_ns"] - c["median_ns"]) / c["median_ns"]
                if dev > 0.01 or s.get("count") != c.get("count"):
                    checks.append(f"{ph} {k}: JSON median {us(s['median_ns'])} us n={s.get('count')}, "
                                  f"CSV median {us(c['median_ns'])} us n={c.get('count')}")
    if checks:
        print("misura JSON summaries differ from its per-probe CSV (> 1 % or count): " + "; ".join(checks))
    elif misura_meta:
        print("misura JSON summaries agree with its per-probe CSV (medians within 1 %, same counts)")
    print(rule)

    notes = [
        "ping: TX time is gettimeofday() written into the echo just before sendmsg(); RX time is the kernel's "
        "receive stamp (SO_TIMESTAMP, taken when the reply enters the IP stack of h1), so it leaves out the "
        "wake-up of ping after the reply arrived but includes the send path and the reflecting kernel (ICMP is "
        "answered inside h2's kernel, no user process). Printed with 1 us resolution below 1 ms.",
        "ping -U: user to user, gettimeofday() before sendmsg() and after recvmsg(): adds the wake-up and "
        "scheduling of ping on the receive side.",
        "sockperf ping-pong: UDP, user-space clock at send and after receive on the client (--full-rtt: the whole "
        "round trip, not half), and the sockperf server is a user process in h2, so both hosts' scheduling "
        "is inside. The first N round trips of --full-log after its warm-up are used. Its client busy-waits for the "
        "--mps pacing (100 % of its CPU, see 'busy while each client ran'), so under load it competes with the hog "
        "as a CPU-bound task and can be preempted in the middle of a round trip.",
        "irtt: UDP, Go runtime clock reads on the client (user level), minus the server's own processing time "
        "(its user-level receive-to-send stamps); the client wake-up and the server's socket wake-up remain.",
        "misura: STAMP over UDP to misura reflect. user = the user clock around sendmsg/recvmsg (what ping -U "
        "sees); kernel = the kernel TX stamp to the kernel RX stamp (SO_TIMESTAMPING) on the client; network = "
        "kernel RTT minus the reflector's turnaround (its kernel RX stamp to its kernel TX stamp, two-step), "
        "which removes the reflector host's scheduling as well. Its percentiles come from misura's JSON "
        "(HDR histogram); the peer tools' from the samples here (nearest rank).",
        "Loaded: one busy-loop hog (nice 0) pinned to every listed CPU in the root namespace, the client and the "
        "server share those CPUs with them. On veth the 'network' is the two kernels' stack and the veth "
        "softirq, which run in the sending task's context: misura's network RTT should stay flat, while every "
        "figure with a user-level stamp grows by the time the woken task waits for a CPU.",
        "VM caveat: this is a 2-vCPU virtual machine. There is no physical wire: the veth 'network' RTT is tens "
        "of microseconds of kernel work, idle CPUs halt (VM exit) and wake slowly, and the hypervisor can "
        "deschedule a vCPU at any time (steal, shown above), which no in-guest timestamp can separate from the "
        "network. The absolute figures are guest-specific; the comparison between tools in the same run is the "
        "point.",
    ]
    if misura_missing:
        notes.append("misura was not measured in: " + "; ".join(f"{ph}: {m}" for ph, m in misura_missing.items())
                     + ". Its rows and the ratios to its network RTT are n/a.")
    print_notes(notes)

    result = {
        "format": "misura.bench-rtt",
        "format_version": 1,
        "misura_version": p.get("misura_version"),
        "params": p,
        "host": {k: host.get(k) for k in ("hostname", "kernel_release", "cpu_model", "online_cpus",
                                            "virtualized", "clocksource")} if host else None,
        "commands": commands,
        "cpu_time": busy,
        "cpu_time_per_client_run": tool_busy,
        "idle_phase_not_idle": not_idle,
        "phases": data,
        "misura": {"phases": misura_meta, "missing": misura_missing},
        "ratios": ratios,
        "notes": notes,
    }
    write_result(a.out, result, w)
    return 0


if __name__ == "__main__":
    sys.exit(main())
