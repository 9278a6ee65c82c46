#!/usr/bin/python3
"""Tests of scripts/plot_sweep.py: the figure title (new-user trial s20 F13: a sweep over the
network was titled with the first row's network only) and the choice of lines over a numeric
axis (new-user trial s21 F5: bars could not show a crossover). Run by ctest (scripts.plot_sweep)."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import plot_sweep  # noqa: E402


def rows(*pairs):
    return [{"network": n, "batch": b} for n, b in pairs]


class Title(unittest.TestCase):
    def test_one_network_and_batch_are_named(self):
        self.assertEqual(plot_sweep.title(rows(("vgg16", "64"), ("vgg16", "64"))), "cdma-vp sweep: vgg16, batch 64")

    def test_a_network_axis_names_no_network(self):
        self.assertEqual(plot_sweep.title(rows(("alexnet", "128"), ("nin", "128"))), "cdma-vp sweep: batch 128")

    def test_network_and_batch_axes_name_neither(self):
        self.assertEqual(plot_sweep.title(rows(("alexnet", "128"), ("vgg16", "64"))), "cdma-vp sweep")

    def test_no_plotted_row(self):
        self.assertEqual(plot_sweep.title([]), "cdma-vp sweep")


def grid_rows(**cols):
    """Rows with grid columns grid:NAME from equal-length value lists."""
    n = len(next(iter(cols.values())))
    return [{f"grid:{k}": v[i] for k, v in cols.items()} for i in range(n)]


class Lines(unittest.TestCase):
    def test_numbers_with_one_unit_are_numeric(self):
        self.assertEqual(plot_sweep.numeric(["8", "16", "4.5e1"]), ([8.0, 16.0, 45.0], ""))
        self.assertEqual(plot_sweep.numeric(["500ns", "1000 ns"]), ([500.0, 1000.0], "ns"))

    def test_names_and_mixed_units_are_not(self):
        self.assertIsNone(plot_sweep.numeric(["zvc", "zlib"]))
        self.assertIsNone(plot_sweep.numeric(["1GB/s", "500MB/s"]))
        self.assertIsNone(plot_sweep.numeric(["8", ""]))

    def test_a_numeric_axis_of_three_values_draws_lines_one_per_codec(self):
        r = grid_rows(codec=["zvc"] * 4 + ["zlib"] * 4, rate=["32", "16", "8", "4"] * 2)
        cols = ["grid:codec", "grid:rate"]
        self.assertEqual(plot_sweep.line_axis(r, cols), ("grid:rate", ""))
        s = plot_sweep.series(r, cols, "grid:rate")
        self.assertEqual([label for label, _ in s], ["codec=zvc", "codec=zlib"])
        self.assertEqual([x for x, _ in s[1][1]], [4.0, 8.0, 16.0, 32.0])  # sorted by the axis

    def test_two_values_or_names_only_draw_bars(self):
        self.assertIsNone(plot_sweep.line_axis(grid_rows(gen=["3", "4"]), ["grid:gen"]))
        self.assertIsNone(plot_sweep.line_axis(grid_rows(codec=["none", "zvc", "rle"]), ["grid:codec"]))

    def test_the_axis_with_most_values_wins_ties_the_last(self):
        r = grid_rows(lanes=["4", "4", "4", "8", "8", "8", "16", "16", "16"], gen=["3", "4", "5"] * 3)
        self.assertEqual(plot_sweep.line_axis(r, ["grid:lanes", "grid:gen"]), ("grid:gen", ""))
        r2 = grid_rows(lanes=["4", "8", "16", "32"] * 3, gen=["3"] * 4 + ["4"] * 4 + ["5"] * 4)
        self.assertEqual(plot_sweep.line_axis(r2, ["grid:lanes", "grid:gen"]), ("grid:lanes", ""))

    def test_too_many_series_draw_bars(self):
        r = grid_rows(net=[f"n{i}" for i in range(9) for _ in range(3)], rate=["1", "2", "3"] * 9)
        self.assertIsNone(plot_sweep.line_axis(r, ["grid:net", "grid:rate"]))


class LinesBreak(unittest.TestCase):
    """Break-it round s22 (brk2): inputs the line form drew wrongly."""

    def test_an_axis_zipped_with_another_draws_bars(self):
        # --grid network=fmnist_cnn,alexnet,nin --grid batch=4,2,1 --zip network,batch: each
        # network has one batch, so lines over batch were three unconnected dots.
        r = grid_rows(network=["fmnist_cnn", "alexnet", "nin"], batch=["4", "2", "1"])
        self.assertIsNone(plot_sweep.line_axis(r, ["grid:network", "grid:batch"]))

    def test_a_zip_beside_a_numeric_axis_draws_lines_over_that_axis(self):
        # ... --grid pcie.gen=3,4,5: lines over pcie.gen, one per (network, batch), even when
        # the zipped batch axis comes last (ties: the last column won, with one dot per line).
        r = grid_rows(network=[n for n in ("a", "b", "c") for _ in range(3)], gen=["3", "4", "5"] * 3,
                      batch=[b for b in ("4", "2", "1") for _ in range(3)])
        self.assertEqual(plot_sweep.line_axis(r, ["grid:network", "grid:gen", "grid:batch"]), ("grid:gen", ""))

    def test_one_x_twice_in_a_series_draws_bars(self):
        # "1" and "1.0" (a hand-edited sweep.csv): the line went back to x = 1.
        self.assertIsNone(plot_sweep.line_axis(grid_rows(x=["1", "1.0", "2", "3"]), ["grid:x"]))

    def test_a_number_out_of_range_is_not_numeric(self):
        # float("1e400") is inf: matplotlib drew an empty axis ("posx and posy should be finite").
        self.assertIsNone(plot_sweep.numeric(["1", "2", "1e400"]))
        self.assertIsNone(plot_sweep.line_axis(grid_rows(x=["1", "2", "1e400"]), ["grid:x"]))

    def test_a_sweep_without_vdnn_and_cdma_steps_draws_bars(self):
        # --steps oracle: the lines (vDNN and cDMA only) were two empty axes; the bars show the
        # oracle. One step of the two is enough for lines.
        r = grid_rows(batch=["1", "2", "4"])
        for row in r:
            row.update(oracle_s="0.001", vdnn_s="", cdma_s="", speedup="")
        self.assertIsNone(plot_sweep.lines_for(r, ["grid:batch"]))
        r[0]["vdnn_s"] = "0.002"
        self.assertEqual(plot_sweep.lines_for(r, ["grid:batch"]), ("grid:batch", ""))


class DefaultAtZero(unittest.TestCase):
    """Breaker s23 #5: a codec rate of 0 means the default rate (the codec's compression rate, or
    cdma.unit_bytes_per_cycle), not 0 B/cycle; drawn at x = 0 it looked like the fastest decoder.
    Session 24: the same for every column cdma-vp sweep names with --zero-not-a-value (which
    parameters those are is tested with the C++ zero_is_not_a_value())."""

    KEYS = ("cdma.codec_decompression_bytes_per_cycle.zlib", "cdma.codec_bytes_per_cycle.zvc",
            "platform.cdma.codec_bytes_per_cycle.zlib", "cdma.xbar_bandwidth")

    def setUp(self):
        plot_sweep.ZERO_NOT_A_VALUE.update(f"grid:{k}" for k in self.KEYS)

    def tearDown(self):
        plot_sweep.ZERO_NOT_A_VALUE.clear()

    def test_a_named_axis_holding_0_draws_bars(self):
        for key in self.KEYS:
            r = grid_rows(**{key: ["0", "0.5", "1", "4", "16"]})
            self.assertIsNone(plot_sweep.line_axis(r, [f"grid:{key}"]), key)
        r = grid_rows(**{"cdma.xbar_bandwidth": ["0 GB/s", "64 GB/s", "128 GB/s", "256 GB/s"]})
        self.assertIsNone(plot_sweep.line_axis(r, ["grid:cdma.xbar_bandwidth"]))

    def test_the_same_axis_without_0_still_draws_lines(self):
        key = "cdma.codec_decompression_bytes_per_cycle.zlib"
        r = grid_rows(**{key: ["0.5", "1", "4", "16"]})
        self.assertEqual(plot_sweep.line_axis(r, [f"grid:{key}"]), (f"grid:{key}", ""))

    def test_a_0_of_another_numeric_axis_is_a_number(self):
        r = grid_rows(**{"gpu.something": ["0", "1", "2"]})
        self.assertEqual(plot_sweep.line_axis(r, ["grid:gpu.something"]), ("grid:gpu.something", ""))
        self.assertFalse(plot_sweep.zero_means_default("grid:cdma.unit_bytes_per_cycle", ["0", "1", "2"]))
        self.assertTrue(plot_sweep.zero_means_default("grid:cdma.codec_bytes_per_cycle.zvc", ["0.0", "8"]))

    def test_the_flag_is_read_from_the_command_line(self):
        # The flags first, then the two paths; the flag names the CSV column.
        import tempfile as tf
        d = tf.mkdtemp()
        csv_path = os.path.join(d, "s.csv")
        with open(csv_path, "w") as f:
            f.write("grid:cdma.xbar_bandwidth,status,oracle_s,vdnn_s,cdma_s,speedup\n")
            for x, c in (("0", "0.0010"), ("64", "0.0014"), ("128", "0.0012"), ("256", "0.0011")):
                f.write(f"{x},ok,0.0005,0.0018,{c},1.5\n")
        plot_sweep.ZERO_NOT_A_VALUE.clear()
        saved = sys.argv
        sys.argv = ["plot_sweep.py", "--zero-not-a-value=grid:cdma.xbar_bandwidth", csv_path, os.path.join(d, "p")]
        try:
            plot_sweep.main()
        finally:
            sys.argv = saved
        self.assertEqual(plot_sweep.ZERO_NOT_A_VALUE, {"grid:cdma.xbar_bandwidth"})
        self.assertTrue(os.path.isfile(os.path.join(d, "p.png")))


    def test_paths_that_begin_like_the_flag_are_paths(self):
        # Breaker s24 F7: the paths are the last two arguments, whatever they begin with.
        import tempfile as tf
        d = tf.mkdtemp()
        with open(os.path.join(d, "--zero-not-a-value=s.csv"), "w") as f:
            f.write("grid:batch,status,oracle_s,vdnn_s,cdma_s,speedup\n1,ok,0.0005,0.0018,0.0012,1.5\n")
        plot_sweep.ZERO_NOT_A_VALUE.clear()
        saved, cwd = sys.argv, os.getcwd()
        os.chdir(d)
        sys.argv = ["plot_sweep.py", "--zero-not-a-value=s.csv", "--zero-not-a-value=p"]
        try:
            plot_sweep.main()
        finally:
            sys.argv = saved
            os.chdir(cwd)
        self.assertEqual(plot_sweep.ZERO_NOT_A_VALUE, set())
        self.assertTrue(os.path.isfile(os.path.join(d, "--zero-not-a-value=p.png")))

class LineFigure(unittest.TestCase):
    def test_the_lines_show_the_oracle_and_start_at_zero(self):
        # New-user trial s23 F8: the lines had no oracle (the bars have) and the time axis began
        # at the lowest cDMA time. One series over training_progress, three steps each.
        r = [{"grid:training_progress": p, "oracle_s": "0.0005", "vdnn_s": "0.0018", "cdma_s": c, "speedup": s}
             for p, c, s in (("0", "0.0012", "1.5"), ("0.5", "0.0011", "1.64"), ("1", "0.001", "1.8"))]
        fig = plot_sweep.draw_lines(r, ["grid:training_progress"], "grid:training_progress", "")
        ax1 = fig.axes[0]
        got = {ln.get_label(): list(ln.get_ydata()) for ln in ax1.get_lines()}
        self.assertEqual(sorted(got), ["cDMA, all runs", "oracle, all runs", "vDNN, all runs"])
        self.assertEqual([round(v, 9) for v in got["oracle, all runs"]], [0.5, 0.5, 0.5])  # ms
        self.assertEqual([round(v, 9) for v in got["cDMA, all runs"]], [1.2, 1.1, 1.0])
        self.assertEqual(ax1.get_ylim()[0], 0.0)


    def test_a_step_not_run_has_no_line_and_no_legend_entry(self):
        # Breaker s23: with --steps vdnn,cdma the legend listed "oracle, all runs" without points;
        # with --steps cdma the speed-up panel was empty without a word.
        r = [{"grid:batch": b, "oracle_s": "", "vdnn_s": "", "cdma_s": c, "speedup": ""}
             for b, c in (("1", "0.001"), ("2", "0.002"), ("4", "0.004"))]
        fig = plot_sweep.draw_lines(r, ["grid:batch"], "grid:batch", "")
        self.assertEqual([ln.get_label() for ln in fig.axes[0].get_lines()], ["cDMA, all runs"])
        self.assertEqual(len(fig.axes[1].get_lines()), 1)  # the 1.0 reference line only
        self.assertIn("no speed-up", " ".join(t.get_text() for t in fig.axes[1].texts))
        fig = plot_sweep.draw_bars(r, ["grid:batch"])
        self.assertEqual([t.get_text() for t in fig.axes[0].get_legend().get_texts()], ["cDMA"])

class LegendS25(unittest.TestCase):
    """New-user trial s25 F5: a 4-series PCIe sweep's legend (12 entries) sat in the middle of
    the lines, and the oracle (the same in every run) had one entry per series."""

    @staticmethod
    def pcie_rows():
        # gen 3, 4, 5 x lanes 8, 16: the oracle 0.2357 s in every run; vDNN / cDMA differ per
        # lanes except at Gen3 x16 = Gen4 x8 (a point, not a whole line: both lines kept).
        t = {("8", "3"): ("0.600", "0.418"), ("8", "4"): ("0.376", "0.306"), ("8", "5"): ("0.285", "0.261"),
             ("16", "3"): ("0.376", "0.306"), ("16", "4"): ("0.287", "0.260"), ("16", "5"): ("0.283", "0.259")}
        return [{"grid:pcie.gen": g, "grid:pcie.lanes": l, "oracle_s": "0.2357", "vdnn_s": t[(l, g)][0],
                 "cdma_s": t[(l, g)][1], "speedup": "1.2"} for l in ("8", "16") for g in ("3", "4", "5")]

    def test_identical_oracle_lines_are_one_entry(self):
        cols = ["grid:pcie.gen", "grid:pcie.lanes"]
        fig = plot_sweep.draw_lines(self.pcie_rows(), cols, "grid:pcie.gen", "")
        labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
        # 2 series x (cDMA, vDNN) + one oracle, not 2 x 3.
        self.assertEqual(sorted(labels), ["cDMA, pcie.lanes=16", "cDMA, pcie.lanes=8", "oracle, all runs",
                                          "vDNN, pcie.lanes=16", "vDNN, pcie.lanes=8"])
        oracle = [ln for ln in fig.axes[0].get_lines() if ln.get_label() == "oracle, all runs"]
        self.assertEqual(len(oracle), 1)
        self.assertEqual([round(v, 9) for v in oracle[0].get_ydata()], [235.7, 235.7, 235.7])  # ms

    def test_some_series_sharing_a_line_name_them_all(self):
        # Three series, the first two with one oracle, the third another: "oracle, A = B".
        r = [{"grid:x": x, "grid:s": s, "oracle_s": "0.002" if s == "c" else "0.001", "vdnn_s": "",
              "cdma_s": f"0.00{x}", "speedup": ""} for s in ("a", "b", "c") for x in ("1", "2", "3")]
        lines = plot_sweep.step_lines(r, ["grid:x", "grid:s"], "grid:x")
        labels = [ln[5] for ln in lines if ln[0] == "oracle_s"]
        self.assertEqual(labels, ["oracle, s=a = s=b", "oracle, s=c"])

    def test_a_long_legend_is_outside_the_axes(self):
        cols = ["grid:pcie.gen", "grid:pcie.lanes"]
        fig = plot_sweep.draw_lines(self.pcie_rows(), cols, "grid:pcie.gen", "")
        fig.tight_layout()
        fig.canvas.draw()
        ax1 = fig.axes[0]
        legend = ax1.get_legend().get_window_extent()
        self.assertGreaterEqual(legend.x0, ax1.get_window_extent().x1)  # right of the axes
        self.assertLessEqual(legend.x1, fig.bbox.x1)  # and inside the figure
        # One series (3 entries): inside, where it covers the fewest points.
        r = [row for row in self.pcie_rows() if row["grid:pcie.lanes"] == "8"]
        fig = plot_sweep.draw_lines(r, ["grid:pcie.gen"], "grid:pcie.gen", "")
        fig.canvas.draw()
        ax1 = fig.axes[0]
        self.assertEqual(len(ax1.get_legend().get_texts()), 3)
        self.assertTrue(ax1.get_window_extent().contains(*ax1.get_legend().get_window_extent().p0))


class PlotBreak(unittest.TestCase):
    """Break-it round s23 (brk): labels the plotter failed on."""

    def test_a_label_with_dollar_signs_is_drawn_as_written(self):
        # --grid 'gpu.name=$\frac$,$x^$': matplotlib read "$...$" as mathtext and raised a
        # ParseFatalException (a Python traceback, no plot); the sweep warned "plotting failed
        # (needs /usr/bin/python3 with matplotlib)".
        import csv
        import subprocess
        import tempfile
        script = os.path.join(os.path.dirname(plot_sweep.__file__), "plot_sweep.py")
        with tempfile.TemporaryDirectory() as d:
            table = os.path.join(d, "sweep.csv")
            cols = ["run", "grid:gpu.name", "status", "network", "batch", "oracle_s", "vdnn_s", "cdma_s", "speedup"]
            with open(table, "w", newline="") as f:
                w = csv.writer(f)
                w.writerow(cols)
                for i, name in enumerate(["$\\frac$", "$x^$"]):
                    w.writerow([i, name, "ok", "syn$the$tic", "32", "0.004", "0.0041", "0.0040", "1.03"])
            p = subprocess.run(["/usr/bin/python3", script, table, os.path.join(d, "sweep")],
                               capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(p.stderr, "")
            for ext in ("png", "svg"):
                self.assertGreater(os.path.getsize(os.path.join(d, "sweep." + ext)), 0)


if __name__ == "__main__":
    unittest.main()
