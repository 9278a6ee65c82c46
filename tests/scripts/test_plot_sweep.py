#!/usr/bin/python3
"""Tests of scripts/plot_sweep.py's figure title (new-user trial s20 F13: a sweep over the
network was titled with the first row's network only). Run by ctest (scripts.plot_sweep)."""
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


if __name__ == "__main__":
    unittest.main()
