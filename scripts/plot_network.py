#!/usr/bin/env python3
"""A network's tuning curve: the estimated end-to-end latency (the weighted
sum of each task's best latency so far) against trials, with the measured
end-to-end latencies of Loom and PyTorch as horizontal lines.

usage: plot_network.py REPORT_DIR OUT.png   (reads network_curve.csv and
network.csv written by `loom report` of a network config; needs Debian's
python3-matplotlib)"""
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
    xs, ys = [], []
    with open(os.path.join(report_dir, "network_curve.csv")) as f:
        for row in csv.DictReader(f):
            xs.append(int(row["trials"]))
            ys.append(float(row["estimated_ms"]))
    with open(os.path.join(report_dir, "network.csv")) as f:
        net = next(csv.DictReader(f))
    fig, ax = plt.subplots(figsize=(10, 5))
    if xs:
        ax.step(xs, ys, where="post", label="estimated (sum of weighted task latencies)")
    ax.axhline(float(net["loom_ms"]), color="C0", linestyle="--", label="Loom, measured end to end")
    if float(net["torch_ms"]) > 0:
        ax.axhline(float(net["torch_ms"]), color="C3", linestyle="--", label="PyTorch, measured end to end")
    ax.set_xlabel("trials (measured schedules)")
    ax.set_ylabel("latency (ms)")
    ax.set_ylim(bottom=0)
    ax.set_title("%s, %s thread(s)" % (net["network"], net["threads"]))
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    return 0


if __name__ == "__main__":
    sys.exit(main())
