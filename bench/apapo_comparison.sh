#!/bin/sh
# The APapo comparison of docs/results.md: for each real PipeDream profile, the steady-state
# throughput, weight staleness and peak memory of GPipe and 1F1B on a time-balanced chain,
# 1F1B on the planner's partition, and the asynchronous pipelines on it.
#   bench/apapo_comparison.sh [build/pipetwin]
set -eu
pipetwin=${1:-build/pipetwin}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
row() {  # label, scenario, extra --set arguments
  label=$1; scenario=$2; shift 2
  "$pipetwin" simulate "$scenario" --set training.iterations=8 "$@" --json | python3 -c '
import json, sys
j = json.load(sys.stdin)
peak = max(d["peak_memory_bytes"] for d in j["devices"]) / 2**30
exposed = sum(d["exposed_comm_s"] for d in j["devices"])
print("| %-34s | %8.1f | %5d / %4.2f | %6.2f | %8.1f |" % (sys.argv[1],
      j["steady_state_throughput_samples_per_s"], j["weight_staleness"]["max"],
      j["weight_staleness"]["mean"], peak, exposed * 1e3))' "$label"
}
for scenario in scenarios/vgg16-pipedream-4gpu.textproto scenarios/gnmt-pipedream-8gpu.textproto \
                scenarios/resnet50-pipedream-16gpu.textproto; do
  name=$(basename "$scenario" .textproto)
  plan="$tmp/$name.plan.textproto"
  "$pipetwin" plan "$scenario" --search pipedream --straight --write-plan "$plan" >/dev/null 2>&1
  stages=$(grep -o 'stages: [0-9]*' "$scenario" | head -1 | cut -d' ' -f2)
  echo
  echo "$name"
  echo
  echo "| schedule                           | samples/s | staleness max / mean | peak GiB | exposed comm ms |"
  echo "| --- | --- | --- | --- | --- |"
  row "GPipe, time-balanced chain" "$scenario" --set schedule.kind=GPIPE
  row "1F1B, time-balanced chain" "$scenario" --set schedule.kind=ONE_F_ONE_B
  row "1F1B, DP partition" "$plan" --set schedule.kind=ONE_F_ONE_B
  row "PIPEDREAM_ASYNC, DP partition" "$plan" --set schedule.kind=PIPEDREAM_ASYNC
  row "PIPEDREAM_2BW, DP partition" "$plan" --set schedule.kind=PIPEDREAM_2BW
  row "1F1B, DP partition, blocking p2p" "$plan" --set schedule.kind=ONE_F_ONE_B \
      --set schedule.comm_overlap=false
  row "APAPO, DP partition, overlap" "$plan" --set schedule.kind=APAPO \
      --set schedule.max_staleness="$stages"
done
