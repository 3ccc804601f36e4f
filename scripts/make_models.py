#!/usr/bin/python3
"""Writes Loom's benchmark networks as ONNX and frozen TorchScript files.

    /usr/bin/python3 scripts/make_models.py OUTDIR [--models resnet50,mobilenet_v2,bert_layer] [--batch N]
    /usr/bin/python3 scripts/make_models.py OUTDIR --small

For each network NAME it writes
    OUTDIR/NAME.onnx        the ONNX model (checked with onnx.checker)
    OUTDIR/NAME.pt          torch.jit.freeze(torch.jit.script(model)), saved as
                            is (the loader runs optimize_for_inference itself)
    OUTDIR/NAME.input.bin   a seeded random input, raw little-endian float32
    OUTDIR/NAME.output.bin  PyTorch's output for that input, raw float32

The networks (batch 1, or N with --batch N, then named NAME_bN; random
weights from torch.manual_seed(0); nothing is downloaded):
    resnet50      torchvision ResNet-50, 3x224x224
    mobilenet_v2  torchvision MobileNet-V2, 3x224x224
    bert_layer    a BERT-base encoder layer: hidden 768, 12 heads, FFN 3072,
                  GELU, sequence 128
Batch-norm statistics are calibrated on random batches and the affine
parameters randomized, so that folding batch norm into convolutions is tested
with non-trivial values. The export keeps BatchNormalization nodes
(TrainingMode.PRESERVE on an eval-mode model): folding them is Loom's job.

--small writes the tiny networks Loom's tests import instead:
    tiny_cnn        two conv + batch-norm + relu blocks with a residual add,
                    max and average pooling, flatten and a linear layer (4x8x8)
    tiny_attention  the encoder layer at hidden 16, 2 heads, FFN 32, sequence 8
    tiny_ops        the other operators of CNNs, once each (6x9x9)
    tiny_mobile     those of mobile CNNs, segmentation heads and GPT-style
                    attention: split, reflect pad, hard-swish, hard-sigmoid,
                    bilinear and nearest resize, leaky ReLU, ELU, PReLU, a
                    causal mask (8x6x6)
and hand-written ONNX models for the importer's tests (ONNX only):
    shape_chain.onnx         x [2,3,4] reshaped by a shape computed as exporters
                             spell it (Shape, Gather, Unsqueeze, Slice, Concat),
                             then transposed: y = x.reshape(2, 12).T
    bad_dynamic_batch.onnx   a Relu whose input has a symbolic batch dimension
    bad_unsupported_op.onnx  a NonMaxSuppression node
    bad_mismatched_shapes.onnx  an Add of a 2x3 and a 4x5 tensor
    bad_resize_cubic.onnx    a Resize in cubic mode
    bad_split_sizes.onnx     a Split of 2 channels into sizes [1, 2]
    bad_attribute/OP.onnx    one OP node with an attribute 'bogus', for every
                             operator of NEWER_OPS
Needs Debian's python3-torch, python3-torchvision and python3-onnx.
"""

import argparse
import math
import os
import sys

import numpy as np
import onnx
import onnx.helper
import onnx.numpy_helper
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision

SEED = 0


class EncoderLayer(nn.Module):
    """A post-norm transformer encoder layer, as BERT's.

    The math of nn.TransformerEncoderLayer(hidden, heads, ffn, activation='gelu',
    batch_first=True) in eval mode, spelled with separate q/k/v projections and
    constant reshapes: PyTorch's own layer exports the packed projection as a
    Slice of data, and its no-grad fast path has no ONNX form at all.
    """

    def __init__(self, hidden, heads, ffn, batch, seq):
        super().__init__()
        assert hidden % heads == 0
        self.batch, self.seq, self.hidden, self.heads = batch, seq, hidden, heads
        self.head_dim = hidden // heads
        self.scale = 1.0 / math.sqrt(self.head_dim)
        self.q = nn.Linear(hidden, hidden)
        self.k = nn.Linear(hidden, hidden)
        self.v = nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, hidden)
        self.norm1 = nn.LayerNorm(hidden)
        self.ffn1 = nn.Linear(hidden, ffn)
        self.ffn2 = nn.Linear(ffn, hidden)
        self.norm2 = nn.LayerNorm(hidden)

    def split_heads(self, t):
        """[batch, seq, hidden] -> [batch, heads, seq, head_dim]."""
        return t.reshape(self.batch, self.seq, self.heads, self.head_dim).transpose(1, 2)

    def forward(self, x):
        q = self.split_heads(self.q(x))
        k = self.split_heads(self.k(x))
        v = self.split_heads(self.v(x))
        scores = torch.matmul(q, k.transpose(2, 3)) * self.scale
        context = torch.matmul(torch.softmax(scores, dim=-1), v)
        context = context.transpose(1, 2).reshape(self.batch, self.seq, self.hidden)
        x = self.norm1(x + self.out(context))
        return self.norm2(x + self.ffn2(F.gelu(self.ffn1(x))))


class TinyCNN(nn.Module):
    """Two conv + batch-norm + relu blocks, the second with a residual add,
    then max and average pooling, flatten and a linear classifier."""

    def __init__(self, channels=4, width=8, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, width, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.max_pool = nn.MaxPool2d(2)
        self.avg_pool = nn.AvgPool2d(2)
        self.fc = nn.Linear(width * 2 * 2, classes)

    def forward(self, x):
        h = F.relu(self.bn1(self.conv1(x)))
        y = F.relu(self.bn2(self.conv2(h)) + h)
        y = self.avg_pool(self.max_pool(y))
        return self.fc(torch.flatten(y, 1))


class TinyOps(nn.Module):
    """The operators the two other tiny networks leave out, once each: a
    depthwise strided conv, a dilated grouped conv, ReLU6 (Clip), sigmoid,
    tanh, exp, log, sqrt, abs, neg, pow, sub, div, max, min, pooling with
    padding and ceil_mode, global pooling, concat, a softmax on a middle
    axis, reductions, matmul with batch broadcast, the tanh GELU."""

    def __init__(self, channels=6):
        super().__init__()
        self.dw = nn.Conv2d(channels, channels, 3, stride=2, padding=1, groups=channels)
        self.grouped = nn.Conv2d(channels, channels, 3, padding=2, dilation=2, groups=2, bias=False)
        self.max_pool = nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True)
        self.avg_pool = nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)
        self.weight = nn.Parameter(torch.randn(5, 5) * 0.3)

    def forward(self, x):
        a = F.relu6(self.dw(x) * 3.0)                         # [1, 6, 5, 5]
        b = torch.sigmoid(self.grouped(a)) - torch.tanh(a)    # [1, 6, 5, 5]
        c = torch.sqrt(torch.abs(b) + 1.0) / (torch.exp(-b) + 1.0)
        d = torch.log(c + 2.0) * torch.pow(b, 2.0) + torch.neg(a)
        e = torch.maximum(d, b) + torch.minimum(c, a)
        p = torch.cat([self.max_pool(e), self.avg_pool(d)], dim=1)   # [1, 12, 3, 3]
        s = torch.softmax(p, dim=1) + F.adaptive_avg_pool2d(p, 1)
        m = torch.mean(s, dim=(2, 3), keepdim=True) + torch.sum(s, dim=1, keepdim=True)
        h = torch.matmul(e, self.weight).transpose(2, 3)     # [1, 6, 5, 5]
        return torch.cat([m.flatten(1), F.gelu(h, approximate="tanh").flatten(1)], dim=1)


class TinyMobile(nn.Module):
    """The operators of mobile CNNs, segmentation heads and transformers that
    the other tiny networks leave out: a channel split (ShuffleNet), reflect
    padding, hard-swish and a hard-sigmoid squeeze-excite (MobileNet-V3),
    bilinear and nearest upsampling (segmentation heads), leaky ReLU, ELU,
    PReLU, and a packed QKV projection split in three with a causal mask
    applied by masked_fill (GPT-style attention)."""

    def __init__(self, channels=8):
        super().__init__()
        half = channels // 2
        self.conv = nn.Conv2d(half, half, 3)
        self.se = nn.Conv2d(channels, channels, 1)
        self.prelu = nn.PReLU(channels)
        self.qkv = nn.Linear(channels, 3 * channels)
        self.channels = channels

    def forward(self, x):                                     # [1, 8, 6, 6]
        a, b = x.chunk(2, dim=1)
        a = self.conv(F.pad(a, (1, 1, 1, 1), mode="reflect"))
        y = torch.cat([a, F.hardswish(b)], dim=1)
        y = y * F.hardsigmoid(self.se(F.adaptive_avg_pool2d(y, 1)))
        up = F.interpolate(y, scale_factor=2.0, mode="bilinear", align_corners=False)   # [1, 8, 12, 12]
        near = F.interpolate(y, size=(12, 12), mode="nearest")
        z = self.prelu(F.leaky_relu(up, 0.1) + F.elu(near))
        t = z.mean(dim=3).transpose(1, 2)                     # [1, 12, 8]
        q, k, v = self.qkv(t).split(self.channels, dim=2)
        s = torch.matmul(q, k.transpose(1, 2)) / math.sqrt(self.channels)
        mask = torch.triu(torch.ones(12, 12, dtype=torch.bool), diagonal=1)
        s = s.masked_fill(mask, float("-inf"))
        return torch.matmul(torch.softmax(s, dim=-1), v).flatten(1)


def randomize_batch_norm(model, input_shape, generator):
    """Running statistics from two random batches, random scale and shift.

    Calibrated statistics keep activations in a sane range through deep
    networks while making mean, variance, scale and shift all non-trivial.
    """
    norms = [m for m in model.modules() if isinstance(m, nn.BatchNorm2d)]
    if not norms:
        return
    for m in norms:
        m.reset_running_stats()
        m.momentum = None  # a plain average over the calibration batches
    model.train()
    with torch.no_grad():
        for _ in range(2):
            model(torch.randn((2,) + tuple(input_shape[1:]), generator=generator))
        for m in norms:
            m.momentum = 0.1
            m.weight.uniform_(0.5, 1.5, generator=generator)
            m.bias.uniform_(-0.2, 0.2, generator=generator)
    model.eval()


def build(name, batch=1):
    """(model in eval mode, input shape, ONNX opset) for a network name."""
    if name == "resnet50":
        return torchvision.models.resnet50(weights=None), (batch, 3, 224, 224), 13
    if name == "mobilenet_v2":
        return torchvision.models.mobilenet_v2(weights=None), (batch, 3, 224, 224), 13
    # Opset 17 has LayerNormalization; at 13 it would be spelled out in
    # reductions.
    if name == "bert_layer":
        return EncoderLayer(768, 12, 3072, batch=batch, seq=128), (batch, 128, 768), 17
    if name == "tiny_cnn":
        return TinyCNN(), (1, 4, 8, 8), 13
    if name == "tiny_attention":
        return EncoderLayer(16, 2, 32, batch=1, seq=8), (1, 8, 16), 17
    if name == "tiny_ops":
        return TinyOps(), (1, 6, 9, 9), 13
    if name == "tiny_mobile":
        return TinyMobile(), (1, 8, 6, 6), 13
    raise SystemExit(f"make_models.py: unknown model '{name}' (known: {', '.join(FULL_MODELS + SMALL_MODELS)})")


FULL_MODELS = ["resnet50", "mobilenet_v2", "bert_layer"]
SMALL_MODELS = ["tiny_cnn", "tiny_attention", "tiny_ops", "tiny_mobile"]


def write_model(name, outdir, batch=1):
    torch.manual_seed(SEED)
    model, input_shape, opset = build(name, batch)
    if batch != 1:
        name = f"{name}_b{batch}"
    generator = torch.Generator().manual_seed(SEED + 1)
    randomize_batch_norm(model, input_shape, generator)
    model.eval()
    x = torch.randn(input_shape, generator=generator)
    with torch.no_grad():
        expected = model(x)

    onnx_path = os.path.join(outdir, name + ".onnx")
    # Autograd stays on during the export: some modules take fused no-grad
    # paths that have no ONNX form.
    torch.onnx.export(model, (x,), onnx_path, opset_version=opset, input_names=["input"],
                      output_names=["output"], training=torch.onnx.TrainingMode.PRESERVE,
                      do_constant_folding=True)
    onnx.checker.check_model(onnx.load(onnx_path))

    frozen = torch.jit.freeze(torch.jit.script(model).eval())
    frozen.save(os.path.join(outdir, name + ".pt"))

    x.numpy().astype("<f4").tofile(os.path.join(outdir, name + ".input.bin"))
    expected.numpy().astype("<f4").tofile(os.path.join(outdir, name + ".output.bin"))
    print(f"{name}: {onnx_path} (input {list(input_shape)}, output {list(expected.shape)}, opset {opset})")


# Operators whose mappings must refuse an attribute they do not know.
NEWER_OPS = ["And", "ArgMax", "ArgMin", "Cast", "ConvTranspose", "Einsum", "Elu", "Equal", "Expand", "Gather",
             "Greater", "GreaterOrEqual", "GroupNormalization", "GRU", "HardSigmoid", "HardSwish",
             "InstanceNormalization", "LeakyRelu", "Less", "LessOrEqual", "LSTM", "Mod", "Not", "Or", "Pad", "PRelu",
             "Range", "Reciprocal", "ReduceL2", "ReduceMin", "Resize", "ScatterND", "Selu", "Slice", "Softplus",
             "Softsign", "Split", "Tile", "Where"]


def write_bad_attribute_models(outdir):
    """For each of NEWER_OPS, a one-node model whose node carries an unknown
    attribute (saved without the checker, which would refuse it)."""
    h = onnx.helper
    os.makedirs(os.path.join(outdir, "bad_attribute"), exist_ok=True)
    for op in NEWER_OPS:
        model = h.make_model(
            h.make_graph([h.make_node(op, ["x"], ["y"], name="odd_" + op.lower(), bogus=1)], "bad_" + op,
                         [h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 3])],
                         [h.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)]),
            opset_imports=[h.make_opsetid("", 18)])
        onnx.save(model, os.path.join(outdir, "bad_attribute", op + ".onnx"))


def write_fixture_models(outdir):
    """A shape computation the importer must fold, and valid models it must
    refuse with a one-line error."""
    h = onnx.helper
    ints = onnx.numpy_helper.from_array
    chain = h.make_model(
        h.make_graph([h.make_node("Shape", ["x"], ["shape"]),
                      h.make_node("Gather", ["shape", "zero"], ["batch"], axis=0),
                      h.make_node("Unsqueeze", ["batch", "axes"], ["batch_1d"]),
                      h.make_node("Slice", ["shape", "one", "end"], ["rest"]),
                      h.make_node("Concat", ["batch_1d", "minus_one"], ["target"], axis=0),
                      h.make_node("Reshape", ["x", "target"], ["flat"]),
                      h.make_node("Transpose", ["flat"], ["y"], perm=[1, 0])], "shape_chain",
                     [h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 3, 4])],
                     [h.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [12, 2])],
                     [ints(np.array(0, np.int64), "zero"), ints(np.array([0], np.int64), "axes"),
                      ints(np.array([1], np.int64), "one"), ints(np.array([2**63 - 1], np.int64), "end"),
                      ints(np.array([-1], np.int64), "minus_one")]),
        opset_imports=[h.make_opsetid("", 13)])
    dynamic = h.make_model(
        h.make_graph([h.make_node("Relu", ["x"], ["y"], name="relu")], "dynamic_batch",
                     [h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["batch", 4])],
                     [h.make_tensor_value_info("y", onnx.TensorProto.FLOAT, ["batch", 4])]),
        opset_imports=[h.make_opsetid("", 13)])
    nms = h.make_model(
        h.make_graph([h.make_node("NonMaxSuppression", ["boxes", "scores"], ["selected"])], "unsupported_op",
                     [h.make_tensor_value_info("boxes", onnx.TensorProto.FLOAT, [1, 6, 4]),
                      h.make_tensor_value_info("scores", onnx.TensorProto.FLOAT, [1, 1, 6])],
                     [h.make_tensor_value_info("selected", onnx.TensorProto.INT64, [None, 3])]),
        opset_imports=[h.make_opsetid("", 13)])
    # Saved without the checker's shape inference, which would refuse it.
    mismatched = h.make_model(
        h.make_graph([h.make_node("Add", ["a", "b"], ["y"], name="add_ab")], "mismatched_shapes",
                     [h.make_tensor_value_info("a", onnx.TensorProto.FLOAT, [2, 3]),
                      h.make_tensor_value_info("b", onnx.TensorProto.FLOAT, [4, 5])],
                     [h.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)]),
        opset_imports=[h.make_opsetid("", 13)])
    x4 = [h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 2, 4, 4])]
    cubic = h.make_model(
        h.make_graph([h.make_node("Resize", ["x", "", "scales"], ["y"], name="upsample", mode="cubic")],
                     "cubic_resize", x4, [h.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 2, 8, 8])],
                     [onnx.numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")]),
        opset_imports=[h.make_opsetid("", 13)])
    bad_split = h.make_model(
        h.make_graph([h.make_node("Split", ["x", "sizes"], ["a", "b"], name="split_channels", axis=1)],
                     "bad_split", x4, [h.make_tensor_value_info("a", onnx.TensorProto.FLOAT, None),
                                       h.make_tensor_value_info("b", onnx.TensorProto.FLOAT, None)],
                     [ints(np.array([1, 2], np.int64), "sizes")]),
        opset_imports=[h.make_opsetid("", 13)])
    for model, name in [(cubic, "bad_resize_cubic")]:
        onnx.checker.check_model(model)
        onnx.save(model, os.path.join(outdir, name + ".onnx"))
    onnx.save(bad_split, os.path.join(outdir, "bad_split_sizes.onnx"))
    for model, name in [(chain, "shape_chain"), (dynamic, "bad_dynamic_batch"), (nms, "bad_unsupported_op")]:
        onnx.checker.check_model(model)
        onnx.save(model, os.path.join(outdir, name + ".onnx"))
    onnx.save(mismatched, os.path.join(outdir, "bad_mismatched_shapes.onnx"))
    write_bad_attribute_models(outdir)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("outdir")
    parser.add_argument("--models", default=",".join(FULL_MODELS),
                        help="comma-separated networks (default: %(default)s)")
    parser.add_argument("--small", action="store_true", help="write the tiny test networks instead")
    parser.add_argument("--batch", type=int, default=1, help="batch size of the networks (default 1)")
    args = parser.parse_args()
    os.makedirs(args.outdir, exist_ok=True)
    torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))
    names = SMALL_MODELS if args.small else [n for n in args.models.split(",") if n]
    if args.batch < 1:
        parser.error("--batch must be at least 1")
    for name in names:
        write_model(name, args.outdir, 1 if args.small else args.batch)
    if args.small:
        write_fixture_models(args.outdir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
