"""cnn.py - ResNet-50 v1.5 and MobileNetV2 graphs shaped like torchvision's, exported with BN kept.

The graphs follow what torch.onnx emits for torchvision's models in eval mode without constant
folding: Conv (no bias) -> BatchNormalization -> Relu / Clip(0, 6), residual Add, GlobalAveragePool,
Flatten, Gemm. Weights come from a seeded numpy Generator: convs are He-initialised and every
BatchNormalization gets running statistics close to the statistics its input really has, measured by
a float64 numpy forward pass of fixed standard-normal images (the kind of input the tests feed),
with a random mismatch and non-trivial gamma/beta, so activations keep a sane scale the way they do in
a trained network. float64 keeps the float32 weights identical across machines and BLAS builds.
"""

import math

import numpy as np

from graph_builder import FLOAT, GraphBuilder

BN_EPS = 1e-5
CALIB_SEED = 20240917  # seed of the calibration input (fixed: not the weights' --seed)


# ----- a float64 numpy forward pass, used to give BatchNormalization its running statistics ---------


def np_conv(x, w, stride, pad, group):
    """Conv2d of NCHW float64 x by OIHW w (group 1 or depthwise), zero padding on all sides."""
    n, c, _, _ = x.shape
    co, cig, k, _ = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    ho = (xp.shape[2] - k) // stride + 1
    wo = (xp.shape[3] - k) // stride + 1
    w = w.astype(np.float64)
    if group == 1:
        win = np.lib.stride_tricks.sliding_window_view(xp, (k, k), axis=(2, 3))[:, :, ::stride, ::stride]
        cols = win[:, :, :ho, :wo].transpose(0, 2, 3, 1, 4, 5).reshape(n * ho * wo, c * k * k)
        y = cols @ w.reshape(co, -1).T
        return np.ascontiguousarray(y.reshape(n, ho, wo, co).transpose(0, 3, 1, 2))
    if group != c or co != c or cig != 1:
        raise ValueError("only group=1 and depthwise convolutions are generated")
    y = np.zeros((n, c, ho, wo))
    for i in range(k):
        for j in range(k):
            tap = xp[:, :, i:i + stride * (ho - 1) + 1:stride, j:j + stride * (wo - 1) + 1:stride]
            y += tap * w[None, :, 0, i, j, None, None]
    return y


def np_maxpool3x3s2(x):
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
    win = np.lib.stride_tricks.sliding_window_view(xp, (3, 3), axis=(2, 3))[:, :, ::2, ::2]
    ho = (xp.shape[2] - 3) // 2 + 1
    wo = (xp.shape[3] - 3) // 2 + 1
    return win[:, :, :ho, :wo].max(axis=(4, 5))


# ----- building blocks ------------------------------------------------------------------------------


class CnnBuilder(GraphBuilder):
    """GraphBuilder plus the conv/BN/activation helpers shared by the two CNNs."""

    def __init__(self, opset, rng):
        if opset < 11:
            raise ValueError("the CNN generators need opset >= 11 (Clip with min/max inputs)")
        super().__init__(opset)
        self.rng = rng

    def conv(self, x, s, scope, pname, cin, cout, k, stride=1, group=1):
        """Conv without bias, He-normal weights (fan_in). s is the numpy value of x (NCHW float64);
        returns (output name, its numpy value), like every helper below."""
        fan_in = (cin // group) * k * k
        w = (self.rng.standard_normal((cout, cin // group, k, k)) * math.sqrt(2.0 / fan_in)).astype(np.float32)
        wname = self.initializer(pname + ".weight", w)
        pad = (k - 1) // 2
        y = self.node(
            "Conv", [x, wname], scope,
            dilations=[1, 1], group=group, kernel_shape=[k, k], pads=[pad] * 4, strides=[stride, stride],
        )
        return y, np_conv(s, w, stride, pad, group)

    def bn(self, x, s, scope, pname, gamma_range, beta_mean=0.0, beta_sd=0.1):
        """BatchNormalization whose running stats are near the statistics its input really has."""
        c = s.shape[1]
        mean = s.mean(axis=(0, 2, 3))
        var = s.var(axis=(0, 2, 3)) + 1e-6
        sd = np.sqrt(var)
        gamma = self.rng.uniform(gamma_range[0], gamma_range[1], c)
        beta = beta_mean + beta_sd * self.rng.standard_normal(c)
        rmean = mean + 0.1 * sd * self.rng.standard_normal(c)
        rvar = var * self.rng.uniform(0.6, 1.5, c)
        f32 = [a.astype(np.float32) for a in (gamma, beta, rmean, rvar)]
        names = [self.initializer(pname + suffix, a)
                 for suffix, a in zip((".weight", ".bias", ".running_mean", ".running_var"), f32)]
        y = self.node("BatchNormalization", [x] + names, scope, epsilon=BN_EPS, momentum=0.9)
        g, b, m, v = [a.astype(np.float64) for a in f32]
        inv = g / np.sqrt(v + BN_EPS)
        return y, (s - m[:, None, None]) * inv[:, None, None] + b[:, None, None]

    def relu(self, x, s, scope):
        return self.node("Relu", [x], scope), np.maximum(s, 0.0)

    def relu6(self, x, s, scope):
        """ReLU6 as torch exports it at opset >= 11: Clip with Constant min and max inputs."""
        lo = self.const(np.float32(0.0), scope)
        hi = self.const(np.float32(6.0), scope)
        return self.node("Clip", [x, lo, hi], scope), np.clip(s, 0.0, 6.0)

    def head(self, x, cin, classes, pool_scope, fc_scope, fc_pname):
        """GlobalAveragePool -> Flatten -> Gemm(transB=1) with torch Linear's default init."""
        p = self.node("GlobalAveragePool", [x], pool_scope)
        f = self.node("Flatten", [p], "", axis=1)
        bound = 1.0 / math.sqrt(cin)
        w = self.rng.uniform(-bound, bound, (classes, cin)).astype(np.float32)
        b = self.rng.uniform(-bound, bound, classes).astype(np.float32)
        wn = self.initializer(fc_pname + ".weight", w)
        bn = self.initializer(fc_pname + ".bias", b)
        self.node("Gemm", [f, wn, bn], fc_scope, outputs=["logits"], alpha=1.0, beta=1.0, transB=1)


def _image_input(b, image, classes):
    """Declares input [batch, 3, image, image] and output logits [batch, classes]. Returns the
    input's name and a batch of standard-normal calibration images (what the tests feed), drawn from
    their own generator so that the weights do not depend on them. The batch is large enough that the
    last (1/32 resolution) BatchNormalization still sees about 64 values per channel."""
    if image < 16 or classes < 1:
        raise ValueError("--image must be >= 16 and --classes >= 1")
    b.add_input("input", FLOAT, ["batch", 3, image, image])
    b.add_output("logits", FLOAT, ["batch", classes])
    last = max(1, -(-image // 32))
    n = min(16, max(1, -(-64 // (last * last))))
    calib = np.random.default_rng(CALIB_SEED).standard_normal((n, 3, image, image))
    return "input", calib


# ----- ResNet-50 v1.5 -------------------------------------------------------------------------------


def resnet50(rng, opset=17, width_div=1, blocks=(3, 4, 6, 3), image=224, classes=1000):
    """torchvision resnet50 (stride on the 3x3 conv of each bottleneck), BN as separate nodes."""
    if width_div < 1 or 64 % width_div:
        raise ValueError("--width-div must divide 64")
    b = CnnBuilder(opset, rng)
    x, s = _image_input(b, image, classes)
    stem = 64 // width_div
    x, s = b.conv(x, s, "/conv1", "conv1", 3, stem, 7, stride=2)
    x, s = b.bn(x, s, "/bn1", "bn1", (0.7, 1.3))
    x, s = b.relu(x, s, "/relu")
    x = b.node("MaxPool", [x], "/maxpool", ceil_mode=0, dilations=[1, 1], kernel_shape=[3, 3],
               pads=[1, 1, 1, 1], strides=[2, 2])
    s = np_maxpool3x3s2(s)
    inplanes = stem
    for li, (nblocks, planes, stride) in enumerate(zip(blocks, (64, 128, 256, 512), (1, 2, 2, 2))):
        planes //= width_div
        lname = "layer%d" % (li + 1)
        for bi in range(nblocks):
            bstride = stride if bi == 0 else 1
            pre = "%s.%d" % (lname, bi)
            sc = "/%s/%s" % (lname, pre)
            identity, s_id = x, s
            y, t = b.conv(x, s, sc + "/conv1", pre + ".conv1", inplanes, planes, 1)
            y, t = b.bn(y, t, sc + "/bn1", pre + ".bn1", (0.7, 1.3))
            y, t = b.relu(y, t, sc + "/relu")
            y, t = b.conv(y, t, sc + "/conv2", pre + ".conv2", planes, planes, 3, stride=bstride)
            y, t = b.bn(y, t, sc + "/bn2", pre + ".bn2", (0.7, 1.3))
            y, t = b.relu(y, t, sc + "/relu_1")
            y, t = b.conv(y, t, sc + "/conv3", pre + ".conv3", planes, planes * 4, 1)
            # A small gamma on the last BN of a residual branch keeps the sum from growing.
            y, t = b.bn(y, t, sc + "/bn3", pre + ".bn3", (0.2, 0.6))
            if bstride != 1 or inplanes != planes * 4:
                dsc = sc + "/downsample"
                identity, s_id = b.conv(x, s, dsc + "/downsample.0", pre + ".downsample.0", inplanes,
                                        planes * 4, 1, stride=bstride)
                identity, s_id = b.bn(identity, s_id, dsc + "/downsample.1", pre + ".downsample.1", (0.5, 1.0))
            y = b.node("Add", [y, identity], sc)
            x, s = b.relu(y, t + s_id, sc + "/relu_2")
            inplanes = planes * 4
    b.head(x, inplanes, classes, "/avgpool", "/fc", "fc")
    return b.finish()


# ----- MobileNetV2 ----------------------------------------------------------------------------------


def _make_divisible(v, divisor=8):
    new_v = max(divisor, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


def mobilenet_v2(rng, opset=17, width_mult=1.0, max_repeats=None, image=224, classes=1000):
    """torchvision mobilenet_v2: inverted residuals, depthwise convs, ReLU6 as Clip, BN kept."""
    setting = [[1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 3, 2], [6, 64, 4, 2], [6, 96, 3, 1], [6, 160, 3, 2],
               [6, 320, 1, 1]]
    if width_mult <= 0:
        raise ValueError("--width-mult must be > 0")
    b = CnnBuilder(opset, rng)
    x, s = _image_input(b, image, classes)
    relu6_gamma = (0.5, 2.5)  # wide enough that some channels reach the upper clip at 6
    cin = _make_divisible(32 * width_mult)
    last = _make_divisible(1280 * max(1.0, width_mult))

    def conv_bn_relu6(x, s, scope, pname, ci, co, k, stride=1, group=1):
        """torchvision Conv2dNormActivation: a Sequential whose children are named 0, 1, 2."""
        leaf = scope + "/" + scope.rsplit("/", 1)[1]  # e.g. /features/features.0/features.0
        x, s = b.conv(x, s, leaf + ".0", pname + ".0", ci, co, k, stride, group)
        x, s = b.bn(x, s, leaf + ".1", pname + ".1", relu6_gamma, 0.5, 1.0)
        return b.relu6(x, s, leaf + ".2")

    x, s = conv_bn_relu6(x, s, "/features/features.0", "features.0", 3, cin, 3, stride=2)
    fi = 1
    for t, c, n, st in setting:
        cout = _make_divisible(c * width_mult)
        if max_repeats is not None:
            n = min(n, max_repeats)
        for i in range(n):
            stride = st if i == 0 else 1
            hidden = int(round(cin * t))
            use_res = stride == 1 and cin == cout
            sc = "/features/features.%d/conv" % fi
            pn = "features.%d.conv" % fi
            y, u = x, s
            j = 0
            if t != 1:
                y, u = conv_bn_relu6(y, u, sc + "/conv.0", pn + ".0", cin, hidden, 1)
                j = 1
            y, u = conv_bn_relu6(y, u, sc + "/conv.%d" % j, pn + ".%d" % j, hidden, hidden, 3, stride, hidden)
            y, u = b.conv(y, u, sc + "/conv.%d" % (j + 1), pn + ".%d" % (j + 1), hidden, cout, 1)
            gamma = (0.2, 0.6) if use_res else (0.7, 1.3)  # small before a residual Add, as in ResNet
            y, u = b.bn(y, u, sc + "/conv.%d" % (j + 2), pn + ".%d" % (j + 2), gamma)
            if use_res:
                y = b.node("Add", [x, y], "/features/features.%d" % fi)
                u = u + s
            x, s = y, u
            cin = cout
            fi += 1
    x, s = conv_bn_relu6(x, s, "/features/features.%d" % fi, "features.%d" % fi, cin, last, 1)
    b.head(x, last, classes, "", "/classifier/classifier.1", "classifier.1")
    return b.finish()
