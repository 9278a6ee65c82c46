#!/usr/bin/python3
"""Plots `cdma-vp bench pcie --csv`: achieved GB/s against transfer size, one line per
(mode, direction). Usage: plot_pcie_bench.py BENCH.csv OUT.{png,svg,pdf} [TITLE]: the image
format follows OUT's extension (PNG without one). Needs Debian's python3-matplotlib."""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
matplotlib.rcParams["text.parse_math"] = False  # the title (a preset name) literally, as plot_sweep.py
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: plot_pcie_bench.py BENCH.csv OUT.{png,svg,pdf} [TITLE]")
    with open(sys.argv[1], newline="") as f:
        rows = list(csv.DictReader(f))
    series = {}
    for r in rows:
        series.setdefault((r["mode"], r["direction"]), []).append((int(r["bytes"]), float(r["gbps"])))
    fig, ax = plt.subplots(figsize=(8, 5))
    styles = {"lt": "-", "at": "--"}
    for (mode, direction), pts in sorted(series.items()):
        pts.sort()
        ax.plot([p[0] for p in pts], [p[1] for p in pts], styles.get(mode, "-"), marker="o",
                markersize=3, label=f"{direction} ({mode.upper()})")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("transfer size (bytes)")
    ax.set_ylabel("achieved bandwidth (GB/s, 1e9 B/s)")
    ax.set_title(sys.argv[3] if len(sys.argv) == 4 else "cdma-vp bench pcie")
    ax.grid(alpha=0.3, which="both")
    ax.legend()
    fig.tight_layout()
    # The format named, never guessed by matplotlib from another part of the name.
    fmt = os.path.splitext(sys.argv[2])[1][1:].lower() or "png"
    fig.savefig(sys.argv[2], format=fmt, dpi=120)


if __name__ == "__main__":
    main()
