#!/usr/bin/python3
"""Independent shape check of the shipped layer files (workloads/networks/*.json), written
from the format description in docs/workloads.md, not from the C++ code. Prints, per network
at batch 1: the number of ReLU'd tensors, their total elements, the vDNN layers
(conv/pool/fc/add), the sum of the vDNN layers' outputs plus the input image (what policy
`all` offloads, elements) and the forward FLOPs of convs + fc.
Usage: /usr/bin/python3 tests/unit/zoo_shapes.py [file.json ...]"""
import json, math, sys, glob, os

def pair(v):
    return (v, v) if isinstance(v, int) else (v[0], v[1])

def out_len(i, k, s, p, ceil):
    if ceil:
        o = int(math.ceil((i + 2 * p - k) / s)) + 1
        if p > 0 and (o - 1) * s >= i + p:
            o -= 1
        return o
    return (i + 2 * p - k) // s + 1

def analyse(path):
    net = json.load(open(path))
    shapes = {"input": tuple(net["input"])}
    relu = {}
    prev = "input"
    relus = 0; relu_el = 0; layers = 0; outs = 0; flops = 0.0
    c, h, w = net["input"]
    outs += c * h * w
    for L in net["layers"]:
        ins = L.get("inputs", [prev])
        t = L["type"]
        x = shapes[ins[0]]
        if t == "conv":
            kh, kw = pair(L["kernel"]); sh, sw = pair(L.get("stride", 1)); ph, pw = pair(L.get("pad", 0))
            g = L.get("groups", 1)
            y = (L["filters"], out_len(x[1], kh, sh, ph, False), out_len(x[2], kw, sw, pw, False))
            flops += 2 * kh * kw * (x[0] // g) * y[0] * y[1] * y[2] + (y[0] * y[1] * y[2] if L.get("bias", True) else 0)
        elif t == "pool":
            if L.get("global"):
                y = (x[0], 1, 1)
            else:
                kh, kw = pair(L["kernel"]); sh, sw = pair(L.get("stride", L["kernel"])); ph, pw = pair(L.get("pad", 0))
                ce = L.get("ceil", False)
                y = (x[0], out_len(x[1], kh, sh, ph, ce), out_len(x[2], kw, sw, pw, ce))
        elif t == "fc":
            n_in = x[0] * x[1] * x[2]
            y = (L["units"], 1, 1)
            flops += 2 * n_in * L["units"] + (L["units"] if L.get("bias", True) else 0)
        elif t == "concat":
            y = (sum(shapes[i][0] for i in ins), x[1], x[2])
        elif t == "add":
            y = x
        elif t in ("relu", "lrn", "bn", "dropout"):
            y = x
        else:
            raise SystemExit("unknown type " + t)
        shapes[L["name"]] = y
        el = y[0] * y[1] * y[2]
        if t in ("conv", "pool", "fc", "add"):
            layers += 1; outs += el
        if L.get("relu", False) or t == "relu":
            relus += 1; relu_el += el
        prev = L["name"]
    return net["name"], relus, relu_el, layers, outs, flops

paths = sys.argv[1:] or sorted(glob.glob(os.path.join(os.path.dirname(__file__), "../../workloads/networks/*.json")))
for p in paths:
    name, relus, relu_el, layers, outs, flops = analyse(p)
    print(f"{name}: relu_tensors={relus} relu_elements={relu_el} layers={layers} "
          f"offload_elements_all={outs} fwd_flops={flops:.0f}")
