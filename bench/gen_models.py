#!/usr/bin/env python3
"""gen_models.py: writes benchmark models as StableHLO text, in the style in
which JAX (jax.jit(...).lower(...).as_text()) and PyTorch (torch_xla's
StableHLO export) emit them.  Plain Python 3, no third-party modules.

Every weight is a parameter of @main (no constants beyond scalars), so a
file stays small and the values are chosen at run time (`vkhlo run
--random-inputs`, or bench_models' scaled random fill).  The model's input
is the last parameter, as both exporters place it.

  gen_models.py resnet50 [--layout=nchw|nhwc] [--blocks=3,4,6,3] [--size=224]
                [--width=64] [--classes=1000] [--batch=1] -o FILE
      ResNet-50 v1.5 (stride on the 3x3 convolution of a bottleneck),
      f32.  nchw: activations NCHW, kernels OIHW, symmetric padding, the
      dense weight [classes, features] transposed (as torch exports);
      nhwc: activations NHWC, kernels HWIO, SAME padding, dense weight
      [features, classes] (as JAX/flax exports).  Batch norm is in its
      folded inference form, y = x * scale + shift with per-channel scale
      and shift broadcast along the feature dimension (the form a model
      whose batch norm was folded for inference exports to; it stays
      finite for any random scale, unlike rsqrt(variance + eps)).  relu is
      maximum with a broadcast zero, max pool 3x3/2 a reduce_window,
      global average pool a reduce-add then a divide.
  gen_models.py mobilenet_v2 [--layout=nhwc|nchw] [--size=224]
                [--width-mult=1.0] [--classes=1000] [--batch=1] -o FILE
      MobileNetV2: inverted residual blocks with 3x3 depthwise convolutions
      (feature_group_count = channels), ReLU6, batch norm folded; nchw as
      torchvision exports it (ReLU6 as clamp), nhwc as flax (maximum and
      minimum).
  gen_models.py bert [--layers=12] [--hidden=768] [--heads=12] [--seq=512]
                [--ffn=4*hidden] [--gelu=erf|tanh] [--batch=1] [--symbolic-seq] -o FILE
      A BERT encoder (post-layer-norm, as Hugging Face's BertLayer) as
      PyTorch exports it: linear layers as reshape to 2-D, transpose of the
      [out, in] weight, dot_general, add of the broadcast bias; attention
      as bmm (dot_general with batching_dims = [0] x [0]) over
      [batch*heads, seq, head_dim] with transposes and reshapes between;
      softmax as max-reduce, subtract, exp, add-reduce, divide; layer norm
      as mean and variance reductions, rsqrt; GELU in erf form (chlo.erf,
      PyTorch's default) or tanh form.  The input is the embedding output
      [batch, seq, hidden].  --symbolic-seq leaves the sequence length open
      (tensor<Bx?xH>) as jax.export does for a symbolic dimension: its
      size from get_dimension_size, reshapes and broadcasts through
      dynamic_reshape / dynamic_broadcast_in_dim with computed shapes
      (compile it for an input type: `vkhlo run --input=...`).
  gen_models.py decoder [--layers=4] [--hidden=2048] [--heads=16] [--ffn=5632]
                [--context=256] [--group=128] [--materialized] -o FILE
      One decoding step of a Llama-style decoder with int4 weights (ui4
      with an f32 scale and a ui4 zero point per group of input rows, as
      GPTQ/AWQ-style weight-only quantization exports), attending over a KV
      cache; --materialized puts the dequantized weights behind an
      optimization_barrier (the f32 weights made first: the baseline).
  gen_models.py all DIR
      The default benchmark set into DIR: resnet50_nchw.mlir,
      resnet50_nhwc.mlir, mobilenet_v2_nchw.mlir, mobilenet_v2_nhwc.mlir,
      bert_base.mlir (seq 512), bert_base_s128.mlir,
      decoder_w4.mlir and decoder_w4_f32.mlir (4 layers of hidden 2048).
"""

import argparse
import math
import os
import sys


class Sym:
    """A dimension that is a multiple of the symbolic sequence length (a
    jax.export dimension variable): printed as `?`, computed at run time."""

    def __init__(self, coeff=1):
        self.coeff = coeff

    def __mul__(self, k):
        return Sym(self.coeff * k)

    __rmul__ = __mul__

    def __eq__(self, other):
        return isinstance(other, Sym) and other.coeff == self.coeff

    def __hash__(self):
        return hash(("sym", self.coeff))


def ttype(shape, et="f32"):
    return "tensor<" + "".join("?x" if isinstance(d, Sym) else "%dx" % d for d in shape) + et + ">"


def dims(v):
    return "[" + ", ".join(str(d) for d in v) + "]"


class Writer:
    """Emits one func.func @main; values are "%N" with their shapes."""

    def __init__(self):
        self.params = []  # (name, shape)
        self.lines = []
        self.shapes = {}
        self.types = {}  # each value's element type (f32 unless given)
        self.n = 0
        self.consts = {}
        self.nconst = 0
        self.sym_source = None  # (parameter, dimension) whose size is the symbol
        self.sym_values = {}  # coefficient -> scalar i32 value

    def param(self, shape, et="f32"):
        name = "%%arg%d" % len(self.params)
        self.params.append((name, list(shape)))
        self.shapes[name] = list(shape)
        self.types[name] = et
        return name

    def emit(self, shape, text, et="f32"):
        name = "%%%d" % self.n
        self.n += 1
        self.lines.append("    %s = %s" % (name, text))
        self.shapes[name] = list(shape)
        self.types[name] = et
        return name

    def ty(self, v):
        return ttype(self.shapes[v], self.types.get(v, "f32"))

    def const(self, value):
        """A scalar f32 constant, emitted once, at the top (as JAX does)."""
        key = float(value)
        if key not in self.consts:
            name = "%cst" if self.nconst == 0 else "%%cst_%d" % (self.nconst - 1)
            self.nconst += 1
            if math.isinf(key):
                lit = "0xFF800000" if key < 0 else "0x7F800000"
            else:
                lit = "%.9e" % key
            self.consts[key] = (name, "    %s = stablehlo.constant dense<%s> : tensor<f32>" % (name, lit))
            self.shapes[name] = []
        return self.consts[key][0]

    def shape(self, v):
        return self.shapes[v]

    # --- symbolic shapes, as jax.export writes them ------------------------
    def sym_value(self, coeff):
        """The scalar i32 value coeff * S (S from get_dimension_size)."""
        if coeff not in self.sym_values:
            if 1 not in self.sym_values:
                param, dim = self.sym_source
                self.sym_values[1] = self.emit([], "stablehlo.get_dimension_size %s, dim = %d : (%s) -> tensor<i32>"
                                               % (param, dim, self.ty(param)), "i32")
            if coeff != 1:
                c = self.emit([], "stablehlo.constant dense<%d> : tensor<i32>" % coeff, "i32")
                self.sym_values[coeff] = self.emit([], "stablehlo.multiply %s, %s : tensor<i32>"
                                                   % (c, self.sym_values[1]), "i32")
        return self.sym_values[coeff]

    def shape_operand(self, shape):
        """A tensor<Nxi32> holding |shape|: constants and reshaped sizes, concatenated."""
        parts = []
        for d in shape:
            if isinstance(d, Sym):
                parts.append(self.emit([1], "stablehlo.reshape %s : (tensor<i32>) -> tensor<1xi32>"
                                       % self.sym_value(d.coeff), "i32"))
            else:
                parts.append(self.emit([1], "stablehlo.constant dense<%d> : tensor<1xi32>" % d, "i32"))
        if len(parts) == 1:
            return parts[0]
        return self.emit([len(parts)], "stablehlo.concatenate %s, dim = 0 : (%s) -> tensor<%dxi32>"
                         % (", ".join(parts), ", ".join(["tensor<1xi32>"] * len(parts)), len(parts)), "i32")

    @staticmethod
    def symbolic(shape):
        return any(isinstance(d, Sym) for d in shape)

    # --- ops -------------------------------------------------------------
    def bcast(self, v, shape, bdims):
        if self.symbolic(shape):
            return self.emit(shape, "stablehlo.dynamic_broadcast_in_dim %s, %s, dims = %s : (%s, tensor<%dxi32>) -> %s"
                             % (v, self.shape_operand(shape), dims(bdims), ttype(self.shape(v)), len(shape),
                                ttype(shape)))
        return self.emit(shape, "stablehlo.broadcast_in_dim %s, dims = %s : (%s) -> %s"
                         % (v, dims(bdims), ttype(self.shape(v)), ttype(shape)))

    def splat(self, value, shape):
        return self.bcast(self.const(value), shape, [])

    def binary(self, op, a, b):
        s = self.shape(a)
        return self.emit(s, "stablehlo.%s %s, %s : %s" % (op, a, b, ttype(s)))

    def unary(self, op, a):
        s = self.shape(a)
        return self.emit(s, "stablehlo.%s %s : %s" % (op, a, ttype(s)))

    def chlo_unary(self, op, a):
        s = self.shape(a)
        return self.emit(s, "chlo.%s %s : %s -> %s" % (op, a, ttype(s), ttype(s)))

    def reshape(self, v, shape):
        et = self.types.get(v, "f32")
        if self.symbolic(shape):
            return self.emit(shape, "stablehlo.dynamic_reshape %s, %s : (%s, tensor<%dxi32>) -> %s"
                             % (v, self.shape_operand(shape), self.ty(v), len(shape), ttype(shape, et)), et)
        return self.emit(shape, "stablehlo.reshape %s : (%s) -> %s" % (v, self.ty(v), ttype(shape, et)), et)

    def convert(self, v, et="f32"):
        return self.emit(self.shape(v), "stablehlo.convert %s : (%s) -> %s" % (v, self.ty(v), ttype(self.shape(v), et)),
                         et)

    def concatenate(self, vs, dim):
        out = list(self.shape(vs[0]))
        out[dim] = sum(self.shape(v)[dim] for v in vs)
        return self.emit(out, "stablehlo.concatenate %s, dim = %d : (%s) -> %s"
                         % (", ".join(vs), dim, ", ".join(self.ty(v) for v in vs), ttype(out)))

    def barrier(self, v):
        return self.emit(self.shape(v), "stablehlo.optimization_barrier %s : %s" % (v, self.ty(v)))

    def transpose(self, v, perm):
        s = self.shape(v)
        out = [s[p] for p in perm]
        return self.emit(out, "stablehlo.transpose %s, dims = %s : (%s) -> %s"
                         % (v, dims(perm), ttype(s), ttype(out)))

    def dot_general(self, a, b, out, lhs_c, rhs_c, lhs_b=(), rhs_b=()):
        batch = ""
        if lhs_b:
            batch = "batching_dims = %s x %s, " % (dims(lhs_b), dims(rhs_b))
        return self.emit(out, "stablehlo.dot_general %s, %s, %scontracting_dims = %s x %s : (%s, %s) -> %s"
                         % (a, b, batch, dims(lhs_c), dims(rhs_c), ttype(self.shape(a)),
                            ttype(self.shape(b)), ttype(out)))

    def reduce(self, v, op, init, rdims):
        s = self.shape(v)
        out = [d for i, d in enumerate(s) if i not in rdims]
        return self.emit(out, "stablehlo.reduce(%s init: %s) applies stablehlo.%s across dimensions = %s : (%s, tensor<f32>) -> %s"
                         % (v, self.const(init), op, dims(rdims), ttype(s), ttype(out)))

    def convolution(self, x, w, out, dn, stride, pad, groups=1):
        win = "stride = %s, pad = [%s], lhs_dilate = [1, 1], rhs_dilate = [1, 1]" % (
            dims(stride), ", ".join(dims(p) for p in pad))
        return self.emit(out, "stablehlo.convolution(%s, %s) dim_numbers = %s, window = {%s} "
                         "{batch_group_count = 1 : i64, feature_group_count = %d : i64} : (%s, %s) -> %s"
                         % (x, w, dn, win, groups, ttype(self.shape(x)), ttype(self.shape(w)), ttype(out)))

    def clamp(self, lo, x, hi):
        s = self.shape(x)
        return self.emit(s, "stablehlo.clamp %s, %s, %s : (tensor<f32>, %s, tensor<f32>) -> %s"
                         % (self.const(lo), x, self.const(hi), ttype(s), ttype(s)))

    def reduce_window_max(self, x, out, window, strides, padding):
        s = self.shape(x)
        init = self.const(float("-inf"))
        name = "%%%d" % self.n
        self.n += 1
        self.shapes[name] = list(out)
        pad = "[" + ", ".join(dims(p) for p in padding) + "]"
        self.lines.append(
            '    %s = "stablehlo.reduce_window"(%s, %s) <{padding = dense<%s> : tensor<%dx2xi64>, '
            "window_dimensions = array<i64: %s>, window_strides = array<i64: %s>}> ({\n"
            "    ^bb0(%%rw0: tensor<f32>, %%rw1: tensor<f32>):\n"
            "      %%rwm = stablehlo.maximum %%rw0, %%rw1 : tensor<f32>\n"
            "      stablehlo.return %%rwm : tensor<f32>\n"
            "    }) : (%s, tensor<f32>) -> %s"
            % (name, x, init, pad, len(s), ", ".join(map(str, window)), ", ".join(map(str, strides)),
               ttype(s), ttype(out)))
        return name

    def text(self, module_name, result):
        sig = ", ".join("%s: %s" % (n, ttype(s, self.types.get(n, "f32"))) for n, s in self.params)
        out = [
            "module @%s attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {" % module_name,
            "  func.func public @main(%s) -> (%s {jax.result_info = \"\"}) {" % (sig, ttype(self.shape(result))),
        ]
        out += [line for _, line in self.consts.values()]
        out += self.lines
        out.append("    return %s : %s" % (result, ttype(self.shape(result))))
        out.append("  }")
        out.append("}")
        return "\n".join(out) + "\n"


# --------------------------------------------------------------- ResNet
def resnet(args):
    nchw = args.layout == "nchw"
    w = Writer()
    blocks = [int(b) for b in args.blocks.split(",")]
    # Parameters come in order of use; the image is appended last, so emit
    # ops first against a placeholder and fix the names at the end: simpler
    # to reserve the weights now and add the image as the last parameter.
    # Conv layers are collected first (shapes only), then emitted.
    layers = []  # (kind, ...) plan built while tracking shapes

    def fdim(shape):
        return 1 if nchw else 3

    def spatial(shape):
        return (shape[2], shape[3]) if nchw else (shape[1], shape[2])

    def with_spatial(c, hw):
        return [args.batch, c, hw[0], hw[1]] if nchw else [args.batch, hw[0], hw[1], c]

    def out_size(n, k, s):
        return (n + s - 1) // s  # both paddings below give ceil(n / s)

    def padding(n, k, s):
        if nchw:  # torch: symmetric k // 2
            return [k // 2, k // 2]
        total = max((out_size(n, k, s) - 1) * s + k - n, 0)  # JAX 'SAME'
        return [total // 2, total - total // 2]

    # Pass 1: create the weight parameters in order of use.
    plan = []
    c_in = 3
    hw = (args.size, args.size)

    def conv_params(cin, cout, k):
        wshape = [cout, cin, k, k] if nchw else [k, k, cin, cout]
        return (w.param(wshape), w.param([cout]), w.param([cout]))

    plan.append(("conv", conv_params(c_in, args.width, 7), args.width, 7, 2, True))
    c_in = args.width
    for stage, n in enumerate(blocks):
        mid = args.width * (2 ** stage)
        cout = mid * 4
        for b in range(n):
            stride = 2 if (b == 0 and stage > 0) else 1
            convs = [
                (conv_params(c_in, mid, 1), mid, 1, 1),
                (conv_params(mid, mid, 3), mid, 3, stride),
                (conv_params(mid, cout, 1), cout, 1, 1),
            ]
            proj = None
            if b == 0:
                proj = (conv_params(c_in, cout, 1), cout, 1, stride)
            plan.append(("block", convs, proj))
            c_in = cout
    if nchw:
        dense_w = w.param([args.classes, c_in])
    else:
        dense_w = w.param([c_in, args.classes])
    dense_b = w.param([args.classes])
    image = w.param(with_spatial(3, (args.size, args.size)))

    # Pass 2: the computation.
    dn = "[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]" if nchw else "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]"

    def conv_bn(x, prm, cout, k, s, relu):
        wt, scale, shift = prm
        h, wd = spatial(w.shape(x))
        oh, ow = out_size(h, k, s), out_size(wd, k, s)
        out = with_spatial(cout, (oh, ow))
        y = w.convolution(x, wt, out, dn, [s, s], [padding(h, k, s), padding(wd, k, s)])
        f = fdim(out)
        # flax/JAX broadcasts a [C] vector in two steps (to 1x..xC, then full)
        one = [1] * 4
        one[f] = cout
        sc = w.bcast(w.bcast(scale, one, [f]), out, [0, 1, 2, 3])
        y = w.binary("multiply", y, sc)
        sh = w.bcast(w.bcast(shift, one, [f]), out, [0, 1, 2, 3])
        y = w.binary("add", y, sh)
        if relu:
            y = w.binary("maximum", y, w.splat(0.0, out))
        return y

    x = image
    kind, prm, cout, k, s, relu = plan[0]
    x = conv_bn(x, prm, cout, k, s, relu)
    # max pool 3x3 stride 2
    h, wd = spatial(w.shape(x))
    oh, ow = out_size(h, 3, 2), out_size(wd, 3, 2)
    pads = [padding(h, 3, 2), padding(wd, 3, 2)]
    if nchw:
        x = w.reduce_window_max(x, with_spatial(cout, (oh, ow)), [1, 1, 3, 3], [1, 1, 2, 2], [[0, 0], [0, 0]] + pads)
    else:
        x = w.reduce_window_max(x, with_spatial(cout, (oh, ow)), [1, 3, 3, 1], [1, 2, 2, 1],
                                [[0, 0]] + pads + [[0, 0]])
    for _, convs, proj in plan[1:]:
        shortcut = x
        y = x
        for i, (prm, co, k, s) in enumerate(convs):
            y = conv_bn(y, prm, co, k, s, i < 2)
        if proj:
            prm, co, k, s = proj
            shortcut = conv_bn(x, prm, co, k, s, False)
        y = w.binary("add", y, shortcut)
        x = w.binary("maximum", y, w.splat(0.0, w.shape(y)))
    # global average pool
    h, wd = spatial(w.shape(x))
    pooled = w.reduce(x, "add", 0.0, [2, 3] if nchw else [1, 2])
    pooled = w.binary("divide", pooled, w.splat(float(h * wd), w.shape(pooled)))
    out = [args.batch, args.classes]
    if nchw:
        wt = w.transpose(dense_w, [1, 0])
        logits = w.dot_general(pooled, wt, out, [1], [0])
    else:
        logits = w.dot_general(pooled, dense_w, out, [1], [0])
    logits = w.binary("add", logits, w.bcast(w.bcast(dense_b, [1, args.classes], [1]), out, [0, 1]))
    return w.text("jit_resnet50" if not nchw else "torch_resnet50", logits)


# ---------------------------------------------------------- MobileNetV2
def mobilenet(args):
    """MobileNetV2 (inverted residual blocks: 1x1 expansion, 3x3 depthwise
    convolution with feature_group_count = channels, 1x1 projection,
    residual add where shapes allow), f32, batch norm folded into a
    per-channel scale and shift as in resnet().  nchw as torchvision
    exports it (OIHW kernels, the depthwise one [C, 1, 3, 3], symmetric
    padding, ReLU6 as clamp, the classifier's [classes, features] weight
    transposed); nhwc as flax (HWIO kernels, the depthwise one [3, 3, 1,
    C], SAME padding, ReLU6 as maximum then minimum with splats)."""
    nchw = args.layout == "nchw"
    w = Writer()
    B = args.batch
    # (expansion t, channels c, repeats n, first stride s), width-scaled
    cfg = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]

    def ch(c):
        v = max(8, int(c * args.width_mult + 4) // 8 * 8)
        return v + 8 if v < 0.9 * c * args.width_mult else v

    def conv_params(cin, cout, k, groups=1):
        i = cin // groups
        wshape = [cout, i, k, k] if nchw else [k, k, i, cout]
        return (w.param(wshape), w.param([cout]), w.param([cout]))

    stem = ch(32)
    plan = [("conv", conv_params(3, stem, 3), stem, 3, 2, 1, True)]
    cin = stem
    for t, c, n, s in cfg:
        cout = ch(c)
        for i in range(n):
            hidden = cin * t
            block = []
            if t != 1:
                block.append((conv_params(cin, hidden, 1), hidden, 1, 1, 1, True))
            block.append((conv_params(hidden, hidden, 3, hidden), hidden, 3, s if i == 0 else 1, hidden, True))
            block.append((conv_params(hidden, cout, 1), cout, 1, 1, 1, False))
            plan.append(("block", block, cin == cout and (s if i == 0 else 1) == 1))
            cin = cout
    last = max(1280, ch(1280)) if args.width_mult > 1.0 else 1280
    plan.append(("conv", conv_params(cin, last, 1), last, 1, 1, 1, True))
    dense_w = w.param([args.classes, last] if nchw else [last, args.classes])
    dense_b = w.param([args.classes])
    image = w.param([B, 3, args.size, args.size] if nchw else [B, args.size, args.size, 3])
    dn = "[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]" if nchw else "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]"
    f = 1 if nchw else 3

    def spatial(shape):
        return (shape[2], shape[3]) if nchw else (shape[1], shape[2])

    def padding(n, k, s):
        if nchw:
            return [k // 2, k // 2]
        o = (n + s - 1) // s
        total = max((o - 1) * s + k - n, 0)
        return [total // 2, total - total // 2]

    def conv_bn(x, prm, cout, k, s, groups, relu6):
        wt, scale, shift = prm
        h, wd = spatial(w.shape(x))
        oh, ow = (h + s - 1) // s, (wd + s - 1) // s
        out = [B, cout, oh, ow] if nchw else [B, oh, ow, cout]
        y = w.convolution(x, wt, out, dn, [s, s], [padding(h, k, s), padding(wd, k, s)], groups)
        y = w.binary("multiply", y, w.bcast(scale, out, [f]))
        y = w.binary("add", y, w.bcast(shift, out, [f]))
        if not relu6:
            return y
        if nchw:
            return w.clamp(0.0, y, 6.0)
        return w.binary("minimum", w.binary("maximum", y, w.splat(0.0, out)), w.splat(6.0, out))

    x = image
    for step in plan:
        if step[0] == "conv":
            _, prm, cout, k, s, g, relu6 = step
            x = conv_bn(x, prm, cout, k, s, g, relu6)
            continue
        _, block, residual = step
        y = x
        for prm, cout, k, s, g, relu6 in block:
            y = conv_bn(y, prm, cout, k, s, g, relu6)
        x = w.binary("add", y, x) if residual else y
    h, wd = spatial(w.shape(x))
    pooled = w.reduce(x, "add", 0.0, [2, 3] if nchw else [1, 2])
    pooled = w.binary("divide", pooled, w.splat(float(h * wd), w.shape(pooled)))
    out = [B, args.classes]
    wt = w.transpose(dense_w, [1, 0]) if nchw else dense_w
    logits = w.dot_general(pooled, wt, out, [1], [0])
    logits = w.binary("add", logits, w.bcast(dense_b, out, [1]))
    return w.text("torch_mobilenet_v2" if nchw else "jit_mobilenet_v2", logits)


# ----------------------------------------------------------------- BERT
def bert(args):
    w = Writer()
    B, S, H, NH = args.batch, (Sym() if args.symbolic_seq else args.seq), args.hidden, args.heads
    F = args.ffn or 4 * H
    if H % NH:
        sys.exit("gen_models: --hidden must be a multiple of --heads")
    D = H // NH
    layers = []
    for _ in range(args.layers):
        p = {}
        for name, shape in (("wq", [H, H]), ("bq", [H]), ("wk", [H, H]), ("bk", [H]), ("wv", [H, H]), ("bv", [H]),
                            ("wo", [H, H]), ("bo", [H]), ("ln1_g", [H]), ("ln1_b", [H]), ("w1", [F, H]), ("b1", [F]),
                            ("w2", [H, F]), ("b2", [H]), ("ln2_g", [H]), ("ln2_b", [H])):
            p[name] = w.param(shape)
        layers.append(p)
    x = w.param([B, S, H])
    w.sym_source = (x, 1)

    def linear(x3, wt, bias, nout):
        nin = w.shape(x3)[2]
        x2 = w.reshape(x3, [B * S, nin])
        wT = w.transpose(wt, [1, 0])
        y = w.dot_general(x2, wT, [B * S, nout], [1], [0])
        y = w.reshape(y, [B, S, nout])
        return w.binary("add", y, w.bcast(bias, [B, S, nout], [2]))

    def layer_norm(x3, g, b):
        mean = w.reduce(x3, "add", 0.0, [2])
        mean = w.binary("divide", mean, w.splat(float(H), [B, S]))
        mean = w.reshape(mean, [B, S, 1])
        xc = w.binary("subtract", x3, w.bcast(mean, [B, S, H], [0, 1, 2]))
        var = w.reduce(w.binary("multiply", xc, xc), "add", 0.0, [2])
        var = w.binary("divide", var, w.splat(float(H), [B, S]))
        var = w.reshape(var, [B, S, 1])
        inv = w.unary("rsqrt", w.binary("add", var, w.splat(1e-12, [B, S, 1])))
        y = w.binary("multiply", xc, w.bcast(inv, [B, S, H], [0, 1, 2]))
        y = w.binary("multiply", y, w.bcast(g, [B, S, H], [2]))
        return w.binary("add", y, w.bcast(b, [B, S, H], [2]))

    def heads(t):  # [B,S,H] -> [B*NH, S, D]
        t = w.reshape(t, [B, S, NH, D])
        t = w.transpose(t, [0, 2, 1, 3])
        return w.reshape(t, [B * NH, S, D])

    def gelu(t):
        s = w.shape(t)
        if args.gelu == "erf":
            e = w.chlo_unary("erf", w.binary("multiply", t, w.splat(1.0 / math.sqrt(2.0), s)))
            e = w.binary("add", e, w.splat(1.0, s))
            return w.binary("multiply", w.binary("multiply", t, w.splat(0.5, s)), e)
        cube = w.binary("multiply", w.binary("multiply", t, t), t)
        inner = w.binary("add", t, w.binary("multiply", cube, w.splat(0.044715, s)))
        th = w.unary("tanh", w.binary("multiply", inner, w.splat(math.sqrt(2.0 / math.pi), s)))
        th = w.binary("add", th, w.splat(1.0, s))
        return w.binary("multiply", w.binary("multiply", t, w.splat(0.5, s)), th)

    for p in layers:
        q = heads(linear(x, p["wq"], p["bq"], H))
        k = heads(linear(x, p["wk"], p["bk"], H))
        v = heads(linear(x, p["wv"], p["bv"], H))
        kT = w.transpose(k, [0, 2, 1])  # [B*NH, D, S]
        sc = w.dot_general(q, kT, [B * NH, S, S], [2], [1], [0], [0])
        sc = w.reshape(sc, [B, NH, S, S])
        sc = w.binary("divide", sc, w.splat(math.sqrt(D), [B, NH, S, S]))
        mx = w.reshape(w.reduce(sc, "maximum", float("-inf"), [3]), [B, NH, S, 1])
        e = w.unary("exponential", w.binary("subtract", sc, w.bcast(mx, [B, NH, S, S], [0, 1, 2, 3])))
        sm = w.reshape(w.reduce(e, "add", 0.0, [3]), [B, NH, S, 1])
        pr = w.binary("divide", e, w.bcast(sm, [B, NH, S, S], [0, 1, 2, 3]))
        pr = w.reshape(pr, [B * NH, S, S])
        ctx = w.dot_general(pr, v, [B * NH, S, D], [2], [1], [0], [0])
        ctx = w.reshape(ctx, [B, NH, S, D])
        ctx = w.reshape(w.transpose(ctx, [0, 2, 1, 3]), [B, S, H])
        att = linear(ctx, p["wo"], p["bo"], H)
        x = layer_norm(w.binary("add", att, x), p["ln1_g"], p["ln1_b"])
        h1 = gelu(linear(x, p["w1"], p["b1"], F))
        h2 = linear(h1, p["w2"], p["b2"], H)
        x = layer_norm(w.binary("add", h2, x), p["ln2_g"], p["ln2_b"])
    return w.text("IrToHlo.bert_encoder", x)


# ------------------------------------------------- quantized decoder step


def decoder(args):
    """One decoding step of a Llama-style decoder with int4 weights, as a
    JAX export of GPTQ/AWQ-style weight-only quantization writes it: every
    projection's weights ui4 [in, out] with an f32 scale and a ui4 zero
    point per group of G input rows and column, dequantized as
    ((w.astype(f32).reshape(in // G, G, out) - z[:, None]) * s[:, None])
    .reshape(in, out) in front of the product (with --materialized behind
    an optimization_barrier: the f32 weights made first, the baseline).
    One token [1, hidden] attends over a KV cache of --context positions
    (parameters) and its own key and value; RMSNorm, SwiGLU MLP,
    residuals; no rotary embedding."""
    w = Writer()
    H, NH, F, T, G = args.hidden, args.heads, args.ffn, args.context, args.group
    if H % NH or H % G or F % G:
        sys.exit("gen_models: --hidden must be a multiple of --heads and --group, --ffn of --group")
    D = H // NH
    layers = []
    for _ in range(args.layers):
        p = {"attn_norm": w.param([H]), "ffn_norm": w.param([H])}
        for name, nin, nout in (("q", H, H), ("k", H, H), ("v", H, H), ("o", H, H), ("gate", H, F), ("up", H, F),
                                ("down", F, H)):
            p[name] = (w.param([nin, nout], "ui4"), w.param([nin // G, nout]), w.param([nin // G, nout], "ui4"))
        p["k_cache"] = w.param([T, NH, D])
        p["v_cache"] = w.param([T, NH, D])
        layers.append(p)
    x = w.param([1, H])

    def weights(q):
        wq, sc, zp = q
        nin, nout = w.shape(wq)
        g3 = [nin // G, G, nout]
        w3 = w.reshape(w.convert(wq), g3)
        w3 = w.binary("subtract", w3, w.bcast(w.convert(zp), g3, [0, 2]))
        w2 = w.reshape(w.binary("multiply", w3, w.bcast(sc, g3, [0, 2])), [nin, nout])
        return w.barrier(w2) if args.materialized else w2

    def linear(h, q):
        nout = w.shape(q[0])[1]
        return w.dot_general(h, weights(q), [1, nout], [1], [0])

    def rms_norm(t, g):
        ms = w.reduce(w.binary("multiply", t, t), "add", 0.0, [1])
        ms = w.binary("divide", ms, w.splat(float(H), [1]))
        inv = w.unary("rsqrt", w.binary("add", ms, w.splat(1e-6, [1])))
        y = w.binary("multiply", t, w.bcast(inv, [1, H], [0]))
        return w.binary("multiply", y, w.bcast(g, [1, H], [1]))

    for p in layers:
        h = rms_norm(x, p["attn_norm"])
        q = w.reshape(linear(h, p["q"]), [NH, D])
        kk = w.concatenate([p["k_cache"], w.reshape(linear(h, p["k"]), [1, NH, D])], 0)  # [T + 1, NH, D]
        vv = w.concatenate([p["v_cache"], w.reshape(linear(h, p["v"]), [1, NH, D])], 0)
        sc = w.dot_general(q, kk, [NH, T + 1], [1], [2], [0], [1])
        sc = w.binary("divide", sc, w.splat(math.sqrt(D), [NH, T + 1]))
        mx = w.reduce(sc, "maximum", float("-inf"), [1])
        e = w.unary("exponential", w.binary("subtract", sc, w.bcast(mx, [NH, T + 1], [0])))
        pr = w.binary("divide", e, w.bcast(w.reduce(e, "add", 0.0, [1]), [NH, T + 1], [0]))
        ctx = w.reshape(w.dot_general(pr, vv, [NH, D], [1], [0], [0], [1]), [1, H])
        x = w.binary("add", x, linear(ctx, p["o"]))
        h = rms_norm(x, p["ffn_norm"])
        gate = linear(h, p["gate"])
        act = w.binary("multiply", gate, w.unary("logistic", gate))  # silu
        x = w.binary("add", x, linear(w.binary("multiply", act, linear(h, p["up"])), p["down"]))
    return w.text("jit_decode_step", x)


def write(path, text):
    d = os.path.dirname(path)
    if d:
        os.makedirs(d, exist_ok=True)
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="model", required=True)
    r = sub.add_parser("resnet50")
    r.add_argument("--layout", choices=["nchw", "nhwc"], default="nchw")
    r.add_argument("--blocks", default="3,4,6,3", help="bottleneck blocks per stage")
    r.add_argument("--size", type=int, default=224)
    r.add_argument("--width", type=int, default=64, help="stem channels (stage widths double)")
    r.add_argument("--classes", type=int, default=1000)
    r.add_argument("--batch", type=int, default=1)
    r.add_argument("-o", "--output", required=True)
    mb = sub.add_parser("mobilenet_v2")
    mb.add_argument("--layout", choices=["nchw", "nhwc"], default="nhwc")
    mb.add_argument("--size", type=int, default=224)
    mb.add_argument("--width-mult", type=float, default=1.0, help="channel multiplier")
    mb.add_argument("--classes", type=int, default=1000)
    mb.add_argument("--batch", type=int, default=1)
    mb.add_argument("-o", "--output", required=True)
    b = sub.add_parser("bert")
    b.add_argument("--layers", type=int, default=12)
    b.add_argument("--hidden", type=int, default=768)
    b.add_argument("--heads", type=int, default=12)
    b.add_argument("--seq", type=int, default=512)
    b.add_argument("--ffn", type=int, default=0, help="feed-forward width (default 4*hidden)")
    b.add_argument("--gelu", choices=["erf", "tanh"], default="erf")
    b.add_argument("--batch", type=int, default=1)
    b.add_argument("--symbolic-seq", action="store_true",
                   help="the sequence length left open (tensor<Bx?xH>), as jax.export writes a symbolic dimension")
    b.add_argument("-o", "--output", required=True)
    d = sub.add_parser("decoder")
    d.add_argument("--layers", type=int, default=4)
    d.add_argument("--hidden", type=int, default=2048)
    d.add_argument("--heads", type=int, default=16)
    d.add_argument("--ffn", type=int, default=5632)
    d.add_argument("--context", type=int, default=256, help="KV cache positions")
    d.add_argument("--group", type=int, default=128, help="input rows per scale and zero point")
    d.add_argument("--materialized", action="store_true", help="the dequantized weights behind an optimization_barrier")
    d.add_argument("-o", "--output", required=True)
    a = sub.add_parser("all")
    a.add_argument("dir")
    args = ap.parse_args(argv)
    if args.model == "resnet50":
        write(args.output, resnet(args))
    elif args.model == "mobilenet_v2":
        write(args.output, mobilenet(args))
    elif args.model == "bert":
        write(args.output, bert(args))
    elif args.model == "decoder":
        write(args.output, decoder(args))
    else:
        for layout in ("nchw", "nhwc"):
            write(os.path.join(args.dir, "resnet50_%s.mlir" % layout),
                  resnet(ap.parse_args(["resnet50", "--layout=" + layout, "-o", "x"])))
        for layout in ("nchw", "nhwc"):
            write(os.path.join(args.dir, "mobilenet_v2_%s.mlir" % layout),
                  mobilenet(ap.parse_args(["mobilenet_v2", "--layout=" + layout, "-o", "x"])))
        write(os.path.join(args.dir, "bert_base.mlir"), bert(ap.parse_args(["bert", "-o", "x"])))
        write(os.path.join(args.dir, "bert_base_s128.mlir"), bert(ap.parse_args(["bert", "--seq=128", "-o", "x"])))
        write(os.path.join(args.dir, "decoder_w4.mlir"), decoder(ap.parse_args(["decoder", "-o", "x"])))
        write(os.path.join(args.dir, "decoder_w4_f32.mlir"),
              decoder(ap.parse_args(["decoder", "--materialized", "-o", "x"])))


if __name__ == "__main__":
    main(sys.argv[1:])
