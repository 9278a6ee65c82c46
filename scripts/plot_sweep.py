#!/usr/bin/python3
"""Plots a cdma-vp sweep: step time of oracle / vDNN / cDMA and cDMA's speed-up over vDNN
for every run of the grid. Usage: plot_sweep.py [--zero-not-a-value=grid:NAME ...] SWEEP.csv OUT_STEM  (writes OUT_STEM.png and
OUT_STEM.svg). Needs Debian's python3-matplotlib (installed by scripts/install-deps).

Two forms: when a grid axis is numeric (every value a number, with one unit if any, e.g.
`pcie.lanes=4,8,16` or `cdma.codec_bytes_per_cycle.zlib=32,16,8,4`) with at least 3 values,
lines over that axis, one per combination of the other axes (at most MAX_SERIES), so that
a crossover shows; else one group of bars per run. An axis holding 0 where 0 is a setting, not
a quantity (a codec rate's 0: the default rate; cdma.xbar_bandwidth's 0: unlimited), is drawn
as bars: cdma-vp sweep names such columns with --zero-not-a-value=grid:NAME (repeatable, before
the two paths), from the parameters' own descriptions."""
import csv
import math
import os
import re
import signal
import sys
import tempfile

import matplotlib

matplotlib.use("Agg")
# Every text literally: a grid value such as gpu.name=$\frac$ (or any "$...$" in a label) was
# parsed as mathtext and the plotter failed with a traceback, no plot written (breaker s23).
matplotlib.rcParams["text.parse_math"] = False
import matplotlib.pyplot as plt  # noqa: E402


# Exit status 3: a plot file could not be written (cdma-vp sweep then exits 3, as for any
# output of the sweep it cannot write); the message names the file and the reason.
CANNOT_WRITE = 3


def cannot_write(path, why):
    sys.stderr.write(f"cdma-vp: error: {path}: {why}; the plots were not written (sweep.csv is complete)\n")
    sys.exit(CANNOT_WRITE)


def title(rows):
    """The figure's title: "cdma-vp sweep", then the network and the batch when every plotted
    row has the same one (a network or batch axis varies them: naming the first row's, as the
    title did, mislabelled the other bars)."""
    common = []
    for key, form in (("network", "{}"), ("batch", "batch {}")):
        values = {r.get(key, "") for r in rows}
        if len(values) == 1 and "" not in values:
            common.append(form.format(values.pop()))
    return "cdma-vp sweep" + (": " + ", ".join(common) if common else "")


# Lines over a numeric axis: at most this many series (combinations of the other axes); more
# would not be told apart, and the bars are drawn instead.
MAX_SERIES = 8
_NUMBER = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([A-Za-z/%]*)\s*$")


def numeric(values):
    """(numbers, unit) if every value is a number with the same unit ("" for none), e.g.
    ["8", "16"] -> ([8.0, 16.0], ""), ["500ns", "1000 ns"] -> ([500.0, 1000.0], "ns");
    else None (["1GB/s", "500MB/s"]: two units, not converted; "1e400": not a finite number,
    which no axis could place)."""
    nums, units = [], set()
    for v in values:
        m = _NUMBER.match(v or "")
        if not m or not math.isfinite(float(m.group(1))):
            return None
        nums.append(float(m.group(1)))
        units.add(m.group(2))
    return (nums, units.pop()) if len(units) == 1 else None


# Grid columns whose value 0 is a setting, not a quantity (a codec rate's 0 is the default rate,
# cdma.xbar_bandwidth's 0 is unlimited, gpu.kernel_outstanding's 0 is auto): given by cdma-vp
# sweep (--zero-not-a-value). Drawn at x = 0 such a 0 looked like the fastest decoder (breaker
# s23 #5) or the slowest crossbar: a column with a 0 is not a line axis, and the bars label
# each row by its value as given.
ZERO_NOT_A_VALUE = set()


def zero_means_default(col, values):
    """True when `col` (grid:NAME) is one of ZERO_NOT_A_VALUE and one of `values` is 0."""
    n = numeric(values)
    return col in ZERO_NOT_A_VALUE and n is not None and 0.0 in n[0]


def line_axis(rows, grid_cols):
    """The grid column to draw lines over: numeric (numeric()) with at least 3 distinct values
    in `rows`, the one with the most (ties: the last in the grid); then the other columns give
    the series, at most MAX_SERIES of them (more: the column is passed over, as one the
    next rules refuse; another numeric column may still serve). A column is passed over when no series has 3
    points (an axis zipped with another, `--zip network,batch`: one point per series, no line)
    or a series has one x twice (1 and 1.0: a line would go back on itself). Returns (column,
    unit) or None (bars)."""
    best = None
    for c in grid_cols:
        n = numeric([r[c] for r in rows])
        if n is None or len(set(n[0])) < 3 or zero_means_default(c, [r[c] for r in rows]):
            continue
        xs = [[x for x, _ in pts] for _, pts in series(rows, grid_cols, c)]
        if len(xs) > MAX_SERIES or max(len(x) for x in xs) < 3 or any(len(set(x)) != len(x) for x in xs):
            continue
        if best is None or len(set(n[0])) >= best[2]:
            best = (c, n[1], len(set(n[0])))
    return (best[0], best[1]) if best else None


def series(rows, grid_cols, xcol):
    """The rows grouped by the values of the grid columns other than `xcol`, in the order of
    first appearance: [(label, [(x, row), ...] sorted by x)]; label "" when there is no other
    column."""
    groups = {}
    for r in rows:
        key = ", ".join(f"{c[5:]}={r[c]}" for c in grid_cols if c != xcol)
        groups.setdefault(key, []).append((numeric([r[xcol]])[0][0], r))
    return [(k, sorted(v, key=lambda p: p[0])) for k, v in groups.items()]


def num(v):  # empty cell: the step was not simulated (--steps) -> no bar / point
    return float(v) if v not in ("", None) else float("nan")


def lines_for(rows, grid_cols):
    """line_axis() for rows that have a vDNN or cDMA step time; None (bars, which show the
    oracle) when none has: the lines draw those two steps only, and a sweep with --steps oracle
    drew two empty axes (breaker s22 brk2)."""
    if not any(num(r.get(k)) == num(r.get(k)) for r in rows for k in ("vdnn_s", "cdma_s")):
        return None
    return line_axis(rows, grid_cols)


def no_speedup(ax, rows):
    """Says so on the speed-up panel when no run has both a vDNN and a cDMA step (--steps)."""
    if not any(num(r.get("speedup")) == num(r.get("speedup")) for r in rows):
        ax.text(0.5, 0.5, "no speed-up: the vDNN and cDMA steps did not both run (--steps)",
                transform=ax.transAxes, ha="center", va="center", color="0.4")


# A legend of more entries than this goes beside the axes, not over the lines (new-user trial
# s25 F5: 12 entries at loc="best" sat in the middle and hid the Gen4 points).
LEGEND_INSIDE_MAX = 4
STEPS = (("cdma_s", "o-", 1.0, "cDMA"), ("vdnn_s", "s--", 0.6, "vDNN"), ("oracle_s", "^:", 0.6, "oracle"))


def step_lines(rows, grid_cols, xcol):
    """The lines of the step-time panel, identical ones once (new-user trial s25 F5: the
    oracle, the same in every series of a PCIe sweep, had one legend entry per series):
    [(key, style, alpha, xs, ys in ms, label, color)]. A line shared by every series is
    labelled "STEP, all runs" and drawn in grey; by some, "STEP, A = B"; by one, "STEP, A" in
    its series' colour (C0, C1, ...). A step that did not run (--steps: every cell empty) has
    no line."""
    ser = series(rows, grid_cols, xcol)
    groups = {}  # (step key, xs, cells) -> series indices, in order
    for k, (_, pts) in enumerate(ser):
        for key, _style, _alpha, _step in STEPS:
            cells = tuple(r.get(key) or "" for _, r in pts)
            if any(c != "" for c in cells):
                groups.setdefault((key, tuple(p[0] for p in pts), cells), []).append(k)
    out = []
    for k, (label, pts) in enumerate(ser):
        for key, style, alpha, step in STEPS:
            cells = tuple(r.get(key) or "" for _, r in pts)
            members = groups.get((key, tuple(p[0] for p in pts), cells))
            if not members or members[0] != k:
                continue  # did not run, or drawn with the first series that has it
            if len(members) == 1:
                name, color = label or "all runs", f"C{k % 10}"
            elif len(members) == len(ser):
                name, color = "all runs", "0.35"
            else:
                name, color = " = ".join(ser[m][0] for m in members), "0.35"
            out.append((key, style, alpha, [p[0] for p in pts], [num(c) * 1e3 for c in cells], f"{step}, {name}",
                        color))
    return out


def place_legend(ax):
    """A legend of up to LEGEND_INSIDE_MAX entries where it covers the fewest points; more, to
    the right of the axes (the figure is widened for it by the caller, tight_layout fits it)."""
    n = len(ax.get_legend_handles_labels()[0])
    if n <= LEGEND_INSIDE_MAX:
        ax.legend(fontsize="small", loc="best")
    else:
        ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
    return n > LEGEND_INSIDE_MAX


def draw_lines(rows, grid_cols, xcol, unit):
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(8, 7), sharex=True)
    # The oracle (no transfers) too, as the bars show it (new-user trial s23 F8: the lines
    # had none, and an axis from the lowest cDMA time made small gaps look large). A step
    # that did not run (--steps) has no line and no legend entry (breaker s23).
    for _key, style, alpha, xs, ys, label, color in step_lines(rows, grid_cols, xcol):
        ax1.plot(xs, ys, style, color=color, alpha=alpha, label=label)
    for k, (label, pts) in enumerate(series(rows, grid_cols, xcol)):
        sp = [num(r.get("speedup")) for _, r in pts]
        if any(v == v for v in sp):
            ax2.plot([p[0] for p in pts], sp, "o-", color=f"C{k % 10}", label=label or "all runs")
    ax1.set_ylabel("step time (ms, simulated)")
    ax1.set_ylim(bottom=0)
    if place_legend(ax1):
        fig.set_figwidth(12)
    ax1.grid(alpha=0.3)
    ax2.axhline(1.0, color="k", lw=0.8)
    no_speedup(ax2, rows)
    ax2.set_ylabel("cDMA speed-up over vDNN")
    ax2.set_xlabel(xcol[5:] + (f" ({unit})" if unit else ""))
    ax2.grid(alpha=0.3)
    xs = sorted({x for _, pts in series(rows, grid_cols, xcol) for x, _ in pts})
    if xs[0] > 0 and xs[-1] / xs[0] >= 8:  # e.g. rates 2..32, lanes 1..16: evenly spaced
        ax2.set_xscale("log", base=2)
    if len(xs) <= 12:  # the swept values themselves as ticks
        ax2.set_xticks(xs)
        ax2.set_xticklabels([f"{x:g}" for x in xs])
        ax2.minorticks_off()
    return fig


def draw_bars(ok, grid_cols):
    labels = [", ".join(f"{c[5:]}={r[c]}" for c in grid_cols) or r["run"] for r in ok]
    x = range(len(ok))
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(max(6, 0.9 * len(ok) + 2), 7), sharex=True)
    w = 0.27
    for k, (key, name) in enumerate([("oracle_s", "oracle"), ("vdnn_s", "vDNN"), ("cdma_s", "cDMA")]):
        ys = [num(r.get(key)) * 1e3 for r in ok]
        if any(y == y for y in ys):  # a step that did not run: no bars, no legend entry
            ax1.bar([i + (k - 1) * w for i in x], ys, w, label=name)
    ax1.set_ylabel("step time (ms, simulated)")
    ax1.legend(ncol=3, loc="lower center", bbox_to_anchor=(0.5, 1.0), frameon=False)
    ax1.grid(axis="y", alpha=0.3)
    ax2.bar(list(x), [num(r["speedup"]) for r in ok], 0.6, color="tab:green")
    ax2.axhline(1.0, color="k", lw=0.8)
    no_speedup(ax2, ok)
    sp = [v for v in (num(r["speedup"]) for r in ok) if v == v] or [1.0]
    ax2.set_ylim(min(0.9, min(sp) - 0.05), max(sp) + 0.1)
    ax2.set_ylabel("cDMA speed-up over vDNN")
    ax2.grid(axis="y", alpha=0.3)
    ax2.set_xticks(list(x))
    ax2.set_xticklabels(labels, rotation=30, ha="right")
    return fig


def main():
    # The flags first, the two paths last (a path may itself begin with the flag's text:
    # breaker s24 F7, sweep --out "--zero-not-a-value=x").
    flag = "--zero-not-a-value="
    usage = "usage: plot_sweep.py [--zero-not-a-value=grid:NAME ...] SWEEP.csv OUT_STEM"
    if len(sys.argv) < 3 or not all(a.startswith(flag) for a in sys.argv[1:-2]):
        sys.exit(usage)
    ZERO_NOT_A_VALUE.update(a[len(flag):] for a in sys.argv[1:-2])
    sys.argv[1:] = sys.argv[-2:]
    # Before any work: a directory (or another non-file) where a plot goes cannot be replaced.
    for ext in ("png", "svg"):
        final = f"{sys.argv[2]}.{ext}"
        if os.path.isdir(final):
            cannot_write(final, "is a directory; expected a file name for the plot (remove or rename the directory)")
    with open(sys.argv[1], newline="") as f:
        rows = list(csv.DictReader(f))
    grid_cols = [c for c in rows[0].keys() if c.startswith("grid:")] if rows else []
    ok = [r for r in rows if r["status"] == "ok"]
    lines = lines_for(ok, grid_cols)
    fig = draw_lines(ok, grid_cols, *lines) if lines else draw_bars(ok, grid_cols)
    fig.suptitle(title(ok), y=0.995)
    fig.align_ylabels()  # (the two y-axis titles overlapped beside long rotated labels)
    fig.tight_layout()
    # Each plot through a temporary file renamed into place (like every cdma-vp output): an
    # interrupted plotter leaves the old plot or none, never half a file.
    for ext in ("png", "svg"):
        final = f"{sys.argv[2]}.{ext}"
        try:
            fd, tmp = tempfile.mkstemp(prefix=os.path.basename(final) + ".tmp.", dir=os.path.dirname(final) or ".")
        except OSError as e:
            cannot_write(final, e.strerror or str(e))
        try:
            with os.fdopen(fd, "wb") as out:
                fig.savefig(out, format=ext, dpi=120)
            os.replace(tmp, final)
        except OSError as e:
            cannot_write(final, e.strerror or str(e))
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)


def stop(sig, _frame):  # SIGTERM / SIGHUP (from cdma-vp sweep's interrupt): clean up, then end
    raise SystemExit(128 + sig)


if __name__ == "__main__":
    for s in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, stop)
    main()
