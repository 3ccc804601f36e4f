#!/usr/bin/python3
"""Writes a zoo of ONNX models (and frozen TorchScript) for Loom's tests and benchmarks.

    /usr/bin/python3 scripts/make_zoo.py OUTDIR [--models a,b,c]   the full zoo, or the named models
    /usr/bin/python3 scripts/make_zoo.py OUTDIR --small            the reduced models (NAME_small)
    /usr/bin/python3 scripts/make_zoo.py --list [--small]          names and descriptions

For each model NAME it writes
    OUTDIR/NAME.onnx        torch.onnx.export of the eval-mode model: batch 1,
                            static shapes, constant folding (batch norm after a
                            conv is folded into it), opset 17 where LayerNorm
                            becomes LayerNormalization, else 13; onnx.checker'd
    OUTDIR/NAME.pt          torch.jit.freeze of torch.jit.script(model), or of
                            torch.jit.trace where scripting fails or its output
                            differs; left out, with a note, when neither works
    OUTDIR/NAME.input.bin   a seeded random input, raw little-endian float32
    OUTDIR/NAME.inputK.bin  instead, for models with several inputs: input K in
                            graph-input order, raw little-endian in its ONNX
                            type (int64 for input_ids and attention_mask)
    OUTDIR/NAME.output.bin  PyTorch's output for that input, raw float32
Graph inputs are named "input" ("input", "memory" for transformer_decoder;
"input_ids", "attention_mask" for bert_encoder), the output "output".

The full zoo (--list prints it): torchvision classifiers from ResNet to Swin,
torchvision segmentation (FCN, DeepLabV3, LR-ASPP; their "out" map),
nn.TransformerEncoder and nn.TransformerDecoder, a hand-written GPT block, a
BERT-style encoder on token ids, LSTM and GRU models and a U-Net. --small
writes each family at toy width and resolution (a few MFLOP at most) with the
same operators. Random weights from torch.manual_seed(0) (nothing is
downloaded); batch-norm statistics and affine parameters randomized as
make_models.py does. A model whose export fails prints "NAME: export failed:
REASON" and the others go on; the exit status is nonzero only when --models
names a single model and it fails.
Needs Debian's python3-torch, python3-torchvision and python3-onnx.
"""

import argparse
import glob
import math
import os
import sys
import warnings

import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F
from torchvision import models as tvm
from torchvision.models import convnext, efficientnet, inception, mobilenetv3, regnet, resnet, squeezenet, vgg
from torchvision.models._utils import IntermediateLayerGetter
from torchvision.models.segmentation import deeplabv3, fcn, lraspp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_models import randomize_batch_norm  # noqa: E402

SEED = 0


class OutOnly(nn.Module):
    """The "out" map of a torchvision segmentation model (they return a dict)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


class TinyResNet(nn.Module):
    """torchvision's ResNet layout (7x7 stride-2 stem, batch norm, max pool, one
    BasicBlock or Bottleneck per stage, global pool, linear) at chosen widths;
    dilate trades the last stage's stride for dilation 2, as FCN's backbone."""

    def __init__(self, block, widths, groups=1, width_per_group=64, dilate=False, classes=10):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(3, widths[0], 7, 2, 3, bias=False), nn.BatchNorm2d(widths[0])
        self.relu, self.maxpool = nn.ReLU(inplace=True), nn.MaxPool2d(3, 2, 1)
        blocks, inplanes = [], widths[0]
        for i, planes in enumerate(widths):
            last_dilated = dilate and i == len(widths) - 1
            stride = 1 if i == 0 or last_dilated else 2
            out = planes * block.expansion
            down = None
            if stride != 1 or inplanes != out:
                down = nn.Sequential(nn.Conv2d(inplanes, out, 1, stride, bias=False), nn.BatchNorm2d(out))
            blocks.append(block(inplanes, planes, stride, down, groups, width_per_group, 2 if last_dilated else 1))
            inplanes = out
        self.layers, self.avgpool = nn.Sequential(*blocks), nn.AdaptiveAvgPool2d(1)
        self.fc, self.out_channels = nn.Linear(inplanes, classes), inplanes

    def forward(self, x):
        x = self.layers(self.maxpool(self.relu(self.bn1(self.conv1(x)))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


class TinyInception(nn.Module):
    """Inception-v3 and GoogLeNet operators at toy width: torchvision's
    BasicConv2d (conv, batch norm, ReLU), parallel 1x1, 1x7-then-7x1, double
    3x3 and 3x3 average-pool branches joined by concat, max pooling with
    ceil_mode, global average pooling, dropout and a linear classifier."""

    def __init__(self, classes=10):
        super().__init__()
        conv = inception.BasicConv2d
        self.stem = conv(3, 8, kernel_size=3, stride=2)
        self.b1 = conv(8, 4, kernel_size=1)
        self.b7 = nn.Sequential(conv(8, 4, kernel_size=1), conv(4, 4, kernel_size=(1, 7), padding=(0, 3)),
                                conv(4, 4, kernel_size=(7, 1), padding=(3, 0)))
        self.b3 = nn.Sequential(conv(8, 4, kernel_size=1), conv(4, 6, kernel_size=3, padding=1),
                                conv(6, 6, kernel_size=3, padding=1))
        self.bp = conv(8, 4, kernel_size=1)
        self.dropout = nn.Dropout(0.2)
        self.fc = nn.Linear(18, classes)

    def forward(self, x):
        x = F.max_pool2d(self.stem(x), 3, 2, ceil_mode=True)
        x = torch.cat([self.b1(x), self.b7(x), self.b3(x), self.bp(F.avg_pool2d(x, 3, 1, 1))], 1)
        return self.fc(self.dropout(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1)))


def causal_mask(seq):
    """Additive float mask: 0 on and below the diagonal, -inf above it."""
    return torch.triu(torch.full((seq, seq), float("-inf")), diagonal=1)


class TransformerEncoderNet(nn.Module):
    """nn.TransformerEncoder (post-norm, ReLU FFN 4d, batch_first), constant causal mask."""

    def __init__(self, d, heads, layers, seq):
        super().__init__()
        layer = nn.TransformerEncoderLayer(d, heads, 4 * d, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.register_buffer("mask", causal_mask(seq))

    def forward(self, x):
        return self.encoder(x, mask=self.mask)


class TransformerDecoderNet(nn.Module):
    """nn.TransformerDecoder (pre-norm, GELU FFN 4d, batch_first): causal
    self-attention over the target, cross-attention to a memory half as long."""

    def __init__(self, d, heads, layers, seq):
        super().__init__()
        layer = nn.TransformerDecoderLayer(d, heads, 4 * d, activation="gelu", batch_first=True, norm_first=True)
        self.decoder = nn.TransformerDecoder(layer, layers)
        self.register_buffer("tgt_mask", causal_mask(seq))

    def forward(self, tgt, memory):
        return self.decoder(tgt, memory, tgt_mask=self.tgt_mask)


class GPTBlock(nn.Module):
    """A GPT-2 style pre-norm decoder block: one Linear(d, 3d) split into q, k,
    v; heads by view/transpose; masked_fill of a constant torch.triu causal
    mask; softmax; a GELU MLP of width 4d; residual adds."""

    def __init__(self, d, heads, seq):
        super().__init__()
        self.heads, self.ln1, self.ln2 = heads, nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.fc_out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.register_buffer("causal", torch.triu(torch.ones(seq, seq, dtype=torch.bool), diagonal=1))

    def forward(self, x):
        b, t, d = x.size(0), x.size(1), x.size(2)
        hd = d // self.heads
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q = q.view(b, t, self.heads, hd).transpose(1, 2)
        k = k.view(b, t, self.heads, hd).transpose(1, 2)
        v = v.view(b, t, self.heads, hd).transpose(1, 2)
        att = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(hd))
        att = att.masked_fill(self.causal[:t, :t], float("-inf"))
        y = torch.matmul(torch.softmax(att, dim=-1), v).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(y)
        return x + self.fc_out(F.gelu(self.fc(self.ln2(x))))


class BertEncoder(nn.Module):
    """Token and position nn.Embedding, LayerNorm, then nn.TransformerEncoderLayer
    blocks (post-norm, GELU); attention_mask (1 keep, 0 pad) becomes the additive
    float key-padding mask (1 - mask) * -10000."""

    def __init__(self, vocab, d, heads, layers, seq):
        super().__init__()
        self.tok, self.pos, self.norm = nn.Embedding(vocab, d), nn.Embedding(seq, d), nn.LayerNorm(d)
        self.register_buffer("positions", torch.arange(seq).unsqueeze(0))
        self.layers = nn.ModuleList([nn.TransformerEncoderLayer(d, heads, 4 * d, activation="gelu", batch_first=True)
                                     for _ in range(layers)])

    def forward(self, input_ids, attention_mask):
        x = self.norm(self.tok(input_ids) + self.pos(self.positions))
        pad = (1.0 - attention_mask.to(torch.float32)) * -10000.0
        for layer in self.layers:
            x = layer(x, src_key_padding_mask=pad)
        return x


class Recurrent(nn.Module):
    """A 2-layer batch_first nn.LSTM or nn.GRU; outputs the last layer's hidden states."""

    def __init__(self, cell, inputs, hidden):
        super().__init__()
        self.rnn = cell(inputs, hidden, 2, batch_first=True)

    def forward(self, x):
        return self.rnn(x)[0]


def double_conv(i, o):
    return nn.Sequential(nn.Conv2d(i, o, 3, padding=1, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True),
                         nn.Conv2d(o, o, 3, padding=1, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True))


class UNet(nn.Module):
    """A 3-level U-Net of width w: double 3x3 conv + batch norm + ReLU blocks,
    2x2 max-pool downsampling; upsampling by ConvTranspose2d(2, stride 2) at the
    deepest level, by bilinear F.interpolate (align_corners=False) to the skip's
    size and by scale_factor 2 at the others; skips joined by concat."""

    def __init__(self, w, classes=2):
        super().__init__()
        self.d1, self.d2, self.d3 = double_conv(3, w), double_conv(w, 2 * w), double_conv(2 * w, 4 * w)
        self.mid = double_conv(4 * w, 8 * w)
        self.up3, self.u3 = nn.ConvTranspose2d(8 * w, 4 * w, 2, stride=2), double_conv(8 * w, 4 * w)
        self.r2, self.u2 = nn.Conv2d(4 * w, 2 * w, 1), double_conv(4 * w, 2 * w)
        self.r1, self.u1 = nn.Conv2d(2 * w, w, 1), double_conv(2 * w, w)
        self.head = nn.Conv2d(w, classes, 1)

    def forward(self, x):
        s1 = self.d1(x)
        s2 = self.d2(F.max_pool2d(s1, 2))
        s3 = self.d3(F.max_pool2d(s2, 2))
        y = self.u3(torch.cat([self.up3(self.mid(F.max_pool2d(s3, 2))), s3], 1))
        y = F.interpolate(self.r2(y), size=s2.shape[-2:], mode="bilinear", align_corners=False)
        y = self.u2(torch.cat([y, s2], 1))
        y = F.interpolate(self.r1(y), scale_factor=2.0, mode="bilinear", align_corners=False)
        return self.head(self.u1(torch.cat([y, s1], 1)))


def tiny_mobilenet_v3(dilation=1, classes=10):
    """MobileNetV3 with four inverted residuals: ReLU and hardswish, with and
    without squeeze-excitation, 3x3 and 5x5 depthwise, the last with a residual
    add; dilation for the last two (as the segmentation backbones). Features
    end at 96 channels."""
    c = mobilenetv3.InvertedResidualConfig
    setting = [c(8, 3, 8, 8, True, "RE", 2, 1, 1.0), c(8, 3, 24, 16, False, "RE", 2, 1, 1.0),
               c(16, 5, 48, 16, True, "HS", 2, dilation, 1.0), c(16, 5, 48, 16, True, "HS", 1, dilation, 1.0)]
    return mobilenetv3.MobileNetV3(setting, last_channel=32, num_classes=classes)


def tiny_deeplabv3():
    features = tiny_mobilenet_v3(dilation=2).features
    head = nn.Sequential(deeplabv3.ASPP(96, [2, 4, 6], 16), nn.Conv2d(16, 16, 3, padding=1, bias=False),
                         nn.BatchNorm2d(16), nn.ReLU(), nn.Conv2d(16, 5, 1))
    return deeplabv3.DeepLabV3(IntermediateLayerGetter(features, {str(len(features) - 1): "out"}), head)


def tiny_lraspp():
    features = tiny_mobilenet_v3(dilation=2).features
    getter = IntermediateLayerGetter(features, {"1": "low", str(len(features) - 1): "high"})
    return lraspp.LRASPP(getter, 8, 96, 5, inter_channels=16)


def tiny_fcn():
    backbone = TinyResNet(resnet.Bottleneck, [4, 8], dilate=True)
    return fcn.FCN(IntermediateLayerGetter(backbone, {"layers": "out"}), fcn.FCNHead(backbone.out_channels, 5))


def tiny_squeezenet():
    model = tvm.SqueezeNet("1_1", num_classes=10)
    fire = squeezenet.Fire
    model.features = nn.Sequential(nn.Conv2d(3, 16, 3, stride=2), nn.ReLU(inplace=True),
                                   nn.MaxPool2d(3, 2, ceil_mode=True), fire(16, 4, 8, 8), fire(16, 4, 8, 8),
                                   nn.MaxPool2d(3, 2, ceil_mode=True), fire(16, 8, 16, 16))
    model.classifier = nn.Sequential(nn.Dropout(0.5), nn.Conv2d(32, 10, 1), nn.ReLU(inplace=True),
                                     nn.AdaptiveAvgPool2d((1, 1)))
    return model


def tiny_alexnet():
    """AlexNet's layout (11x11 stride-4 conv, 3x3 stride-2 max pools, dropout
    and three linear layers) at toy width, 3x64x64."""
    return nn.Sequential(nn.Conv2d(3, 8, 11, 4, 2), nn.ReLU(inplace=True), nn.MaxPool2d(3, 2),
                         nn.Conv2d(8, 16, 5, padding=2), nn.ReLU(inplace=True), nn.MaxPool2d(3, 2),
                         nn.Conv2d(16, 16, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(3, 2),
                         nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten(), nn.Dropout(), nn.Linear(16, 32),
                         nn.ReLU(inplace=True), nn.Dropout(), nn.Linear(32, 32), nn.ReLU(inplace=True),
                         nn.Linear(32, 10))


def tiny_vgg():
    return nn.Sequential(vgg.make_layers([8, "M", 16, "M", 16, 16, "M"]), nn.AdaptiveAvgPool2d((2, 2)),
                         nn.Flatten(), nn.Linear(64, 32), nn.ReLU(True), nn.Dropout(), nn.Linear(32, 10))


def image(model, size=224, opset=13):
    return model, [("input", (1, 3, size, size), "float")], opset


def seq_input(model, shape, opset=17):
    return model, [("input", shape, "float")], opset


def bert(vocab, d, heads, seq):
    specs = [("input_ids", (1, seq), vocab), ("attention_mask", (1, seq), "mask")]
    return BertEncoder(vocab, d, heads, 2, seq), specs, 17


def decoder(d, heads, seq):
    specs = [("input", (1, seq, d), "float"), ("memory", (1, seq // 2, d), "float")]
    return TransformerDecoderNet(d, heads, 2, seq), specs, 17


def torchvision_model(name, size=224, opset=13, **kwargs):
    return lambda: image(getattr(tvm, name)(weights=None, **kwargs), size, opset)


def segmentation_model(name, **kwargs):
    return lambda: image(OutOnly(getattr(tvm.segmentation, name)(weights=None, weights_backbone=None, **kwargs)))


# name -> (description, builder); a builder returns (model, [(input name, shape,
# "float" | "mask" | vocabulary size of int64 ids)], opset).
FULL = {name: (f"torchvision {title}, 3x224x224", torchvision_model(name, opset=opset)) for name, title, opset in [
    ("resnet18", "ResNet-18", 13), ("resnet50", "ResNet-50", 13), ("resnext50_32x4d", "ResNeXt-50 32x4d", 13),
    ("wide_resnet50_2", "Wide ResNet-50-2", 13), ("vgg11", "VGG-11", 13), ("densenet121", "DenseNet-121", 13),
    ("mobilenet_v2", "MobileNet-V2", 13), ("mobilenet_v3_small", "MobileNet-V3 small", 13),
    ("mobilenet_v3_large", "MobileNet-V3 large", 13), ("mnasnet1_0", "MNASNet 1.0", 13),
    ("shufflenet_v2_x1_0", "ShuffleNet-V2 x1.0", 13), ("squeezenet1_1", "SqueezeNet 1.1", 13),
    ("efficientnet_b0", "EfficientNet-B0", 13), ("regnet_y_400mf", "RegNetY-400MF", 13),
    ("convnext_tiny", "ConvNeXt-Tiny", 17), ("vit_b_16", "ViT-B/16", 17), ("swin_t", "Swin-T", 17),
    ("alexnet", "AlexNet", 13)]}
FULL.update({
    "inception_v3": ("torchvision Inception-v3, no aux logits, 3x299x299",
                     torchvision_model("inception_v3", 299, aux_logits=False, init_weights=False)),
    "googlenet": ("torchvision GoogLeNet, no aux logits, 3x224x224",
                  torchvision_model("googlenet", aux_logits=False, init_weights=False)),
    "fcn_resnet50": ("torchvision FCN-ResNet-50 (dilated), 21 classes, 3x224x224",
                     segmentation_model("fcn_resnet50", aux_loss=False)),
    "deeplabv3_mobilenet_v3_large": ("torchvision DeepLabV3-MobileNet-V3-large, 21 classes, 3x224x224",
                                     segmentation_model("deeplabv3_mobilenet_v3_large", aux_loss=False)),
    "lraspp_mobilenet_v3_large": ("torchvision LR-ASPP-MobileNet-V3-large, 21 classes, 3x224x224",
                                  segmentation_model("lraspp_mobilenet_v3_large")),
    "transformer_encoder": ("nn.TransformerEncoder, 2 layers, d 256, 4 heads, causal mask, seq 64",
                            lambda: seq_input(TransformerEncoderNet(256, 4, 2, 64), (1, 64, 256))),
    "transformer_decoder": ("nn.TransformerDecoder, 2 layers, d 256, 4 heads, causal tgt_mask, seq 64, memory 32",
                            lambda: decoder(256, 4, 64)),
    "gpt_block": ("hand-written GPT-2 block, d 768, 12 heads, seq 128",
                  lambda: seq_input(GPTBlock(768, 12, 128), (1, 128, 768))),
    "bert_encoder": ("embeddings + 2 nn.TransformerEncoderLayer, vocab 1000, d 256, 4 heads, int64 ids [1,128]",
                     lambda: bert(1000, 256, 4, 128)),
    "lstm": ("nn.LSTM 2 layers, input 64, hidden 128, seq 32",
             lambda: seq_input(Recurrent(nn.LSTM, 64, 128), (1, 32, 64), 13)),
    "gru": ("nn.GRU 2 layers, input 64, hidden 128, seq 32",
            lambda: seq_input(Recurrent(nn.GRU, 64, 128), (1, 32, 64), 13)),
    "unet": ("3-level U-Net, width 16, ConvTranspose2d and bilinear resizes, 3x128x128",
             lambda: image(UNet(16), 128)),
})

MB = efficientnet.MBConvConfig
SMALL = {
    "resnet18_small": ("ResNet layout, BasicBlocks of width 8, 16, 3x32x32",
                       lambda: image(TinyResNet(resnet.BasicBlock, [8, 16]), 32)),
    "resnet50_small": ("ResNet layout, Bottlenecks of width 4, 8, 3x32x32",
                       lambda: image(TinyResNet(resnet.Bottleneck, [4, 8]), 32)),
    "resnext50_32x4d_small": ("ResNet layout, grouped Bottlenecks (4 groups), 3x32x32",
                              lambda: image(TinyResNet(resnet.Bottleneck, [8, 8], 4, 16), 32)),
    "vgg11_small": ("VGG layout (torchvision make_layers), widths 8-16, 3x32x32", lambda: image(tiny_vgg(), 32)),
    "alexnet_small": ("AlexNet layout at toy width, 3x64x64", lambda: image(tiny_alexnet(), 64)),
    "densenet121_small": ("torchvision DenseNet, growth 4, blocks (2, 2), 3x32x32",
                          lambda: image(tvm.DenseNet(4, (2, 2), 8, 2, num_classes=10), 32)),
    "inception_small": ("Inception-v3 / GoogLeNet operators, 3x32x32", lambda: image(TinyInception(), 32)),
    "mobilenet_v2_small": ("torchvision MobileNetV2, width 0.25, three stages, 3x32x32", lambda: image(
        tvm.MobileNetV2(10, 0.25, [[1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 1, 2]], 4), 32)),
    "mobilenet_v3_large_small": ("torchvision MobileNetV3, four inverted residuals, 3x32x32",
                                 lambda: image(tiny_mobilenet_v3(), 32)),
    "mnasnet1_0_small": ("torchvision MNASNet, alpha 0.25, 3x32x32", lambda: image(tvm.MNASNet(0.25, 10), 32)),
    "shufflenet_v2_x1_0_small": ("torchvision ShuffleNetV2, stages of 16-64 channels, 3x32x32",
                                 lambda: image(tvm.ShuffleNetV2([2, 1, 1], [8, 16, 32, 64, 128], 10), 32)),
    "squeezenet1_1_small": ("SqueezeNet 1.1 layout, 3 Fire modules, 3x32x32", lambda: image(tiny_squeezenet(), 32)),
    "efficientnet_b0_small": ("torchvision EfficientNet, three MBConv stages, 3x32x32", lambda: image(
        efficientnet.EfficientNet([MB(1, 3, 1, 8, 8, 1), MB(4, 3, 2, 8, 16, 2), MB(4, 5, 2, 16, 24, 1)], 0.2,
                                  num_classes=10, last_channel=32), 32)),
    "regnet_y_400mf_small": ("torchvision RegNet with squeeze-excitation, widths 8, 16, 3x32x32", lambda: image(
        regnet.RegNet(regnet.BlockParams([1, 2], [8, 16], [4, 8], [1.0, 1.0], [2, 2], 0.25), 10, 8), 32)),
    "convnext_tiny_small": ("torchvision ConvNeXt, stages 8, 16, 3x32x32", lambda: image(convnext.ConvNeXt(
        [convnext.CNBlockConfig(8, 16, 1), convnext.CNBlockConfig(16, None, 1)], num_classes=10), 32, 17)),
    "vit_b_16_small": ("torchvision VisionTransformer, patch 8, 1 layer, 2 heads, hidden 16, 3x32x32",
                       lambda: image(tvm.VisionTransformer(32, 8, 1, 2, 16, 32, num_classes=10), 32, 17)),
    "swin_t_small": ("torchvision SwinTransformer, embed 8, depths (2, 1), window 2, 3x32x32",
                     lambda: image(tvm.SwinTransformer([4, 4], 8, [2, 1], [1, 2], [2, 2], num_classes=10), 32, 17)),
    "fcn_resnet50_small": ("torchvision FCN on a dilated toy ResNet, 5 classes, 3x32x32",
                           lambda: image(OutOnly(tiny_fcn()), 32)),
    "deeplabv3_mobilenet_v3_large_small": ("torchvision DeepLabV3 (ASPP width 16) on a toy MobileNetV3, 3x32x32",
                                           lambda: image(OutOnly(tiny_deeplabv3()), 32)),
    "lraspp_mobilenet_v3_large_small": ("torchvision LRASPP on a toy MobileNetV3, 5 classes, 3x32x32",
                                        lambda: image(OutOnly(tiny_lraspp()), 32)),
    "transformer_encoder_small": ("nn.TransformerEncoder, 2 layers, d 16, 2 heads, causal mask, seq 8",
                                  lambda: seq_input(TransformerEncoderNet(16, 2, 2, 8), (1, 8, 16))),
    "transformer_decoder_small": ("nn.TransformerDecoder, 2 layers, d 16, 2 heads, seq 8, memory 4",
                                  lambda: decoder(16, 2, 8)),
    "gpt_block_small": ("the GPT-2 block, d 16, 2 heads, seq 8", lambda: seq_input(GPTBlock(16, 2, 8), (1, 8, 16))),
    "bert_encoder_small": ("the BERT-style encoder, vocab 50, d 16, 2 heads, seq 8", lambda: bert(50, 16, 2, 8)),
    "lstm_small": ("nn.LSTM 2 layers, input 8, hidden 16, seq 4",
                   lambda: seq_input(Recurrent(nn.LSTM, 8, 16), (1, 4, 8), 13)),
    "gru_small": ("nn.GRU 2 layers, input 8, hidden 16, seq 4",
                  lambda: seq_input(Recurrent(nn.GRU, 8, 16), (1, 4, 8), 13)),
    "unet_small": ("the U-Net at width 4, 3x32x32", lambda: image(UNet(4), 32)),
}


def make_inputs(specs, generator):
    """Float inputs from randn; int64 ids uniform below the vocabulary size; an
    attention mask of ones with the last quarter zero (padding)."""
    def make(shape, kind):
        if kind == "float":
            return torch.randn(shape, generator=generator)
        if kind == "mask":
            return (torch.arange(shape[-1]) < shape[-1] - shape[-1] // 4).long().expand(shape).clone()
        return torch.randint(0, kind, shape, generator=generator)
    return [make(shape, kind) for _, shape, kind in specs]


def save_torchscript(model, inputs, expected, path):
    """Freezes torch.jit.script(model), or torch.jit.trace(model) where that
    fails or disagrees with the module; returns a note on what it saved."""
    reasons = []
    scale = max(expected.abs().max().item(), 1e-6)
    for how in ("script", "trace"):
        try:
            compiled = torch.jit.script(model) if how == "script" else torch.jit.trace(model, tuple(inputs))
            frozen = torch.jit.freeze(compiled.eval())
            with torch.no_grad():
                got = frozen(*inputs)
            if not isinstance(got, torch.Tensor) or got.shape != expected.shape:
                raise RuntimeError(f"returns {type(got).__name__}, not a {list(expected.shape)} tensor")
            error = (got - expected).abs().max().item() / scale
            if error > 1e-3:
                raise RuntimeError(f"output differs from the module's (relative error {error:.1e})")
            frozen.save(path)
            return f"{how}{'d' if how == 'trace' else 'ed'} .pt" + (f" ({reasons[0]})" if reasons else "")
        except Exception as e:  # noqa: BLE001 -- any failure means trying the next way
            reasons.append(f"{how}: {first_line(e)}")
    if os.path.exists(path):
        os.remove(path)  # a stale one from an earlier run
    return f"no .pt ({'; '.join(reasons)})"


def first_line(error):
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def write_model(name, outdir, builder):
    torch.manual_seed(SEED)
    model, specs, opset = builder()
    generator = torch.Generator().manual_seed(SEED + 1)
    if len(specs) == 1 and specs[0][2] == "float":
        randomize_batch_norm(model, specs[0][1], generator)
    for m in model.modules():
        if isinstance(m, nn.Linear) and not m.weight.any():
            m.reset_parameters()  # zero-initialized heads (ViT's) would make every output 0
    model.eval()
    inputs = make_inputs(specs, generator)
    # Autograd stays on, as in the export: some modules take fused no-grad
    # paths (nn.TransformerEncoderLayer's) that the exporter never sees.
    expected = model(*inputs).detach()

    onnx_path = os.path.join(outdir, name + ".onnx")
    torch.onnx.export(model, tuple(inputs), onnx_path, opset_version=opset, input_names=[s[0] for s in specs],
                      output_names=["output"], do_constant_folding=True)
    onnx.checker.check_model(onnx.load(onnx_path))

    for i, x in enumerate(inputs):
        suffix = ".input.bin" if len(inputs) == 1 else f".input{i}.bin"
        x.numpy().astype("<f4" if x.is_floating_point() else "<i8").tofile(os.path.join(outdir, name + suffix))
    expected.numpy().astype("<f4").tofile(os.path.join(outdir, name + ".output.bin"))

    pt = save_torchscript(model, inputs, expected, os.path.join(outdir, name + ".pt"))
    shapes = ", ".join(f"{s[0]} {list(s[1])}" for s in specs)
    print(f"{name}: {onnx_path} ({shapes}; output {list(expected.shape)}; opset {opset}; {pt})", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("outdir", nargs="?")
    parser.add_argument("--models", help="comma-separated model names, full or small (default: the full zoo)")
    parser.add_argument("--small", action="store_true", help="the reduced models (NAME_small) instead")
    parser.add_argument("--list", action="store_true", help="print the model names and descriptions")
    args = parser.parse_args()
    registry = SMALL if args.small else FULL
    if args.list:
        for name, (description, _) in registry.items():
            print(f"{name:<36} {description}")
        return 0
    if not args.outdir:
        parser.error("OUTDIR is required")
    known = {**FULL, **SMALL}
    names = [n for n in args.models.split(",") if n] if args.models else list(registry)
    unknown = [n for n in names if n not in known]
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)} (see --list and --list --small)")
    os.makedirs(args.outdir, exist_ok=True)
    torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))
    warnings.filterwarnings("ignore")  # tracer and exporter warnings about constant shapes
    failed = []
    for name in names:
        try:
            write_model(name, args.outdir, known[name][1])
        except Exception as e:  # noqa: BLE001 -- report it and go on with the other models
            print(f"{name}: export failed: {first_line(e)}", flush=True)
            failed.append(name)
            for stale in glob.glob(os.path.join(glob.escape(args.outdir), glob.escape(name) + ".*")):
                os.remove(stale)  # no half-written model is left behind
    return 1 if args.models and len(names) == 1 and failed else 0


if __name__ == "__main__":
    sys.exit(main())
