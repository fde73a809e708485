#!/usr/bin/env python3
"""Every published training throughput pipetwin can be held against, in one table.

Each row: the published configuration simulated as written, the published figure, pipetwin's,
and the error. One number is fitted per GPU type, on one row (marked "fitted"): the GEMM
efficiency (model.zoo.efficiency). Every other row is a prediction. Memory-bound kernels and
the optimizer step run at 80% of the GPU's memory bandwidth (model.zoo.memory_efficiency 0.8,
assumed, not fitted).
Collectives are NCCL's choice and NCCL's time by its tuning model, as the GPU presets set
(docs/network.md): its channel graphs take NCCL's own share of NVLink's line rate. Megatron-Core and the Megatron-LM of Korthikanti et al. run a backward's
tensor-parallel collectives under its weight-gradient GEMMs
(training.tensor_parallel_grad_overlap); the Megatron-LM of the SC'21 table and Meta's
Llama 3 rows (whose framework is not public) are simulated without.

Sources:
  A100  Korthikanti et al., "Reducing Activation Recomputation in Large Transformer
        Models", MLSys'23, table 4: one block of their 22B GPT (hidden 6144, 64 heads,
        2048-token sequences, micro-batch 4, TP 8 on one DGX A100), its forward and backward
        times without recomputation, with sequence parallelism, with full and selective
        recomputation, and selective with sequence parallelism. pipetwin's block time is the
        difference between the model with two blocks and with one (each pass with its
        tensor-parallel collectives). Fitted on the forward without recomputation: one
        block's GEMMs timed alone, with no pipeline, data parallelism or optimizer step.
        Also Megatron-LM, Narayanan et al., SC'21, table 1: GPT weak scaling, 1.7B to 1T,
        each row as the paper's launch script runs it (bench/megatron_weak_scaling.py).
        And Korthikanti et al.'s whole steps (tables 3 and 5): a 22B, 175B, 530B and 1T GPT
        without data parallelism, full recomputation against selective recomputation with
        sequence parallelism; plain 1F1B and microbatches of one are assumed (the paper
        names neither).
  H100  Megatron-Core MoE, Liu et al., "MoE Parallel Folding", arXiv:2504.14960, tables 3 and
        4, the "MCore" mappings (attention and experts share TP; no folding): Mixtral-8x22B,
        Qwen2-57B-A14B, Mixtral-8x22B-G8T8 (64 experts of 1/8 the width, top-8) and
        Llama3-8x70B (Llama-3-70B upcycled to 8 experts; top-2 assumed), BF16, sequences of
        4096, capacity factor 1 (token dropping), global batch 256 (table 3) or 1024 (table 4,
        strong scaling). Fitted on Mixtral-8x22B at 128 GPUs, batch 256. Micro-batch size 1
        and no virtual pipeline are assumed (the paper does not say). Launched as Megatron-Core
        launches every run (MCORE_LAUNCH): its default rank order, tp-cp-ep-dp-pp, and its
        distributed optimizer; its blocks split evenly over the stages (megatron_stages).
        Also Llama 3.1 405B as Meta trained it (Llama 3 paper, "The Llama 3 Herd of Models",
        arXiv:2407.21783, table 4): 8192 and 16384 GPUs, TP 8, PP 16, no context parallelism,
        16M tokens per step in 8192-token sequences, 430 and 400 TFLOP/s per GPU; the
        interleaved schedule with 2 virtual stages is assumed (the paper tunes its own).
        Meta's FSDP shards the optimizer states and the gradients and keeps the weights
        gathered between forward and backward: ZeRO stage 2 (training.zero_stage=2).
        The same table's long-context row: 16384 GPUs, TP 8, CP 16, PP 16 (DP 8), 131072-token
        sequences, 16M tokens per step, 380 TFLOP/s per GPU; Meta's context parallelism
        all-gathers the keys and values (context_parallel_algorithm=ALL_GATHER).
        And the MoE runs of 2025-26 with the experts folded (MoE parallel folding), predicted
        with the fitted number, seconds per step: Qwen3-235B-A22B on 256 H100s as the
        Megatron-MoE model zoo ran it (github.com/yanring/Megatron-MoE-ModelZoo,
        best_practice/qwen3/readme.md, H100 table: TP 2, PP 8 with 4 virtual stages, EP 32,
        ETP 1, DeepEP, 2048 sequences; 17.6 s with the all-to-alls overlapped, 19.7 s without;
        scenarios/qwen3-235b-256gpu.textproto; and the table's three intra-node EP 8 layouts:
        FSDP with full recomputation 17.6 s, NCCL's all-to-all on 32 stages 24.2 s, TP 4
        29.0 s), and DeepSeek-V3 with FSDP2 as NeMo AutoModel's
        performance summary ran it (github.com/NVIDIA-NeMo/Automodel, docs/performance-
        summary: PP 4 with 8 virtual stages, EP 64, FSDP over each stage's GPUs, full
        recomputation, DeepEP; 256 GPUs and 512 sequences 8.18 s, 1024 GPUs and 8192 sequences
        37.87 s; scenarios/deepseek-v3-fsdp-256gpu.textproto).
  H800  DeepSeek-V3 technical report, arXiv:2412.19437: 180K H800 GPU hours per trillion
        tokens on 2048 GPUs (PP 16 with DualPipe, EP 64, no TP), batch 15360 of 4096 tokens.
        Predicted with the H100's fitted efficiency (the H800 has the H100's compute), twice:
        in BF16 with NCCL's all-to-all, and as the report says it trained (GEMMs in FP8 with
        tile scales, FP8 dispatch, each token to at most 4 nodes by DeepEP-style kernels,
        expert groups on consecutive nodes, ZeRO-1: DEEPSEEK_AS_TRAINED).

  FP8   NVIDIA's DGX Cloud benchmarking recipes (github.com/NVIDIA/dgxc-benchmarking, tags
        v25.03 and v25.05.05, README "Expected Performance" tables, NeMo 24.12 and 25.04): the
        same Llama 3.1 layout run in BF16 and in FP8 (current scaling), seconds per step; the
        row is the FP8 speedup, BF16 time over FP8 time, and its error is in points of it.
        Nothing is fitted on them: the H100 rows run on the preset's GEMM curve (its
        peak_fraction fitted once on bench/data's cuBLAS GEMMs), the GB200 row on the curve
        fitted below.
  GB200 MLPerf Training v5.0, Llama 3.1 405B, NVIDIA's 256-GB200 submission (training_results_
        v5.0/NVIDIA, the run's logged train_step_time): 19.15 s per step, FP8, TP 4, PP 8 with
        8 virtual stages, CP 2, 448 sequences of 8192 tokens (scenarios/llama3-405b-fp8-gb200-
        256gpu.textproto). Fitted: the GB200 curve's peak_fraction. Predicted from it: the
        512-H100 submission (55.1 s, the H100 curve as shipped, scenarios/llama3-405b-fp8-h100-
        512gpu.textproto), MLPerf's other 405B runs on 2048 H100s, 512 GB200s, 512 H200s (v5.1,
        Nebius) and 256 B200s (v5.1, University of Florida), the GB200 FP8/BF16 pair above,
        and DeepSeek-V3 in MXFP8 on 256
        GB200s as NVIDIA's Megatron-Bridge 26.08 performance summary runs it (TP 1, PP 4 with
        4 virtual stages, EP 64, 4096 sequences of 4096 tokens, 4912 tokens/s per GPU;
        scenarios/deepseek-v3-mxfp8-gb200-256gpu.textproto, Megatron-Core's rank order).

  NCCL  nccl-tests' all-reduce bus bandwidth: NVIDIA's sample output for one DGX H100 (NVLS
        on; github.com/NVIDIA/dgxc-benchmarking, nccl/README.md) at 16 MiB to 8 GiB, and a full
        GB200 NVL72 rack (72 GPUs) as CoreWeave measured it (github.com/coreweave/nccl-tests,
        pull 43; a third party). One all-reduce of the gradients of one layer over the
        replicas, priced by NCCL's tuning model on the preset; nothing fitted.

  Memory: ZeRO, Rajbhandari et al., SC'20, table 1 (and figure 1): the memory per GPU of
        the model states of a 7.5B and a 128B model, mixed-precision Adam, under ZeRO stages
        1, 2 and 3 at data-parallel degrees 4, 16 and 64. pipetwin simulates each as 1000
        equal layers on one pipeline stage, without activations, and reads the peak memory.
        Nothing is fitted; stage 3 differs by the two layers pipetwin holds gathered, which
        the paper's table leaves out.

MFU counts model FLOPs as pipetwin's transformer does (docs/models.md): 6 x (the matrix
weights a token goes through) + 12 x s x (query heads x head width) per token for attention
(not halved for the causal mask), over 989.5 TFLOP/s per H100/H800. The paper does not state
its formula; counting the attention halved would lower MFU by about 3%.

With --gemm-shapes the fitted number per GPU type is the GEMM curve's peak_fraction
(cluster.gpu.gemm_efficiency: wave quantisation over the GPU's multiprocessors and a
roofline, docs/models.md) instead of the flat efficiency; everything else is the same.

    bench/published.py [build/pipetwin] [--engine analytic|simgrid] [--gemm-shapes]
                       [--nvlink-share S] [--no-grad-overlap] [--only-2026]
                       [--only-folded H100_EFFICIENCY] [--h100 VALUE] [--pipetwin-order]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import megatron_weak_scaling as megatron  # noqa: E402

H100_PEAK = 989.5e12
# NVLink line rates of the presets (GB/s each way); every row runs at what NCCL moves over
# them (megatron.NCCL_NVLINK_SHARE).
H100_NVLINK, H800_NVLINK = 450, 200
# Whether the Megatron-Core and Korthikanti rows overlap a backward's tensor-parallel
# collectives with its weight gradients, as their Megatron-LM did (--no-grad-overlap: not).
GRAD_OVERLAP = ["true"]
BASE = os.path.join(ROOT, "scenarios", "mixtral-8x7b-64gpu.textproto")
MODELS = os.path.join(ROOT, "scenarios", "models")

# name, config, zoo overrides
MOE_MODELS = {
    "Mixtral-8x22B": ("mixtral-8x22b.json", []),
    "Qwen2-57B-A14B": ("qwen2-57b-a14b.json", []),
    "Mixtral-8x22B-G8T8": ("mixtral-8x22b.json", ["model.zoo.moe.experts=64",
                                                  "model.zoo.moe.top_k=8",
                                                  "model.zoo.moe.expert_ffn_hidden=2048"]),
    "Llama3-8x70B": ("llama3-70b.json", ["model.zoo.moe.experts=8", "model.zoo.moe.top_k=2",
                                         "model.zoo.moe.expert_ffn_hidden=28672"]),
}
# model, GPUs, TP, EP, PP, global batch, published MFU (%), source
MOE_ROWS = [
    ("Mixtral-8x22B", 128, 2, 4, 8, 256, 46.3, "table 3"),
    ("Qwen2-57B-A14B", 64, 2, 4, 4, 256, 35.3, "table 3"),
    ("Mixtral-8x22B-G8T8", 128, 2, 8, 8, 256, 17.1, "table 3"),
    ("Llama3-8x70B", 256, 8, 4, 8, 256, 38.8, "table 3"),
    ("Mixtral-8x22B", 128, 2, 4, 8, 1024, 49.4, "table 4"),
    ("Mixtral-8x22B", 256, 2, 4, 8, 1024, 48.0, "table 4"),
    ("Mixtral-8x22B", 512, 2, 4, 8, 1024, 45.5, "table 4"),
    ("Mixtral-8x22B", 1024, 2, 4, 8, 1024, 42.3, "table 4"),
    ("Qwen2-57B-A14B", 64, 2, 4, 4, 1024, 36.2, "table 4"),
    ("Qwen2-57B-A14B", 128, 2, 4, 4, 1024, 36.0, "table 4"),
    ("Qwen2-57B-A14B", 256, 2, 4, 4, 1024, 34.8, "table 4"),
    ("Qwen2-57B-A14B", 512, 2, 4, 4, 1024, 32.5, "table 4"),
    ("Qwen2-57B-A14B", 1024, 2, 4, 4, 1024, 29.8, "table 4"),
    ("Mixtral-8x22B-G8T8", 128, 2, 8, 8, 1024, 19.8, "table 4"),
    ("Mixtral-8x22B-G8T8", 256, 2, 8, 8, 1024, 18.4, "table 4"),
    ("Mixtral-8x22B-G8T8", 512, 2, 8, 8, 1024, 16.3, "table 4"),
    ("Mixtral-8x22B-G8T8", 1024, 2, 8, 8, 1024, 13.4, "table 4"),
    ("Llama3-8x70B", 256, 8, 4, 8, 1024, 40.1, "table 4"),
    ("Llama3-8x70B", 512, 8, 4, 8, 1024, 39.5, "table 4"),
    ("Llama3-8x70B", 1024, 8, 4, 8, 1024, 39.1, "table 4"),
]
SEQ = 4096
# How Megatron-Core launches every run: ranks in its default order, "tp-cp-ep-dp-pp" (a stage's
# tensor- and expert-parallel GPUs consecutive, so an expert group of TP x EP <= 8 GPUs shares
# one node's NVLink; the pipeline stages outermost), and its distributed optimizer (the
# optimizer state sharded over the data-parallel replicas, gradients reduce-scattered and
# weights all-gathered: --use-distributed-optimizer, as the Megatron-MoE model zoo's
# benchmarking configurations set it).
MCORE_LAUNCH = ["training.rank_order=TP_CP_EP_DP_PP", "training.zero_stage=1"]


def megatron_stages(blocks, stages):
    """Megatron-Core's pipeline split: the same number of transformer blocks on every stage,
    the embedding on the first and the final norm and logits on the last (it balances nothing
    by time; pipetwin's default partition would). pipetwin's zoo layers are the embedding,
    the blocks and the head, in that order."""
    per_stage = blocks // stages
    sizes = [per_stage] * stages
    sizes[0] += 1
    sizes[-1] += 1
    return "schedule.partition=" + ",".join(str(x) for x in sizes)


def read_config(name):
    with open(os.path.join(MODELS, name)) as f:
        return json.load(f)


# GPUs, TP, CP, PP, sequence length, published TFLOP/s per GPU (Llama 3.1 405B, 16M tokens
# per step)
LLAMA_405B_ROWS = [(8192, 8, 1, 16, 8192, 430), (16384, 8, 1, 16, 8192, 400),
                   (16384, 8, 16, 16, 131072, 380)]
LLAMA_TOKENS = 2048 * 8192


def flops_per_token(config, overrides, seq=SEQ):
    """Model FLOPs of one token's forward and backward (6 per weight, 12 s a d for attention)."""
    shape = {k.split("=")[0].split(".")[-1]: int(k.split("=")[1]) for k in overrides}
    h, layers = config["hidden_size"], config["num_hidden_layers"]
    heads = config["num_attention_heads"]
    kv = config.get("num_key_value_heads", heads)
    d = config.get("head_dim", h // heads)
    ffn = config["intermediate_size"]
    experts = shape.get("experts", config.get("num_local_experts", config.get("num_experts", 0)))
    top_k = shape.get("top_k", config.get("num_experts_per_tok", 1))
    expert_ffn = shape.get("expert_ffn_hidden", config.get("moe_intermediate_size", ffn))
    shared = config.get("shared_expert_intermediate_size", 0)
    attention = h * heads * d * 2 + h * kv * d * 2
    mlp = 3 * h * (top_k * expert_ffn + shared) + h * experts if experts else 3 * h * ffn
    weights = layers * (attention + mlp) + h * config["vocab_size"]
    return 6 * weights + 12 * seq * heads * d * layers


def scenario_for(args, path):
    """With --gemm-shapes, a copy of the scenario without its flat efficiency, so that the
    GPU's GEMM curve times the model."""
    return megatron.without_flat_efficiency(path) if args.gemm_shapes else path


def fitted_sets(args, sets):
    """The one fitted number: model.zoo.efficiency, or with --gemm-shapes the curve's
    cluster.gpu.gemm_efficiency.peak_fraction."""
    if not args.gemm_shapes:
        return sets
    return [s.replace("model.zoo.efficiency=", "cluster.gpu.gemm_efficiency.peak_fraction=")
            for s in sets]


def run(args, scenario, sets):
    # The 16384-GPU row builds a Program of about 8 million instructions.
    command = [args.pipetwin, "simulate", scenario_for(args, scenario), "--engine", args.engine,
               "--json", "--allow-oom", "--max-memory", "16"]
    for s in fitted_sets(args, sets):
        command += ["--set", s]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit("%s: %s" % (" ".join(command), result.stderr.strip()))
    out = json.loads(result.stdout)
    peak = max(d["peak_memory_bytes"] for d in out["devices"]) / 1024.0 ** 3
    return out["iteration_time_s"], peak


def moe_mfu(args, row, efficiency):
    model, gpus, tp, ep, pp, batch, _, _ = row
    config_name, overrides = MOE_MODELS[model]
    dp = gpus // (tp * pp)
    sets = ["model.hf_config=models/" + config_name, "model.zoo.seq_len=%d" % SEQ,
            "model.zoo.efficiency=%g" % efficiency, "model.zoo.memory_efficiency=0.8",
            "cluster.nodes=%d" % (gpus // 8), "training.global_batch=%d" % batch,
            "training.data_parallel=%d" % dp, "training.microbatches=%d" % (batch // dp),
            "training.tensor_parallel=%d" % tp, "training.sequence_parallel=%s" % (tp > 1),
            "training.expert_parallel=%d" % ep, "schedule.stages=%d" % pp,
            "training.tensor_parallel_grad_overlap=%s" % GRAD_OVERLAP[0],
            megatron.nvlink_as_nccl_moves_it(H100_NVLINK)] + MCORE_LAUNCH
    sets.append("model.zoo.moe.capacity_factor=1")
    sets.append(megatron_stages(read_config(config_name)["num_hidden_layers"], pp))
    step, peak = run(args, BASE, sets + overrides)
    flops = flops_per_token(read_config(config_name), overrides) * batch * SEQ
    return 100 * flops / step / gpus / H100_PEAK, step, peak


def llama_405b_tflops(args, row, efficiency):
    gpus, tp, cp, pp, seq, _ = row
    dp = gpus // (tp * cp * pp)
    batch = LLAMA_TOKENS // seq
    sets = ["model.hf_config=models/llama3.1-405b.json", "model.zoo.seq_len=%d" % seq,
            "model.zoo.efficiency=%g" % efficiency, "model.zoo.memory_efficiency=0.8",
            "cluster.nodes=%d" % (gpus // 8), "training.global_batch=%d" % batch,
            "training.data_parallel=%d" % dp, "training.microbatches=%d" % (batch // dp),
            "training.tensor_parallel=%d" % tp, "training.sequence_parallel=true",
            "training.context_parallel=%d" % cp,
            "training.context_parallel_algorithm=ALL_GATHER",
            "schedule.stages=%d" % pp, "schedule.kind=INTERLEAVED_ONE_F_ONE_B",
            "schedule.virtual_stages=2", "training.zero_stage=2",
            megatron.nvlink_as_nccl_moves_it(H100_NVLINK)]
    step, peak = run(args, os.path.join(ROOT, "scenarios", "llama3-70b-1024gpu.textproto"), sets)
    flops = flops_per_token(read_config("llama3.1-405b.json"), [], seq) * LLAMA_TOKENS
    return flops / step / gpus / 1e12, step, peak


# DeepSeek-V3 as its report says it trained (sections 3.2-3.3): GEMMs in FP8 with 1x128 and
# 128x128 tile scales, tokens dispatched in FP8, each token sent to at most 4 nodes and
# forwarded over NVLink (DeepEP's kernels), expert groups on consecutive nodes, the optimizer
# state sharded over the data-parallel ranks (ZeRO-1).
DEEPSEEK_AS_TRAINED = ["training.precision=FP8_BLOCKWISE", "training.fp8_dispatch=true",
                       "model.zoo.moe.dispatcher=DEEPEP", "model.zoo.moe.max_nodes_per_token=4",
                       "training.rank_order=TP_CP_EP_DP_PP", "training.zero_stage=1"]


def deepseek_tokens_per_gpu(args, efficiency, as_trained=False):
    sets = ["model.zoo.efficiency=%g" % efficiency, "model.zoo.memory_efficiency=0.8",
            "training.global_batch=15360", "training.microbatches=120",
            megatron.nvlink_as_nccl_moves_it(H800_NVLINK)]
    if as_trained:
        sets += DEEPSEEK_AS_TRAINED
    step, peak = run(args, os.path.join(ROOT, "scenarios", "deepseek-v3-2048gpu.textproto"), sets)
    return 15360 * SEQ / step / 2048, step, peak


# MoE runs of 2025-26 on H100s with the experts folded over the tensor- and data-parallel GPUs
# (MoE parallel folding) and, for DeepSeek-V3, sharded by FSDP2: source, model, shipped
# scenario, what differs from it, GPUs, TP, EP, PP, DP, global batch, published seconds per step.
FOLDED_ROWS = [
    ("Megatron-MoE model zoo", "Qwen3-235B-A22B, all-to-alls overlapped",
     "qwen3-235b-256gpu.textproto", [], 256, 2, 32, 8, 16, 2048, 17.6),
    ("Megatron-MoE model zoo", "Qwen3-235B-A22B", "qwen3-235b-256gpu.textproto",
     ["training.overlap_moe_expert_parallel_comm=false"], 256, 2, 32, 8, 16, 2048, 19.7),
    # The same table's intra-node EP layouts: FSDP with full recomputation and microbatches
    # of 4; NCCL's all-to-all on 32 stages of 3 virtual ones; TP 4.
    ("Megatron-MoE model zoo", "Qwen3-235B-A22B, FSDP, EP 8", "qwen3-235b-256gpu.textproto",
     ["schedule.kind=ONE_F_ONE_B", "schedule.stages=1", "schedule.virtual_stages=1",
      "training.data_parallel=128", "training.expert_parallel=8", "training.zero_stage=FSDP",
      "training.recompute=FULL", "training.microbatches=4",
      "training.overlap_moe_expert_parallel_comm=false"], 256, 2, 8, 1, 128, 2048, 17.6),
    ("Megatron-MoE model zoo", "Qwen3-235B-A22B, all-to-all, EP 8", "qwen3-235b-256gpu.textproto",
     ["schedule.stages=32", "schedule.virtual_stages=3", "training.data_parallel=4",
      "training.expert_parallel=8", "training.microbatches=512", "model.zoo.moe.dispatcher=ALLTOALL",
      "training.overlap_moe_expert_parallel_comm=false"], 256, 2, 8, 32, 4, 2048, 24.2),
    ("Megatron-MoE model zoo", "Qwen3-235B-A22B, TP 4, EP 8", "qwen3-235b-256gpu.textproto",
     ["training.tensor_parallel=4", "training.data_parallel=8", "training.expert_parallel=8",
      "training.microbatches=256", "training.overlap_moe_expert_parallel_comm=false"], 256, 4, 8,
     8, 8, 2048, 29.0),
    ("NeMo AutoModel", "DeepSeek-V3, FSDP", "deepseek-v3-fsdp-256gpu.textproto", [], 256, 1, 64,
     4, 64, 512, 8.18),
    ("NeMo AutoModel", "DeepSeek-V3, FSDP", "deepseek-v3-fsdp-256gpu.textproto",
     ["cluster.nodes=128", "training.global_batch=8192", "training.data_parallel=256",
      "training.microbatches=32"], 1024, 1, 64, 4, 256, 8192, 37.87),
]


def folded_moe_rows(args, efficiency, errors):
    """Each row's step with the H100's fitted efficiency; its error in seconds per step (the
    sources count model FLOPs with the causal mask halved, pipetwin's MFU does not)."""
    for source, model, name, more, gpus, tp, ep, pp, dp, batch, published in FOLDED_ROWS:
        sets = ["model.zoo.efficiency=%g" % efficiency, "model.zoo.memory_efficiency=0.8",
                megatron.nvlink_as_nccl_moves_it(H100_NVLINK)] + more
        step, peak = run(args, os.path.join(ROOT, "scenarios", name), sets)
        error = (step - published) / published
        errors.append(("H100 folded", abs(error)))
        print("| %s | %s | %d | %d | %d | %d | %d | %d | %.2f s per step | %.2f s | %+.1f%% "
              "| %.2f | %.1f |" % (source, model, gpus, tp, ep, pp, dp, batch, published, step,
                                   100 * error, step, peak))


# Korthikanti et al. table 4: variant, recompute, sequence parallelism, published forward and
# backward milliseconds of one 22B block.
KORTHIKANTI_ROWS = [("no recomputation", "NONE", False, 7.7, 11.9),
                    ("sequence parallelism", "NONE", True, 7.2, 11.8),
                    ("full recomputation", "FULL", False, 7.7, 19.5),
                    ("selective recomputation", "SELECTIVE", False, 7.7, 13.2),
                    ("selective + sequence parallelism", "SELECTIVE", True, 7.2, 13.1)]


def korthikanti_sets(run, microbatches, recompute, sequence_parallel, efficiency):
    """Korthikanti et al.'s GPT runs on A100s, without data parallelism: `run` is (model,
    heads, hidden, blocks, TP, PP, GPUs, batch)."""
    _, heads, hidden, blocks, tp, pp, gpus, batch = run
    return ["model.zoo.layers=%d" % blocks, "model.zoo.hidden=%d" % hidden,
            "model.zoo.heads=%d" % heads, "model.zoo.efficiency=%g" % efficiency,
            "model.zoo.memory_efficiency=0.8", "cluster.nodes=%d" % ((gpus + 7) // 8),
            "training.global_batch=%d" % batch, "training.microbatches=%d" % microbatches,
            "training.data_parallel=1", "training.tensor_parallel=%d" % tp,
            "schedule.stages=%d" % pp, "training.recompute=" + recompute,
            "training.sequence_parallel=%s" % ("true" if sequence_parallel else "false"),
            "training.tensor_parallel_grad_overlap=%s" % GRAD_OVERLAP[0],
            megatron.nvlink_as_nccl_moves_it(megatron.A100_NVLINK)]


def pass_times_ms(args, blocks, recompute, sequence_parallel, efficiency):
    """The first microbatch's forward and backward on GPU 0, each until its tensor-parallel
    collectives have ended (what a backward's ran under its weight gradients included), from
    the trace of one step."""
    trace = os.path.join(args.scratch, "korthikanti.json")
    sets = korthikanti_sets(("22B", 64, 6144, blocks, 8, 1, 8, 4), 1, recompute,
                            sequence_parallel, efficiency)
    command = [args.pipetwin, "simulate", scenario_for(args, megatron.SCENARIO), "--json",
               "--trace", trace]
    for x in fitted_sets(args, sets):
        command += ["--set", x]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit("%s: %s" % (" ".join(command), result.stderr.strip()))
    with open(trace) as f:
        events = json.load(f)
    events = events["traceEvents"] if isinstance(events, dict) else events
    spans = [e for e in events if e.get("ph") == "X" and e.get("pid", 0) == 0]
    fwd = next(e for e in spans if e["name"].endswith("F0"))
    bwd = next(e for e in spans if e["name"].endswith("B0"))
    # GPU 0's tensor-parallel collectives (all-reduces; with sequence parallelism, a
    # backward's reduce-scatters and all-gathers too).
    reduces = [e for e in spans if e["args"].get("lane") == "collective"]
    lane = min(e["tid"] for e in reduces)  # GPU 0's collective lane
    # The backward starts when the forward's all-reduces have ended.
    forward = bwd["ts"] - fwd["ts"]
    backward = max([bwd["ts"] + bwd["dur"]] +
                   [e["ts"] + e["dur"] for e in reduces
                    if e["tid"] == lane and e["ts"] + e["dur"] > bwd["ts"]]) - bwd["ts"]
    return forward / 1e3, backward / 1e3


def block_times_ms(args, recompute, sequence_parallel, efficiency):
    """One block's forward and backward: the model with two blocks less the model with one."""
    f2, b2 = pass_times_ms(args, 2, recompute, sequence_parallel, efficiency)
    f1, b1 = pass_times_ms(args, 1, recompute, sequence_parallel, efficiency)
    return f2 - f1, b2 - b1


def korthikanti_rows(args, efficiency, errors):
    """The block's times against the paper's; the first row's forward is the fitted one."""
    print("\n| source | 22B block, TP 8 | forward ms (published) | pipetwin | error "
          "| backward ms (published) | pipetwin | error |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for i, (name, recompute, sp, fwd_ms, bwd_ms) in enumerate(KORTHIKANTI_ROWS):
        fwd, bwd = block_times_ms(args, recompute, sp, efficiency)
        ef, eb = (fwd - fwd_ms) / fwd_ms, (bwd - bwd_ms) / bwd_ms
        if i > 0:
            errors.append(("A100 layer", abs(ef)))
        errors.append(("A100 layer", abs(eb)))
        print("| Korthikanti t.4 | %s | %.1f | %.2f | %s | %.1f | %.2f | %+.1f%% |" %
              (name, fwd_ms, fwd, "fitted" if i == 0 else "%+.1f%%" % (100 * ef), bwd_ms, bwd,
               100 * eb))


# Korthikanti et al., tables 3 and 5: whole training steps of four GPTs on A100s without data
# parallelism, with every block recomputed and with selective recomputation and sequence
# parallelism. Model, heads, hidden, blocks, TP, PP, GPUs, batch (2048-token sequences,
# microbatches of one with a pipeline; the 22B runs one microbatch of 4), and the published
# step times in seconds. Their MFU in Megatron-LM's README (41.5, 51.4, 56.0, 56.3%) is the
# selective step times' under Megatron's FLOP count.
KORTHIKANTI_STEPS = [("22B", 64, 6144, 48, 8, 1, 8, 4, 1.42, 1.10),
                     ("175B", 96, 12288, 96, 8, 8, 64, 64, 18.13, 13.75),
                     ("530B", 128, 20480, 105, 8, 35, 280, 280, 49.05, 37.83),
                     ("1T", 160, 25600, 128, 8, 64, 512, 512, 94.42, 71.49)]


def korthikanti_step_s(args, row, recompute, sequence_parallel, efficiency):
    """One step of a Korthikanti et al. run: plain 1F1B over the pipeline (the schedule the
    paper does not name), Megatron-LM's equal blocks per stage."""
    blocks, pp, batch = row[3], row[5], row[7]
    sets = korthikanti_sets(row[:8], 1 if pp == 1 else batch, recompute, sequence_parallel,
                            efficiency)
    partition = ",".join(map(str, megatron.megatron_partition(blocks, pp)))
    sets += ["schedule.kind=ONE_F_ONE_B", "schedule.partition=[%s]" % partition]
    step, _ = run(args, megatron.SCENARIO, sets)
    return step


def korthikanti_step_rows(args, efficiency, errors):
    """The whole steps against the paper's, and the gain of selective recomputation with
    sequence parallelism over full recomputation: nothing fitted on them."""
    print("\n| source | model | GPUs | TP | PP | batch | full recomputation s (published) "
          "| pipetwin | error | selective + SP s (published) | pipetwin | error "
          "| gain (published) | pipetwin |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for row in KORTHIKANTI_STEPS:
        model, _, _, _, tp, pp, gpus, batch, full_s, selective_s = row
        full = korthikanti_step_s(args, row, "FULL", False, efficiency)
        selective = korthikanti_step_s(args, row, "SELECTIVE", True, efficiency)
        ef, es = (full - full_s) / full_s, (selective - selective_s) / selective_s
        errors.append(("A100 step", abs(ef)))
        errors.append(("A100 step", abs(es)))
        print("| Korthikanti t.5 | GPT %s | %d | %d | %d | %d | %.2f | %.2f | %+.1f%% | %.2f "
              "| %.2f | %+.1f%% | %+.1f%% | %+.1f%% |" %
              (model, gpus, tp, pp, batch, full_s, full, 100 * ef, selective_s, selective,
               100 * es, 100 * (full_s / selective_s - 1), 100 * (full / selective - 1)))


# parameters (billions), data-parallel degree, published GB per GPU for stages 1, 2, 3
ZERO_ROWS = [(7.5, 4, (52.5, 41.3, 30)), (7.5, 16, (35.6, 21.6, 7.5)),
             (7.5, 64, (31.4, 16.6, 1.88)), (128, 4, (896, 704, 512)),
             (128, 16, (608, 368, 128)), (128, 64, (536, 284, 32))]
ZERO_LAYERS = 1000


def zero_memory_gb(args, billions, dp, stage):
    """The peak memory of one GPU holding a model of `billions` parameters under ZeRO."""
    layer = int(billions * 1e9 * 4 / ZERO_LAYERS)  # fp32 bytes of each layer's parameters
    text = ('name: "zero-table"\ncluster { preset: "dgx-a100" nodes: %d gpus_per_node: %d }\n'
            'model {\n%s}\n'
            "training { global_batch: %d microbatches: 1 data_parallel: %d precision: BF16 "
            "mixed_precision: true optimizer: ADAM zero_stage: ZERO_%d }\n"
            "schedule { kind: GPIPE stages: 1 }\n" %
            (max(1, dp // 8), min(dp, 8), "".join(
                '  layers { name: "l%d" fwd_ms: 1 bwd_ms: 2 parameter_bytes: %d }\n' % (i, layer)
                for i in range(ZERO_LAYERS)), dp, dp, stage))
    path = os.path.join(args.scratch, "zero-table.textproto")
    with open(path, "w") as f:
        f.write(text)
    _, peak = run(args, path, [])
    return peak * 1024.0 ** 3 / 1e9


def memory_rows(args, errors):
    """The model states' memory under ZeRO against the paper's table: nothing fitted."""
    print("\n| source | model | DP | ZeRO stage | published (GB) | pipetwin (GB) | error |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for billions, dp, published in ZERO_ROWS:
        for stage in (1, 2, 3):
            gb = zero_memory_gb(args, billions, dp, stage)
            error = (gb - published[stage - 1]) / published[stage - 1]
            errors.append(("memory", abs(error)))
            print("| ZeRO SC'20 t.1 | %gB | %d | %d | %g | %.2f | %+.1f%% |" %
                  (billions, dp, stage, published[stage - 1], gb, 100 * error))


# The FP8/BF16 pairs: model, GPU, config, nodes, TP, PP, CP, virtual stages, batch, published
# BF16 and FP8 seconds per step, source.
FP8_PAIRS = [
    ("Llama 3.1 8B", "H100", "llama3-8b.json", 1, 1, 1, 2, 1, 128, 12.78, 9.44, "dgxc v25.03"),
    ("Llama 3.1 70B", "H100", "llama3-70b.json", 8, 4, 4, 2, 5, 128, 14.61, 10.46, "dgxc v25.03"),
    ("Llama 3.1 405B", "H100", "llama3.1-405b.json", 64, 8, 8, 2, 8, 256, 19.81, 13.02,
     "dgxc v25.05.05"),
    ("Llama 3.1 405B", "GB200", "llama3.1-405b.json", 32, 4, 8, 2, 8, 64, 9.347, 6.131,
     "dgxc v25.05.05"),
]
MLPERF_H100 = os.path.join(ROOT, "scenarios", "llama3-405b-fp8-h100-512gpu.textproto")
MLPERF_GB200 = os.path.join(ROOT, "scenarios", "llama3-405b-fp8-gb200-256gpu.textproto")
DEEPSEEK_GB200 = os.path.join(ROOT, "scenarios", "deepseek-v3-mxfp8-gb200-256gpu.textproto")


# More MLPerf Llama 3.1 405B runs (the runs' logged train_step_time, seconds): round, GPUs,
# preset, GPUs per node, TP, global batch, published step. All FP8, PP 8 with 8 virtual stages
# and CP 2 as the 512-H100 and 256-GB200 runs; predicted with the H100 curve as shipped (H200:
# the same tensor cores) and the GB200's fitted number (B200: the same Blackwell, not fitted).
MLPERF_MORE = [
    ("v5.0", 2048, "dgx-h100", 8, 8, 1152, 14.219),
    ("v5.0", 512, "gb200-nvl72", 4, 4, 896, 19.486),
    ("v5.1", 512, "dgx-h200", 8, 4, 1152, 50.01),
    ("v5.1", 256, "dgx-b200", 8, 4, 576, 27.666),
]


def mlperf_more_rows(args, errors, blackwell):
    for round_, gpus, preset, per_node, tp, batch, published in MLPERF_MORE:
        dp = gpus // (tp * 8 * 2)
        sets = ["cluster.preset=" + preset, "cluster.nodes=%d" % (gpus // per_node),
                "training.tensor_parallel=%d" % tp, "training.data_parallel=%d" % dp,
                "training.global_batch=%d" % batch, "training.microbatches=%d" % (batch // dp)]
        gb200 = preset in ("gb200-nvl72", "dgx-b200")
        if gb200:
            sets.append("cluster.gpu.gemm_efficiency.peak_fraction=%g" % blackwell)
        step = run_curve(args, MLPERF_GB200 if gb200 else MLPERF_H100, sets)[0]
        error = (step - published) / published
        gpu = {"dgx-h100": "H100", "gb200-nvl72": "GB200", "dgx-h200": "H200",
               "dgx-b200": "B200"}[preset]
        errors.append(("H100 2026" if gpu in ("H100", "H200") else "GB200", abs(error)))
        print("| MLPerf %s | Llama 3.1 405B FP8, TP %d | %d %s | %.2f s | %.2f s | %+.1f%% |"
              % (round_, tp, gpus, gpu, published, step, 100 * error))


def run_curve(args, scenario, sets):
    """A 2026 row: timed on the GPU's GEMM curve (the fitted number is its peak_fraction)."""
    shapes = args.gemm_shapes
    args.gemm_shapes = False
    try:
        return run(args, scenario, sets)
    finally:
        args.gemm_shapes = shapes


def pair_step(args, row, precision, gb200_fraction):
    model, gpu, config, nodes, tp, pp, cp, vp, batch, *_ = row
    dp = nodes * (4 if gpu == "GB200" else 8) // (tp * pp * cp)
    sets = ["model.hf_config=models/" + config, "cluster.nodes=%d" % nodes,
            "training.global_batch=%d" % batch, "training.data_parallel=%d" % dp,
            "training.microbatches=%d" % (batch // dp), "training.tensor_parallel=%d" % tp,
            "training.sequence_parallel=%s" % ("true" if tp > 1 else "false"),
            "training.context_parallel=%d" % cp, "training.context_parallel_algorithm=RING",
            "schedule.stages=%d" % pp, "training.fp8_param_gather=false",
            "training.precision=" + precision]
    if precision == "BF16":
        sets.append("training.mixed_precision=true")
    if vp > 1:
        sets += ["schedule.kind=INTERLEAVED_ONE_F_ONE_B", "schedule.virtual_stages=%d" % vp]
    else:
        sets += ["schedule.kind=ONE_F_ONE_B", "schedule.virtual_stages=1"]
    if gpu == "GB200":
        sets.append("cluster.gpu.gemm_efficiency.peak_fraction=%g" % gb200_fraction)
    return run_curve(args, MLPERF_GB200 if gpu == "GB200" else MLPERF_H100, sets)[0]


def rows_2026(args, errors):
    """MLPerf's FP8 Llama 3.1 405B (GB200 fitted, H100 predicted) and the FP8/BF16 pairs."""
    def gb200_step(fraction):
        return run_curve(args, MLPERF_GB200,
                         ["cluster.gpu.gemm_efficiency.peak_fraction=%g" % fraction])[0]
    gb200 = megatron.bisect(lambda f: -gb200_step(f), -19.15, steps=14)
    print("\nGB200: gemm_efficiency.peak_fraction %.4f, fitted on MLPerf v5.0's 256-GB200 "
          "Llama 3.1 405B step (19.15 s)\n" % gb200)
    print("| source | model | GPUs | published | pipetwin | error |")
    print("| --- | --- | --- | --- | --- | --- |")
    step = gb200_step(gb200)
    print("| MLPerf v5.0 | Llama 3.1 405B FP8 | 256 GB200 | 19.15 s | %.2f s | fitted |" % step)
    h100 = run_curve(args, MLPERF_H100, [])[0]
    error = (h100 - 55.1) / 55.1
    errors.append(("H100 2026", abs(error)))
    print("| MLPerf v5.0 | Llama 3.1 405B FP8 | 512 H100 | 55.1 s | %.2f s | %+.1f%% |"
          % (h100, 100 * error))
    mlperf_more_rows(args, errors, gb200)
    step = run_curve(args, DEEPSEEK_GB200,
                     ["cluster.gpu.gemm_efficiency.peak_fraction=%g" % gb200])[0]
    tokens = 4096 * 4096 / step / 256
    error = (tokens - 4912) / 4912
    errors.append(("GB200", abs(error)))
    print("| Megatron-Bridge 26.08 | DeepSeek-V3 MXFP8 | 256 GB200 | 4912 tokens/s per GPU "
          "| %.0f | %+.1f%% |" % (tokens, 100 * error))
    print("\n| source | model | GPUs | TP/PP/CP/VP | batch | published FP8 speedup | pipetwin "
          "| error (points) | BF16 s | FP8 s |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for row in FP8_PAIRS:
        model, gpu, _, nodes, tp, pp, cp, vp, batch, bf16_s, fp8_s, source = row
        bf16 = pair_step(args, row, "BF16", gb200)
        fp8 = pair_step(args, row, "FP8", gb200)
        published, predicted = bf16_s / fp8_s, bf16 / fp8
        errors.append(("FP8 pairs", abs(predicted - published)))
        gpus = nodes * (4 if gpu == "GB200" else 8)
        print("| %s | %s | %d %s | %d/%d/%d/%d | %d | %.3f | %.3f | %+.1f | %.2f | %.2f |"
              % (source, model, gpus, gpu, tp, pp, cp, vp, batch, published, predicted,
                 100 * (predicted - published), bf16, fp8))
    e = [x for g, x in errors if g == "FP8 pairs"]
    print("\nFP8 pairs, %d predicted rows: mean |error| %.1f points, largest %.1f points"
          % (len(e), 100 * sum(e) / len(e), 100 * max(e)))


# nccl-tests all_reduce_perf bus bandwidth, GB/s: system, preset, nodes, GPUs, bytes, published,
# source. NVIDIA's sample output of its DGX Cloud benchmarking repository (nccl/README.md, one
# DGX H100, NVLS on); a full GB200 NVL72 rack as CoreWeave measured it (a third party:
# github.com/coreweave/nccl-tests/pull/43; NVIDIA publishes none we found).
NCCL_TESTS = [
    ("DGX H100", "dgx-h100", 1, 8, 16 << 20, 237.21, "dgxc nccl/README.md"),
    ("DGX H100", "dgx-h100", 1, 8, 128 << 20, 400.53, "dgxc nccl/README.md"),
    ("DGX H100", "dgx-h100", 1, 8, 1 << 30, 466.33, "dgxc nccl/README.md"),
    ("DGX H100", "dgx-h100", 1, 8, 8 << 30, 480.16, "dgxc nccl/README.md"),
    ("GB200 NVL72", "gb200-nvl72", 18, 72, 1 << 30, 681.17, "CoreWeave"),
    ("GB200 NVL72", "gb200-nvl72", 18, 72, 8 << 30, 834.57, "CoreWeave"),
]


def allreduce_busbw(args, preset, nodes, gpus, size):
    """One all-reduce of `size` bytes over `gpus` data-parallel replicas: the gradients of one
    layer in BF16 (2 bytes per parameter, parameter_bytes counting fp32), reduced in one block;
    nccl-tests' bus bandwidth, 2(n-1)/n x size over the time."""
    text = ('cluster { preset: "%s" nodes: %d }\n'
            'model { layers { name: "grads" fwd_ms: 0.001 bwd_ms: 0.001 parameter_bytes: %d } }\n'
            'training { global_batch: %d microbatches: 1 data_parallel: %d optimizer: SGD '
            'precision: BF16 mixed_precision: true grad_bucket_mb: 0 }\n'
            'schedule { kind: ONE_F_ONE_B stages: 1 }\n' % (preset, nodes, 2 * size, gpus, gpus))
    path = os.path.join(args.scratch, "allreduce.textproto")
    with open(path, "w") as f:
        f.write(text)
    result = subprocess.run([args.pipetwin, "simulate", path, "--json"], capture_output=True,
                            text=True)
    if result.returncode != 0:
        sys.exit("%s: %s" % (path, result.stderr.strip()))
    seconds = json.loads(result.stdout)["devices"][0]["collective_s"]
    return 2 * (gpus - 1) / gpus * size / seconds / 1e9


def nccl_tests_rows(args, errors):
    print("\n| source | system | GPUs | bytes | published bus GB/s | pipetwin | error |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for system, preset, nodes, gpus, size, published, source in NCCL_TESTS:
        busbw = allreduce_busbw(args, preset, nodes, gpus, size)
        error = (busbw - published) / published
        errors.append(("nccl-tests", abs(error)))
        print("| %s | %s | %d | %d MiB | %.2f | %.1f | %+.1f%% |"
              % (source, system, gpus, size >> 20, published, busbw, 100 * error))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("pipetwin", nargs="?", default=os.path.join(ROOT, "build", "pipetwin"))
    parser.add_argument("--engine", default="analytic", choices=["analytic", "simgrid"])
    parser.add_argument("--only-memory", action="store_true", help="the ZeRO memory rows only")
    parser.add_argument("--gemm-shapes", action="store_true",
                        help="time GEMMs by their shape on each GPU's curve "
                             "(cluster.gpu.gemm_efficiency; its peak_fraction is the fitted "
                             "number) instead of the flat model.zoo.efficiency")
    parser.add_argument("--nvlink-share", type=float, default=megatron.NCCL_NVLINK_SHARE,
                        help="the share of NVLink's line rate NCCL's collectives reach")
    parser.add_argument("--no-grad-overlap", action="store_true",
                        help="every backward's tensor-parallel collectives after it")
    parser.add_argument("--only-folded", type=float, metavar="EFFICIENCY",
                        help="the folded MoE rows only, at this H100 efficiency (the one the "
                             "full run fits)")
    parser.add_argument("--pipetwin-order", action="store_true",
                        help="the Megatron-Core rows in pipetwin's own rank order (TP_CP_PP_DP) "
                             "instead of Megatron-Core's")
    parser.add_argument("--h100", type=float, metavar="VALUE",
                        help="the H100's number given instead of fitted on the first Megatron-Core "
                             "row, which is then predicted too (with --gemm-shapes, 0.74: the "
                             "dgx-h100 curve's peak_fraction as shipped, fitted on cuBLAS GEMMs)")
    parser.add_argument("--only-2026", action="store_true",
                        help="the FP8 and Blackwell rows only (MLPerf v5.0, the FP8/BF16 pairs)")
    args = parser.parse_args()
    megatron.NCCL_NVLINK_SHARE = args.nvlink_share
    if args.no_grad_overlap:
        GRAD_OVERLAP[0] = "false"
    if args.pipetwin_order:
        MCORE_LAUNCH.remove("training.rank_order=TP_CP_EP_DP_PP")
    args.scratch = tempfile.mkdtemp(prefix="pipetwin-published-")
    errors = []
    if args.only_folded:
        folded_moe_rows(args, args.only_folded, errors)
        return
    if args.only_2026:
        rows_2026(args, errors)
        nccl_tests_rows(args, errors)
        return
    if args.only_memory:
        memory_rows(args, errors)
        e = [x for _, x in errors]
        print("memory, %d rows: mean |error| %.1f%%, largest %.1f%%" %
              (len(e), 100 * sum(e) / len(e), 100 * max(e)))
        return

    # A100: fitted on one block's forward (Korthikanti et al., no recomputation), then
    # Megatron-LM's GPT weak scaling (its own launch script) and the block's other times.
    megatron.SCENARIO = os.path.join(ROOT, megatron.SCENARIO)
    a100 = megatron.bisect(lambda e: -block_times_ms(args, "NONE", False, e)[0],
                           -KORTHIKANTI_ROWS[0][3])
    fitted = "gemm_efficiency.peak_fraction" if args.gemm_shapes else "efficiency"
    print("A100: %s %.4f, fitted on the forward of one 22B block without recomputation "
          "(Korthikanti et al., table 4)\n" % (fitted, a100))
    print("| source | model | GPUs | TP | EP | PP | DP | batch | published | pipetwin | error "
          "| step (s) | peak (GiB) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for row in megatron.ROWS:
        params, _, _, _, tp, pp, gpus, batch, *_, published = row
        tflops, step, peak = megatron.simulate(args, row, a100, 0.8, args.gemm_shapes)
        error = (tflops - published) / published
        errors.append(("A100", abs(error)))
        print("| Megatron-LM SC'21 t.1 | GPT %sB | %d | %d | 1 | %d | %d | %d | %d TFLOP/s | %.0f "
              "| %+.1f%% | %.2f | %.1f |" % (params, gpus, tp, pp, gpus // (tp * pp), batch,
                                            published, tflops, 100 * error, step, peak))

    korthikanti_rows(args, a100, errors)
    korthikanti_step_rows(args, a100, errors)

    # H100: Megatron-Core MoE, fitted on the first row (or, with --h100, every row predicted).
    first = MOE_ROWS[0]
    h100 = args.h100 or megatron.bisect(lambda e: moe_mfu(args, first, e)[0], first[6])
    for i, row in enumerate(MOE_ROWS):
        model, gpus, tp, ep, pp, batch, published, table = row
        mfu, step, peak = moe_mfu(args, row, h100)
        error = (mfu - published) / published
        fitted_row = i == 0 and not args.h100
        if not fitted_row:
            errors.append(("H100 MCore MoE", abs(error)))
        print("| MCore MoE %s | %s | %d | %d | %d | %d | %d | %d | %.1f%% MFU | %.1f%% | %s | %.2f "
              "| %.1f |" % (table, model, gpus, tp, ep, pp, gpus // (tp * pp), batch, published,
                            mfu, "fitted" if fitted_row else "%+.1f%%" % (100 * error), step,
                            peak))

    for row in LLAMA_405B_ROWS:
        gpus, tp, cp, pp, seq, published = row
        tflops, step, peak = llama_405b_tflops(args, row, h100)
        error = (tflops - published) / published
        errors.append(("H100 Llama 3", abs(error)))
        model = "Llama 3.1 405B" + (", %dK tokens, CP %d" % (seq // 1024, cp) if cp > 1 else "")
        print("| Llama 3 paper t.4 | %s | %d | %d | 1 | %d | %d | %d | %d TFLOP/s "
              "| %.0f | %+.1f%% | %.2f | %.1f |" % (model, gpus, tp, pp, gpus // (tp * cp * pp),
                                                  LLAMA_TOKENS // seq, published, tflops,
                                                  100 * error, step, peak))

    folded_moe_rows(args, h100, errors)

    # H800: DeepSeek-V3, with the H100's efficiency: in BF16 with NCCL's all-to-all, and as
    # the report says it trained.
    published = 1e12 / (180e3 * 3600)  # tokens per GPU-second
    for as_trained in (False, True):
        tokens, step, peak = deepseek_tokens_per_gpu(args, h100, as_trained)
        error = (tokens - published) / published
        errors.append(("H800", abs(error)))
        model = "DeepSeek-V3" + (", as trained: FP8 tiles, FP8 dispatch, DeepEP to 4 nodes, "
                                 "ZeRO-1" if as_trained else ", BF16, NCCL all-to-all")
        print("| DeepSeek-V3 report | %s | 2048 | 1 | 64 | 16 | 128 | 15360 | %.0f tokens/s "
              "per GPU | %.0f | %+.1f%% | %.2f | %.1f |" % (model, published, tokens, 100 * error,
                                                         step, peak))

    memory_rows(args, errors)
    rows_2026(args, errors)
    nccl_tests_rows(args, errors)

    print("\nH100: %s %g, %s" % (fitted, h100, "given (--h100)" if args.h100 else
                                     "fitted on Mixtral-8x22B, 128 GPUs, batch 256"))
    for gpu in ("A100", "A100 layer", "A100 step", "H100 MCore MoE", "H100 Llama 3", "H100 folded",
                "H800", "H100 2026", "GB200", "nccl-tests", "memory"):
        e = [x for g, x in errors if g == gpu]
        print("%s, %d predicted rows: mean |error| %.1f%%, largest %.1f%%" %
              (gpu, len(e), 100 * sum(e) / len(e), 100 * max(e)))


if __name__ == "__main__":
    main()
