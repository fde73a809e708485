#!/usr/bin/env python3
"""How well the fast evaluator ranks: for each shipped scenario, `pipetwin tune` with the
analytic engine simulating the fast evaluator's best N (--refine N, default 40), and where the
engine's best stood in the fast ranking (best_fast_rank: 1 is first). The fast evaluator's
top 10 contains the engine's best where that rank is 10 or less. Also the search's speed.

    python3 bench/tune_ranking.py [--binary build/pipetwin] [--refine 40]
"""
import argparse
import json
import subprocess
import sys

SCENARIOS = [
    "llama3-8b-64gpu",
    "mixtral-8x7b-64gpu",
    "llama3-70b-zero3-256gpu",
    "llama3-70b-128k-cp16-512gpu",
    "llama3-70b-1024gpu",
    "megatron-gpt-145b-1536gpu",
    "deepseek-v3-2048gpu",
]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--binary", default="build/pipetwin")
    parser.add_argument("--refine", type=int, default=40)
    parser.add_argument("--scenarios", nargs="+", default=SCENARIOS, metavar="NAME",
                        help="some of the shipped scenarios only")
    args = parser.parse_args()
    print("| scenario | evaluated | wall s | own s/iter | best s/iter | gain | best's fast rank |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    in_top10 = 0
    for name in args.scenarios:
        out = subprocess.run(
            [args.binary, "tune", f"scenarios/{name}.textproto", "--json", "--simgrid", "0", "--refine",
             str(args.refine)], check=True, capture_output=True, text=True).stdout
        r = json.loads(out)
        best = r["best"]
        rank = r["best_fast_rank"]
        in_top10 += 1 if 0 < rank <= 10 else 0
        gain = r["own"]["iteration_time_s"] / best["iteration_time_s"] if best else float("nan")
        print(f"| {name} | {r['evaluated']} | {r['wall_s']:.1f} | {r['own']['iteration_time_s']:.3f} "
              f"| {best['iteration_time_s']:.3f} | {gain:.3f} | {rank} |", flush=True)
    print(f"\nthe fast evaluator's top 10 held the engine's best in {in_top10} of "
          f"{len(args.scenarios)}")


if __name__ == "__main__":
    sys.exit(main())
