#!/usr/bin/env python3
"""The memory estimate before a run against the run's measured peak.

For each shipped scenario and engine, runs `pipetwin simulate` under /usr/bin/time (its
maximum resident set) and reads the estimate that `--max-memory` is held against from the
error a tiny limit gives. Prints one row per run: instructions, estimate, measured peak and
the error of the estimate. Usage:

    bench/memory_estimate.py build/pipetwin [--simgrid] [--timeline] ["SCENARIO [--set F=V ...]" ...]

Measure on a quiet machine: a run that swaps or shares the machine reads the same peak but
takes longer.
"""
import re
import shlex
import subprocess
import sys
import tempfile

ANALYTIC_SCENARIOS = [
    "scenarios/quickstart.textproto",
    "scenarios/llama3-8b-64gpu.textproto",
    "scenarios/llama3-70b-zero3-256gpu.textproto",
    "scenarios/llama3-70b-1024gpu.textproto",
    "scenarios/megatron-gpt-145b-1536gpu.textproto",
    "scenarios/deepseek-v3-2048gpu.textproto",
    "scenarios/llama3-405b-16384gpu.textproto",
    "scenarios/llama3-405b-128k-cp16-16384gpu.textproto",
]


def estimate(binary, scenario, flags):
    """The estimate in GiB and the instruction count, from the limit's error message."""
    r = subprocess.run([binary, "simulate"] + shlex.split(scenario) + ["--max-memory", "0.000001"] +
                       flags,
                       capture_output=True, text=True)
    m = re.search(r"about ([\d.]+) (million|billion)? ?instructions needing about ([\d.e+]+) GiB",
                  r.stderr)
    if not m:
        sys.exit(f"{scenario}: no estimate in: {r.stderr.strip()}")
    scale = {"million": 1e6, "billion": 1e9, None: 1}[m.group(2)]
    return float(m.group(3)), float(m.group(1)) * scale


def measured_gib(binary, scenario, flags):
    with tempfile.TemporaryDirectory() as tmp:
        extra = ["--trace", f"{tmp}/trace.json"] if "--timeline" in flags else ["--json"]
        extra += ["--allow-oom"]  # a scenario that does not fit its GPUs still runs
        engine = ["--engine", "simgrid"] if "--simgrid" in flags else []
        r = subprocess.run(["/usr/bin/time", "-f", "%M", binary, "simulate"] +
                           shlex.split(scenario) + engine + extra, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"{scenario}: exit {r.returncode}: {r.stderr.strip()[-400:]}")
        return int(r.stderr.strip().splitlines()[-1]) * 1024 / 2**30


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    binary = args[0]
    flags = [a for a in args[1:] if a in ("--simgrid", "--timeline")]
    scenarios = [a for a in args[1:] if a not in flags] or ANALYTIC_SCENARIOS
    # The limit is checked before anything is written: the trace path stays untouched.
    estimate_flags = (["--engine", "simgrid"] if "--simgrid" in flags else []) + \
                     (["--trace", "/nonexistent/trace.json"] if "--timeline" in flags else ["--json"])
    print(f"{'scenario':60} {'instructions':>13} {'estimate GiB':>13} {'peak GiB':>9} {'error':>7}")
    errors = []
    for scenario in scenarios:
        est, instructions = estimate(binary, scenario, estimate_flags)
        peak = measured_gib(binary, scenario, flags)
        error = (est - peak) / peak
        errors.append(abs(error))
        print(f"{scenario[-60:]:60} {instructions:13,.0f} {est:13.3f} {peak:9.3f} {error:+7.1%}")
    print(f"mean |error| {sum(errors) / len(errors):.1%}, largest {max(errors):.1%}")


if __name__ == "__main__":
    main()
