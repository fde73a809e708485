#!/usr/bin/env python3
"""How well the micro-benchmark calibration predicts the shipped CPU scenarios.

For every shipped scenario that runs on CPU ranks: `pipetwin profile` measures its layers
(each whole, on one rank; tensor parallelism divides them among a stage's GPUs), then two
calibrations of that file are simulated:
  alone:     `pipetwin calibrate --alone` (micro-benchmarks only: the link between two ranks);
  with run:  `pipetwin calibrate` (the same micro-benchmarks, then a run of 5 iterations that
             the scenario is fitted to: dispatch gaps, interference, the link under load).
Each prediction (`pipetwin simulate`, the training time) is held against the median of
`--repeat` separate runs of the scenario (`pipetwin run --repeat`), half of them measured
before the calibrations and half after: on a shared machine the speed drifts over minutes
(10-30%), and runs on both sides of the calibrating ones keep that drift out of the error.
The calibrating runs are not among them. A second configuration per scenario
(twice the microbatches, same batch) is predicted from the same calibrated files and run as
well: nothing of it enters any fit.

    bench/calibration_accuracy.py [--repeat 6] [--pin] [--run-iterations 5] [--only mlp,...]
                                  [--out DIR]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from fidelity import ms, sets  # noqa: E402  (the validation matrix's formatting)
PIPETWIN = os.path.join(ROOT, "build", "pipetwin")
SCENARIOS = os.path.join(ROOT, "scenarios")

# name, scenario, its microbatches (the held-out configuration doubles them)
SHIPPED = [
    ("mlp", "mlp-cpu-2rank.textproto", 8),
    ("gpt", "gpt-cpu-2rank.textproto", 4),
    ("vgg16", "vgg16-cpu-2rank.textproto", 4),
    ("resnet18", "resnet18-cpu-2rank.textproto", 4),
    ("gpt-tp2-pp2", "gpt-tp2-pp2-cpu.textproto", 4),
    ("moe-ep2-pp2", "moe-ep2-pp2-cpu.textproto", 4),
]
RUN_FLAGS = []  # --pin: the calibrating run and the measured runs, each rank on one core
RUN_ITERATIONS = 5


class Refused(Exception):
    """A command that rejected its input (exit 2): the row says why."""


def pipetwin(*args, json_out=True):
    result = subprocess.run([PIPETWIN, *args], capture_output=True, text=True)
    if result.returncode == 2:
        raise Refused(result.stderr.strip().splitlines()[-1])
    if result.returncode != 0:
        sys.exit(f"pipetwin {' '.join(args)} failed ({result.returncode}):\n{result.stderr}")
    return json.loads(result.stdout) if json_out else result.stdout


def simulate(scenario, extra):
    return pipetwin("simulate", scenario, *sets(extra), "--json")["training_time_s"]


def makespans(scenario, extra, repeat):
    """`repeat` separate runs of the scenario: their makespans."""
    if repeat <= 0:
        return []
    run = pipetwin("run", scenario, *sets(extra), *RUN_FLAGS, "--repeat", str(repeat), "--json")
    return run["repeat"]["makespans_s"] if "repeat" in run else [run["training_time_s"]]


def summary(times):
    median = statistics.median(times)
    return {"median_s": median, "min_s": min(times), "max_s": max(times),
            "spread": (max(times) - min(times)) / median, "runs": len(times)}


def row(name, scenario, microbatches, repeat, out):
    source = os.path.join(SCENARIOS, scenario)
    configs = [("as shipped", []),
               (f"microbatches {2 * microbatches}",
                [f"training.microbatches={2 * microbatches}"])]
    # Half the measured runs before the calibration and half after it: the machine's mood
    # drifts over minutes, and runs on both sides of the calibrating ones keep that drift
    # out of the prediction's error.
    before = {label: makespans(source, extra, repeat // 2) for label, extra in configs}
    profiled = os.path.join(out, f"{name}-profiled.textproto")
    pipetwin("profile", source, "-o", profiled, json_out=False)
    files = {"alone": os.path.join(out, f"{name}-alone.textproto"),
             "with run": os.path.join(out, f"{name}-calibrated.textproto")}
    result = {"name": name, "scenario": scenario, "configs": []}
    try:
        pipetwin("calibrate", profiled, "--alone", "-o", files["alone"], json_out=False)
        pipetwin("calibrate", profiled, *RUN_FLAGS, "--run-iterations", str(RUN_ITERATIONS),
                 "-o", files["with run"], json_out=False)
    except Refused as e:
        result["refused"] = str(e)
        return result
    for label, extra in configs:
        predicted = {mode: simulate(path, extra) for mode, path in files.items()}
        measured = summary(before[label] + makespans(source, extra, repeat - repeat // 2))
        result["configs"].append({
            "config": label, "measured": measured, "predicted_s": predicted,
            "error": {m: p / measured["median_s"] - 1 for m, p in predicted.items()}})
    return result


def table(results):
    lines = ["| scenario | configuration | measured median (min-max) | spread | "
             "alone: predicted | error | with run: predicted | error |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in results:
        if "refused" in r:
            lines.append(f"| {r['scenario']} | not calibrated: {r['refused']} | | | | | | |")
        for c in r["configs"]:
            m = c["measured"]
            lines.append(
                f"| {r['scenario']} | {c['config']} | {ms(m['median_s'])} "
                f"({ms(m['min_s'])}-{ms(m['max_s'])}) | {100 * m['spread']:.0f}% | "
                f"{ms(c['predicted_s']['alone'])} | {100 * c['error']['alone']:+.1f}% | "
                f"{ms(c['predicted_s']['with run'])} | {100 * c['error']['with run']:+.1f}% |")
    lines.append("")
    for mode in ("alone", "with run"):
        for k, config in enumerate(("as shipped", "twice the microbatches")):
            errors = [abs(r["configs"][k]["error"][mode]) for r in results if r["configs"]]
            lines.append(f"{mode}, {config}: mean |error| {100 * statistics.mean(errors):.1f}%, "
                         f"largest {100 * max(errors):.1f}%, "
                         f"{sum(e <= 0.10 for e in errors)} of {len(errors)} within 10%"
                         f" ({len(results) - len(errors)} not calibrated)")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=6)
    parser.add_argument("--pin", action="store_true", help="pin each rank to one core")
    parser.add_argument("--only", default="", help="comma-separated names")
    parser.add_argument("--run-iterations", type=int, default=5,
                        help="iterations of calibrate's run (its --run-iterations)")
    parser.add_argument("--out", default="", help="keep the calibrated files here")
    args = parser.parse_args()
    if args.pin:
        RUN_FLAGS.append("--pin")
    global RUN_ITERATIONS
    RUN_ITERATIONS = args.run_iterations
    only = set(filter(None, args.only.split(",")))
    out = args.out or tempfile.mkdtemp(prefix="pipetwin-calibration-")
    os.makedirs(out, exist_ok=True)
    results = []
    for name, scenario, microbatches in SHIPPED:
        if only and name not in only:
            continue
        results.append(row(name, scenario, microbatches, args.repeat, out))
        print(f"{name}: done", file=sys.stderr)
    with open(os.path.join(out, "calibration_accuracy.json"), "w") as f:
        json.dump(results, f, indent=1)
    print(table(results))


if __name__ == "__main__":
    main()
