#!/usr/bin/env bash
# How often rfc2544's verdict is found, inconclusive or wrong (issue 37), run on
# demand, as root: a matrix of SUTs (shaper with a 1 MB queue, policer, none),
# frame sizes (64, 512, 1518) and host loads (idle, a busy loop per CPU), N runs each.
#   scripts/verdicts.sh                 the whole matrix, 5 runs a cell (about an hour)
#   scripts/verdicts.sh --quick         the CI matrix: the shaper at 1518 and 512 B, 3 runs
#   scripts/verdicts.sh --suts policer --sizes 1518 --hosts idle,busy --repeats 10
#   scripts/verdicts.sh --misura target/debug/misura --json runs.json
#   scripts/verdicts.sh --quick --baseline OLD/misura     an older build, run for run beside this one
# Everything runs inside network namespaces it makes (misura-v<pid>-*) and removes.
set -euo pipefail
exec python3 "$(dirname "$0")/verdicts.py" "$@"
