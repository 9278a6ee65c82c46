#!/usr/bin/python3
"""Independent reference for the two-image batch tests (tests/unit/test_real_activations.cpp,
tests/system/test_real_activations_run.cpp): InceptionV3 on the shipped sample
workloads/data/inception_v3/{chelsea,coffee}.npz, the images concatenated along N in that
order and repeated to fill the batch (image b of the batch = image b mod 2).

For a few tensors and batches it prints the bit patterns of single elements of each image, the
zero elements (uint32 bit pattern 0) of the batch, and the bytes the cDMA engine moves for it
with ZVC in 4 KiB windows (docs ARCHITECTURE.md section 5): per window of n bytes
min(n, sum over 32-element blocks (4 + 4 * nnz_block)) (a window that does not shrink is stored
raw), plus an 8-byte metadata entry per window (tlm/codec/window.h).
Run with Debian's NumPy:  /usr/bin/python3 tests/unit/two_image_batch.py
"""
import os
import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
data = os.path.join(here, "..", "..", "workloads", "data", "inception_v3")
images = [np.load(os.path.join(data, n)) for n in ("chelsea.npz", "coffee.npz")]
assert images[0].files == images[1].files


def engine_bytes(words, window=4096):
    per = window // 4
    moved = windows = 0
    for s in range(0, words.size, per):
        w = words[s:s + per]
        zvc = 4 * ((w.size + 31) // 32) + 4 * int(np.count_nonzero(w))
        moved += min(zvc, 4 * w.size)
        windows += 1
    return moved, 8 * windows


zeros = [0, 0]
elements = 0
for k in images[0].files:
    for i in (0, 1):
        zeros[i] += int(np.count_nonzero(images[i][k].view(np.uint32) == 0))
    elements += images[0][k].size
print("all 94 tensors: zero fraction chelsea %.4f coffee %.4f both %.4f" %
      (zeros[0] / elements, zeros[1] / elements, sum(zeros) / (2 * elements)))
for k in ("activation_1", "activation_5", "activation_94"):
    w = [img[k].view(np.uint32).reshape(-1) for img in images]
    print(k, images[0][k].shape)
    for e in (0, w[0].size - 1):
        print("  element %d: chelsea 0x%08x coffee 0x%08x" % (e, w[0][e], w[1][e]))
    for batch in (2, 3, 4):
        b = np.concatenate([w[i % 2] for i in range(batch)])
        moved, meta = engine_bytes(b)
        print("  batch %d: bytes %d zeros %d moved %d meta %d" %
              (batch, 4 * b.size, int(np.count_nonzero(b == 0)), moved, meta))
