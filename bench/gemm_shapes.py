#!/usr/bin/env python3
"""BF16 GEMM throughput over shapes on one GPU, the data a shape-aware efficiency curve is held
against: each row times C[m,n] = A[m,k] @ B[k,n] (PyTorch's matmul, which calls cuBLAS) with
CUDA events, three warm-ups, then the median and the fastest of REPEATS runs.

Two grids:
  * "layers": the GEMMs transformers run (hidden 1024 to 8192, FFN 14336 and 28672, GQA's
    narrow K/V projections, tensor-parallel splits of them) for m from 128 to 16384 rows;
  * "waves": n = k = 4096 and m from 64 to 4096 in steps of 64, where the step pattern of
    tiles over the GPU's multiprocessors shows.

  python3 bench/gemm_shapes.py OUT.csv [REPEATS]      (needs PyTorch with a CUDA device)
"""
import csv
import statistics
import sys

import torch


def time_gemm(m, n, k, repeats):
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    for _ in range(3):
        torch.matmul(a, b, out=c)
    times = []
    for _ in range(repeats):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        torch.matmul(a, b, out=c)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    return statistics.median(times), min(times)


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
        w.writerow(["grid", "m", "n", "k", "median_s", "min_s", "tflops_median", "tflops_max"])
        for grid, m, n, k in shapes():
            med, best = time_gemm(m, n, k, repeats)
            flops = 2.0 * m * n * k
            w.writerow([grid, m, n, k, f"{med:.6e}", f"{best:.6e}", f"{flops / med / 1e12:.1f}",
                        f"{flops / best / 1e12:.1f}"])
    print("wrote", out)


if __name__ == "__main__":
    main()
