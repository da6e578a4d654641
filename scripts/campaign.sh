#!/usr/bin/env bash
# misura's own attack campaign (issue 13), run on demand, as root:
#   scripts/campaign.sh            the full campaign (a few minutes, no fuzzing)
#   scripts/campaign.sh --quick    the CI-sized subset (under 2 minutes)
#   scripts/campaign.sh --long     10 minutes of flood, 10 minutes per fuzz target
#   scripts/campaign.sh --fuzz 60  also run every fuzz target for 60 s
#   scripts/campaign.sh --only agent_http,serve_attacks   some parts only (--help lists them)
# Everything runs inside network namespaces it makes and removes itself.
set -euo pipefail
exec python3 "$(dirname "$0")/campaign/campaign.py" "$@"
