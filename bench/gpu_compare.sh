#!/usr/bin/env bash
# Compares each replay of bench/gpu_replay.sh with its simulation: the same scenario and
# overrides through `pipetwin simulate`, then `pipetwin compare` (FreezePipe runs: the
# phases' iteration times side by side). Needs `pipetwin` (SimGrid), not a GPU.
#   bench/gpu_compare.sh RESULTS_DIR [NAME...]     (default: every replay in the folder)
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
pipetwin=${PIPETWIN:-$here/build/pipetwin}
dir=$1
shift
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  for f in "$dir"/*.scenario; do names+=("$(basename "$f" .scenario)"); done
fi
for name in "${names[@]}"; do
  [ -s "$dir/$name.json" ] || { echo "== $name: no report (the replay failed)"; continue; }
  # Scenario paths were the GPU machine's: keep what follows its checkout.
  scenario=$(sed -E 's#^.*/(scenarios|\.gpu)/#\1/#' "$dir/$name.scenario")
  args=()
  while IFS= read -r o; do [ -n "$o" ] && args+=(--set "$o"); done < "$dir/$name.overrides"
  echo "== $name ($scenario)"
  if grep -q '"phases"' "$dir/$name.json"; then
    "$pipetwin" simulate "$scenario" "${args[@]}" --json > "$dir/$name.sim.json" || continue
    python3 - "$dir/$name.sim.json" "$dir/$name.json" <<'PY'
import json, sys
sim, real = (json.load(open(p)) for p in sys.argv[1:3])
print(f"{'iterations':<12}{'frozen':>7}{'simulated':>12}{'measured':>12}{'ratio':>8}")
for s, r in zip(sim["phases"], real["phases"]):
    last = s["first_iteration"] + s["iterations"] - 1
    ratio = r["iteration_time_s"] / s["iteration_time_s"]
    print(f"{s['first_iteration']}-{last:<8}{s['frozen_layers']:>7}"
          f"{s['iteration_time_s'] * 1e3:>10.1f}ms{r['iteration_time_s'] * 1e3:>10.1f}ms{ratio:>8.3f}")
print(f"training time: simulated {sim['training_time_s']:.2f} s, measured {real['training_time_s']:.2f} s")
PY
    continue
  fi
  "$pipetwin" simulate "$scenario" "${args[@]}" --allow-oom --timeline "$dir/$name.sim.pb" > /dev/null || continue
  "$pipetwin" compare "$dir/$name.sim.pb" "$dir/$name.measured.pb" --labels simulated,measured | sed -n '4,20p'
done
