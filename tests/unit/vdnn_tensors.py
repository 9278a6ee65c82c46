#!/usr/bin/python3
"""Independent vDNN view of a Keras graph (the project's topology JSON) or of a cdma-vp layer
file, written from docs/workloads.md ("What a vDNN layer is", "Offload rule", "vDNN policies")
and Keras' shape rules, not from the C++ code.

vDNN layers: Conv2D / DepthwiseConv2D (with the BatchNormalization / Activation / ReLU that
follow), MaxPooling2D / AveragePooling2D / Global*Pooling2D (pool), Dense (fc), Add (eltwise).
ZeroPadding2D, Dropout, Flatten, BatchNormalization, Activation, ReLU and Concatenate produce no
stored tensor. Execution order: post-order walk from output_layers, inputs in listed order.

Prints, at batch 1:
  layers=<vDNN layers> conv=<n> pool=<n> fc=<n> eltwise=<n>
  offload_all_elements=<input image + every layer output but the last's>
  fwd_flops=<sum of forward FLOPs: conv 2 k k cin/g cout HW (+bias), pool k k per output,
             fc 2 in units (+bias), add (inputs-1) per output>
  fwd_bytes=<sum of (inputs + output + weights) * 4>
  conv_tensors=<how many tensors (layer outputs or the image) have a conv consumer,
                a concatenation's parts being consumed by the concatenation's consumers>
  conv_offload_elements=<elements of those tensors, except the last layer's input>
and with --keys, the conv-consumed keys in execution order ("" printed as <input>); with
--uses, per stored tensor with a consumer, KEY:FIRST:LAST, its first and last consuming
layers in execution order (vDNN offloads it during FIRST's forward pass and needs it back
before LAST's backward pass).
Usage: /usr/bin/python3 tests/unit/vdnn_tensors.py FILE.json [--keys] [--uses] [--order]
       [--missing NPZ [--conv]]"""
import json, sys


def pair(v, d):
    if v is None:
        return (d, d)
    return (v, v) if isinstance(v, int) else (v[0], v[1])


wbytes = [0]


def keras(path):
    g = json.load(open(path))
    L = {l["name"]: l for l in g["layers"]}
    order, seen = [], set()
    roots = [o[0] if isinstance(o, list) else o for o in g.get("output_layers", [])] + [l["name"] for l in g["layers"]]

    def visit(n):  # recursion depth is small enough for these graphs
        if n in seen:
            return
        seen.add(n)
        for i in L[n].get("inputs", []):
            visit(i)
        order.append(n)
    sys.setrecursionlimit(10000)
    for r in roots:
        visit(r)
    shape = {}        # name -> (c, h, w) of the graph tensor (Keras semantics)
    stored = {}       # name -> (parts: list of keys, (c, h, w) of the stored tensor)
    layers = []       # (name, kind, key, input_parts, out_elements, flops, bytes)
    consumers = {}
    for l in g["layers"]:
        for i in l.get("inputs", []):
            consumers.setdefault(i, []).append(l["name"])
    for n in order:
        l = L[n]; t = l["type"]; c = l.get("config", {}); ins = l.get("inputs", [])
        x = shape[ins[0]] if ins else None
        if t == "InputLayer":
            b = c["batch_input_shape"]; shape[n] = (b[3], b[1], b[2]); stored[n] = ([""], shape[n]); continue
        if t in ("Conv2D", "DepthwiseConv2D"):
            kh, kw = pair(c["kernel_size"], 1); sh, sw = pair(c.get("strides"), 1)
            if c.get("padding", "valid") == "same":
                oh, ow = -(-x[1] // sh), -(-x[2] // sw)
            else:
                oh, ow = (x[1] - kh) // sh + 1, (x[2] - kw) // sw + 1
            if t == "Conv2D":
                co, cin_g = c["filters"], x[0]
            else:
                co, cin_g = x[0] * c.get("depth_multiplier", 1), 1
            shape[n] = (co, oh, ow)
            key = n
            nxt = consumers.get(key, [])
            if len(nxt) == 1 and L[nxt[0]]["type"] == "BatchNormalization":
                key = nxt[0]; nxt = consumers.get(key, [])
            if len(nxt) == 1 and L[nxt[0]]["type"] in ("Activation", "ReLU"):
                key = nxt[0]
            outs = co * oh * ow
            bias = c.get("use_bias", True)
            flops = 2 * kh * kw * cin_g * outs + (outs if bias else 0)
            params = kh * kw * cin_g * co + (co if bias else 0)
            parts, sin = stored[ins[0]]
            layers.append((n, "conv", key, list(parts), outs, flops, 4 * (sin[0] * sin[1] * sin[2] + outs + params)))
            wbytes[0] += 4 * params
            stored[n] = ([key], shape[n]); continue
        if t in ("MaxPooling2D", "AveragePooling2D", "GlobalAveragePooling2D", "GlobalMaxPooling2D"):
            if t.startswith("Global"):
                shape[n] = (x[0], 1, 1); win = x[1] * x[2]
            else:
                kh, kw = pair(c.get("pool_size"), 2); sh, sw = pair(c.get("strides"), 0)
                if sh == 0:
                    sh, sw = kh, kw
                if c.get("padding", "valid") == "same":
                    shape[n] = (x[0], -(-x[1] // sh), -(-x[2] // sw))
                else:
                    shape[n] = (x[0], (x[1] - kh) // sh + 1, (x[2] - kw) // sw + 1)
                win = kh * kw
            outs = shape[n][0] * shape[n][1] * shape[n][2]
            parts, sin = stored[ins[0]]
            layers.append((n, "pool", n, list(parts), outs, win * outs, 4 * (sin[0] * sin[1] * sin[2] + outs)))
            stored[n] = ([n], shape[n]); continue
        if t == "Dense":
            units = c["units"]; bias = c.get("use_bias", True)
            nin = x[0] * x[1] * x[2]
            shape[n] = (units, 1, 1)
            params = nin * units + (units if bias else 0)
            parts, _ = stored[ins[0]]
            layers.append((n, "fc", n, list(parts), units, 2 * nin * units + (units if bias else 0),
                           4 * (nin + units + params)))
            wbytes[0] += 4 * params
            stored[n] = ([n], shape[n]); continue
        if t == "Add":
            shape[n] = x; outs = x[0] * x[1] * x[2]
            parts = [p for i in ins for p in stored[i][0]]
            layers.append((n, "eltwise", n, parts, outs, (len(ins) - 1) * outs, 4 * (len(ins) * outs + outs)))
            stored[n] = ([n], shape[n]); continue
        if t == "Concatenate":
            shape[n] = (sum(shape[i][0] for i in ins), x[1], x[2])
            stored[n] = ([p for i in ins for p in stored[i][0]], shape[n]); continue
        if t == "ZeroPadding2D":
            p = c["padding"]
            (t0, b0), (l0, r0) = p if isinstance(p[0], list) else ((p[0], p[0]), (p[1], p[1]))
            shape[n] = (x[0], x[1] + t0 + b0, x[2] + l0 + r0)
            stored[n] = stored[ins[0]]; continue
        if t == "Flatten":
            shape[n] = (x[0] * x[1] * x[2], 1, 1); stored[n] = stored[ins[0]]; continue
        if t in ("BatchNormalization", "Activation", "ReLU", "Dropout"):
            shape[n] = x; stored[n] = stored[ins[0]]; continue
        raise SystemExit("unsupported " + t)
    b = shape[[n for n in order if L[n]["type"] == "InputLayer"][0]]
    return layers, b[0] * b[1] * b[2]


def layer_file(path):
    net = json.load(open(path))
    ref = {"input": [""]}
    layers, prev = [], "input"
    c, h, w = net["input"]
    for l in net["layers"]:
        ins = l.get("inputs", [prev]); t = l["type"]
        parts = [p for i in ins for p in ref[i]]
        if t in ("conv", "pool", "fc", "add"):
            kind = {"add": "eltwise"}.get(t, t)
            key = l.get("key", l["name"])
            layers.append((l["name"], kind, key, parts, 0, 0, 0))
            ref[l["name"]] = [key]
        else:
            ref[l["name"]] = parts  # concat: its parts; in-place types: their input's
        prev = l["name"]
    return layers, c * h * w


path = sys.argv[1]
doc = json.load(open(path))
layers, image = layer_file(path) if "input" in doc else keras(path)
kinds = {k: sum(1 for l in layers if l[1] == k) for k in ("conv", "pool", "fc", "eltwise")}
out_el = {l[2]: l[4] for l in layers}
out_el[""] = image
conv_keys = []
for l in layers:
    if l[1] == "conv":
        for p in l[3]:
            if p not in conv_keys:
                conv_keys.append(p)
# Execution order of the conv-consumed keys: the image first, then by producer order.
pos = {l[2]: i for i, l in enumerate(layers)}
pos[""] = -1
conv_keys.sort(key=lambda k: pos[k])
if "input" not in doc:
    offload_all = image + sum(l[4] for l in layers[:-1])
    # The last layer's input (= the output of the layer before it) stays resident.
    last_input = layers[-2][2] if len(layers) > 1 else ""
    conv_off = sum(out_el[k] for k in conv_keys if k != last_input)
    print(f"layers={len(layers)} conv={kinds['conv']} pool={kinds['pool']} fc={kinds['fc']} "
          f"eltwise={kinds['eltwise']} offload_all_elements={offload_all} "
          f"fwd_flops={sum(l[5] for l in layers)} fwd_bytes={sum(l[6] for l in layers)} weight_bytes={wbytes[0]} "
          f"conv_tensors={len(conv_keys)} conv_offload_elements={conv_off}")
else:
    print(f"layers={len(layers)} conv={kinds['conv']} pool={kinds['pool']} fc={kinds['fc']} "
          f"eltwise={kinds['eltwise']} conv_tensors={len(conv_keys)}")
if "--order" in sys.argv:
    print(" ".join(f"{l[0]}:{l[1]}:{l[2]}" for l in layers))
if "--missing" in sys.argv:  # --missing NPZ [--conv]: offloaded keys (layers 1..n-2's inputs; with
    # --conv only those a convolution reads) not in the file
    import numpy
    held = set(numpy.load(sys.argv[sys.argv.index("--missing") + 1]).files)
    offl = [l[2] for l in layers[:-2]]  # X_i of layers 1..n-2 = outputs of layers 0..n-3
    if "--conv" in sys.argv:  # policy conv: only the tensors a convolution reads
        offl = [k for k in offl if k in conv_keys]
    kind = {l[2]: l for l in layers}
    miss, derived = [], []
    for k in offl:
        if k in held:
            continue
        l = kind[k]
        if l[1] == "pool" and all(p in held or p in derived for p in l[3]):
            derived.append(k); continue
        miss.append(k)
    share = 100.0 * sum(out_el[k] for k in miss) / sum(out_el[k] for k in offl) if offl else 0.0
    print(f"offloaded={len(offl)} derived={len(derived)} missing={len(miss)} first={miss[:2]} "
          f"missing_share={share:.1f}%")
    print("derived:", " ".join(derived))
if "--uses" in sys.argv:  # per stored tensor (image, then every layer output): first:last consumer
    for k in [""] + [l[2] for l in layers]:
        users = [l[0] for l in layers if k in l[3]]
        if users:
            print(f"{k if k else '<input>'}:{users[0]}:{users[-1]}")
if "--keys" in sys.argv:
    print(" ".join(k if k else "<input>" for k in conv_keys))
