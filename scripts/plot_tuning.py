#!/usr/bin/env python3
"""Tuning curves: best GFLOP/s vs trials, one line per task, each task's best
baseline as a dashed horizontal line in the same colour.

usage: plot_tuning.py REPORT_DIR OUT.png   (reads curves.csv and baselines.csv
written by `loom report`; needs Debian's python3-matplotlib)"""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    report_dir, out = sys.argv[1], sys.argv[2]
    curves = {}
    with open(os.path.join(report_dir, "curves.csv")) as f:
        for row in csv.DictReader(f):
            curves.setdefault(row["task"], []).append((int(row["trials"]), float(row["best_gflops"])))
    baselines = {}
    path = os.path.join(report_dir, "baselines.csv")
    if os.path.exists(path):
        with open(path) as f:
            for row in csv.DictReader(f):
                baselines[row["task"]] = (row["baseline"], float(row["gflops"]))
    fig, ax = plt.subplots(figsize=(14, 6))
    for i, (task, points) in enumerate(curves.items()):
        color = "C%d" % (i % 10)
        xs, ys = zip(*points)
        ax.plot(xs, ys, color=color, label=task[:60])
        if task in baselines:
            name, g = baselines[task]
            ax.axhline(g, color=color, linestyle="--", linewidth=1, label="%s: %s" % (task[:30], name))
    ax.set_xlabel("trials (measured schedules)")
    ax.set_ylabel("best GFLOP/s")
    ax.set_title("Loom tuning curves (dashed: best vendor baseline, same run)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main())
