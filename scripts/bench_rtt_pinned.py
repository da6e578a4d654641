#!/usr/bin/env python3
"""The pinned rows of scripts/bench-rtt.sh: misura rtt beside sockperf
ping-pong, same pinning, one table with the ratios, and the numbers as JSON.

    bench_rtt_pinned.py --work DIR --out FILE.json

Reads DIR/pinned/<row>/<repeat>/{sockperf.txt, misura_rtt.json,
misura_reflect.json, *_cpu_{start,end}.txt}. Every figure is a median over
the repeats; "ratio" is the median of the per-repeat ratios misura/sockperf
of the user-level RTT p50 (the figure both tools report the same way:
user clock before the send to user clock after the receive).
"""
import argparse
import json
import os
import re
import sys

from bench_common import med

ROWS = [
    ("same", "same CPU, misura sleeping"),
    ("same-spin", "same CPU, misura client spinning"),
    ("same-user", "same CPU, sleeping, user clock only"),
    ("same-spin-user", "same CPU, client spinning, user clock only"),
    ("split", "split CPUs, misura sleeping"),
    ("split-spin", "split CPUs, misura client spinning"),
    ("busy", "split CPUs, both ends spinning"),
    ("split-user", "split CPUs, sleeping, user clock only"),
]
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def sockperf(path):
    """p50, p99, min (µs) and the sample count of one sockperf ping-pong."""
    try:
        text = ANSI.sub("", open(path, encoding="utf-8", errors="replace").read())
    except OSError:
        return None
    out = {}
    for key, pat in [
        ("p50", r"percentile 50\.000 =\s*([0-9.]+)"),
        ("p99", r"percentile 99\.000 =\s*([0-9.]+)"),
        ("min", r"<MIN> observation =\s*([0-9.]+)"),
        ("n", r"Total (\d+) observations"),
    ]:
        m = re.search(pat, text)
        if not m:
            return None
        out[key] = float(m.group(1))
    return out


def misura(path):
    """User, kernel, turnaround and network RTT (µs) of one misura rtt run."""
    try:
        d = json.load(open(path, encoding="utf-8"))
    except (OSError, ValueError):
        return None
    o = d.get("overall") or {}
    out = {"n": d.get("totals", {}).get("received")}
    for k in ("user_rtt", "kernel_rtt", "turnaround", "network_rtt"):
        f = o.get(k)
        if not f:
            if k == "user_rtt":
                return None
            # --timestamps user: no kernel stamps, so no kernel or network RTT.
            out[k] = None
            continue
        out[k] = {"p50": f["median_ns"] / 1e3, "p99": f["p99_ns"] / 1e3, "min": f["min_ns"] / 1e3}
    out["busy_poll"] = (d.get("host", {}).get("tuning") or {}).get("busy_poll")
    return out


def cpu_busy(start, end):
    """Fraction of each CPU that was busy between two /proc/stat snapshots."""
    def read(p):
        rows = {}
        for line in open(p, encoding="utf-8"):
            f = line.split()
            vals = [int(x) for x in f[1:]]
            rows[f[0]] = (sum(vals), vals[3] + (vals[4] if len(vals) > 4 else 0))
        return rows
    try:
        a, b = read(start), read(end)
    except (OSError, ValueError, IndexError):
        return None
    out = {}
    for cpu in a:
        tot = b[cpu][0] - a[cpu][0]
        idle = b[cpu][1] - a[cpu][1]
        out[cpu] = round(1 - idle / tot, 3) if tot > 0 else None
    return out


def fmt(x, w=7):
    return f"{x:{w}.1f}" if x is not None else " " * (w - 1) + "-"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    base = os.path.join(a.work, "pinned")
    result = {"rows": {}}
    print("misura rtt beside sockperf ping-pong, same pinning, 44-byte UDP payload, 1000/s (µs; medians over repeats)")
    print(f"{'row':<40} {'sockperf p50':>12} {'misura user p50':>15} {'ratio':>6}   "
          f"{'kernel p50':>10} {'turnaround p50':>14} {'network p50':>11}   {'sp min':>6} {'m min':>6}")
    for row, label in ROWS:
        d = os.path.join(base, row)
        if not os.path.isdir(d):
            continue
        reps = []
        for rep in sorted(os.listdir(d), key=lambda x: int(x) if x.isdigit() else 0):
            r = os.path.join(d, rep)
            sp, m = sockperf(os.path.join(r, "sockperf.txt")), misura(os.path.join(r, "misura_rtt.json"))
            ratio = (m["user_rtt"]["p50"] / sp["p50"]) if (sp and m and sp["p50"] > 0) else None
            reps.append({
                "repeat": rep, "sockperf": sp, "misura": m, "ratio_user_p50": ratio,
                "cpu_busy_sockperf": cpu_busy(os.path.join(r, "sockperf_cpu_start.txt"), os.path.join(r, "sockperf_cpu_end.txt")),
                "cpu_busy_misura": cpu_busy(os.path.join(r, "misura_cpu_start.txt"), os.path.join(r, "misura_cpu_end.txt")),
            })
        def pick(f):
            return med([f(x) for x in reps])
        summary = {
            "sockperf_p50_us": pick(lambda x: x["sockperf"] and x["sockperf"]["p50"]),
            "sockperf_min_us": pick(lambda x: x["sockperf"] and x["sockperf"]["min"]),
            "misura_user_p50_us": pick(lambda x: x["misura"] and x["misura"]["user_rtt"]["p50"]),
            "misura_user_min_us": pick(lambda x: x["misura"] and x["misura"]["user_rtt"]["min"]),
            "misura_kernel_p50_us": pick(lambda x: x["misura"] and x["misura"]["kernel_rtt"] and x["misura"]["kernel_rtt"]["p50"]),
            "misura_turnaround_p50_us": pick(lambda x: x["misura"] and x["misura"]["turnaround"] and x["misura"]["turnaround"]["p50"]),
            "misura_network_p50_us": pick(lambda x: x["misura"] and x["misura"]["network_rtt"] and x["misura"]["network_rtt"]["p50"]),
            "ratio_user_p50": pick(lambda x: x["ratio_user_p50"]),
            "repeats": len(reps),
        }
        result["rows"][row] = {"label": label, "summary": summary, "repeats": reps}
        s = summary
        ratio = f"{s['ratio_user_p50']:5.2f}x" if s["ratio_user_p50"] is not None else "     -"
        print(f"{label:<40} {fmt(s['sockperf_p50_us'], 12)} {fmt(s['misura_user_p50_us'], 15)} {ratio:>6}   "
              f"{fmt(s['misura_kernel_p50_us'], 10)} {fmt(s['misura_turnaround_p50_us'], 14)} "
              f"{fmt(s['misura_network_p50_us'], 11)}   {fmt(s['sockperf_min_us'], 6)} {fmt(s['misura_user_min_us'], 6)}")
    busy = cpu_busy(os.path.join(a.work, "pinned_cpu_start.txt"), os.path.join(a.work, "pinned_cpu_end.txt"))
    result["cpu_busy_whole_run"] = busy
    print("ratio: misura user RTT p50 / sockperf p50, median of the paired repeats; the issue's goal is <= 1.1x")
    print("sockperf's client spins between probes in every row (it never sleeps); misura's sleeps unless it spins (--busy-poll)")
    print("turnaround: misura reflect's own RX-to-TX stamp time (the issue's goal: < 5 us p50 on an idle host)")
    with open(a.out, "w", encoding="utf-8") as f:
        json.dump(result, f, indent=2)
    print(f"numbers: {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
