#!/usr/bin/env python3
"""Table of scripts/bench-timer.sh: cyclictest's -h histogram output beside
`misura clock timer --json`, min / mean / p99 / max in µs and their ratios.
Standard library only."""

import argparse
import json
import math
import os
import sys


def parse_cyclictest(text):
    """Histogram lines "NNNNNN CCCCCC" (1 µs buckets) and the trailer lines
    "# Min Latencies: 00012", "# Avg Latencies: …", "# Max Latencies: …",
    "# Histogram Overflows: …", "# Total: …"."""
    hist = {}
    facts = {}
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if line.startswith("#"):
            if ":" in line:
                key, _, val = line[1:].partition(":")
                nums = val.split()
                if nums:
                    try:
                        facts[key.strip()] = int(nums[0])
                    except ValueError:
                        pass
            continue
        parts = line.split()
        if len(parts) >= 2 and parts[0].isdigit() and parts[1].isdigit():
            hist[int(parts[0])] = int(parts[1])
    total = sum(hist.values()) + facts.get("Histogram Overflows", 0)
    return {
        "min_us": facts.get("Min Latencies"),
        "mean_us": facts.get("Avg Latencies"),
        "max_us": facts.get("Max Latencies"),
        "p99_us": percentile(hist, total, 0.99, facts.get("Max Latencies")),
        "samples": total,
        "overflows": facts.get("Histogram Overflows", 0),
    }


def percentile(hist, total, q, overflow_value):
    """Nearest rank over 1 µs buckets; a rank in the overflow bin gives
    the maximum (the histogram cannot say more)."""
    if total == 0:
        return None
    rank = max(1, math.ceil(q * total))
    seen = 0
    for us in sorted(hist):
        seen += hist[us]
        if seen >= rank:
            return us
    return overflow_value


def parse_misura(doc):
    lat = doc["latency"]
    us = lambda v: None if v is None else v / 1000.0
    return {
        "min_us": us(lat["min_ns"]),
        "mean_us": us(lat["mean_ns"]),
        "p99_us": us(lat["p99_ns"]),
        "max_us": us(lat["max_ns"]),
        "samples": doc["wakeups"],
        "missed_periods": doc["missed_periods"],
    }


def fmt(v):
    return "-" if v is None else f"{v:.1f}"


def ratio(a, b):
    if a is None or b is None or b == 0:
        return "-"
    return f"{a / b:.2f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--out", required=True)
    for k in ("--duration", "--interval-us", "--prio", "--cpu", "--max-us"):
        ap.add_argument(k)
    ap.add_argument("phases", nargs="+")
    a = ap.parse_args()
    result = {"config": {"duration_s": a.duration, "interval_us": a.interval_us, "prio": a.prio, "cpu": a.cpu, "max_us": a.max_us}, "phases": {}}
    print()
    print(f"timer wake-up latency, {a.duration} s each, interval {a.interval_us} µs, SCHED_FIFO {a.prio}, CPU {a.cpu} (µs)")
    print(f"{'phase':<8} {'tool':<12} {'samples':>8} {'min':>8} {'mean':>8} {'p99':>8} {'max':>9}")
    for phase in a.phases:
        with open(os.path.join(a.dir, f"cyclictest-{phase}.txt")) as f:
            ct = parse_cyclictest(f.read())
        try:
            with open(os.path.join(a.dir, f"misura-{phase}.json")) as f:
                mi = parse_misura(json.load(f))
        except (OSError, ValueError, KeyError) as e:
            print(f"misura's result for {phase} is missing or unreadable: {e}", file=sys.stderr)
            mi = {"min_us": None, "mean_us": None, "p99_us": None, "max_us": None, "samples": None}
        result["phases"][phase] = {"cyclictest": ct, "misura": mi}
        for name, r in (("cyclictest", ct), ("misura", mi)):
            print(f"{phase:<8} {name:<12} {r['samples'] if r['samples'] is not None else '-':>8} {fmt(r['min_us']):>8} {fmt(r['mean_us']):>8} {fmt(r['p99_us']):>8} {fmt(r['max_us']):>9}")
        print(f"{phase:<8} {'misura/ct':<12} {'':>8} {ratio(mi['min_us'], ct['min_us']):>8} {ratio(mi['mean_us'], ct['mean_us']):>8} {ratio(mi['p99_us'], ct['p99_us']):>8} {ratio(mi['max_us'], ct['max_us']):>9}")
        if ct["overflows"]:
            print(f"{phase:<8} cyclictest: {ct['overflows']} sample(s) beyond --max-us {a.max_us}")
    print("(cyclictest truncates to whole µs and its p99 is a 1 µs histogram bucket; misura keeps ns)")
    with open(a.out, "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
