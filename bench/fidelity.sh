#!/usr/bin/env bash
# The validation matrix (docs/fidelity.md): calibrate on one configuration's measured run,
# predict others, run them, report the errors. Run on a quiet machine (no build running).
#   bench/fidelity.sh [--repeat 5] [--out build/fidelity] [--only mlp,gpt,vgg] [--pin]
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x build/pipetwin-real ] || { echo "build first: make build" >&2; exit 1; }
exec python3 bench/fidelity.py "$@"
