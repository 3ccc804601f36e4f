#!/usr/bin/env python3
"""Trials to 95% of the best, judged by what each search would return.

A search's log keeps every program's first timing, and its best first timing
is partly luck: on a shared machine the program the log calls fastest often
re-measures 5-40% slower, and the tuner's confirmation step (its `confirm_top`
best programs measured `confirm_rounds` more times, the pick by the median)
exists for that reason. Counting trials until a log's best first timing
reaches a target therefore rewards lucky timings, not better programs.

This script judges each run by the program it would return if stopped after
t trials, for t at every round boundary: among the `--top` programs with the
best first timings in the first t, the one whose median of the first timing
and the re-measurements is lowest (the tuner's rule). Every program that is
such a candidate in any run of a task is re-measured `--rounds` times, all
programs of all tasks in each round, in a shuffled order, so that the
machine's load falls on all alike; a program's cost is the median of its
re-measurements.

usage: remeasure_search_picks.py --loom BUILD/loom --out DIR --trials N
         --tasks "model:index ..." --arms "a b ..." --seeds "1 2"
         [--top 8] [--rounds 3] [--every 64] [--seed 0]
  reads DIR/<model>_<index>.<arm>.s<seed>.json (the run's config: the task,
  the target, and whether caches are flushed, `measure.flush_cache`, which
  the re-measurement follows) and .jsonl (its log), writes re-measurements
  under DIR/remeasure/ (kept: a rerun measures only the rounds that are
  missing) and prints Markdown tables.
"""
import argparse
import json
import os
import random
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from remeasure_records import measure_programs, read_measured  # noqa: E402
from tuning_curve_table import first_timings  # noqa: E402

INF = float("inf")


def top_first(progs, t, k):
    ok = [p for p in progs[:t] if p[2] < INF]
    return sorted(ok, key=lambda p: p[2])[:k]


def checkpoints(trials, every):
    cps = list(range(every, trials, every))
    return cps + [trials]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--loom", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--trials", type=int, required=True)
    ap.add_argument("--tasks", required=True)
    ap.add_argument("--arms", required=True)
    ap.add_argument("--seeds", required=True)
    ap.add_argument("--top", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--every", type=int, default=64)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    tasks = [t.replace(":", "_") for t in a.tasks.split()]
    arms, seeds = a.arms.split(), a.seeds.split()
    cps = checkpoints(a.trials, a.every)
    rdir = os.path.join(a.out, "remeasure")
    os.makedirs(rdir, exist_ok=True)

    runs, spec, flush, candidates = {}, {}, {}, {}
    for task in tasks:
        candidates[task] = {}
        for arm in arms:
            for seed in seeds:
                name = os.path.join(a.out, "%s.%s.s%s" % (task, arm, seed))
                for ext in (".json", ".jsonl"):
                    if not os.path.exists(name + ext):
                        sys.exit("remeasure: %s%s: no such run (config and log of each task, arm and seed)" % (name, ext))
                progs = first_timings(name + ".jsonl")[:a.trials]
                runs[(task, arm, seed)] = progs
                cfg = json.load(open(name + ".json"))
                run_flush = bool(cfg.get("measure", {}).get("flush_cache", False))
                if task not in spec:
                    spec[task] = {"workload": cfg["tasks"][0]["workload"], "params": cfg["tasks"][0]["params"],
                                  "target": cfg["target"]}
                    flush[task] = run_flush
                elif run_flush != flush[task]:
                    sys.exit("remeasure: the runs of %s differ in measure.flush_cache" % task)
                for t in cps:
                    for key, steps, _ in top_first(progs, t, a.top):
                        candidates[task][key] = steps

    rng = random.Random(a.seed)
    total = sum(len(c) for c in candidates.values())
    print("remeasure: %d programs over %d tasks, %d rounds" % (total, len(tasks), a.rounds), file=sys.stderr)
    for r in range(a.rounds):
        order = tasks[:]
        rng.shuffle(order)
        for task in order:
            log = os.path.join(rdir, "%s.r%d.jsonl" % (task, r))
            if measure_programs(a.loom, log, spec[task], candidates[task], rng, ["--flush"] if flush[task] else []):
                print("remeasure: round %d %s (%d programs)" % (r + 1, task, len(candidates[task])), file=sys.stderr)

    again = {task: {} for task in tasks}  # key -> re-measured medians
    for task in tasks:
        for r in range(a.rounds):
            for key, cost in read_measured(os.path.join(rdir, "%s.r%d.jsonl" % (task, r))).items():
                again[task].setdefault(key, []).append(cost)

    def true_cost(task, key):
        return statistics.median(again[task][key])

    def pick(task, progs, t):
        """The program the tuner would return after t trials, and its re-measured cost."""
        top = top_first(progs, t, a.top)
        if not top:
            return INF
        chosen = min(top, key=lambda p: statistics.median([p[2]] + again[task][p[0]]))
        return true_cost(task, chosen[0])

    curves = {k: [pick(k[0], progs, t) for t in cps] for k, progs in runs.items()}
    final = {k: c[-1] for k, c in curves.items()}
    best = {t: min(final[(t, arm, s)] for arm in arms for s in seeds) for t in tasks}
    median = {t: statistics.median(final[(t, arm, s)] for arm in arms for s in seeds) for t in tasks}

    def stays(c, target):  # trials from which every later pick is within 95% of target
        for i in range(len(c)):
            if all(v <= target / 0.95 for v in c[i:]):
                return cps[i]
        return a.trials + 1

    flushed = [t for t in tasks if flush[t]]
    print("Each run judged by the program it would return after t trials (t = %s), re-measured: %d programs,"
          " %d rounds; caches flushed for %s.\n" % (", ".join(map(str, cps[:3])) + ", ...", total, a.rounds,
                                                    ", ".join(flushed) if flushed else "no task"))
    for label, targets in (("the median of the runs' final picks", median), ("the best run's final pick", best)):
        print("Trials until the pick stays within 95%% of %s (%d+1 = never):\n" % (label, a.trials))
        print("| task | target (ms) | " + " | ".join("%s (each seed)" % arm for arm in arms) + " |")
        print("|---|---|" + "---|" * len(arms))
        means = {arm: [] for arm in arms}
        for task in tasks:
            row = []
            for arm in arms:
                r = [stays(curves[(task, arm, s)], targets[task]) for s in seeds]
                means[arm].append(statistics.mean(r))
                row.append("%.0f (%s)" % (statistics.mean(r), ", ".join(map(str, r))))
            print("| %s | %.4f | %s |" % (task, targets[task] * 1e3,
                                          " | ".join(row)))
        print("| **mean** | | " + " | ".join("**%.0f**" % statistics.mean(means[arm]) for arm in arms) + " |\n")
    shown = [t for t in (64, 128, 192, 256, 320, 384, 512, 768) if t < a.trials] + [a.trials]
    print("The pick after t trials, re-measured, as a fraction of the median of the runs' final picks (speed;"
          " mean over tasks and seeds):\n")
    print("| trials | " + " | ".join(map(str, shown)) + " |")
    print("|---|" + "---|" * len(shown))
    for arm in arms:
        row = []
        for t in shown:
            i = cps.index(t) if t in cps else max(j for j, c in enumerate(cps) if c <= t)
            row.append("%.2f" % statistics.mean(median[task] / curves[(task, arm, s)][i]
                                                for task in tasks for s in seeds))
        print("| %s | %s |" % (arm, " | ".join(row)))
    print()
    print("The final pick's re-measured speed as a fraction of the best run's (mean over seeds); and the final"
          " pick's re-measured time over the best first timing in its log (median over runs):\n")
    print("| task | " + " | ".join(arms) + " | re-measured / best first timing |")
    print("|---|" + "---|" * (len(arms) + 1))
    geo = {arm: [] for arm in arms}
    for task in tasks:
        row, luck = [], []
        for arm in arms:
            f = statistics.mean(best[task] / final[(task, arm, s)] for s in seeds)
            geo[arm].append(f)
            row.append("%.2f" % f)
            for s in seeds:
                first_best = min(p[2] for p in runs[(task, arm, s)])
                luck.append(final[(task, arm, s)] / first_best)
        print("| %s | %s | %.2f |" % (task, " | ".join(row), statistics.median(luck)))
    print("| **geometric mean** | " + " | ".join("**%.2f**" % statistics.geometric_mean(geo[arm]) for arm in arms)
          + " | |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
