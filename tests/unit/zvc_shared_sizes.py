#!/usr/bin/python3
"""Independent reference for tests/unit/test_zvc_shared.cpp: whole-tensor ZVC size (w = 4) of
every tensor of every .npz file under ../shared/data (the project workspace's real activation
files), per docs ARCHITECTURE.md section 5:

    size = sum over 32-element blocks (4 + 4 * nnz_block) + (L mod 4)

with an element nonzero iff its uint32 bit pattern != 0 (-0.0 counts as nonzero).
Run with Debian's NumPy:  /usr/bin/python3 tests/unit/zvc_shared_sizes.py
Prints one C++ initialiser line per tensor: {"relative/file.npz", "key", elements, zvc_bytes},
"""
import os
import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.normpath(os.path.join(here, "..", "..", "..", "shared", "data"))
for dirpath, _, files in sorted(os.walk(root)):
    for f in sorted(files):
        if not f.endswith(".npz"):
            continue
        path = os.path.join(dirpath, f)
        rel = os.path.relpath(path, root)
        d = np.load(path)
        for k in d.files:
            a = d[k]
            assert a.dtype == np.float32
            bits = np.ascontiguousarray(a).reshape(-1).view(np.uint32)
            e = bits.size
            nblocks = (e + 31) // 32
            padded = np.zeros(nblocks * 32, dtype=np.uint32)
            padded[:e] = bits
            per_block = 4 + 4 * np.count_nonzero(padded.reshape(nblocks, 32), axis=1)
            size = int(per_block.sum()) + (4 * e) % 4
            print('    {"%s", "%s", %d, %d},' % (rel, k, e, size))
