#!/usr/bin/env bash
# Writes `simulate --json` of every shipped scenario, with both engines, into DIR, so that
# a change meant to keep behaviour can be checked byte for byte:
#   tools/json_snapshot.sh /tmp/before; (change, rebuild); tools/json_snapshot.sh /tmp/after
#   diff -r /tmp/before /tmp/after
set -uo pipefail
out=${1:?usage: tools/json_snapshot.sh DIR [BUILD_DIR]}
build=${2:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
for scenario in "$root"/scenarios/*.textproto; do
  name=$(basename "$scenario" .textproto)
  for engine in analytic simgrid; do
    # Failing scenarios (out of memory, real-rank only) are part of the snapshot too.
    "$build/pipetwin" simulate "$scenario" --engine "$engine" --json \
      > "$out/$name.$engine.json" 2> "$out/$name.$engine.stderr"
    echo "exit $?" >> "$out/$name.$engine.stderr"
  done
done
echo "$(ls "$out" | wc -l) files in $out"
