#!/usr/bin/env python3
"""Megatron-LM's GPT weak-scaling table (Narayanan et al., "Efficient Large-Scale Language
Model Training on GPU Clusters Using Megatron-LM", SC'21, table 1) predicted by pipetwin.

Every row: a GPT of the row's blocks, hidden size and heads, 2048-token sequences, a
51,200-word vocabulary, on DGX A100 80GB nodes (dgx-a100 preset: NVSwitch inside a node, one
200 Gb/s HDR InfiniBand port per GPU), fp16 with fp32 master weights and Adam, every block
recomputed (training.recompute: FULL), the row's tensor- and pipeline-parallel sizes and data
parallelism over the rest of its GPUs, configured as the paper's own launch script
(Megatron-LM's examples/sc21/run_table_1.sh) runs it:
  * its microbatch size (16 sequences for the smallest models down to 1 for the largest);
  * its interleaved 1F1B where it sets --num-layers-per-virtual-pipeline-stage (the 76B to
    530B rows, 2 or 3 model chunks per GPU), 1F1B elsewhere;
  * Megatron-LM's placement: the same number of blocks in every model chunk, the embedding
    on the first and the logits on the last (schedule.partition);
  * its data parallelism: PyTorch's DistributedDataParallel for the four models without a
    pipeline (25 MB gradient buckets all-reduced as the backward fills them), Megatron-LM's
    own for the rest (every model chunk's gradients all-reduced in one block once the whole
    schedule has run, training.grad_reduce_after_flush).

NVLink carries what NCCL moves over it: 80% of the preset's 300 GB/s line rate (NCCL's
protocol overhead, about 20% by its maintainers' account: 370 of H100's 450 GB/s in
github.com/NVIDIA/nccl-tests/issues/212), assumed, not fitted. The tensor-parallel
collectives of a backward follow it (training.tensor_parallel_grad_overlap off):
Megatron-LM overlapped them only later.

Throughput is counted as the paper counts it: F = 96 B s l h^2 (1 + s/(6h) + V/(16 l h))
FLOPs per step (the recomputed forward included), divided by the step time and the GPUs.

Three cost models, each with its `efficiency` (the fraction of the 312 TFLOP/s peak the
GEMMs reach) fitted on the first row only (no pipeline, no tensor parallelism) and then held
for the nine others:
  flat:          every kernel at `efficiency` (model.zoo.memory_efficiency 0);
  memory-bound:  the layernorms, softmax, dropout, GeLU and residual adds, and the optimizer
                 step, timed by the bytes they move at 80% of the A100's 2,039 GB/s
                 (memory_efficiency 0.8, assumed, not fitted);
  GEMM shapes:   the memory-bound model with each GEMM timed on the A100's curve
                 (cluster.gpu.gemm_efficiency, its peak_fraction the fitted number).

    bench/megatron_weak_scaling.py [build/pipetwin] [--engine simgrid] [--memory-efficiency M]
                                   [--nvlink-share S]
"""
import argparse
import atexit
import os
import re
import json
import subprocess
import sys

SCENARIO = "scenarios/megatron-gpt-145b-1536gpu.textproto"
# The share of an NVLink's line rate the collectives are given, and the A100's line rate (GB/s
# each way, the dgx-a100 preset's). 1: the GPU presets price collectives with NCCL's own tuning
# model, whose channel graphs take NCCL's share of the line rate (docs/network.md); with
# textbook rings (cluster.collectives.model=TEXTBOOK) 0.8 stood for it.
NCCL_NVLINK_SHARE = 1.0
A100_NVLINK = 300


def nvlink_as_nccl_moves_it(line_rate):
    return "cluster.intra_node.bandwidth_gbytes_per_s=%g" % (NCCL_NVLINK_SHARE * line_rate)


SEQ, VOCAB = 2048, 51200
# torch.nn.parallel.DistributedDataParallel's bucket_cap_mb default.
TORCH_DDP_BUCKET_MB = 25

# params (billions), heads, hidden, blocks, TP, PP, GPUs, batch, microbatch size and model
# chunks per device as the paper's own launch script sets them (Megatron-LM's
# examples/sc21/run_table_1.sh: MBS and --num-layers-per-virtual-pipeline-stage), TFLOP/s per
# GPU (published), and the script's --DDP-impl: PyTorch's DistributedDataParallel (torch)
# all-reduces 25 MB gradient buckets as the backward fills them; Megatron-LM's own (local)
# all-reduces every model chunk's in one block once the schedule has returned (its
# train_step calls allreduce_gradients after forward_backward_func)
ROWS = [
    (1.7, 24, 2304, 24, 1, 1, 32, 512, 16, 1, "torch", 137),
    (3.6, 32, 3072, 30, 2, 1, 64, 512, 16, 1, "torch", 138),
    (7.5, 32, 4096, 36, 4, 1, 128, 512, 16, 1, "torch", 142),
    (18.4, 48, 6144, 40, 8, 1, 256, 1024, 8, 1, "torch", 135),
    (39.1, 64, 8192, 48, 8, 2, 512, 1536, 4, 1, "local", 138),
    (76.1, 80, 10240, 60, 8, 4, 1024, 1792, 2, 3, "local", 140),
    (145.6, 96, 12288, 80, 8, 8, 1536, 2304, 2, 2, "local", 148),
    (310.1, 128, 16384, 96, 8, 16, 1920, 2160, 1, 2, "local", 155),
    (529.6, 128, 20480, 105, 8, 35, 2520, 2520, 1, 3, "local", 163),
    (1008.0, 160, 25600, 128, 8, 64, 3072, 3072, 1, 1, "local", 163),
]


def paper_flops(batch, hidden, blocks):
    s, h, l, v = SEQ, hidden, blocks, VOCAB
    return 96.0 * batch * s * l * h * h * (1 + s / (6.0 * h) + v / (16.0 * l * h))


def megatron_partition(blocks, chunks):
    """Megatron-LM's placement: the same number of blocks in every model chunk, the embedding
    with the first and the final norm and logits with the last (pipetwin's zoo layers)."""
    per = blocks // chunks
    sizes = [per] * chunks
    sizes[0] += 1
    sizes[-1] += 1
    return sizes


COPIES = set()


def without_flat_efficiency(path):
    """A copy of the scenario at `path` without its model.zoo.efficiency, so that the GPU's
    GEMM curve times the model: beside the original (its relative paths hold), under a name
    the build does not embed (not *.textproto), written afresh on every call (a scratch
    scenario may have changed) and removed at exit."""
    copy = os.path.join(os.path.dirname(path), "." + os.path.basename(path) + ".gemm-shapes")
    with open(path) as f:
        text = re.sub(r"([^_])efficiency: [0-9.]+", r"\1", f.read(), count=1)
    with open(copy, "w") as f:
        f.write(text)
    if not COPIES:
        atexit.register(lambda: [os.remove(c) for c in COPIES if os.path.exists(c)])
    COPIES.add(copy)
    return copy


def simulate(args, row, efficiency, memory_efficiency, shape=False):
    """`efficiency` is the flat model.zoo.efficiency, or with `shape` the GEMM curve's
    cluster.gpu.gemm_efficiency.peak_fraction."""
    _, heads, hidden, blocks, tp, pp, gpus, batch, mbs, chunks, ddp, _ = row
    dp = gpus // (tp * pp)
    fitted = ("cluster.gpu.gemm_efficiency.peak_fraction=%g" if shape
              else "model.zoo.efficiency=%g") % efficiency
    sets = ["model.zoo.layers=%d" % blocks, "model.zoo.hidden=%d" % hidden,
            "model.zoo.heads=%d" % heads, fitted,
            "model.zoo.memory_efficiency=%g" % memory_efficiency,
            "cluster.nodes=%d" % ((gpus + 7) // 8), "training.global_batch=%d" % batch,
            "training.data_parallel=%d" % dp, "training.microbatches=%d" % (batch // dp // mbs),
            "training.tensor_parallel=%d" % tp, "schedule.stages=%d" % pp,
            "schedule.kind=%s" % ("INTERLEAVED_ONE_F_ONE_B" if chunks > 1 else "ONE_F_ONE_B"),
            "schedule.virtual_stages=%d" % chunks,
            "schedule.partition=[%s]" % ",".join(map(str, megatron_partition(blocks, pp * chunks))),
            "training.grad_bucket_mb=%d" % (TORCH_DDP_BUCKET_MB if ddp == "torch" else 0),
            "training.grad_reduce_after_flush=%s" % ("false" if ddp == "torch" else "true"),
            nvlink_as_nccl_moves_it(A100_NVLINK)]
    scenario = without_flat_efficiency(SCENARIO) if shape else SCENARIO
    command = [args.pipetwin, "simulate", scenario, "--engine", args.engine, "--json",
               "--allow-oom", "--max-memory", "16"]
    for s in sets:
        command += ["--set", s]
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit("%s: %s" % (" ".join(command), run.stderr.strip()))
    result = json.loads(run.stdout)
    step = result["iteration_time_s"]
    peak = max(d["peak_memory_bytes"] for d in result["devices"]) / 1024.0 ** 3
    return paper_flops(batch, hidden, blocks) / step / gpus / 1e12, step, peak


def bisect(score, target, lo=0.1, hi=1.0, steps=25):
    """The efficiency in [lo, hi] at which score(efficiency), rising with it, meets the
    target."""
    for _ in range(steps):
        mid = (lo + hi) / 2
        if score(mid) < target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def fit_efficiency(args, memory_efficiency, shape=False):
    """The efficiency at which the first row reaches its published TFLOP/s."""
    return bisect(lambda e: simulate(args, ROWS[0], e, memory_efficiency, shape)[0],
                  ROWS[0][-1], lo=0.2, steps=30)


MODELS = []


def main():
    global NCCL_NVLINK_SHARE
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("pipetwin", nargs="?", default="build/pipetwin")
    parser.add_argument("--engine", default="analytic", choices=["analytic", "simgrid"])
    parser.add_argument("--memory-efficiency", type=float, default=0.8)
    parser.add_argument("--nvlink-share", type=float, default=NCCL_NVLINK_SHARE,
                        help="the share of NVLink's line rate NCCL's collectives reach")
    args = parser.parse_args()
    NCCL_NVLINK_SHARE = args.nvlink_share
    MODELS[:] = [("flat", 0.0, False), ("memory-bound", args.memory_efficiency, False),
                 ("GEMM shapes", args.memory_efficiency, True)]
    fitted = [fit_efficiency(args, m, shape) for _, m, shape in MODELS]
    for (name, m, shape), e in zip(MODELS, fitted):
        print("%s: %s %.4f (fitted on the 1.7B row), memory_efficiency %g" %
              (name, "gemm_efficiency.peak_fraction" if shape else "efficiency", e, m))
    print("\n| parameters (B) | TP | PP | DP | GPUs | batch | published TFLOP/s per GPU | "
          "flat | error | memory-bound | error | GEMM shapes | error | step (s) | peak (GiB) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | "
          "--- |")
    errors = [[] for _ in MODELS]
    for i, row in enumerate(ROWS):
        params, _, _, _, tp, pp, gpus, batch, _, _, _, published = row
        cells = []
        for k, ((_, m, shape), e) in enumerate(zip(MODELS, fitted)):
            tflops, step, peak = simulate(args, row, e, m, shape)
            error = (tflops - published) / published
            if i > 0:
                errors[k].append(abs(error))
            cells.append("%.0f | %s" % (tflops, "fitted" if i == 0 else "%+.1f%%" % (100 * error)))
        print("| %s | %d | %d | %d | %d | %d | %d | %s | %.2f | %.1f%s |" %
              (params, tp, pp, gpus // (tp * pp), gpus, batch, published, " | ".join(cells),
               step, peak, " (out of memory)" if peak > 80 else ""))
    print()
    for (name, _, _), e in zip(MODELS, errors):
        print("%s, the nine rows not fitted: mean |error| %.1f%%, largest %.1f%%" %
              (name, 100 * sum(e) / len(e), 100 * max(e)))


if __name__ == "__main__":
    main()
