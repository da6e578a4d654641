#!/usr/bin/env python3
"""Arrival spacing of a paced UDP stream, the same yardstick for every tool.

Run inside the receiving namespace:
    udp_spacing.py --port P --seconds S [--skip S0] [--out FILE.json]
Opens an AF_PACKET socket on every interface, keeps the kernel RX stamps of full-size
(SO_TIMESTAMPNS, ns) of IPv4 UDP datagrams to port P (0: any port) for S seconds after
skipping S0, and prints one JSON object: datagrams, the gap between
consecutive arrivals (mean, p50, p99, standard deviation, share under
2 us: datagrams that arrived in a burst) and an RFC 3550-style jitter of
the gaps around their mean (J += (|gap - mean| - J) / 16).

Each tool's own jitter figure is computed its own way (iperf3 from
microsecond stamps in its payload, misura from ns stamps); this one is
computed the same way for both, from the receiver kernel's stamps.
"""
import argparse
import json
import socket
import statistics
import struct
import time

SO_TIMESTAMPNS = 35
ETH_P_IP = 0x0800


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--skip", type=float, default=1.0)
    ap.add_argument("--out")
    a = ap.parse_args()
    if not 0 < a.seconds <= 60 or not 0 <= a.skip <= 60:
        raise SystemExit("--seconds must be in (0, 60] and --skip in [0, 60]")
    s = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(ETH_P_IP))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 << 20)
    s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    s.settimeout(0.2)
    stamps = []
    start = time.monotonic()
    first = start + a.skip
    end = first + a.seconds
    cap = 5_000_000
    while time.monotonic() < end and len(stamps) < cap:
        try:
            data, anc, _, _ = s.recvmsg(64, 64)
        except socket.timeout:
            continue
        if len(data) < 28 or data[9] != 17 or struct.unpack_from("!H", data, 2)[0] < 1000:
            continue
        ihl = (data[0] & 0x0F) * 4
        if len(data) < ihl + 4:
            continue
        if a.port and struct.unpack_from("!H", data, ihl + 2)[0] != a.port:
            continue
        if time.monotonic() < first:
            continue
        for lvl, typ, val in anc:
            if lvl == socket.SOL_SOCKET and typ == SO_TIMESTAMPNS and len(val) >= 16:
                sec, nsec = struct.unpack("qq", val[:16])
                stamps.append(sec * 1_000_000_000 + nsec)
    gaps = [b - a_ for a_, b in zip(stamps, stamps[1:])]
    out = {"datagrams": len(stamps)}
    if len(gaps) >= 2:
        gaps_sorted = sorted(gaps)
        mean = statistics.fmean(gaps)
        j = 0.0
        for g in gaps:
            j += (abs(g - mean) - j) / 16
        out.update({
            "gap_mean_us": mean / 1e3,
            "gap_p50_us": gaps_sorted[len(gaps) // 2] / 1e3,
            "gap_p99_us": gaps_sorted[min(len(gaps) - 1, len(gaps) * 99 // 100)] / 1e3,
            "gap_stddev_us": statistics.pstdev(gaps) / 1e3,
            "burst_share": sum(1 for g in gaps if g < 2000) / len(gaps),
            "jitter_us": j / 1e3,
        })
    text = json.dumps(out)
    if a.out:
        with open(a.out, "w", encoding="utf-8") as f:
            f.write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
