#!/usr/bin/env bash
# The kernel's floor under misura reflect's turnaround on this host: a bare
# C echo loop with the same kernel stamps (scripts/floor/echo_floor.c,
# driven by a small Python client: the turnaround is taken on the server
# alone) beside misura reflect (driven by misura rtt), same pinning,
# sleeping and spinning. Whatever misura adds is the
# difference between the two lines of a mode.
#
#   sudo scripts/floor.sh [--count N] [--cpu C] [--server-cpu S]
#
# Defaults: 2000 requests at 1000/s, client CPU 1, server CPU 0. Needs root,
# gcc and python3 (gcc installed with apt-get when missing). Builds its own lab
# (prefix misura-floor-) and removes it on exit.
set -euo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
PREFIX=misura-floor-; N=2000; C=1; S=0; MISURA="$REPO/target/release/misura"
while (($#)); do
    case "$1" in
        --count) N=$2; shift 2 ;;
        --cpu) C=$2; shift 2 ;;
        --server-cpu) S=$2; shift 2 ;;
        --misura) MISURA=$2; shift 2 ;;
        -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
        *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
    esac
done
[ "$(id -u)" = 0 ] || { echo "floor: needs root" >&2; exit 1; }
[[ "$N" =~ ^[0-9]+$ ]] && ((N >= 100 && N <= 100000)) || { echo "--count must be 100..100000" >&2; exit 2; }
need=()
command -v gcc >/dev/null || need+=(gcc libc6-dev)
if ((${#need[@]})); then DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null; fi
[ -x "$MISURA" ] || (cd "$REPO" && cargo build --release --locked)
WORK=$(mktemp -d /tmp/misura-floor.XXXXXX)
gcc -O2 -o "$WORK/echo_floor" "$REPO/scripts/floor/echo_floor.c"
cleanup() { pkill -f "$WORK/echo_floor" 2>/dev/null || true; "$MISURA" lab down --prefix "$PREFIX" >/dev/null 2>&1 || true; }
trap cleanup EXIT
"$MISURA" lab up --topology hosts --prefix "$PREFIX" --no-store >/dev/null
H1=${PREFIX}h1; H2=${PREFIX}h2; ADDR=198.18.0.2
for mode in sleep spin; do
    spin=(); bp=()
    if [ $mode = spin ]; then spin=(spin); bp=(--busy-poll); fi
    ip netns exec "$H2" taskset -c "$S" "$WORK/echo_floor" "$ADDR" 11111 "$N" "${spin[@]}" >"$WORK/echo_$mode.txt" &
    ep=$!; sleep 0.3
    ip netns exec "$H1" taskset -c "$C" timeout 120 python3 -c '
import socket, sys, time
n = int(sys.argv[1]); s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(0.5)
t = time.monotonic()
for i in range(n + 50):
    t += 0.001
    s.sendto(bytes(44), ("198.18.0.2", 11111))
    try:
        s.recv(100)
    except socket.timeout:
        pass
    d = t - time.monotonic()
    if d > 0:
        time.sleep(d)
' "$N" || true
    kill "$ep" 2>/dev/null || true
    wait "$ep" || true
    ip netns exec "$H2" taskset -c "$S" "$MISURA" reflect --listen "$ADDR" --port 8620 --cpu "$S" -q --no-store "${bp[@]}" >/dev/null 2>&1 &
    rp=$!; sleep 0.3
    ip netns exec "$H1" taskset -c "$C" "$MISURA" rtt "$ADDR:8620" --count "$N" --period 1ms --cpu "$C" -q --no-store --json "${bp[@]}" >"$WORK/rtt_$mode.json" || true
    kill -INT "$rp"; wait "$rp" 2>/dev/null || true
    echo "== $mode (server CPU $S, client CPU $C)"
    echo "  $(cat "$WORK/echo_$mode.txt")"
    python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))['overall']['turnaround']
print('  misura reflect turnaround over %d requests: p50 %.2f us, min %.2f us, p90 %.2f us' % (d['count'], d['median_ns'] / 1e3, d['min_ns'] / 1e3, d['p90_ns'] / 1e3))" "$WORK/rtt_$mode.json"
done
