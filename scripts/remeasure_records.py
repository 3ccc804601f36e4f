#!/usr/bin/env python3
"""Time the programs of record logs again, and say how far one timing is from another.

A cost model learns from, and is judged against, one timing per program. On a
shared machine that timing moves with the other tenants' load, so part of
what looks like a ranking error is the label's. This script measures every
program that timed successfully in the given logs again, `--rounds` times,
through `loom measure` (the tuner's measurement path, the reference check
included), and writes the re-measurements as record logs under OUT:
`loom costmodel train/eval/transfer` given the original logs and these pool
all timings of a program into one cost (their median), so the labels come
from several timings taken minutes apart.

Each round measures the programs of every task in turn, the tasks shuffled
and the programs of a task shuffled, so that slow and fast periods of the
machine fall on all alike. Rounds already complete are kept on a rerun.

It then prints, per task and pooled over tasks, how often two timings of the
same programs order a pair alike (pairs of programs of one task whose first
timings differ): the original timing against each re-measurement, and
against the median of all. A model ranked against single timings cannot be
expected to agree with them much more often than one timing agrees with
another.

usage: remeasure_records.py --loom BUILD/loom --out DIR [--rounds 1]
         [--repeat 2] [--min-repeat-ms 5] [--flush] [--seed 0] LOG...
  --repeat / --min-repeat-ms: the timing protocol of the re-measurements
  (default: that of `loom costmodel collect`; the searches of
  scripts/costmodel_pretrain.sh time with 3 and 20 ms, as their configs).
"""
import argparse
import hashlib
import json
import os
import random
import statistics
import subprocess
import sys

INF = float("inf")


def cost_of(result):
    costs = result.get("costs_s") or []
    return statistics.median(costs) if result.get("error", "none") == "none" and costs else INF


def read_measured(path):
    """steps key -> cost of one `loom measure` log (inf when it failed); {} when there is none."""
    out = {}
    if not os.path.exists(path):
        return out
    with open(path) as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                out[json.dumps(r["steps"])] = cost_of(r["result"])
    return out


def measure_programs(loom, log, spec, programs, rng, options=()):
    """Time `programs` ({steps key: steps}) of one task once more, in a shuffled
    order, through `loom measure` (its options `options`) into `log`, with the
    task file beside it (`spec`: the task's keys of a task file). A log that
    already holds every program is kept. Returns False when it was kept;
    exits with the command and its output when `loom measure` fails (a wrong
    result is a Loom bug)."""
    keys = sorted(programs)
    rng.shuffle(keys)
    if os.path.exists(log) and set(read_measured(log)) >= set(keys):
        return False
    if os.path.exists(log):
        os.remove(log)
    f = log[:-len(".jsonl")] + ".json"
    with open(f, "w") as out:
        json.dump(dict(spec, candidates=[programs[k] for k in keys]), out)
    cmd = [loom, "measure", f, "--log", log] + list(options)
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if done.returncode != 0:
        sys.exit("%s: %s failed:\n%s" % (os.path.basename(sys.argv[0]), " ".join(cmd), done.stdout[-2000:]))
    return True


def read_log(path):
    """task key -> (task json, {steps key: (steps, cost)}) of one record log."""
    tasks = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                r = json.loads(line)
                task, steps, result = r["task"], r["steps"], r["result"]
            except (ValueError, KeyError) as e:
                sys.exit("remeasure_records: %s:%d: not a measure record (%s)" % (path, n, e))
            key = json.dumps(task, sort_keys=True)
            progs = tasks.setdefault(key, (task, {}))[1]
            progs.setdefault(json.dumps(steps), (steps, cost_of(result)))
    return tasks


def agreement(a, b):
    """Fraction of pairs (distinct in a, both finite) that a and b order alike; ties in b count half."""
    keys = [k for k in a if a[k] < INF and b.get(k, INF) < INF]
    agree = pairs = 0.0
    for i in range(len(keys)):
        for j in range(i + 1, len(keys)):
            da = a[keys[i]] - a[keys[j]]
            if da == 0:
                continue
            db = b[keys[i]] - b[keys[j]]
            pairs += 1
            agree += 0.5 if db == 0 else float((da > 0) == (db > 0))
    return agree, pairs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--loom", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--min-repeat-ms", type=float, default=5)
    ap.add_argument("--flush", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("logs", nargs="+")
    a = ap.parse_args()
    if a.rounds < 1 or a.repeat < 1 or a.min_repeat_ms < 0:
        sys.exit("remeasure_records: --rounds and --repeat must be >= 1, --min-repeat-ms >= 0")
    os.makedirs(a.out, exist_ok=True)

    # One unit of work per (log, task): its successfully timed programs.
    units = []  # (name, task json, {steps key: steps}, {steps key: first cost})
    for path in a.logs:
        if not os.path.exists(path):
            sys.exit("remeasure_records: %s: no such log" % path)
        base = os.path.basename(path)[:-len(".jsonl")] if path.endswith(".jsonl") else os.path.basename(path)
        for key, (task, progs) in sorted(read_log(path).items()):
            ok = {k: s for k, (s, c) in progs.items() if c < INF}
            if len(ok) < 2:
                continue
            tag = hashlib.sha1(key.encode()).hexdigest()[:8]
            units.append(("%s.%s" % (base, tag), task, ok, {k: c for k, (s, c) in progs.items()}))
    total = sum(len(u[2]) for u in units)
    tasks = len({json.dumps(u[1], sort_keys=True) for u in units})
    print("remeasure_records: %d programs of %d tasks in %d logs, %d round(s)"
          % (total, tasks, len(a.logs), a.rounds), file=sys.stderr)

    rng = random.Random(a.seed)
    for r in range(a.rounds):
        order = list(range(len(units)))
        rng.shuffle(order)
        for done_units, u in enumerate(order):
            name, task, progs, _ = units[u]
            options = ["--repeat", str(a.repeat), "--min-repeat-ms", str(a.min_repeat_ms)] + (["--flush"] if a.flush else [])
            if measure_programs(a.loom, os.path.join(a.out, "%s.r%d.jsonl" % (name, r)), {"task": task}, progs, rng,
                                options):
                print("remeasure_records: round %d, %d/%d %s (%d programs)"
                      % (r + 1, done_units + 1, len(units), name, len(progs)), file=sys.stderr)

    # Per task (the programs of all its logs together: pairs timed minutes
    # apart as well), then pooled over tasks.
    by_task = {}  # task key -> (task, {(unit, steps key): first cost}, [{(unit, steps key): cost} per round])
    for name, task, progs, first in units:
        again = [read_measured(os.path.join(a.out, "%s.r%d.jsonl" % (name, r))) for r in range(a.rounds)]
        t = by_task.setdefault(json.dumps(task, sort_keys=True), (task, {}, [{} for _ in range(a.rounds)]))
        for k in progs:
            t[1][(name, k)] = first[k]
            for r in range(a.rounds):
                t[2][r][(name, k)] = again[r].get(k, INF)
    rows = []
    for task, first, again in by_task.values():
        each = [agreement(first, m) for m in again]
        med = {k: statistics.median([first[k]] + [m[k] for m in again]) for k in first}
        rows.append((describe(task), len(first), sum(e[0] for e in each), sum(e[1] for e in each))
                    + agreement(first, med))
    rows.sort(key=lambda r: r[2] / r[3] if r[3] else 1.0)
    print("| task | programs | pairs | first timing vs each re-measurement | first vs median of all |")
    print("|---|---|---|---|---|")
    for d, n, a_each, p_each, a_med, p_med in rows:
        if p_each:
            print("| %s | %d | %d | %.3f | %.3f |" % (d, n, p_med, a_each / p_each, a_med / p_med if p_med else 1.0))
    tot = [sum(r[i] for r in rows) for i in range(1, 6)]
    if tot[2]:
        print("| **all tasks** | %d | %d | **%.3f** | %.3f |" % (tot[0], tot[4], tot[1] / tot[2],
                                                              tot[3] / tot[4] if tot[4] else 1.0))
    if rows and rows[0][3]:
        print("\nlowest task: %s %.3f" % (rows[0][0], rows[0][2] / rows[0][3]))


def describe(task):
    """A task's workload and parameters, short; a network's subgraph by its
    ops and input shapes (* constant), as `loom` names it but for the output
    shape, which needs the graph's shape inference."""
    params = task.get("params") or {}
    threads = (task.get("target") or "").split("-threads=")
    if task.get("workload") == "subgraph":
        ops = "+".join(n.get("op", "?") for n in params.get("nodes", []))
        inputs = ", ".join(("x".join(str(d) for d in i.get("shape", [])) or "scalar")
                           + ("*" if i.get("constant") else "") for i in params.get("inputs", []))
        what = "%s from %s" % (ops, inputs)
    else:
        what = ",".join("%s=%s" % kv for kv in sorted(params.items()))
    return "%s %s%s" % (task.get("workload", "?"), what,
                        ", threads=%s" % threads[1].split()[0] if len(threads) > 1 else "")


if __name__ == "__main__":
    main()
