#!/usr/bin/python3
"""Plots a cdma-vp sweep: step time of oracle / vDNN / cDMA and cDMA's speed-up over vDNN
for every run of the grid. Usage: plot_sweep.py SWEEP.csv OUT_STEM  (writes OUT_STEM.png and
OUT_STEM.svg). Needs Debian's python3-matplotlib (installed by scripts/install-deps)."""
import csv
import os
import signal
import sys
import tempfile

import matplotlib

matplotlib.use("Agg")
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


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: plot_sweep.py SWEEP.csv OUT_STEM")
    # Before any work: a directory (or another non-file) where a plot goes cannot be replaced.
    for ext in ("png", "svg"):
        final = f"{sys.argv[2]}.{ext}"
        if os.path.isdir(final):
            cannot_write(final, "is a directory; expected a file name for the plot (remove or rename the directory)")
    with open(sys.argv[1], newline="") as f:
        rows = list(csv.DictReader(f))
    grid_cols = [c for c in rows[0].keys() if c.startswith("grid:")] if rows else []
    ok = [r for r in rows if r["status"] == "ok"]
    labels = [", ".join(f"{c[5:]}={r[c]}" for c in grid_cols) or r["run"] for r in ok]
    x = range(len(ok))

    def num(v):  # empty cell: the step was not simulated (--steps) -> no bar
        return float(v) if v not in ("", None) else float("nan")

    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(max(6, 0.9 * len(ok) + 2), 7), sharex=True)
    w = 0.27
    for k, (key, name) in enumerate([("oracle_s", "oracle"), ("vdnn_s", "vDNN"), ("cdma_s", "cDMA")]):
        ax1.bar([i + (k - 1) * w for i in x], [num(r[key]) * 1e3 for r in ok], w, label=name)
    ax1.set_ylabel("step time (ms, simulated)")
    ax1.legend(ncol=3, loc="lower center", bbox_to_anchor=(0.5, 1.0), frameon=False)
    ax1.grid(axis="y", alpha=0.3)
    ax2.bar(list(x), [num(r["speedup"]) for r in ok], 0.6, color="tab:green")
    ax2.axhline(1.0, color="k", lw=0.8)
    sp = [v for v in (num(r["speedup"]) for r in ok) if v == v] or [1.0]
    ax2.set_ylim(min(0.9, min(sp) - 0.05), max(sp) + 0.1)
    ax2.set_ylabel("cDMA speed-up over vDNN")
    ax2.grid(axis="y", alpha=0.3)
    ax2.set_xticks(list(x))
    ax2.set_xticklabels(labels, rotation=30, ha="right")
    fig.suptitle(title(ok), y=0.995)
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
