#!/usr/bin/env python3
"""APapo against the methods it is compared with, on the four PipeDream profiles and a GPT.

For each model and cluster: steady-state throughput (samples/s, 8 iterations, fill and drain
excluded) of data parallelism on the same GPUs (one stage, ring all-reduce, the fewest
microbatches that fit in memory), GPipe as torchgpipe runs it (the time-balanced chain,
flushing every iteration), 1F1B on that chain, PipeDream (asynchronous, on the partition of
its own planner, `plan --search pipedream --straight`), and APapo (bounded staleness, on the
same partition, communication overlapped). Then APapo's speed-up over each method and the
mean of those speed-ups over models and methods.

    bench/apapo_baselines.py [build/pipetwin]
"""
import json
import os
import subprocess
import sys
import tempfile

PIPETWIN = sys.argv[1] if len(sys.argv) > 1 else "build/pipetwin"

MODELS = [  # scenario, GPUs
    ("scenarios/alexnet-pipedream-4gpu.textproto", 4),
    ("scenarios/vgg16-pipedream-4gpu.textproto", 4),
    ("scenarios/gnmt-pipedream-8gpu.textproto", 8),
    ("scenarios/resnet50-pipedream-16gpu.textproto", 16),
    ("scenarios/gpt-8gpu-1f1b.textproto", 8),
]


def commodity(gpus):
    """Servers of 4 GPUs on PCIe, one 10 Gb/s Ethernet port each (PipeDream's first cluster)."""
    return ["cluster.preset=pcie-8xa100", "cluster.gpus_per_node=4",
            "cluster.nodes=%d" % max(1, gpus // 4),
            "cluster.inter_node.bandwidth_gbytes_per_s=1.25", "cluster.inter_node.nics_per_node=1"]


CLUSTERS = [("as in the scenario", lambda gpus: []), ("4-GPU PCIe servers, 10 Gb/s Ethernet", commodity)]


def sets(overrides):
    return [a for o in overrides for a in ("--set", o)]


def throughput(scenario, overrides):
    """Steady-state samples/s, or None when the run does not fit in device memory."""
    run = subprocess.run([PIPETWIN, "simulate", scenario, "--json"] +
                         sets(["training.iterations=8"] + overrides),
                         capture_output=True, text=True)
    if run.returncode != 0:
        if "runs out of memory" in run.stderr:
            return None
        sys.exit("%s %s: %s" % (scenario, overrides, run.stderr.strip()))
    return json.loads(run.stdout)["steady_state_throughput_samples_per_s"]


def data_parallel(scenario, gpus, cluster):
    batch = int(subprocess.run(["grep", "-o", "global_batch: [0-9]*", scenario],
                               capture_output=True, text=True).stdout.split()[1])
    m = 1
    while batch % (gpus * m) == 0:
        t = throughput(scenario, cluster + ["schedule.stages=1", "training.data_parallel=%d" % gpus,
                                            "training.microbatches=%d" % m])
        if t is not None:
            return t
        m *= 2
    return None


def pipedream_plan(scenario, cluster, folder):
    plan = os.path.join(folder, os.path.basename(scenario))
    subprocess.run([PIPETWIN, "plan", scenario, "--search", "pipedream", "--straight",
                    "--write-plan", plan] + sets(cluster), check=True, capture_output=True)
    return plan


def main():
    methods = ["data parallel", "GPipe", "1F1B", "PipeDream"]
    speedups = []
    with tempfile.TemporaryDirectory() as folder:
        for cluster_name, cluster_of in CLUSTERS:
            print("\n%s\n" % cluster_name)
            print("| model | GPUs | " + " | ".join(methods) + " | APapo | APapo over each |")
            print("| --- | --- |" + " --- |" * (len(methods) + 2))
            for scenario, gpus in MODELS:
                cluster = cluster_of(gpus)
                plan = pipedream_plan(scenario, cluster, folder)
                stages = int(subprocess.run(["grep", "-o", "stages: [0-9]*", plan],
                                            capture_output=True, text=True).stdout.split()[1])
                row = {
                    "data parallel": data_parallel(scenario, gpus, cluster),
                    "GPipe": throughput(scenario, cluster + ["schedule.kind=GPIPE"]),
                    "1F1B": throughput(scenario, cluster + ["schedule.kind=ONE_F_ONE_B"]),
                    "PipeDream": throughput(plan, cluster + ["schedule.kind=PIPEDREAM_ASYNC"]),
                }
                apapo = throughput(plan, cluster + ["schedule.kind=APAPO",
                                                    "schedule.max_staleness=%d" % stages])
                over = []
                for m in methods:
                    if row[m] is None or apapo is None:
                        over.append("-")
                        continue
                    speedups.append(apapo / row[m])
                    over.append("%.2fx" % (apapo / row[m]))
                cell = lambda t: "does not fit" if t is None else "%.0f" % t
                name = os.path.basename(scenario).split("-")[0]
                print("| %s | %d | %s | %s | %s |" % (name, gpus, " | ".join(cell(row[m]) for m in methods),
                                                    cell(apapo), " / ".join(over)))
    print("\nmean speed-up of APapo over the other methods, all models and both clusters: %.2fx "
          "(%d pairs; min %.2fx, max %.2fx)" % (sum(speedups) / len(speedups), len(speedups),
                                                min(speedups), max(speedups)))


if __name__ == "__main__":
    main()
