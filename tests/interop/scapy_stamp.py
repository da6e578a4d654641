#!/usr/bin/env python3
"""Interoperability check: scapy's STAMP layer (scapy.contrib.stamp) against a
STAMP Session-Reflector (RFC 8762 / RFC 8972), e.g. `misura reflect`.

Usage: scapy_stamp.py HOST PORT COUNT

Crafts COUNT unauthenticated Session-Sender test packets with scapy (without
TLVs, with a Timestamp Information TLV, with Timestamp Information and Extra
Padding TLVs), sends them over a plain UDP socket, dissects the replies with
scapy's Session-Reflector class and checks them field by field. Then sends
hostile packets (too short for STAMP) that must get no reply. Prints one JSON
line with counts and failures; exits 1 on any failure, 2 on bad usage.

scapy's TLV flag letters ("UMIRRRRR") are bit-reversed against RFC 8972
(there U is the most significant bit, 0x80), so flags are set and read as
numbers here.
"""

import json
import socket
import struct
import sys
import time
from decimal import Decimal

from scapy.contrib.stamp import (
    ErrorEstimate,
    STAMPSessionReflectorTestUnauthenticated as Reflected,
    STAMPSessionSenderTestUnauthenticated as Sender,
    STAMPTestTLV,
)

NTP_EPOCH_OFFSET = 2208988800  # 1900-01-01 to 1970-01-01, seconds
TLV_EXTRA_PADDING = 1
TLV_TIMESTAMP_INFO = 3
TLV_UNKNOWN = 179  # experimental range (RFC 8972 §6.3): not understood
FLAG_U, FLAG_M, FLAG_I = 0x80, 0x40, 0x20  # RFC 8972 §4.1
REPLY_TIMEOUT = 1.0
HOSTILE_WAIT = 0.2


def ntp_now():
    """Current time as a raw 64-bit NTP timestamp (32.32 fixed point int)."""
    ns = time.time_ns()
    sec = ns // 1_000_000_000 + NTP_EPOCH_OFFSET
    frac = ((ns % 1_000_000_000) << 32) // 1_000_000_000
    return (sec << 32) | frac


def ts_info_tlv():
    # Sync Src In, Timestamp In, Sync Src Out, Timestamp Out: all 0 in the
    # request (RFC 8972 §4.3), filled by the reflector.
    return STAMPTestTLV(flags=0, type=TLV_TIMESTAMP_INFO, len=4, value=b"\x00" * 4)


def padding_tlv(n):
    return STAMPTestTLV(flags=0, type=TLV_EXTRA_PADDING, len=n, value=b"\x00" * n)


def build(seq, variant):
    tlvs = []
    if variant >= 1:
        tlvs.append(ts_info_tlv())
    if variant == 2:
        tlvs.append(padding_tlv(24))
    if variant == 3:
        tlvs.append(STAMPTestTLV(flags=0, type=TLV_UNKNOWN, len=8, value=b"misura!!"))
    pkt = Sender(
        seq=seq,
        # scapy's TimeStampField takes seconds since 1900 (it scales by 2^32).
        ts=Decimal(ntp_now()) / (1 << 32),
        err_estimate=ErrorEstimate(S=0, Z=0, scale=0, multiplier=1),
        ssid=0x1234,
        tlv_objects=tlvs,
    )
    return pkt


def arrivals(sock, wait, refused_too=False):
    """The datagrams that arrive on sock within `wait` seconds, as they come;
    with refused_too, an ICMP port unreachable (ConnectionRefusedError) is
    passed over instead of raised."""
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        try:
            sock.settimeout(max(0.001, deadline - time.monotonic()))
            d = sock.recv(65535)
        except socket.timeout:
            return
        except ConnectionRefusedError:
            if not refused_too:
                raise
            continue
        yield d


def main():
    if len(sys.argv) != 4:
        print(__doc__.strip().splitlines()[3], file=sys.stderr)
        return 2
    host, port, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_DGRAM)
    sock.connect((host, port))
    ttl_seen = set()
    failures = []
    stats = {"sent": 0, "received": 0, "with_tlvs": 0, "tlvs_checked": 0, "unknown_tlvs": 0}

    def fail(seq, msg):
        if len(failures) < 50:
            failures.append({"seq": seq, "error": msg})

    for i in range(count):
        seq = 1000 + i
        variant = i % 4
        pkt = build(seq, variant)
        wire = bytes(pkt)
        # Sanity: scapy's own encoding is STAMP-shaped.
        expect_len = 44 + (8 if variant >= 1 else 0) + {2: 28, 3: 12}.get(variant, 0)
        if len(wire) != expect_len:
            fail(seq, f"scapy built {len(wire)} bytes, expected {expect_len}")
            continue
        sock.settimeout(REPLY_TIMEOUT)
        sock.send(wire)
        stats["sent"] += 1
        if variant:
            stats["with_tlvs"] += 1
        data = None
        for d in arrivals(sock, REPLY_TIMEOUT):
            # Skip late replies to earlier probes; keep anything malformed.
            if len(d) < 28 or struct.unpack("!I", d[24:28])[0] == seq:
                data = d
                break
        if data is None:
            fail(seq, "no reply within 1 s")
            continue
        stats["received"] += 1
        r = Reflected(data)
        sent = Sender(wire)
        # Raw 32.32 values, for exact comparisons.
        raw_ts, raw_rx, raw_sender_ts = (struct.unpack("!Q", data[o:o + 8])[0] for o in (4, 16, 28))
        if len(data) != len(wire):
            fail(seq, f"reply length {len(data)} != request length {len(wire)}")
        if r.seq_sender != seq:
            fail(seq, f"session-sender seq {r.seq_sender}")
        if r.seq != seq:
            fail(seq, f"stateless reflector seq {r.seq} != sender seq {seq}")
        if r.ts_sender != sent.ts or data[28:36] != wire[4:12]:
            fail(seq, "sender timestamp not echoed")
        if data[36:38] != wire[12:14]:
            fail(seq, f"sender error estimate not echoed: {data[36:38].hex()} vs {wire[12:14].hex()}")
        if r.ssid != pkt.ssid:
            fail(seq, f"SSID {r.ssid:#x} != {pkt.ssid:#x}")
        if r.err_estimate.Z != 0:
            fail(seq, "reflector timestamps not in NTP format (Z=1) for an NTP request")
        if not (0 < raw_rx <= raw_ts) or not (r.ts_rx <= r.ts):
            fail(seq, f"receive timestamp {raw_rx:#x} > reflector timestamp {raw_ts:#x} (or zero)")
        # Within a minute of our clock (same host, same clock here).
        now = ntp_now()
        if abs((raw_rx >> 32) - (now >> 32)) > 60:
            fail(seq, f"receive timestamp {raw_rx >> 32} s far from now {now >> 32} s")
        if not (raw_sender_ts <= raw_rx):
            fail(seq, f"reflector received ({raw_rx:#x}) before we sent ({raw_sender_ts:#x})")
        ttl_seen.add(r.ttl_sender)
        if r.ttl_sender not in (64, 255):
            fail(seq, f"sender TTL {r.ttl_sender}")
        if r.mbz1 != 0 or r.mbz2 != 0:
            fail(seq, "MBZ fields not zero")
        # TLVs: the same types and lengths come back, recognised (U clear).
        got = [(t.type, t.len) for t in r.tlv_objects]
        want = [(t.type, t.len) for t in pkt.tlv_objects]
        if got != want:
            fail(seq, f"TLVs {got} != {want}")
        for t in r.tlv_objects:
            stats["tlvs_checked"] += 1
            flags = data[44 + sum(4 + x.len for x in r.tlv_objects[: r.tlv_objects.index(t)])]
            if t.type == TLV_UNKNOWN:
                # RFC 8972 §4: copied back, with the U flag set.
                stats["unknown_tlvs"] += 1
                if flags != FLAG_U or bytes(t.value) != b"misura!!":
                    fail(seq, f"unknown TLV came back with flags {flags:#04x}, value {bytes(t.value)!r}")
            elif flags & (FLAG_U | FLAG_M | FLAG_I):
                fail(seq, f"TLV type {t.type} flags {flags:#04x}")
            if t.type == TLV_TIMESTAMP_INFO and (len(t.value) != 4 or t.value[1] == 0 or t.value[3] == 0):
                fail(seq, f"Timestamp Information TLV not filled: {bytes(t.value).hex()}")
        time.sleep(0.005)

    # Hostile packets: must get no reply.
    hostile = {"short_3_bytes": b"\x01\x02\x03", "short_43_bytes": bytes(build(99999, 0))[:43]}
    hostile_replied = []
    for name, payload in hostile.items():
        sock.send(payload)
        sock.settimeout(HOSTILE_WAIT)
        for d in arrivals(sock, HOSTILE_WAIT, refused_too=True):
            hostile_replied.append(name)
            fail(None, f"reply of {len(d)} bytes to hostile packet {name}")
            break

    ok = not failures and stats["received"] == count
    print(
        json.dumps(
            {
                "ok": ok,
                "scapy_version": __import__("scapy").__version__,
                **stats,
                "sender_ttl": sorted(ttl_seen),
                "hostile_sent": len(hostile),
                "hostile_replied": hostile_replied,
                "failures": failures,
            }
        )
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
