#!/usr/bin/env python3
"""Table and JSON for scripts/bench-oneway.sh (standard library only).

Reads the raw outputs that bench-oneway.sh left in its work directory
(ping, trafgen, GNU time -v and misura's JSON results), prints one table
with misura's figures, the peer tools' figures and the ratios, and writes
the numbers as JSON.

    python3 scripts/bench_report.py --work /tmp/misura-bench.XXXXXX --out bench-oneway.json
"""

import json
import os
import re
import statistics
import sys

from bench_common import fx, parse_args, print_notes, ratio, read, read_kv, write_result


def parse_ping(text):
    m = re.search(r"(\d+) packets transmitted, (\d+) received", text)
    r = re.search(r"rtt min/avg/max/mdev = ([\d.]+)/([\d.]+)/([\d.]+)/([\d.]+) ms", text)
    if not m or not r:
        raise ValueError("cannot parse ping's summary:\n" + text)
    to_ns = lambda s: round(float(s) * 1e6)  # noqa: E731
    return {
        "transmitted": int(m.group(1)),
        "received": int(m.group(2)),
        "rtt_min_ns": to_ns(r.group(1)),
        "rtt_avg_ns": to_ns(r.group(2)),
        "rtt_max_ns": to_ns(r.group(3)),
        "rtt_mdev_ns": to_ns(r.group(4)),
        "resolution_ns": 1000,
    }


def parse_trafgen(text, cpu):
    m = re.search(r"(\d+) packets outgoing", text)
    if not m:
        raise ValueError("cannot parse trafgen's report:\n" + text)
    per_cpu = {
        int(c): (int(s) + int(u) / 1e6, int(p))
        for s, u, c, p in re.findall(r"(\d+) sec, (\d+) usec on CPU(\d+) \((\d+) packets\)", text)
    }
    total = int(m.group(1))
    secs, pkts = per_cpu.get(cpu, (0.0, 0))
    if secs <= 0:
        # Fall back to the busiest worker.
        secs, pkts = max(per_cpu.values(), key=lambda v: v[1], default=(0.0, 0))
    return {
        "packets": total,
        "worker_cpu": cpu,
        "worker_seconds": secs,
        "worker_packets": pkts,
        "rate_fps": total / secs if secs > 0 else None,
    }


def parse_time_v(text):
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
    e = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", text)
    wall = None
    if e:
        wall = 0.0
        for part in e.group(1).split(":"):
            wall = wall * 60 + float(part)
    return {"max_rss_kib": int(m.group(1)) if m else None, "wall_s": wall}


def pick(stats, *keys):
    return {k: stats.get(k) for k in keys} if stats else None


def us(ns, digits=3):
    return "-" if ns is None else f"{ns / 1000:.{digits}f} us"


def mfps(fps):
    return "-" if fps is None else f"{fps / 1e6:.3f} M/s"


def main():
    a, p, commands = parse_args(__doc__, "bench-oneway.sh", "bench-oneway.json")
    w = a.work
    cpu = int(p.get("cpu", "1"))
    count = int(p.get("count", "0"))
    repeat = int(p.get("repeat", "1"))
    rate_s = int(p.get("rate_seconds", "5"))

    # ---- 1. latency
    ping = parse_ping(read(os.path.join(w, "ping.txt")))
    lat = json.load(open(os.path.join(w, "misura_latency.json")))
    ov = lat["overall"]
    keys = ("min_ns", "median_ns", "mean_ns", "p99_ns", "max_ns", "std_dev_ns")
    mul, kern = pick(ov.get("mul"), *keys), pick(ov.get("kernel"), *keys)
    half_rtt = ping["rtt_avg_ns"] / 2
    # ping truncates its average to whole microseconds: the true avg/2 lies
    # in [avg/2, avg/2 + 0.5 us].
    half_rtt_hi = half_rtt + ping["resolution_ns"] / 2
    r_mul = ratio(half_rtt, mul and mul["median_ns"])
    r_kern = ratio(half_rtt, kern and kern["median_ns"])
    r_mul_hi = ratio(half_rtt_hi, mul and mul["median_ns"])
    r_kern_hi = ratio(half_rtt_hi, kern and kern["median_ns"])
    host = lat.get("host", {})

    # ---- 2. rate
    def misura_run(stem):
        j = json.load(open(os.path.join(w, stem + ".json")))
        tot = j["totals"]
        return {
            "rate_fps": j["loop_stats"]["achieved_rate_fps"],
            "elapsed_s": j["loop_stats"]["elapsed_s"],
            "sent": tot["sent"], "received": tot["received"], "lost": tot["lost"],
            "postponed": tot["postponed"], "skipped_slots": tot.get("skipped_slots"),
            "postponed_per_sent": tot["postponed"] / tot["sent"] if tot["sent"] else None,
            "late_tolerance_ns": j["config"].get("late_tolerance_ns"),
            "warmup": j["config"].get("warmup", 0),
            "mul_median_ns": (j["overall"].get("mul") or {}).get("median_ns"),
            "kernel_median_ns": (j["overall"].get("kernel") or {}).get("median_ns"),
            **{k: int(v) for k, v in read_kv(os.path.join(w, stem + ".counters")).items()},
        }

    def summary(runs):
        rates = [r["rate_fps"] for r in runs if r.get("rate_fps")]
        if not rates:
            return {"median_fps": None, "min_fps": None, "max_fps": None}
        return {"median_fps": statistics.median(rates), "min_fps": min(rates), "max_fps": max(rates)}

    tg, ms, mx = [], [], []
    for i in range(1, repeat + 1):
        t = parse_trafgen(read(os.path.join(w, f"trafgen_{i}.txt")), cpu)
        t.update({k: int(v) for k, v in read_kv(os.path.join(w, f"trafgen_{i}.counters")).items()})
        tg.append(t)
        ms.append(misura_run(f"misura_rate_{i}"))
        if os.path.exists(os.path.join(w, f"misura_max_{i}.json")):
            mx.append(misura_run(f"misura_max_{i}"))
    tg_s, ms_s, mx_s = summary(tg), summary(ms), summary(mx)
    tg_med, ms_med = tg_s["median_fps"], ms_s["median_fps"]
    r_rate = ratio(ms_med, tg_med)
    r_max = ratio(mx_s["median_fps"], tg_med)
    pair_ratios = [ratio(m["rate_fps"], t["rate_fps"]) for m, t in zip(ms, tg)]
    pair_ratios_max = [ratio(m["rate_fps"], t["rate_fps"]) for m, t in zip(mx, tg)]
    sweep = []
    for per in p.get("sweep_periods", "").split():
        r = misura_run(f"misura_sweep_{per}")
        r["period"] = per
        sweep.append(r)
    ok = [r for r in sweep if r["postponed_per_sent"] is not None and r["postponed_per_sent"] <= 0.01
          and r["lost"] == 0]
    best = max(ok, key=lambda r: r["rate_fps"]) if ok else None
    r_best = ratio(best and best["rate_fps"], tg_med)

    # ---- 2c. frame engine
    engines = []
    for e in p.get("engines", "").split():
        runs = []
        for i in range(1, repeat + 1):
            stem = os.path.join(w, f"engine_{e}_{i}")
            kv = read_kv(stem + ".counters") if os.path.exists(stem + ".counters") else {}
            row = {"exit": int(kv.get("exit", -1)), "p2_rx_packets": int(kv.get("p2_rx_packets", 0))}
            try:
                j = json.load(open(stem + ".json"))
                t = j["load"]["trial"]
                fl = t["flows"][0]
                dur = t["duration_ns"] / 1e9
                row.update({
                    "engine": j["load"]["engine"]["engine"], "cores": j["load"]["engine"]["cores"],
                    "achieved_fps": fl["achieved_fps"], "rx_fps": fl["received"] / dur if dur else None,
                    "sent": fl["sent"], "received": fl["received"], "lost": fl["lost"],
                    "stamped": t["stamped"] + t["hardware_stamped"], "ring_drops": t["ring_drops"],
                    "cpu_per_s": t["cpu_s"] / dur if dur else None, "tester_limit": t["tester_limit"],
                    "latency_frames": j["totals"]["received"],
                    "kernel_median_ns": (j["overall"].get("kernel") or {}).get("median_ns"),
                    "rss_kib": parse_time_v(read(stem + ".time"))["max_rss_kib"],
                })
            except (OSError, KeyError, ValueError, TypeError) as ex:
                row["error"] = (read(stem + ".json.err") if os.path.exists(stem + ".json.err") else str(ex))[-300:]
            runs.append(row)
        ok = [r["rx_fps"] for r in runs if r.get("rx_fps")]
        med = statistics.median(ok) if ok else None
        engines.append({"name": e, "runs": runs, "rx_fps_median": med, "ratio_to_trafgen": ratio(med, tg_med)})
    engine_mem = []
    for d in p.get("engine_mem", "").split():
        tv = parse_time_v(read(os.path.join(w, f"engine_mem_{d}.time")))
        j = json.load(open(os.path.join(w, f"engine_mem_{d}.json")))
        engine_mem.append({"duration_s": int(d), "max_rss_kib": tv["max_rss_kib"],
                           "frames": j["load"]["trial"]["flows"][0]["received"]})

    # ---- 3. memory
    mem = []
    for c in p.get("mem_counts", "").split():
        mode = read_kv(os.path.join(w, f"mem_{c}.mode"))
        tv = parse_time_v(read(os.path.join(w, f"mem_{c}.time")))
        j = json.load(open(os.path.join(w, f"mem_{c}.json")))
        mem.append({
            "requested_count": int(c),
            "bounded_duration_s": int(mode["bounded_duration_s"]) if "bounded_duration_s" in mode else None,
            "sent": j["totals"]["sent"], "received": j["totals"]["received"], "lost": j["totals"]["lost"],
            "rate_fps": j["loop_stats"]["achieved_rate_fps"],
            "max_rss_kib": tv["max_rss_kib"], "wall_s": tv["wall_s"],
            "stop_reason": j.get("stop_reason"),
        })
    rss = [m["max_rss_kib"] for m in mem if m["max_rss_kib"]]
    growth = ratio(rss[-1], rss[0]) if len(rss) >= 2 else None

    # ---- table
    W1, W2, W3 = 34, 30, 36
    line = lambda a_, b_="", c_="", d_="": print(f"{a_:<{W1}} {b_:<{W2}} {c_:<{W3}} {d_}")  # noqa: E731
    rule = lambda: print("-" * (W1 + W2 + W3 + 24))  # noqa: E731
    print(f"misura {lat.get('tool_version', '?')} vs independent peer tools, same virtual lab (veth cables)")
    print(f"host {host.get('hostname')}: {host.get('cpu_model')}, {host.get('online_cpus')} online CPUs, "
          f"kernel {host.get('kernel_release')}, virtualized={host.get('virtualized')}, "
          f"clocksource {host.get('clocksource')}; misura/trafgen/ping pinned to CPU {cpu}")
    rule()
    line("measurement", "peer tool", "misura", "ratio")
    rule()
    line(f"1. latency, {count} frames, 1 ms", "ping RTT, hosts topology", "one-way, direct topology", "")
    line("   (1/ms, 46 B payload for misura)", "(ICMP echo, IP, 98 B frames)", "Mul (window) | kernel stamps", "")
    line("   min", us(ping["rtt_min_ns"]), f"{us(mul['min_ns'])} | {us(kern['min_ns'])}")
    line("   avg (ping) / median (misura)", us(ping["rtt_avg_ns"]), f"{us(mul['median_ns'])} | {us(kern['median_ns'])}",
         f"ping avg/2 / Mul median = {fx(r_mul)} (..{fx(r_mul_hi)})")
    line("", "", "", f"ping avg/2 / kernel median = {fx(r_kern)} (..{fx(r_kern_hi)})")
    line("   p99 (misura)", "-", f"{us(mul['p99_ns'])} | {us(kern['p99_ns'])}")
    line("   max", us(ping["rtt_max_ns"]), f"{us(mul['max_ns'])} | {us(kern['max_ns'])}")
    line("   mdev (ping) / std dev (misura)", us(ping["rtt_mdev_ns"]),
         f"{us(mul['std_dev_ns'])} | {us(kern['std_dev_ns'])}")
    lt = lat["totals"]
    line("   received / sent", f"{ping['received']} / {ping['transmitted']}", f"{lt['received']} / {lt['sent']}"
         f" (lost {lt['lost']}, postponed {lt['postponed']})")
    rule()
    def rng(sm):
        return "-" if sm["min_fps"] is None else f"{sm['min_fps'] / 1e6:.3f} .. {sm['max_fps'] / 1e6:.3f}"

    def per_run(rs):
        return "per run: " + ", ".join(fx(r, 3) for r in rs)

    line("2. frame rate, 60 B frames", "trafgen, send only", "oneway: send+receive+stamp+match", "")
    line(f"   {rate_s} s each, {repeat} alternated runs", "(TX_RING, qdisc bypass)", "", "")
    line("   frames/s median (min .. max)", f"{mfps(tg_med)} ({rng(tg_s)})", "", "")
    line("   a) --period 1us", "", f"{mfps(ms_med)} ({rng(ms_s)})", f"misura/trafgen = {fx(r_rate, 3)}")
    line("      postponed per frame sent", "",
         f"{sum(m['postponed'] for m in ms) / max(1, sum(m['sent'] for m in ms)):.2f}", per_run(pair_ratios))
    if mx:
        line("   b) --period 1us --late-tol. 1us", "", f"{mfps(mx_s['median_fps'])} ({rng(mx_s)})",
             f"misura/trafgen = {fx(r_max, 3)}")
        line("      postponed per frame sent", "",
             f"{sum(m['postponed'] for m in mx) / max(1, sum(m['sent'] for m in mx)):.2f}", per_run(pair_ratios_max))
    if sweep:
        line(f"   c) period sweep, {p.get('sweep_seconds')} s each", "", "period: frames/s (postponed/sent)")
        for r in sweep:
            line("", "", f"{r['period']:>5}: {mfps(r['rate_fps'])} ({100 * (r['postponed_per_sent'] or 0):.1f} %)")
        line("      best with < 1 % postponed", "",
             f"{mfps(best['rate_fps'])} at --period {best['period']}" if best else "none in the sweep",
             f"misura/trafgen = {fx(r_best, 3)}" if best else "")
    allm = ms + mx
    line("   frames reaching p2 (all runs)", f"{sum(t.get('p2_rx_packets', 0) for t in tg)}"
         f" ({sum(t.get('p2_rx_dropped', 0) for t in tg)} unread)",
         f"{sum(m.get('p2_rx_packets', 0) for m in allm)} ({sum(m['received'] for m in allm)} matched"
         f" + {sum(m['warmup'] for m in allm)} warm-up)", "(runs a and b)")
    rule()
    line("2c. frame engine, 64 B frames", "trafgen, send only", "oneway --load 100% --engine E", "")
    line("   generation + reception, every", f"{mfps(tg_med)} (median)", "received frames/s (median)", "")
    line("   frame counted + kernel-RX-stamped", "", "", "")
    for e in engines:
        rs = [r for r in e["runs"] if r.get("rx_fps")]
        if not rs:
            err = next((r.get("error") for r in e["runs"] if r.get("error")), "no result")
            line(f"   {e['name']}", "", "failed: " + " ".join(str(err).split())[:60], "")
            continue
        cpu_s = statistics.median([r["cpu_per_s"] for r in rs if r.get("cpu_per_s") is not None] or [0])
        line(f"   {e['name']} ({rs[0]['cores']} core)", "", f"{mfps(e['rx_fps_median'])}"
             f" (tx {mfps(statistics.median([r['achieved_fps'] for r in rs]))}, CPU {cpu_s:.2f} s/s)",
             f"misura/trafgen = {fx(e['ratio_to_trafgen'], 3)}")
        st = sum(r["stamped"] for r in rs)
        rc = sum(r["received"] for r in rs)
        line("", "", f"stamped {st}/{rc}, ring drops {sum(r['ring_drops'] for r in rs)},"
             f" lost {sum(r['lost'] for r in rs)}", f"latency frames {sum(r['latency_frames'] for r in rs)}")
    for m in engine_mem:
        line(f"   RSS after {m['duration_s']} s", "", f"{m['max_rss_kib'] / 1024:.1f} MiB ({m['frames']} frames)", "")
    rule()
    line("3. memory, maximum RSS", "-", "oneway --period 1us", "")
    for m in mem:
        label = (f"   --count {m['requested_count']}" if m["bounded_duration_s"] is None
                 else f"   --duration {m['bounded_duration_s']}s (not {m['requested_count']})")
        line(label, "", f"{m['max_rss_kib'] / 1024:.1f} MiB ({m['sent']} frames, {m['wall_s']:.1f} s)",
             f"(loop rate {m['rate_fps'] / 1e3:.0f} k frames/s)")
    if growth is not None:
        line("", "", "", f"RSS largest/smallest count = {fx(growth, 3)}")
    rule()

    notes = [
        "ping measures a round trip (echo request + reply) through the IP stacks of two namespaces "
        "(misura-bench-h1 -> h2); misura measures one way at layer 2 (p1 -> p2 of misura-bench-tester). "
        "Both run on veth, so 'ping avg/2' is only a rough one-way figure. ping truncates to whole "
        f"microseconds (avg {ping['rtt_avg_ns'] / 1000:.0f} us here): the true avg/2 lies up to 0.5 us "
        "higher, hence the '(..upper)' bound beside each latency ratio.",
        "On a veth cable the receive completes inside send(), so misura's RX window opens before the TX "
        "window closes: Bul is negative by construction and Mul is a loose window midpoint (it can even be "
        "negative); the kernel-stamp latency is the tighter one-way figure on veth.",
        "trafgen only sends (mmap TX ring, no per-frame work; the frames are counted on p2 as rx and dropped "
        "unread), while misura sends, receives, timestamps (user windows + SO_TIMESTAMPING) and matches "
        "every frame in one busy-polling loop: the rate ratio is not like for like.",
        "(a) --period 1us overloads misura's loop on purpose; with the default late tolerance (the rest of "
        "the period: a frame may leave late within its own period, never once the next has begun) the loop "
        "sends whenever it comes round, so this is its own maximum. (b) states that tolerance explicitly. "
"(c) is the highest rate of a clean periodic schedule (< 1 % of frames postponed).",
        f"2-vCPU VM caveat: both generators are pinned to CPU {cpu} and veth delivery runs in the sender's "
        "context on that CPU; misura's analysis thread and everything else share the other vCPU. Host "
        "scheduling (steal) makes rates vary between runs, hence the alternated repeats and min..max.",
    ]
    if any(m["bounded_duration_s"] for m in mem):
        notes.append("The largest memory run was bounded by --duration (its estimated time exceeded the limit); "
                     "the count reached is shown.")
    if p.get("long") != "1":
        notes.append("The 10^7-frame memory run is optional: pass --long.")
    print_notes(notes, width=110)

    result = {
        "format": "misura.bench-oneway",
        "format_version": 1,
        "misura_version": lat.get("tool_version"),
        "started_at": lat.get("started_at"),
        "host": {k: host.get(k) for k in ("hostname", "kernel_release", "cpu_model", "online_cpus",
                                            "virtualized", "clocksource")},
        "params": p,
        "commands": commands,
        "latency": {
            "ping": ping,
            "misura": {"topology": "direct", "count": count, "rate_fps": 1000, "payload_bytes": 46,
                       "mul": mul, "kernel": kern, "totals": lat["totals"]},
            "ratio_ping_half_avg_rtt_over_misura_mul_median": r_mul,
            "ratio_ping_half_avg_rtt_over_misura_kernel_median": r_kern,
            "ratio_upper_bounds_for_ping_truncation": {"mul": r_mul_hi, "kernel": r_kern_hi},
        },
        "rate": {
            "frame_bytes": 64,
            "seconds_per_run": rate_s,
            "trafgen": {"runs": tg, **tg_s},
            "misura_period_1us": {"runs": ms, **ms_s},
            "misura_period_1us_late_tolerance_1us": {"runs": mx, **mx_s},
            "ratio_misura_over_trafgen": r_rate,
            "ratio_per_run": pair_ratios,
            "ratio_misura_loop_max_over_trafgen": r_max,
            "ratio_loop_max_per_run": pair_ratios_max,
            "misura_period_sweep": sweep,
            "misura_best_sustained": best,
            "ratio_best_sustained_misura_over_trafgen_median": r_best,
        },
        "memory": {"runs": mem, "rss_growth_largest_over_smallest": growth},
        "engine": {"rows": engines, "memory": engine_mem},
        "notes": notes,
    }
    write_result(a.out, result, w)
    return 0


if __name__ == "__main__":
    sys.exit(main())
