#!/usr/bin/python3
"""Independent reference for tests/unit/test_zvc.cpp: whole-tensor ZVC size (w = 4) of every
layer of workloads/data/inception_v3/chelsea.npz, per docs ARCHITECTURE.md section 5:

    size = sum over 32-element blocks (4 + 4 * nnz_block) + (L mod 4)
         = 4 * ceil(E / 32) + 4 * nnz            (E elements, L = 4 E bytes, so L mod 4 = 0)

where an element is nonzero iff its uint32 bit pattern != 0 (so -0.0 counts as nonzero).
Run with Debian's NumPy:  /usr/bin/python3 tests/unit/zvc_sizes.py
Prints one C++ initialiser line per layer: {"key", elements, nnz, zvc_bytes},
"""
import os
import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
path = os.path.join(here, "..", "..", "workloads", "data", "inception_v3", "chelsea.npz")
d = np.load(path)
for k in d.files:
    a = d[k]
    assert a.dtype == np.float32
    bits = a.reshape(-1).view(np.uint32)
    e = bits.size
    nnz = int(np.count_nonzero(bits))
    # Block-by-block sum, literally as the spec states it (pad to a whole number of blocks).
    nblocks = (e + 31) // 32
    padded = np.zeros(nblocks * 32, dtype=np.uint32)
    padded[:e] = bits
    per_block = 4 + 4 * np.count_nonzero(padded.reshape(nblocks, 32), axis=1)
    size = int(per_block.sum()) + (4 * e) % 4
    assert size == 4 * nblocks + 4 * nnz
    print('    {"%s", %d, %d, %d},' % (k, e, nnz, size))
