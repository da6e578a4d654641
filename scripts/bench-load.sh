#!/usr/bin/env bash
# Latency under load: misura load beside irtt under iperf3 on the routed lab,
# and the --cpu-load sweep (issue 12). As root; see scripts/bench_load.py.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x target/release/misura ] || cargo build --release -q -p misura
exec python3 scripts/bench_load.py "$@"
