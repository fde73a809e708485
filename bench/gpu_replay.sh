#!/usr/bin/env bash
# The GPU figures of docs/gpu.md: `pipetwin run --backend cuda` on the scenarios below, each with
# its JSON report, Perfetto trace and measured timeline in OUT_DIR, and the CUDA probe's
# calibration. Compare each with its simulation afterwards (bench/gpu_compare.sh, which
# needs `pipetwin` with SimGrid; this script needs only pipetwin-real and the GPUs).
#   bench/gpu_replay.sh [OUT_DIR]          (PIPETWIN_REAL, PIPETWIN_PROBE: other binaries;
#                                           ONLY="name ...": those replays alone)
# On a machine with fewer GPUs than a scenario has stages, the ranks share GPUs (see
# docs/backend.md): the run exercises the schedule, its timings are not a cluster's.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
real=${PIPETWIN_REAL:-$here/build/pipetwin-real}
probe=${PIPETWIN_PROBE:-$here/build/pipetwin-cuda-probe}
out=${1:-gpu-replay}
mkdir -p "$out"

nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv > "$out/gpu.csv" 2>&1
"$probe" > "$out/probe.json" 2> "$out/probe.err"
echo "probe rc=$?"

# name, scenario, overrides...: one replay.
replay() {
  local name=$1 scenario=$2
  shift 2
  if [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $name "* ]]; then return; fi
  local args=()
  for o in "$@"; do args+=(--set "$o"); done
  echo "== $name"
  local start=$SECONDS
  local limit=${REPLAY_TIMEOUT:-100}
  timeout $((limit + 10)) "$real" run "$scenario" --backend cuda --timeout "$limit" "${args[@]}" --json \
    --trace "$out/$name.trace.json" --timeline "$out/$name.measured.pb" \
    > "$out/$name.json" 2> "$out/$name.err"
  echo "rc=$? in $((SECONDS - start)) s"
  tail -c 600 "$out/$name.err"
  printf '%s\n' "$@" > "$out/$name.overrides"
  echo "$scenario" > "$out/$name.scenario"
}

# One GPU, the whole model on it: compute and memory alone (GEMMs sized to the FLOPs).
replay quickstart-1gpu builtin:quickstart cluster.preset=dgx-h100 cluster.gpus_per_node=1 schedule.stages=1
# Measured layer times (a PipeDream profile): timed kernels instead of GEMMs.
replay vgg16-profile-1gpu scenarios/vgg16-pipedream-4gpu.textproto cluster.gpus_per_node=1 schedule.stages=1
# The pipelines themselves, one rank per stage.
replay quickstart builtin:quickstart cluster.preset=dgx-h100
replay umpipe-plan "${UMPIPE_PLAN:-$here/scenarios/umpipe-gpt1-14.textproto}" cluster.preset=dgx-h100
replay offload-2stage scenarios/offload-gpt-a100.textproto cluster.preset=dgx-h100 cluster.gpus_per_node=2 \
  schedule.stages=2 model.zoo.layers=4 training.microbatches=8 'schedule.offload=prefetch_horizon: 2'
# Activation offload on one GPU (GPipe keeps every stash until the backwards): the copies
# cross the real PCIe link, against the preset's host link.
replay offload-1gpu scenarios/offload-gpt-a100.textproto cluster.preset=dgx-h100 cluster.gpus_per_node=1 \
  schedule.stages=1 model.zoo.layers=2 training.microbatches=8 schedule.kind=GPIPE \
  'schedule.offload=policy: ALL prefetch_horizon: 2'
# The same without offload: what the copies cost the compute.
replay gpipe-1gpu scenarios/offload-gpt-a100.textproto cluster.preset=dgx-h100 cluster.gpus_per_node=1 \
  schedule.stages=1 model.zoo.layers=2 training.microbatches=8 schedule.kind=GPIPE
# Data parallelism: two pipelines of two stages, each stage's gradients all-reduced.
replay quickstart-dp2 builtin:quickstart cluster.preset=dgx-h100 schedule.stages=2 training.data_parallel=2 \
  model.zoo.layers=8
# FreezePipe: the phases simulate plans (synthetic gradients), each replayed for 2
# iterations, and the migrations between them. On one GPU: freezing alone.
replay freeze-1gpu builtin:freezepipe-gpt-8gpu cluster.preset=dgx-h100 cluster.gpus_per_node=1 \
  schedule.stages=1 training.global_batch=8 training.microbatches=8 schedule.kind=ONE_F_ONE_B \
  training.iterations=200
replay freeze-2stage builtin:freezepipe-gpt-8gpu cluster.preset=dgx-h100 cluster.gpus_per_node=2 \
  schedule.stages=2 training.global_batch=8 training.microbatches=8 schedule.kind=ONE_F_ONE_B \
  training.iterations=200
# Memory pressure: three layers fit the 80 GB GPU only with offload (78.1 GiB predicted,
# 96.0 GiB without, weights and optimizer state included); without it the replay must
# fail with the allocation it could not make.
replay offload-fits-1gpu scenarios/offload-gpt-a100.textproto cluster.preset=dgx-h100 \
  cluster.gpus_per_node=1 schedule.stages=1 model.zoo.layers=3 training.microbatches=8 \
  schedule.kind=GPIPE 'schedule.offload=policy: ALL prefetch_horizon: 2'
replay no-offload-oom-1gpu scenarios/offload-gpt-a100.textproto cluster.preset=dgx-h100 \
  cluster.gpus_per_node=1 schedule.stages=1 model.zoo.layers=3 training.microbatches=8 \
  schedule.kind=GPIPE
# PipeDream with its stashed weight versions offloaded: every update copies the version it
# overwrites to the host, and each stale backward waits for its copy back (two stages:
# with one GPU, two ranks share it).
replay pipedream-weights scenarios/offload-gpt-a100.textproto cluster.preset=dgx-h100 \
  cluster.gpus_per_node=2 schedule.stages=2 model.zoo.layers=4 training.microbatches=8 \
  training.iterations=3 schedule.kind=PIPEDREAM_ASYNC 'schedule.offload=prefetch_horizon: 1 weight_stashes: true'
# Tensor parallelism: one stage on two GPUs, each pass's all-reduces as NCCL all-reduces.
replay tp2 builtin:quickstart cluster.preset=dgx-h100 cluster.gpus_per_node=2 schedule.stages=1 \
  training.tensor_parallel=2
# A transformer read from its Hugging Face config: Llama-3-8B's widths, two blocks, one GPU.
replay llama3-8b-2layers-1gpu builtin:llama3-8b-64gpu cluster.nodes=1 cluster.gpus_per_node=1 \
  model.zoo.layers=2 training.data_parallel=1 training.global_batch=8 training.microbatches=8 \
  schedule.stages=1
# Expert parallelism: one Mixtral-8x7B block, its experts over two ranks, each pass's dispatch
# and combine as NCCL all-to-alls.
replay mixtral-ep2-2ranks builtin:mixtral-8x7b-64gpu cluster.nodes=1 cluster.gpus_per_node=2 \
  model.zoo.layers=1 training.data_parallel=2 training.expert_parallel=2 training.global_batch=8 \
  training.microbatches=4 schedule.stages=1
# Sharded data parallelism: the quickstart's first two blocks on two data-parallel ranks.
# ZeRO-1 reduce-scatters the gradients, updates a shard and all-gathers the weights; ZeRO-3
# also all-gathers each layer's weights before every forward and backward.
replay zero1-dp2 builtin:quickstart cluster.preset=dgx-h100 cluster.gpus_per_node=2 schedule.stages=1 \
  training.data_parallel=2 model.zoo.layers=2 training.iterations=1 training.zero_stage=1
replay zero3-dp2 builtin:quickstart cluster.preset=dgx-h100 cluster.gpus_per_node=2 schedule.stages=1 \
  training.data_parallel=2 model.zoo.layers=2 training.iterations=1 training.zero_stage=3
# Context parallelism: the quickstart's sequences split over two ranks, their keys and values
# exchanged as NCCL all-gathers and reduce-scatters (ring) or all-to-alls (Ulysses).
replay cp2-ring builtin:quickstart cluster.preset=dgx-h100 cluster.gpus_per_node=2 schedule.stages=1 \
  model.zoo.layers=2 training.iterations=1 training.context_parallel=2
replay cp2-ulysses builtin:quickstart cluster.preset=dgx-h100 cluster.gpus_per_node=2 schedule.stages=1 \
  model.zoo.layers=2 training.iterations=1 training.context_parallel=2 \
  training.context_parallel_algorithm=ULYSSES
