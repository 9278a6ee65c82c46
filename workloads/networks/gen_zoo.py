#!/usr/bin/python3
"""Writes the shipped network definitions (workloads/networks/*.json) in the cdma-vp layer-file
format (docs/workloads.md). Run from anywhere: /usr/bin/python3 workloads/networks/gen_zoo.py

Sources of the configurations (ImageNet, 1 image = N x 3 x H x W):
  alexnet     torchvision / Krizhevsky "one weird trick" single-GPU AlexNet, 224x224
              (64-192-384-256-256 convs, 4096-4096-1000 fc).
  overfeat    OverFeat "fast" model, Sermanet et al. 2014, Table 1, 231x231.
  nin         Network-in-Network ImageNet model (Lin et al.; Caffe model zoo
              "nin_imagenet"), 224x224, Caffe ceil-mode pooling.
  vgg16       Simonyan & Zisserman configuration D, 224x224.
  squeezenet  SqueezeNet v1.0 (Iandola et al. 2016, Table 1; torchvision squeezenet1_0,
              ceil-mode max pooling), 224x224.
  googlenet   GoogLeNet (Szegedy et al. 2015, Table 1; Caffe bvlc_googlenet, ceil-mode
              pooling, LRN), 224x224, without the auxiliary classifiers (inference graph).
  resnet50    ResNet-50 v1.5 (torchvision resnet50: stride 2 in the 3x3 conv of a
              down-sampling bottleneck), 224x224; BatchNorm folded into the convs.
  fmnist_cnn  ../shared/data/activations/fmnist_cnn/manifest.json "topology" (28x28x1).
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def conv(name, filters, kernel, stride=1, pad=0, relu=True, inputs=None, groups=1, bias=True, key=None):
    d = {"name": name, "type": "conv", "filters": filters, "kernel": kernel, "stride": stride, "pad": pad}
    if groups != 1:
        d["groups"] = groups
    if not bias:
        d["bias"] = False
    d["relu"] = relu
    if inputs:
        d["inputs"] = inputs
    if key:
        d["key"] = key
    return d


def pool(name, kernel, stride, pad=0, op="max", ceil=False, inputs=None, global_=False):
    d = {"name": name, "type": "pool", "op": op}
    if global_:
        d["global"] = True
    else:
        d.update({"kernel": kernel, "stride": stride, "pad": pad})
        if ceil:
            d["ceil"] = True
    if inputs:
        d["inputs"] = inputs
    return d


def fc(name, units, relu=True, key=None):
    d = {"name": name, "type": "fc", "units": units, "relu": relu}
    if key:
        d["key"] = key
    return d


def alexnet():
    L = [conv("conv1", 64, 11, 4, 2), pool("pool1", 3, 2),
         conv("conv2", 192, 5, 1, 2), pool("pool2", 3, 2),
         conv("conv3", 384, 3, 1, 1), conv("conv4", 256, 3, 1, 1), conv("conv5", 256, 3, 1, 1),
         pool("pool5", 3, 2),
         fc("fc6", 4096), fc("fc7", 4096), fc("fc8", 1000, relu=False)]
    return {"name": "alexnet", "input": [3, 224, 224], "layers": L}


def overfeat():
    L = [conv("conv1", 96, 11, 4, 0), pool("pool1", 2, 2),
         conv("conv2", 256, 5, 1, 0), pool("pool2", 2, 2),
         conv("conv3", 512, 3, 1, 1), conv("conv4", 1024, 3, 1, 1), conv("conv5", 1024, 3, 1, 1),
         pool("pool5", 2, 2),
         fc("fc6", 3072), fc("fc7", 4096), fc("fc8", 1000, relu=False)]
    return {"name": "overfeat", "input": [3, 231, 231], "layers": L}


def nin():
    L = [conv("conv1", 96, 11, 4, 0), conv("cccp1", 96, 1), conv("cccp2", 96, 1),
         pool("pool1", 3, 2, ceil=True),
         conv("conv2", 256, 5, 1, 2), conv("cccp3", 256, 1), conv("cccp4", 256, 1),
         pool("pool2", 3, 2, ceil=True),
         conv("conv3", 384, 3, 1, 1), conv("cccp5", 384, 1), conv("cccp6", 384, 1),
         pool("pool3", 3, 2, ceil=True),
         conv("conv4-1024", 1024, 3, 1, 1), conv("cccp7-1024", 1024, 1), conv("cccp8-1024", 1000, 1),
         pool("pool4", 0, 0, op="avg", global_=True)]
    return {"name": "nin", "input": [3, 224, 224], "layers": L}


def vgg16():
    L = []
    cfg = [(64, 2), (128, 2), (256, 3), (512, 3), (512, 3)]
    for b, (c, n) in enumerate(cfg, 1):
        for k in range(1, n + 1):
            L.append(conv(f"conv{b}_{k}", c, 3, 1, 1))
        L.append(pool(f"pool{b}", 2, 2))
    L += [fc("fc6", 4096), fc("fc7", 4096), fc("fc8", 1000, relu=False)]
    return {"name": "vgg16", "input": [3, 224, 224], "layers": L}


def squeezenet():
    L = [conv("conv1", 96, 7, 2, 0), pool("pool1", 3, 2, ceil=True)]
    prev = "pool1"

    def fire(n, s, e):
        nonlocal prev
        f = f"fire{n}"
        L.append(conv(f + "/squeeze1x1", s, 1, inputs=[prev]))
        L.append(conv(f + "/expand1x1", e, 1, inputs=[f + "/squeeze1x1"]))
        L.append(conv(f + "/expand3x3", e, 3, 1, 1, inputs=[f + "/squeeze1x1"]))
        L.append({"name": f + "/concat", "type": "concat", "inputs": [f + "/expand1x1", f + "/expand3x3"]})
        prev = f + "/concat"

    fire(2, 16, 64); fire(3, 16, 64); fire(4, 32, 128)
    L.append(pool("pool4", 3, 2, ceil=True, inputs=[prev])); prev = "pool4"
    fire(5, 32, 128); fire(6, 48, 192); fire(7, 48, 192); fire(8, 64, 256)
    L.append(pool("pool8", 3, 2, ceil=True, inputs=[prev])); prev = "pool8"
    fire(9, 64, 256)
    L.append(conv("conv10", 1000, 1, inputs=[prev]))
    L.append(pool("pool10", 0, 0, op="avg", global_=True))
    return {"name": "squeezenet", "input": [3, 224, 224], "layers": L}


def googlenet():
    L = [conv("conv1/7x7_s2", 64, 7, 2, 3), pool("pool1/3x3_s2", 3, 2, ceil=True),
         {"name": "pool1/norm1", "type": "lrn"},
         conv("conv2/3x3_reduce", 64, 1), conv("conv2/3x3", 192, 3, 1, 1),
         {"name": "conv2/norm2", "type": "lrn"},
         pool("pool2/3x3_s2", 3, 2, ceil=True)]
    prev = "pool2/3x3_s2"

    def inception(n, c1, r3, c3, r5, c5, pp):
        nonlocal prev
        p = f"inception_{n}/"
        L.append(conv(p + "1x1", c1, 1, inputs=[prev]))
        L.append(conv(p + "3x3_reduce", r3, 1, inputs=[prev]))
        L.append(conv(p + "3x3", c3, 3, 1, 1))
        L.append(conv(p + "5x5_reduce", r5, 1, inputs=[prev]))
        L.append(conv(p + "5x5", c5, 5, 1, 2))
        L.append(pool(p + "pool", 3, 1, 1, ceil=True, inputs=[prev]))
        L.append(conv(p + "pool_proj", pp, 1))
        L.append({"name": p + "output", "type": "concat",
                  "inputs": [p + "1x1", p + "3x3", p + "5x5", p + "pool_proj"]})
        prev = p + "output"

    inception("3a", 64, 96, 128, 16, 32, 32); inception("3b", 128, 128, 192, 32, 96, 64)
    L.append(pool("pool3/3x3_s2", 3, 2, ceil=True, inputs=[prev])); prev = "pool3/3x3_s2"
    inception("4a", 192, 96, 208, 16, 48, 64); inception("4b", 160, 112, 224, 24, 64, 64)
    inception("4c", 128, 128, 256, 24, 64, 64); inception("4d", 112, 144, 288, 32, 64, 64)
    inception("4e", 256, 160, 320, 32, 128, 128)
    L.append(pool("pool4/3x3_s2", 3, 2, ceil=True, inputs=[prev])); prev = "pool4/3x3_s2"
    inception("5a", 256, 160, 320, 32, 128, 128); inception("5b", 384, 192, 384, 48, 128, 128)
    L.append(pool("pool5/7x7_s1", 7, 1, op="avg", inputs=[prev]))
    L.append({"name": "pool5/drop_7x7_s1", "type": "dropout"})
    L.append(fc("loss3/classifier", 1000, relu=False))
    return {"name": "googlenet", "input": [3, 224, 224], "layers": L}


def resnet50():
    L = [conv("conv1", 64, 7, 2, 3, bias=False), pool("maxpool", 3, 2, 1)]
    prev = "maxpool"
    cin = 64
    for s, (w, blocks, stride) in enumerate([(64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)], 1):
        for b in range(blocks):
            p = f"layer{s}.{b}."
            st = stride if b == 0 else 1
            L.append(conv(p + "conv1", w, 1, 1, 0, bias=False, inputs=[prev]))
            L.append(conv(p + "conv2", w, 3, st, 1, bias=False))
            L.append(conv(p + "conv3", 4 * w, 1, 1, 0, relu=False, bias=False))
            short = prev
            if b == 0:
                L.append(conv(p + "downsample", 4 * w, 1, st, 0, relu=False, bias=False, inputs=[prev]))
                short = p + "downsample"
            L.append({"name": p + "add", "type": "add", "inputs": [p + "conv3", short], "relu": True})
            prev = p + "add"
            cin = 4 * w
    L.append(pool("avgpool", 0, 0, op="avg", global_=True, inputs=[prev]))
    L.append(fc("fc", 1000, relu=False))
    return {"name": "resnet50", "input": [3, 224, 224], "layers": L}


def fmnist_cnn():
    # Keys = the member names of ../shared/data/activations/fmnist_cnn/iter*.npz.
    L = [conv("conv1", 32, 3, 1, 1), conv("conv2", 64, 3, 1, 1), pool("pool1", 2, 2),
         conv("conv3", 128, 3, 1, 1), conv("conv4", 128, 3, 1, 1), pool("pool2", 2, 2),
         conv("conv5", 256, 3, 1, 1), pool("pool3", 2, 2),
         fc("fc6", 512), fc("fc7", 10, relu=False)]
    return {"name": "fmnist_cnn", "input": [1, 28, 28], "layers": L}


def source_of(name):
    """The docstring entry of `name` (its first line and the indented continuation lines)."""
    out, on = [], False
    for line in __doc__.split("\n"):
        if line.startswith("  ") and not line.startswith("   "):
            on = line.split()[0] == name
            if on:
                out.append(line.strip()[len(name):].strip())
        elif on and line.startswith("              "):
            out.append(line.strip())
        else:
            on = False
    return " ".join(out) or name


def main():
    for f in (alexnet, overfeat, nin, vgg16, squeezenet, googlenet, resnet50, fmnist_cnn):
        net = f()
        net["source"] = source_of(net["name"])
        path = os.path.join(HERE, net["name"] + ".json")
        with open(path, "w") as out:
            out.write("{\n")
            out.write(f'  "name": {json.dumps(net["name"])},\n')
            out.write(f'  "source": {json.dumps(net["source"])},\n')
            out.write(f'  "input": {json.dumps(net["input"])},\n')
            out.write('  "layers": [\n')
            out.write(",\n".join("    " + json.dumps(l) for l in net["layers"]))
            out.write("\n  ]\n}\n")
        print(path, len(net["layers"]), "layers")


if __name__ == "__main__":
    main()
