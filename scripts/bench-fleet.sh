#!/usr/bin/env bash
# The agent's archive at scale (issue 14): results/s archived to ClickHouse
# (per-run and per-probe rows), agent RSS and fds with 100 targets, catch-up
# after a one-minute ClickHouse outage (--outage 60), and what N agents
# (--agents 4) put on ClickHouse and VictoriaMetrics. Needs clickhouse-server
# and victoria-metrics (Debian), as root; see scripts/bench_fleet.py.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x /usr/sbin/clickhouse-server ] || { echo "needs clickhouse-server (apt-get install clickhouse-server)" >&2; exit 1; }
command -v victoria-metrics >/dev/null || { echo "needs victoria-metrics (apt-get install victoria-metrics)" >&2; exit 1; }
cargo build --release -q -p misura
exec python3 scripts/bench_fleet.py "$@"
