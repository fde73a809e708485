#!/usr/bin/env bash
# Runs every libFuzzer harness of BUILD_DIR for SECONDS each, JOBS at a time, and fails when any
# of them finds a crash, a sanitizer report, a leak, a hang (-timeout) or an OOM (-rss_limit_mb).
#   fuzz/run_fuzzers.sh BUILD_DIR SECONDS [JOBS] [HARNESS...]
# Each harness starts from its committed seeds (fuzz/corpus/NAME, read only) and from what
# earlier runs found (BUILD_DIR/corpus/NAME, where new inputs go). FUZZ_SEED=0 draws a new seed
# per run: exploration, which finds something new on one machine and not on another.
# A bounded run (CI) sets FUZZ_RUNS: each harness then executes FUZZ_RUNS inputs from
# libFuzzer's seed FUZZ_SEED (default 1), starting from the committed seeds alone (new inputs
# go to a scratch corpus that is emptied first), so a slow machine fuzzes as much as a fast
# one; SECONDS only caps it. Two such runs start alike and stay close, but are not identical:
# libFuzzer follows the coverage it observes, which varies slightly between runs. Findings land in
# BUILD_DIR/artifacts/NAME/, the full output in BUILD_DIR/logs/NAME.log; a finding replays with
#   BUILD_DIR/fuzz/NAME BUILD_DIR/artifacts/NAME/crash-...
set -uo pipefail
cd "$(dirname "$0")/.."

build=${1:?usage: fuzz/run_fuzzers.sh BUILD_DIR SECONDS [JOBS] [HARNESS...]}
seconds=${2:?usage: fuzz/run_fuzzers.sh BUILD_DIR SECONDS [JOBS] [HARNESS...]}
jobs=${3:-1}
shift $(($# < 3 ? $# : 3))
harnesses=("$@")
if [ ${#harnesses[@]} -eq 0 ]; then
  # Slowest first (inputs per second under CI's budget), so that JOBS at a time end together.
  harnesses=(launch_config_fuzzer scenario_fuzzer set_override_fuzzer op_trace_fuzzer
             pipedream_profile_fuzzer chrome_trace_fuzzer kineto_trace_fuzzer freeze_log_fuzzer
             timeline_fuzzer op_trace_meta_fuzzer annotation_map_fuzzer hf_config_fuzzer
             chakra_import_fuzzer sweep_csv_fuzzer)
fi

# Leaks are findings too (LeakSanitizer runs at the end of each input's process only when
# libFuzzer exits, and on -detect_leaks inputs as it goes).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

run_one() {
  local name=$1
  local binary=$build/fuzz/$name
  local dict=()
  [ -f "fuzz/dict/$name.dict" ] && dict=(-dict="fuzz/dict/$name.dict")
  local corpus=$build/corpus/$name
  local budget=()
  if [ -n "${FUZZ_RUNS:-}" ]; then
    corpus=$build/corpus-bounded/$name
    rm -rf "$corpus"
    budget=(-runs="$FUZZ_RUNS" -reload=0)
  fi
  mkdir -p "$corpus" "$build/artifacts/$name" "$build/logs"
  "$binary" -max_total_time="$seconds" "${budget[@]}" -seed="${FUZZ_SEED:-1}" -rss_limit_mb=2048 \
    -timeout=10 -print_final_stats=1 \
    -artifact_prefix="$build/artifacts/$name/" "${dict[@]}" \
    "$corpus" "fuzz/corpus/$name" >"$build/logs/$name.log" 2>&1
  echo $? >"$build/logs/$name.rc"
}

for name in "${harnesses[@]}"; do
  if [ ! -x "$build/fuzz/$name" ]; then
    echo "fuzz: $build/fuzz/$name is not built (make fuzz builds it)" >&2
    exit 2
  fi
  rm -f "$build/logs/$name.rc"
done

running=0
for name in "${harnesses[@]}"; do
  if [ "$running" -ge "$jobs" ]; then
    wait -n
    running=$((running - 1))
  fi
  echo "fuzz: $name for ${FUZZ_RUNS:+$FUZZ_RUNS inputs, at most }${seconds}s"
  run_one "$name" &
  running=$((running + 1))
done
wait

failed=0
printf '%-26s %12s %8s %8s %10s  %s\n' harness executions exec/s cov ft result
for name in "${harnesses[@]}"; do
  log=$build/logs/$name.log
  rc=$(cat "$build/logs/$name.rc" 2>/dev/null || echo 99)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | cut -d' ' -f2)
  ft=$(grep -oE 'ft: [0-9]+' "$log" | tail -1 | cut -d' ' -f2)
  result=ok
  if [ "$rc" != 0 ]; then
    result="FAILED (exit $rc): $(grep -m1 -E 'terminate called|Assertion|ERROR:|runtime error|Test unit written|deadly signal' "$log")"
    failed=1
  fi
  printf '%-26s %12s %8s %8s %10s  %s\n' "$name" "${execs:-?}" "${speed:-?}" "${cov:-?}" \
    "${ft:-?}" "$result"
done
if [ "$failed" -ne 0 ]; then
  # The reports themselves, so that a CI log alone says what broke and where.
  for name in "${harnesses[@]}"; do
    [ "$(cat "$build/logs/$name.rc" 2>/dev/null || echo 99)" = 0 ] && continue
    echo "--- $name" >&2
    grep -v -E '^#[0-9]+|NEW_FUNC' "$build/logs/$name.log" | tail -n 40 >&2
  done
  echo "fuzz: findings above; logs in $build/logs, inputs in $build/artifacts" >&2
  exit 1
fi
