#!/usr/bin/python3
"""Independent reference for tests/unit/test_network.cpp.

Reads the shipped Keras graph of InceptionV3 (workloads/data/inception_v3/inception_v3.keras-graph.json),
infers every layer's NHWC shape at batch 1 with its own small shape rules (Keras conventions:
'valid' -> floor((in - k) / s) + 1, 'same' -> ceil(in / s)), and prints:
  * the number of Conv2D layers,
  * the total forward convolution FLOPs at batch 1 (a multiply-add counts 2:
    2 * kh * kw * cin * cout * hout * wout per Conv2D; bias adds are not counted, InceptionV3 has none),
  * the total conv weight bytes (fp32),
  * the total forward bytes (input + output + weights, fp32) of all Conv2D layers,
  * the total elements of the 94 ReLU outputs,
  * per-layer "name cin hin win -> cout hout wout flops" lines for spot checks.
Run: /usr/bin/python3 tests/unit/inception_flops.py [graph.json]
"""
import json
import math
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    here, "..", "..", "workloads", "data", "inception_v3", "inception_v3.keras-graph.json")
g = json.load(open(path))
by_name = {l["name"]: l for l in g["layers"]}
shape = {}  # name -> (h, w, c), batch 1


def out_len(n, k, s, pad):
    return (n - k) // s + 1 if pad == "valid" else -(-n // s)


def infer(name):
    if name in shape:
        return shape[name]
    l = by_name[name]
    t, c = l["type"], l["config"]
    ins = [infer(i) for i in l["inputs"]]
    if t == "InputLayer":
        _, h, w, ch = c["batch_input_shape"]
        r = (h, w, ch)
    elif t == "Conv2D":
        h, w, _ = ins[0]
        kh, kw = c["kernel_size"]
        sh, sw = c["strides"]
        r = (out_len(h, kh, sh, c["padding"]), out_len(w, kw, sw, c["padding"]), c["filters"])
    elif t in ("MaxPooling2D", "AveragePooling2D"):
        h, w, ch = ins[0]
        kh, kw = c["pool_size"]
        sh, sw = c["strides"]
        r = (out_len(h, kh, sh, c["padding"]), out_len(w, kw, sw, c["padding"]), ch)
    elif t == "Concatenate":
        r = (ins[0][0], ins[0][1], sum(x[2] for x in ins))
    elif t in ("BatchNormalization", "Activation", "Dropout"):
        r = ins[0]
    elif t == "Flatten":
        r = (1, 1, ins[0][0] * ins[0][1] * ins[0][2])
    elif t == "Dense":
        r = (1, 1, c["units"])
    else:
        raise SystemExit("unknown layer type " + t)
    shape[name] = r
    return r


convs = [l for l in g["layers"] if l["type"] == "Conv2D"]
total_flops = 0
total_wbytes = 0
total_fbytes = 0
lines = []
for l in convs:
    hin, win, cin = infer(l["inputs"][0])
    hout, wout, cout = infer(l["name"])
    kh, kw = l["config"]["kernel_size"]
    flops = 2 * kh * kw * cin * cout * hout * wout
    wbytes = 4 * kh * kw * cin * cout
    total_flops += flops
    total_wbytes += wbytes
    total_fbytes += 4 * (hin * win * cin + hout * wout * cout) + wbytes
    lines.append("%s %d %d %d -> %d %d %d flops %d" % (l["name"], cin, hin, win, cout, hout, wout, flops))
relu = sum(math.prod(infer(l["name"])) for l in g["layers"]
           if l["type"] == "Activation" and l["config"]["activation"] == "relu")
print("conv_layers", len(convs))
print("total_forward_conv_flops_batch1", total_flops)
print("total_conv_weight_bytes", total_wbytes)
print("total_conv_forward_bytes_batch1", total_fbytes)
print("relu_output_elements_batch1", relu)
print("\n".join(lines))
