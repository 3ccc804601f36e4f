#!/usr/bin/env python3
"""Best GFLOP/s after N trials, from record logs (the ablation table).

usage: tuning_curve_table.py GFLOP LOG [LOG...]  (prints a Markdown table with
one row per log and columns for 64, 200, 500 and 1000 trials)"""
import json
import sys

CHECKPOINTS = [64, 200, 500, 1000]


def first_timings(path):
    """(steps key, steps, median cost in s) of each program of a log at its
    first measurement, in log order: a program measured again (the tuner's
    confirmation) is not a trial, a line cut by a crash is skipped, a failed
    measurement costs inf."""
    seen, out = set(), []
    with open(path) as f:
        for line in f:
            try:
                r = json.loads(line)
            except ValueError:
                continue
            key = json.dumps(r["steps"])
            if key in seen:
                continue
            seen.add(key)
            res = r["result"]
            costs = res.get("costs_s") or []
            cost = sorted(costs)[len(costs) // 2] if res["error"] == "none" and costs else float("inf")
            out.append((key, r["steps"], cost))
    return out


def best_costs(path):
    """The best first-measured cost (s) after each new program of a log."""
    costs, best = [], float("inf")
    for _, _, cost in first_timings(path):
        best = min(best, cost)
        costs.append(best)
    return costs


def curve(path, gflop):
    costs = best_costs(path)
    out = {cp: gflop / costs[cp - 1] if costs[cp - 1] < float("inf") else 0.0
           for cp in CHECKPOINTS if cp <= len(costs)}
    return out, len(costs)


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    gflop = float(sys.argv[1])
    print("| log | " + " | ".join("%d trials" % c for c in CHECKPOINTS) + " |")
    print("|---|" + "---|" * len(CHECKPOINTS))
    for path in sys.argv[2:]:
        c, n = curve(path, gflop)
        cells = ["%.1f" % c[cp] if cp in c else "—" for cp in CHECKPOINTS]
        print("| %s (%d) | %s |" % (path.split("/")[-1], n, " | ".join(cells)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
