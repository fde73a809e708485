#!/usr/bin/env python3
"""UMPIPE on measured costs: profile a zoo model on the real CPU ranks at several
microbatch sizes (the fixed cost per microbatch is real there too), run its 1F1B baseline
`--repeat` times and fit the scenario to those runs (`calibrate --from`: links, dispatch
gaps, interference), search unequal microbatches on the fitted scenario, then run the
search's plan and the baselines on the real ranks, alternated, and put the predicted and
measured gains side by side.

Usage: bench/umpipe_measured.py [--repeat 5] [--iterations 8] [--out DIR] [--pin]
Run on a quiet machine (no build running). Writes DIR/umpipe-measured.md.
"""
import argparse
import os
import statistics

import fidelity  # the same helpers as the validation matrix

MODELS = {  # name: (scenario, microbatch sizes to profile)
    "gpt": ("gpt-cpu-2rank.textproto", [1, 2, 4, 8, 16, 32]),
    "vgg": ("vgg16-cpu-2rank.textproto", [1, 2, 4, 8, 16, 32]),
}


def configurations(plan):
    """(label, --set) of the search's plan and its baselines."""
    return [("GPipe, 4 equal", ["schedule.kind=GPIPE", "schedule.stage_plans=[]"]),
            ("1F1B, 4 equal", ["schedule.kind=ONE_F_ONE_B", "schedule.stage_plans=[]"]),
            ("UMPIPE plan", ["schedule.kind=UMPIPE"] + fidelity.plan_sets(plan["plan"]))]


def model_rows(name, out, repeat, iterations):
    scenario, batches = MODELS[name]
    profiled = os.path.join(out, f"{name}-profiled.textproto")
    fidelity.pipetwin("profile", os.path.join(fidelity.SCENARIOS, scenario), "--batches",
                      *[str(b) for b in batches], "-o", profiled, json_out=False)
    common = [f"training.iterations={iterations}"]
    timelines = [os.path.join(out, f"{name}-A{k}.timeline") for k in range(repeat)]
    for timeline in timelines:
        fidelity.run_once(profiled, common, timeline)
    fitted = os.path.join(out, f"{name}-fitted.textproto")
    fidelity.pipetwin("calibrate", profiled, *fidelity.sets(common),
                      *[a for t in timelines for a in ("--from", t)], "-o", fitted, json_out=False)
    # The search's own plan, whatever it gains: the point is to check the prediction.
    plan_file = os.path.join(out, f"{name}-plan.textproto")
    plan = fidelity.pipetwin("plan", fitted, "--search", "umpipe", "--min-gain", "0",
                             "--write-plan", plan_file, "--json")
    configs = configurations(plan)
    predicted = [fidelity.pipetwin("simulate", plan_file, *fidelity.sets(common + extra),
                                   "--json")["iteration_time_s"] for _, extra in configs]
    measured = [[] for _ in configs]
    for k in range(repeat):  # alternated, so that every configuration sees the same machine
        for c, (_, extra) in enumerate(configs):
            run = fidelity.pipetwin("run", plan_file, *fidelity.sets(common + extra),
                                    *fidelity.RUN_FLAGS, "--json")
            measured[c].append(run["iteration_time_s"])
    sizes = "/".join(str(x) for x in plan["plan"][0]["forward_sizes"])
    rows = []
    for c, (label, _) in enumerate(configs):
        runs = measured[c]
        median = statistics.median(runs)
        rows.append((name, label if c < 2 else f"UMPIPE plan [{sizes}]", predicted[c], median,
                     (max(runs) - min(runs)) / median))
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=8)
    parser.add_argument("--out", default=os.path.join(fidelity.ROOT, "build", "umpipe-measured"))
    parser.add_argument("--pin", action="store_true")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if args.pin:
        fidelity.RUN_FLAGS.append("--pin")
    lines = ["| model | configuration | predicted iteration | measured median | spread | "
             "UMPIPE gain predicted | UMPIPE gain measured |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for name in MODELS:
        rows = model_rows(name, args.out, args.repeat, args.iterations)
        plan = rows[-1]
        for row in rows:
            model, label, predicted, measured, spread = row
            gain = ("" if row is plan else
                    f"| {fidelity.pct(predicted / plan[2] - 1)} | {fidelity.pct(measured / plan[3] - 1)}")
            lines.append(f"| {model} | {label} | {fidelity.ms(predicted)} | {fidelity.ms(measured)} "
                         f"| {spread * 100:.0f}% {gain or '| |'} |")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(args.out, "umpipe-measured.md"), "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
