#!/usr/bin/env python3
"""BF16 GEMM throughput over shapes on one GPU, the data a shape-aware efficiency curve is held
against: each row times C[m,n] = A[m,k] @ B[k,n] (PyTorch's matmul, which calls cuBLAS) with
CUDA events, three warm-ups, then the median and the fastest of REPEATS runs.

Three grids:
  * "layers": the GEMMs transformers run (hidden 1024 to 8192, FFN 14336 and 28672, GQA's
    narrow K/V projections, tensor-parallel splits of them) for m from 128 to 16384 rows;
  * "waves": n = k = 4096 and m from 64 to 4096 in steps of 64, where the step pattern of
    tiles over the GPU's multiprocessors shows;
  * "experts": what one GPU's routed experts multiply in the mixture-of-experts runs
    bench/published.py holds pipetwin against (EXPERT_GEMMS: the local experts' count and one
    expert's m x n x k, forward and the backward's two), timed as `count` GEMMs launched back
    to back (grid "experts", as a GEMM per expert) and, where PyTorch has it, as one grouped
    GEMM (grid "experts-grouped", torch._grouped_mm). m, n, k are one expert's; the times are
    the whole group's, and the last column gives the count.

  python3 bench/gemm_shapes.py OUT.csv [REPEATS]      (needs PyTorch with a CUDA device)
"""
import csv
import statistics
import sys

import torch


def time_call(run, repeats):
    """The median and the fastest of `repeats` timed calls of `run`, after three warm-ups."""
    for _ in range(3):
        run()
    times = []
    for _ in range(repeats):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        run()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    return statistics.median(times), min(times)


def time_gemm(m, n, k, repeats):
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    return time_call(lambda: torch.matmul(a, b, out=c), repeats)


# One GPU's routed experts in each Megatron-Core run of bench/published.py, as pipetwin lowers
# them (sim/model/shape_efficiency.h): the run, the local experts, and one expert's forward
# GEMMs (up and gate fused, then down) of m rows, its tokens per microbatch gathered from the
# expert-parallel (and, with ETP = TP, tensor-parallel) group.
EXPERT_GEMMS = [
    ("Mixtral-8x22B TP2 EP4", 2, 4096, [(16384, 6144), (6144, 8192)]),
    ("Qwen2-57B-A14B TP2 EP4", 16, 2048, [(2560, 3584), (3584, 1280)]),
    ("Mixtral-8x22B-G8T8 TP2 EP8", 8, 4096, [(2048, 6144), (6144, 1024)]),
    ("Llama3-8x70B TP8 EP4", 2, 4096, [(7168, 8192), (8192, 3584)]),
    ("Qwen3-235B-A22B TP2 EP32 ETP1", 4, 4096, [(3072, 4096), (4096, 1536)]),
    ("Qwen3-235B-A22B TP4 EP8 ETP1", 16, 512, [(3072, 4096), (4096, 1536)]),
    ("DeepSeek-V3 EP64", 4, 8192, [(4096, 7168), (7168, 2048)]),
]


def expert_shapes():
    """Each expert GEMM of EXPERT_GEMMS and the backward's two: the input gradient (m x k over
    n) and the weight gradient (k x n over m)."""
    for _, count, m, gemms in EXPERT_GEMMS:
        for n, k in gemms:
            for shape in ((m, n, k), (m, k, n), (k, n, m)):
                yield (count,) + shape


def time_experts(count, m, n, k, repeats, grouped):
    """`count` GEMMs of m x n x k, one launch each or one grouped launch, as one time."""
    a = torch.randn(count * m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(count, k, n, device="cuda", dtype=torch.bfloat16)
    if grouped:
        offsets = torch.arange(m, count * m + 1, m, device="cuda", dtype=torch.int32)
        return time_call(lambda: torch._grouped_mm(a, b, offs=offsets), repeats)
    outs = [torch.empty(m, n, device="cuda", dtype=torch.bfloat16) for _ in range(count)]
    return time_call(lambda: [torch.matmul(a[e * m:(e + 1) * m], b[e], out=outs[e])
                              for e in range(count)], repeats)


def shapes():
    rows = [128, 256, 512, 1024, 2048, 4096, 8192, 16384]
    # (n, k): output width and depth of the layer GEMMs people run.
    layers = [(1024, 4096), (4096, 4096), (6144, 4096), (14336, 4096), (4096, 14336),
              (8192, 8192), (1024, 8192), (28672, 8192), (8192, 28672), (3584, 8192),
              (8192, 3584), (1024, 1024), (2048, 2048), (512, 4096), (128256, 4096)]
    for n, k in layers:
        for m in rows:
            yield "layers", m, n, k
    for m in range(64, 4096 + 1, 64):
        yield "waves", m, 4096, 4096


def main():
    out = sys.argv[1]
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    props = torch.cuda.get_device_properties(0)
    with open(out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["# device", props.name, "sms", props.multi_processor_count,
                    "torch", torch.__version__, "cuda", torch.version.cuda])
        w.writerow(["grid", "m", "n", "k", "median_s", "min_s", "tflops_median", "tflops_max",
                    "count"])

        def row(grid, m, n, k, count, med, best):
            flops = 2.0 * m * n * k * count
            w.writerow([grid, m, n, k, f"{med:.6e}", f"{best:.6e}", f"{flops / med / 1e12:.1f}",
                        f"{flops / best / 1e12:.1f}", count])

        for grid, m, n, k in shapes():
            row(grid, m, n, k, 1, *time_gemm(m, n, k, repeats))
        grouped = hasattr(torch, "_grouped_mm")
        for count, m, n, k in expert_shapes():
            row("experts", m, n, k, count, *time_experts(count, m, n, k, repeats, False))
            if grouped:
                try:
                    times = time_experts(count, m, n, k, repeats, True)
                except RuntimeError as e:  # a shape or GPU the grouped kernel does not take
                    print("experts-grouped %d x %dx%dx%d: %s" % (count, m, n, k, e))
                    continue
                row("experts-grouped", m, n, k, count, *times)
    print("wrote", out)


if __name__ == "__main__":
    main()
