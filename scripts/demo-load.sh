#!/usr/bin/env bash
# The demo of `misura load` (issue 12): the same TCP load (4 streams each way)
# through a bloated router queue and through a well-managed one, side by
# side, on the routed lab: h1 - router - h2 with a 20 Mbit/s bottleneck on
# the router's egress. The well-managed queue is fq_codel where the kernel
# has it, else (said so) a small tbf queue of 16 KB.
#
#   sudo scripts/demo-load.sh [--rate 20M] [--duration 10] [--idle 3] [--out DIR]
#
# Writes DIR/bloated.json, DIR/managed.json and an HTML page of each
# (default DIR: ./misura-demo-load). Nothing is kept in the results store.
# The lab is misura-dl-*, removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
rate=20M duration=10 idle=3 out=misura-demo-load
while (($#)); do
    case $1 in
    --rate) rate=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --idle) idle=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h | --help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "demo-load: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
[ "$(id -u)" = 0 ] || { echo "demo-load: needs root (network namespaces): sudo $0" >&2; exit 1; }
[ -x "$HOME/.cargo/bin/cargo" ] && export PATH="$HOME/.cargo/bin:$PATH"
[ -n "${MISURA:-}" ] || { cargo build --release --locked -q -p misura; MISURA=./target/release/misura; }
m=$(realpath "$MISURA")
mkdir -p "$out"
P=misura-dl-
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    "$m" --no-store lab down --prefix $P >/dev/null 2>&1 || true
}
trap cleanup EXIT INT TERM

# One load run through the router shaped as $1; the result in $2.
run() {
    "$m" --no-store lab up --topology routed --prefix $P --shape "$1" >/dev/null
    if ((${#pids[@]} == 0)); then
        ip netns exec ${P}h2 "$m" --no-store serve -q >"$out/serve.txt" 2>&1 & pids+=($!)
        ip netns exec ${P}h2 "$m" --no-store reflect -q >"$out/reflect.txt" 2>&1 & pids+=($!)
        sleep 1
    fi
    echo "== $1: misura load, 4 TCP streams up and 4 down, ${duration} s between idle phases of ${idle} s" >&2
    "$m" --no-store load 198.18.1.2 --netns ${P}h1 --duration "${duration}s" --idle "${idle}s" \
        --period 10ms -q --export-json "$2" >/dev/null
    "$m" --no-store report "$2" --html "${2%.json}.html" >/dev/null
}

run "$rate,queue=500K" "$out/bloated.json"
managed="$rate,qdisc=fq_codel"
if ! "$m" --no-store lab up --topology routed --prefix $P --shape "$managed" >/dev/null 2>"$out/fq_codel.err"; then
    echo "demo-load: $(head -n1 "$out/fq_codel.err")" >&2
    echo "demo-load: the well-managed queue is a small tbf queue (16 KB) instead" >&2
    managed="$rate,queue=16K"
fi
run "$managed" "$out/managed.json"

python3 - "$out/bloated.json" "$out/managed.json" "$rate,queue=500K" "$managed" <<'EOF'
import json, sys
runs = [json.load(open(f)) for f in sys.argv[1:3]]
names = sys.argv[3:5]
ms = lambda v: "-" if v is None else f"{v / 1e6:.2f}"
def ph(r, name):
    return next((p for p in r["phases"] if p["name"] == name), None)
print(f"\n{'':<34}" + "".join(f"{n:>24}" for n in names))
rows = [
    ("idle network RTT p50, ms", lambda r: ms(ph(r, "idle")["network_rtt"]["median_ns"])),
    ("loaded network RTT p50, ms", lambda r: ms(ph(r, "loaded")["network_rtt"]["median_ns"])),
    ("loaded network RTT p99, ms", lambda r: ms(ph(r, "loaded")["network_rtt"]["p99_ns"])),
    ("loaded forward p50, ms", lambda r: ms((ph(r, "loaded")["forward"] or {}).get("median_ns"))),
    ("loaded backward p50, ms", lambda r: ms((ph(r, "loaded")["backward"] or {}).get("median_ns"))),
    ("inflation (network RTT), ms", lambda r: ms(r["inflation"]["network_rtt_ns"])),
    ("throughput under load, Mbit/s", lambda r: f"{ph(r, 'loaded')['total_bps'] / 1e6:.1f}"),
    ("responsiveness, RPM", lambda r: f"{r['responsiveness']['rpm_network'] or 0:.0f}"),
    ("probes lost (loaded)", lambda r: str(ph(r, "loaded")["lost"])),
]
for label, f in rows:
    print(f"{label:<34}" + "".join(f"{f(r):>24}" for r in runs))
print("\nforward/backward use the idle phase's clock offset; RPM is 60 s over the loaded median"
      " network RTT of misura's probes (not the draft's HTTP procedure)")
EOF
echo "pages: $out/bloated.html $out/managed.html" >&2
