#!/usr/bin/env python3
"""The validation matrix: calibrate on one configuration's measured run, predict others.

For every pair (A, B): A runs on the real ranks `--repeat` times, all its runs are fitted
together (`pipetwin calibrate --from ... --from ...`), and the fitted scenario predicts B
(`pipetwin simulate --set ...`); then B runs on the real ranks, with the same fitted file
and the same --set, so that both sides cut the model alike. Nothing of B is used to fit.

Usage: bench/fidelity.sh [--repeat 5] [--out DIR] [--only NAME,...] [--pin]
Writes DIR/fidelity.md (the table of docs/fidelity.md) and DIR/fidelity.json.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PIPETWIN = os.path.join(ROOT, "build", "pipetwin")
SCENARIOS = os.path.join(ROOT, "scenarios")

# Calibration runs: a scenario and the --set that make it A.
CALIBRATIONS = {
    "mlp": ("mlp-cpu-2rank.textproto", ["training.iterations=10"]),
    "gpt": ("gpt-cpu-2rank.textproto", ["training.iterations=6"]),
    "vgg": ("vgg16-cpu-2rank.textproto", ["training.iterations=10"]),
}

# (name, calibration, what B changes, --set of B on top of the fitted A)
PAIRS = [
    ("mlp 1F1B m8 -> GPipe", "mlp", "schedule", ["schedule.kind=GPIPE"]),
    ("mlp 1F1B m8 -> m16", "mlp", "microbatches", ["training.microbatches=16"]),
    ("mlp 1F1B m8 -> m4", "mlp", "microbatches", ["training.microbatches=4"]),
    ("mlp 1F1B m8 -> batch 128", "mlp", "batch", ["training.global_batch=128"]),
    ("mlp 1F1B -> interleaved v2", "mlp", "schedule",
     ["schedule.kind=INTERLEAVED_ONE_F_ONE_B", "schedule.virtual_stages=2",
      "schedule.partition=[1,1,1,1]"]),
    ("gpt 1F1B m4 -> GPipe m8", "gpt", "schedule + microbatches",
     ["schedule.kind=GPIPE", "training.microbatches=8"]),
    ("gpt 1F1B m4 -> batch 16", "gpt", "batch", ["training.global_batch=16"]),
    ("vgg 1F1B m4 -> m8", "vgg", "microbatches", ["training.microbatches=8"]),
    ("vgg 1F1B m4 -> GPipe", "vgg", "schedule", ["schedule.kind=GPIPE"]),
]


def pipetwin(*args, json_out=True):
    result = subprocess.run([PIPETWIN, *args], capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"pipetwin {' '.join(args)} failed ({result.returncode}):\n{result.stderr}")
    return json.loads(result.stdout) if json_out else result.stdout


def sets(values):
    return [arg for v in values for arg in ("--set", v)]


def measure(scenario, extra, repeat, timeline):
    """Median and spread of `repeat` runs; the median run's timeline."""
    run = pipetwin("run", scenario, *sets(extra), *RUN_FLAGS, "--repeat", str(repeat),
                   "--timeline", timeline, "--json")
    r = run["repeat"]
    return {"median_s": r["median_s"], "min_s": r["min_s"], "max_s": r["max_s"],
            "spread": (r["max_s"] - r["min_s"]) / r["median_s"], "runs_s": r["makespans_s"]}


def predict(scenario, extra, timeline):
    sim = pipetwin("simulate", scenario, *sets(extra), "--timeline", timeline, "--json")
    return sim["training_time_s"]


def calibrate(name, out, repeat):
    """Profiles A's layers (the shape of each cost curve), runs A `repeat` times and fits
    all its runs together (they average over the machine's moods)."""
    scenario, extra = CALIBRATIONS[name]
    source = os.path.join(SCENARIOS, scenario)
    profiled = os.path.join(out, f"{name}-profiled.textproto")
    pipetwin("profile", source, *sets(extra), "-o", profiled, json_out=False)
    timelines = [os.path.join(out, f"{name}-A{k}.timeline") for k in range(repeat)]
    a = stats([run_once(profiled, [], timeline) for timeline in timelines])
    fitted = os.path.join(out, f"{name}-fitted.textproto")
    subprocess.run([PIPETWIN, "calibrate", profiled, *[arg for t in timelines
                                                        for arg in ("--from", t)],
                    "-o", fitted], check=True, capture_output=True)
    return fitted, a


def op_errors(predicted_timeline, measured_timeline):
    cmp = pipetwin("compare", predicted_timeline, measured_timeline, "--json")
    per_kind = {op: v["total_b_s"] / v["total_a_s"] - 1
                for op, v in cmp["per_op"].items() if v["total_a_s"] > 0}
    return cmp["duration_error"]["p90_rel"], per_kind


RUN_FLAGS = []  # --pin: every run with each rank pinned to one core


def run_once(scenario, extra, timeline):
    return pipetwin("run", scenario, *sets(extra), *RUN_FLAGS, "--timeline", timeline,
                    "--json")["training_time_s"]


def stats(runs):
    median = statistics.median_low(runs)
    return {"median_s": median, "min_s": min(runs), "max_s": max(runs),
            "spread": (max(runs) - min(runs)) / median, "runs_s": runs}


def pair_row(pair, fitted, repeat, out):
    """B and A run alternately, so that both see the same machine: the absolute error is
    B's; the error of the predicted change B/A cancels what drifted since A was fitted."""
    name, _, changes, extra = pair
    tag = name.replace(" ", "_").replace(">", "").replace("/", "")
    predicted_timeline = os.path.join(out, f"{tag}-predicted.timeline")
    predicted = predict(fitted, extra, predicted_timeline)
    predicted_a = predict(fitted, [], os.path.join(out, f"{tag}-A-predicted.timeline"))
    runs_b, runs_a = [], []
    for k in range(repeat):
        runs_a.append(run_once(fitted, [], os.path.join(out, f"{tag}-A-{k}.timeline")))
        runs_b.append(run_once(fitted, extra, os.path.join(out, f"{tag}-{k}.timeline")))
    b, a = stats(runs_b), stats(runs_a)
    measured_timeline = os.path.join(out, f"{tag}-{runs_b.index(b['median_s'])}.timeline")
    p90, per_kind = op_errors(predicted_timeline, measured_timeline)
    change_error = (b["median_s"] / a["median_s"]) / (predicted / predicted_a) - 1
    return {"pair": name, "changes": changes, "predicted_s": predicted, **b,
            "error": b["median_s"] / predicted - 1, "change_error": change_error,
            "a_now": a, "span_p90": p90, "op_totals": per_kind}


def gain_row(name, faster, slower):
    """`faster` and `slower`: (predicted seconds, measured run) of each configuration."""
    return {"gain": name, "predicted": slower[0] / faster[0] - 1,
            "measured": slower[1]["median_s"] / faster[1]["median_s"] - 1,
            "plan_predicted_s": faster[0], "plan_measured_s": faster[1]["median_s"],
            "plan_spread": faster[1]["spread"], "gpipe_predicted_s": slower[0],
            "gpipe_measured_s": slower[1]["median_s"], "gpipe_spread": slower[1]["spread"]}


def plan_sets(plan):
    """--set values that give a written plan file another plan's cuts."""
    values = []
    for stage in plan:
        for direction in ("forward_sizes", "backward_sizes"):
            sizes = ",".join(str(x) for x in stage[direction])
            values.append(f"schedule.stage_plans[{stage['stage']}].{direction}=[{sizes}]")
    return values


def gain_rows(fitted, repeat, out):
    """Predicted vs measured gains: UMPIPE plans over GPipe, FreezePipe over static."""
    rows = []
    plan_file = os.path.join(out, "mlp-umpipe-plan.textproto")
    plan = pipetwin("plan", fitted, "--search", "umpipe", "--write-plan", plan_file, "--json")
    gpipe_sets = ["schedule.kind=GPIPE"]
    gpipe = (predict(fitted, gpipe_sets, os.path.join(out, "gpipe-predicted.timeline")),
             measure(fitted, gpipe_sets, repeat, os.path.join(out, "gpipe-measured.timeline")))
    # The search's own plan (scored without dispatch gaps and interference) ...
    own = plan_sets(plan["plan"])
    searched = (predict(plan_file, own, os.path.join(out, "umpipe-own-predicted.timeline")),
                measure(plan_file, own, repeat, os.path.join(out, "umpipe-own-measured.timeline")))
    rows.append(gain_row("UMPIPE: the search's own plan over GPipe (mlp)", searched, gpipe))
    # ... and the plan written, the fastest of the search and its baselines when simulated.
    chosen = plan.get("full_model", {}).get("chosen", "search")
    written = (predict(plan_file, [], os.path.join(out, "umpipe-predicted.timeline")),
               measure(plan_file, [], repeat, os.path.join(out, "umpipe-measured.timeline")))
    rows.append(gain_row(f"UMPIPE: the plan written ({chosen}) over GPipe (mlp)", written, gpipe))
    # FreezePipe: the first stage's layers freeze half-way through; the pipeline repartitions.
    frozen = os.path.join(out, "mlp-freeze.textproto")
    with open(fitted) as f, open(frozen, "w") as g:
        g.write(f.read() + "\nfreeze { at { iteration: 5 frozen_layers: 2 } compress: false }\n")
    frozen_run = (pipetwin("simulate", frozen, "--json")["training_time_s"],
                  measure(frozen, [], repeat, os.path.join(out, "freeze-measured.timeline")))
    static_run = (pipetwin("simulate", fitted, "--json")["training_time_s"],
                  measure(fitted, [], repeat, os.path.join(out, "static-measured.timeline")))
    rows.append(gain_row("FreezePipe over static (mlp)", frozen_run, static_run))
    return rows


def ms(seconds):
    return f"{seconds * 1e3:.1f} ms"


def pct(x):
    return f"{x * 100:+.1f}%"


def table(calibrations, rows, gains):
    lines = ["| pair (A -> B) | B changes | predicted | measured median (min-max) | spread | "
             "error | error of B/A | span p90 | worst op total |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        worst_op = max(r["op_totals"].items(), key=lambda kv: abs(kv[1]))
        lines.append(
            f"| {r['pair']} | {r['changes']} | {ms(r['predicted_s'])} | {ms(r['median_s'])} "
            f"({ms(r['min_s'])}-{ms(r['max_s'])}) | {r['spread'] * 100:.0f}% | "
            f"{pct(r['error'])} | {pct(r['change_error'])} | {r['span_p90'] * 100:.0f}% | "
            f"{worst_op[0]} {pct(worst_op[1])} |")
    errors = [abs(r["error"]) for r in rows]
    changes = [abs(r["change_error"]) for r in rows]
    inside = sum(abs(r["error"]) <= max(0.05, r["spread"]) for r in rows)
    lines += ["", f"median |error| {statistics.median(errors) * 100:.1f}% (of the change B/A: "
              f"{statistics.median(changes) * 100:.1f}%), "
              f"{inside} of {len(rows)} pairs inside max(5%, their spread)", "",
              "| gain | predicted | measured | faster configuration: predicted / measured (spread) |"
              " slower: predicted / measured (spread) |", "| --- | --- | --- | --- | --- |"]
    for g in gains:
        lines.append(
            f"| {g['gain']} | {pct(g['predicted'])} | {pct(g['measured'])} | "
            f"{ms(g['plan_predicted_s'])} / {ms(g['plan_measured_s'])} "
            f"({g['plan_spread'] * 100:.0f}%) | {ms(g['gpipe_predicted_s'])} / "
            f"{ms(g['gpipe_measured_s'])} ({g['gpipe_spread'] * 100:.0f}%) |")
    lines += ["", "| calibration run A | measured median (min-max) | spread |",
              "| --- | --- | --- |"]
    for name, a in calibrations.items():
        lines.append(f"| {name}: {CALIBRATIONS[name][0]} {' '.join(CALIBRATIONS[name][1])} | "
                     f"{ms(a['median_s'])} ({ms(a['min_s'])}-{ms(a['max_s'])}) | "
                     f"{a['spread'] * 100:.0f}% |")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", default=os.path.join(ROOT, "build", "fidelity"))
    parser.add_argument("--only", default="", help="calibrations to run: mlp,gpt,vgg")
    parser.add_argument("--pin", action="store_true", help="pin each rank to one core")
    args = parser.parse_args()
    if args.pin:
        RUN_FLAGS.append("--pin")
    os.makedirs(args.out, exist_ok=True)
    wanted = [c for c in CALIBRATIONS if not args.only or c in args.only.split(",")]
    calibrations, fitted, rows = {}, {}, []
    for name in wanted:
        print(f"calibrating {name} ...", file=sys.stderr)
        fitted[name], calibrations[name] = calibrate(name, args.out, args.repeat)
    for pair in PAIRS:
        if pair[1] not in fitted:
            continue
        print(f"pair {pair[0]} ...", file=sys.stderr)
        rows.append(pair_row(pair, fitted[pair[1]], args.repeat, args.out))
    gains = gain_rows(fitted["mlp"], args.repeat, args.out) if "mlp" in fitted else []
    text = table(calibrations, rows, gains)
    with open(os.path.join(args.out, "fidelity.md"), "w") as f:
        f.write(text)
    with open(os.path.join(args.out, "fidelity.json"), "w") as f:
        json.dump({"calibrations": calibrations, "pairs": rows, "gains": gains}, f, indent=2)
    print(text)


if __name__ == "__main__":
    main()
