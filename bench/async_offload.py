#!/usr/bin/env python3
"""The thesis' experiment shape on asynchronous pipelines: peak memory and time of PipeDream
(and 2BW) without the transfer mechanism, with activation offload, with weight-stash offload
and with both, then PipeFB; on VGG-16 and a GPT, 4 and 8 GPUs of a DGX A100 (two GPUs per
PCIe switch, as on the real server), simgrid engine, prefetch horizon 2.

Asynchronous rows: four iterations, the steady-state iteration (between the first and the
last update). Peaks: the largest over the devices, and device 0's. A second table varies the
prefetch horizon of PipeDream's weight-stash offload on the GPT.

    bench/async_offload.py [build/pipetwin]
"""
import json
import subprocess
import sys

PIPETWIN = sys.argv[1] if len(sys.argv) > 1 else "build/pipetwin"
GIB = 1024.0 ** 3

MODELS = [("gpt", "scenarios/offload-gpt-a100.textproto"),
          ("vgg16", "scenarios/offload-vgg16-a100.textproto")]
OFFLOAD = {
    "": None,
    " + activations": "prefetch_horizon: 2",
    " + weight stashes": "prefetch_horizon: 2 activations: false weight_stashes: true",
    " + both": "prefetch_horizon: 2 weight_stashes: true",
}


def simulate(scenario, overrides):
    args = [PIPETWIN, "simulate", scenario, "--engine", "simgrid", "--allow-oom", "--json"]
    for o in overrides:
        args += ["--set", o]
    run = subprocess.run(args, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit("%s %s: %s" % (scenario, overrides, run.stderr.strip()))
    return json.loads(run.stdout)


def row(model, gpus, label, j, steady):
    peaks = [d["peak_memory_bytes"] / GIB for d in j["devices"]]
    seconds = j["steady_state_iteration_s"] if steady else j["iteration_time_s"]
    staleness = j.get("weight_staleness", {}).get("max", 0) if steady else 0
    print("| %s | %d | %s | %.0f | %.1f | %.1f | %s |" %
          (model, gpus, label, seconds * 1e3, max(peaks), peaks[0], staleness))


def main():
    print("| model | GPUs | schedule | iteration (ms) | peak, largest (GiB) | "
          "peak, device 0 (GiB) | staleness (max) |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for model, scenario in MODELS:
        for gpus in (4, 8):
            base = ["schedule.stages=%d" % gpus]
            row(model, gpus, "1F1B", simulate(scenario, base), False)
            for kind, name in (("PIPEDREAM_ASYNC", "PipeDream"), ("PIPEDREAM_2BW", "2BW")):
                for suffix, offload in OFFLOAD.items():
                    overrides = base + ["schedule.kind=" + kind, "training.iterations=4"]
                    if offload:
                        overrides.append("schedule.offload=" + offload)
                    row(model, gpus, name + suffix, simulate(scenario, overrides), True)
            pipefb = ["schedule.stages=%d" % (gpus // 2), "schedule.kind=PIPEFB"]
            row(model, gpus, "PipeFB", simulate(scenario, pipefb), False)
            row(model, gpus, "PipeFB + recompute",
                simulate(scenario, pipefb + ["schedule.pipefb_recompute=true"]), False)
    print()
    print("| GPUs | horizon | iteration (ms) | peak, largest (GiB) |")
    print("| --- | --- | --- | --- |")
    scenario = MODELS[0][1]
    for gpus in (4, 8):
        for horizon in (0, 1, 2, 4):
            j = simulate(scenario, ["schedule.stages=%d" % gpus, "schedule.kind=PIPEDREAM_ASYNC",
                                    "training.iterations=4",
                                    "schedule.offload=prefetch_horizon: %d activations: false "
                                    "weight_stashes: true" % horizon])
            print("| %d | %d | %.0f | %.1f |" % (gpus, horizon, j["steady_state_iteration_s"] * 1e3,
                                                 max(d["peak_memory_bytes"] for d in j["devices"]) / GIB))


if __name__ == "__main__":
    main()
