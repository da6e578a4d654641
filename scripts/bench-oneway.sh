#!/usr/bin/env bash
# Benchmark misura against independent peer tools on the same virtual lab.
#
#   sudo scripts/bench-oneway.sh [--count N] [--out FILE] [--long] [--cpu C]
#                                [--rate-seconds S] [--repeat R] [--long-max S]
#                                [--misura PATH]
#
# Defaults: --count 2000 (ping echoes and misura frames in step 1), --out
# bench-oneway.json, --cpu 1, --rate-seconds 5, --repeat 3, --long-max 600,
# misura from target/release/misura.
#
# Builds its own lab (namespaces misura-bench-*, never the user's misura-* lab),
# runs, side by side in one go:
#   1. latency:    ping RTT between misura-bench-h1/h2 (hosts topology) beside
#                  misura's one-way Mul and kernel latency on the direct cable;
#   2. frame rate: trafgen (netsniff-ng) sending 60-byte frames out of p1 beside
#                  misura's maximal send+receive rate (--period 1us, and
#                  --period 1us --late-tolerance 1us, the loop's own maximum),
#                  alternated R times, S seconds each;
#                  plus a short sweep of feasible periods (2..5 us) for the
#                  highest rate misura sustains with < 1 % of frames postponed;
#   2c. engine:    misura's frame engine (oneway --load 100% --engine E: every
#                  frame counted and kernel-RX-stamped through a TPACKET_V3
#                  ring, a latency stream inside) for E = mmap, packet, xdp on
#                  CPU C and mmap on 2 cores, beside trafgen's send-only rate;
#                  its RSS after 10 s and 60 s (with --long also --long-max s);
#   3. memory:     misura's maximum resident set size (GNU time -v) for
#                  --count 100000 and 1000000, and with --long also 10000000
#                  (~1 min at ~170 kframes/s on a 2-vCPU VM; if the estimate from
#                  step 2 exceeds --long-max seconds the run is bounded by
#                  --duration instead and the count reached is reported).
# Prints every command it runs, then one table (misura's figures, the peer
# tools' figures and the ratios) and writes the numbers as JSON to --out
# (default bench-oneway.json). Raw outputs stay in a /tmp/misura-bench.* dir.
#
# Needs root (namespaces, raw sockets). Installs iputils-ping, netsniff-ng,
# time, iproute2 and python3 with apt-get when they are missing. Builds
# target/release/misura with cargo if it is not there. The lab is removed on
# exit, error or interrupt (misura lab down --prefix misura-bench-).
set -euo pipefail

NAME=bench-oneway
# shellcheck source=scripts/bench-lib.sh
. "$(dirname "$0")/bench-lib.sh"
TESTER_NS=${PREFIX}tester
H1_NS=${PREFIX}h1

COUNT=2000
OUT=bench-oneway.json
LONG=0
LONG_MAX=600
CPU=1
RATE_SECONDS=5
REPEAT=3
MISURA=""

while (($#)); do
    case "$1" in
        --count) COUNT=${2:?--count needs a value}; shift 2 ;;
        --out) OUT=${2:?--out needs a value}; shift 2 ;;
        --long) LONG=1; shift ;;
        --long-max) LONG_MAX=${2:?--long-max needs seconds}; shift 2 ;;
        --cpu) CPU=${2:?--cpu needs a value}; shift 2 ;;
        --rate-seconds) RATE_SECONDS=${2:?--rate-seconds needs a value}; shift 2 ;;
        --repeat) REPEAT=${2:?--repeat needs a value}; shift 2 ;;
        --misura) MISURA=${2:?--misura needs a path}; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
    esac
done

isnum "$COUNT" && ((COUNT > 0)) || die "--count must be a positive integer"
isnum "$CPU" || die "--cpu must be a CPU number"
isnum "$RATE_SECONDS" && ((RATE_SECONDS > 0 && RATE_SECONDS <= 300)) || die "--rate-seconds must be 1..300"
isnum "$REPEAT" && ((REPEAT > 0 && REPEAT <= 20)) || die "--repeat must be 1..20"
isnum "$LONG_MAX" && ((LONG_MAX >= 10)) || die "--long-max must be >= 10 seconds"
[ "$(id -u)" = 0 ] || die "needs root (network namespaces, raw sockets): sudo $0 $*"
NCPU=$(nproc)
((CPU < NCPU)) || die "--cpu $CPU: only $NCPU CPUs online"

# ---------------------------------------------------------------- packages
need=()
command -v ip >/dev/null || need+=(iproute2)
command -v ping >/dev/null || need+=(iputils-ping)
command -v trafgen >/dev/null || need+=(netsniff-ng)
[ -x /usr/bin/time ] || need+=(time)
command -v python3 >/dev/null || need+=(python3)
command -v taskset >/dev/null || need+=(util-linux)
if ((${#need[@]})); then
    install_packages "${need[@]}" || die "apt-get install failed"
fi
PY=$(command -v python3)

# ---------------------------------------------------------------- misura
find_misura

WORK=$(mktemp -d /tmp/misura-bench.XXXXXX)
CMDLOG=$WORK/commands.txt
: >"$CMDLOG"
BGPID=""

cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    stop_pid "$BGPID" INT; BGPID=""
    echo "+ $MISURA lab down --prefix $PREFIX"
    "$MISURA" lab down --prefix "$PREFIX" >/dev/null 2>&1 || warn "lab down --prefix $PREFIX failed"
    exit "$rc"
}
trap_cleanup

counter() { ip netns exec "$1" cat "/sys/class/net/$2/statistics/$3"; }

{
    echo "count=$COUNT"; echo "cpu=$CPU"; echo "ncpu=$NCPU"; echo "long=$LONG"
    echo "long_max=$LONG_MAX"; echo "rate_seconds=$RATE_SECONDS"; echo "repeat=$REPEAT"
    echo "misura=$MISURA"; echo "prefix=$PREFIX"; echo "h2_addr=$H2_ADDR"
    echo "trafgen_version=$(trafgen -v 2>&1 | head -n1)"
    echo "ping_version=$(ping -V 2>&1 | head -n1)"
} >"$WORK/params.txt"

echo "== misura benchmark: raw outputs in $WORK"

# ---------------------------------------------------------------- lab
run_ok 60 "$WORK/lab_direct.txt" "$MISURA" lab up --prefix "$PREFIX" --topology direct
run_ok 60 "$WORK/lab_hosts.txt" "$MISURA" lab up --prefix "$PREFIX" --topology hosts
run_ok 30 "$WORK/lab_status.json" "$MISURA" lab status --prefix "$PREFIX" --json
P1_MAC=$(ip netns exec "$TESTER_NS" cat /sys/class/net/p1/address)
P2_MAC=$(ip netns exec "$TESTER_NS" cat /sys/class/net/p2/address)

# ---------------------------------------------------------------- 1. latency
echo "== 1. latency: ping RTT (hosts) vs misura one-way (direct), $COUNT frames each"
# ARP warm-up so the first measured echo does not carry the neighbour resolution.
run_ok 30 "$WORK/ping_warmup.txt" ip netns exec "$H1_NS" ping -c 3 -i 0.01 -q "$H2_ADDR"
PING_LIMIT=$((COUNT / 500 + 60))
run_ok "$PING_LIMIT" "$WORK/ping.txt" \
    taskset -c "$CPU" ip netns exec "$H1_NS" ping -c "$COUNT" -i 0.001 -q "$H2_ADDR"
LAT_LIMIT=$((COUNT / 1000 + 120))
run_ok "$LAT_LIMIT" "$WORK/misura_latency.json" \
    "$MISURA" oneway --netns "$TESTER_NS" --tx p1 --rx p2 --count "$COUNT" --rate 1000 \
    --sizes 46 --cpu "$CPU" --json -q

# ---------------------------------------------------------------- 2. rate
echo "== 2. frame rate: trafgen (send only) vs misura (send+receive+stamp+match), ${RATE_SECONDS}s x 3 tools x $REPEAT"
# 60-byte frame (64 on the wire with FCS, the same as misura --sizes 46):
# dst p2, src p1, ethertype 0x88b5, 46 bytes of payload. cpu(C) pins the
# packet to trafgen's worker on CPU C (trafgen pins worker i to CPU i, so it
# needs C+1 workers; those on other CPUs find no packet and exit at once).
TG_CFG=$WORK/trafgen.cfg
mac_bytes() { echo "0x${1//:/, 0x}"; }
cat >"$TG_CFG" <<EOF
/* misura bench: minimum-size frame p1 -> p2, ethertype 0x88b5 */
cpu($CPU): {
  $(mac_bytes "$P2_MAC"),
  $(mac_bytes "$P1_MAC"),
  c16(0x88b5),
  fill(0x00, 46)
}
EOF
echo "trafgen config $TG_CFG:"; sed 's/^/    /' "$TG_CFG"
for ((i = 1; i <= REPEAT; i++)); do
    f=$WORK/trafgen_$i
    rx0=$(counter "$TESTER_NS" p2 rx_packets); dr0=$(counter "$TESTER_NS" p2 rx_dropped)
    rc=0
    run $((RATE_SECONDS + 30)) "$f.txt" timeout -s INT "$RATE_SECONDS" \
        ip netns exec "$TESTER_NS" trafgen --dev p1 --conf "$TG_CFG" --cpus $((CPU + 1)) \
        --no-sock-mem --notouch-irq || rc=$?
    # timeout(1) stops trafgen with SIGINT and reports 124: that is the normal end.
    if ((rc != 0 && rc != 124)); then cat "$f.txt" "$f.txt.err" >&2; die "trafgen failed ($rc)"; fi
    rx1=$(counter "$TESTER_NS" p2 rx_packets); dr1=$(counter "$TESTER_NS" p2 rx_dropped)
    echo "p2_rx_packets=$((rx1 - rx0))" >"$f.counters"; echo "p2_rx_dropped=$((dr1 - dr0))" >>"$f.counters"

    f=$WORK/misura_rate_$i
    rx0=$(counter "$TESTER_NS" p2 rx_packets)
    run_ok $((RATE_SECONDS + 120)) "$f.json" \
        "$MISURA" oneway --netns "$TESTER_NS" --tx p1 --rx p2 --duration "${RATE_SECONDS}s" \
        --period 1us --sizes 46 --engine loop --cpu "$CPU" --json -q
    rx1=$(counter "$TESTER_NS" p2 rx_packets)
    echo "p2_rx_packets=$((rx1 - rx0))" >"$f.counters"

    # The same with the late tolerance given explicitly as the whole period
    # (misura's default): the loop sends whenever it comes round, i.e. at its
    # own maximal rate.
    f=$WORK/misura_max_$i
    rx0=$(counter "$TESTER_NS" p2 rx_packets)
    run_ok $((RATE_SECONDS + 120)) "$f.json" \
        "$MISURA" oneway --netns "$TESTER_NS" --tx p1 --rx p2 --duration "${RATE_SECONDS}s" \
        --period 1us --late-tolerance 1us --sizes 46 --engine loop --cpu "$CPU" --json -q
    rx1=$(counter "$TESTER_NS" p2 rx_packets)
    echo "p2_rx_packets=$((rx1 - rx0))" >"$f.counters"
done
# --period 1us overloads the loop: every frame misses its slot and waits for
# the next one (postponement rule), which costs rate. A short sweep of
# feasible periods shows the highest rate misura sustains with < 1 % of the
# frames postponed.
SWEEP=(2us 3us 4us 5us)
SWEEP_S=$((RATE_SECONDS < 3 ? RATE_SECONDS : 3))
echo "== 2b. misura period sweep: ${SWEEP[*]}, ${SWEEP_S}s each"
for p in "${SWEEP[@]}"; do
    run_ok $((SWEEP_S + 120)) "$WORK/misura_sweep_$p.json" \
        "$MISURA" oneway --netns "$TESTER_NS" --tx p1 --rx p2 --duration "${SWEEP_S}s" \
        --period "$p" --sizes 46 --engine loop --cpu "$CPU" --json -q
done
{ echo "sweep_periods=${SWEEP[*]}"; echo "sweep_seconds=$SWEEP_S"; } >>"$WORK/params.txt"

# ---------------------------------------------------------------- 2c. engine
# The frame engine (misura oneway in engine mode): every frame sequenced,
# counted and kernel-RX-stamped through a TPACKET_V3 ring, a latency stream
# inside it; offered at 100 % of the veth's nominal 10 Gb/s, so it sends as
# fast as each transmit path can. Same CPU as trafgen; --cores 2 on CPUs 0,1.
ENGINES=(mmap packet xdp)
echo "== 2c. frame engine: ${ENGINES[*]} (1 core) and mmap on 2 cores, ${RATE_SECONDS}s x $REPEAT"
for ((i = 1; i <= REPEAT; i++)); do
    for e in "${ENGINES[@]}" packet2 mmap2; do
        f=$WORK/engine_${e}_$i
        eng=$e cores=1 cpu=$CPU
        if [ "$e" = mmap2 ]; then eng=mmap cores=2 cpu=0; fi
        if [ "$e" = packet2 ]; then eng=packet cores=2 cpu=0; fi
        rx0=$(counter "$TESTER_NS" p2 rx_packets)
        rc=0
        run $((RATE_SECONDS + 60)) "$f.json" /usr/bin/time -v -o "$f.time" \
            "$MISURA" oneway --netns "$TESTER_NS" --tx p1 --rx p2 --duration "${RATE_SECONDS}s" \
            --load 100% --sizes 46 --engine "$eng" --cores "$cores" --cpu "$cpu" --json -q || rc=$?
        rx1=$(counter "$TESTER_NS" p2 rx_packets)
        { echo "p2_rx_packets=$((rx1 - rx0))"; echo "exit=$rc"; } >"$f.counters"
    done
done
echo "engines=${ENGINES[*]} packet2 mmap2" >>"$WORK/params.txt"
# Memory over long engine runs: flat RSS from 10 s to 60 s (and, with --long,
# --long-max seconds: ~10^9 frames at 2 M frames/s takes 500 s).
ENGINE_MEM=(10 60)
((LONG)) && ENGINE_MEM+=("$LONG_MAX")
for d in "${ENGINE_MEM[@]}"; do
    run_ok $((d + 120)) "$WORK/engine_mem_$d.json" /usr/bin/time -v -o "$WORK/engine_mem_$d.time" \
        "$MISURA" oneway --netns "$TESTER_NS" --tx p1 --rx p2 --duration "${d}s" \
        --load 100% --sizes 46 --engine mmap --cpu "$CPU" --json -q
done
echo "engine_mem=${ENGINE_MEM[*]}" >>"$WORK/params.txt"

# ---------------------------------------------------------------- 3. memory
echo "== 3. memory: misura maximum resident set size vs --count"
RATE_EST=$("$PY" - "$WORK" "$REPEAT" <<'EOF'
import json, statistics, sys
work, n = sys.argv[1], int(sys.argv[2])
r = [json.load(open(f"{work}/misura_rate_{i}.json"))["loop_stats"]["achieved_rate_fps"] for i in range(1, n + 1)]
print(int(max(1.0, statistics.median(r))))
EOF
)
MEM_COUNTS=(100000 1000000)
((LONG)) && MEM_COUNTS+=(10000000)
for c in "${MEM_COUNTS[@]}"; do
    est=$((c / RATE_EST + 1))
    if ((est > LONG_MAX)); then
        echo "   --count $c would take ~${est}s at ${RATE_EST} frames/s: bounded by --duration ${LONG_MAX}s instead"
        echo "bounded_duration_s=$LONG_MAX" >"$WORK/mem_$c.mode"
        run_ok $((LONG_MAX + 180)) "$WORK/mem_$c.json" /usr/bin/time -v -o "$WORK/mem_$c.time" \
            "$MISURA" oneway --netns "$TESTER_NS" --tx p1 --rx p2 --duration "${LONG_MAX}s" \
            --period 1us --sizes 46 --engine loop --cpu "$CPU" -q --json
    else
        echo "   --count $c: ~${est}s at ${RATE_EST} frames/s"
        echo "count=$c" >"$WORK/mem_$c.mode"
        run_ok $((est * 10 + 120)) "$WORK/mem_$c.json" /usr/bin/time -v -o "$WORK/mem_$c.time" \
            "$MISURA" oneway --netns "$TESTER_NS" --tx p1 --rx p2 --count "$c" \
            --period 1us --sizes 46 --engine loop --cpu "$CPU" -q --json
    fi
done
echo "mem_counts=${MEM_COUNTS[*]}" >>"$WORK/params.txt"

# ---------------------------------------------------------------- report
report bench_report.py
