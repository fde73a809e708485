#!/usr/bin/env bash
# Wall time and peak memory of one 1 MiB ring all-reduce over N devices
# (bench/scenarios/allreduce-1mib.textproto) on both engines, with the simulated time and
# the closed form. Run it on a quiet machine:  bench/allreduce_scaling.sh [N...]
set -euo pipefail
cd "$(dirname "$0")/.."
pipetwin=${PIPETWIN:-build/pipetwin}
sizes=("$@")
[ ${#sizes[@]} -eq 0 ] && sizes=(512 1024 4096)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '%-6s %-9s %14s %14s %9s %9s\n' N engine simulated "closed form" wall "peak RSS"
for n in "${sizes[@]}"; do
  closed=$(python3 -c "n=$n; print('%.3f us' % ((2*(n-1)/n*1048576/(50*2**30) + 2*(n-1)*0.5e-6)*1e6))")
  for engine in simgrid analytic; do
    /usr/bin/time -f '%e %M' -o "$work/time" "$pipetwin" simulate \
      bench/scenarios/allreduce-1mib.textproto --engine "$engine" --json \
      --set cluster.gpus_per_node="$n" --set training.data_parallel="$n" \
      --set training.global_batch="$n" >"$work/out.json"
    simulated=$(python3 -c "import json; print('%.3f us' % (json.load(open('$work/out.json'))['iteration_time_s'] * 1e6))")
    read -r wall rss <"$work/time"
    printf '%-6s %-9s %14s %14s %8ss %6d MB\n' "$n" "$engine" "$simulated" "$closed" "$wall" \
      $((rss / 1024))
  done
done
