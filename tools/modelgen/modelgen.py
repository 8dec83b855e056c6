#!/usr/bin/env python3
"""modelgen.py - writes ONNX models shaped like real exporter output, with seeded synthetic weights.

    python tools/modelgen/modelgen.py MODEL -o OUT.onnx [--seed 0] [--opset 17] [size options]

MODEL is resnet50, mobilenet_v2 or bert_base (see tools/modelgen/README.md). The same arguments
always give a byte-identical file. Every model is checked with onnx.checker and strict ONNX shape
inference before it is written, and uses only the ops the tailcut library supports.
"""

import argparse
import os
import sys

import numpy as np
import onnx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bert  # noqa: E402
import cnn  # noqa: E402


def _blocks(text):
    parts = [int(p) for p in text.split(",")]
    if len(parts) != 4 or min(parts) < 1:
        raise argparse.ArgumentTypeError("--blocks wants four positive counts, e.g. 3,4,6,3")
    return tuple(parts)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", choices=["resnet50", "mobilenet_v2", "bert_base"])
    p.add_argument("-o", "--output", required=True, help="path of the .onnx file to write")
    p.add_argument("--seed", type=int, default=0, help="seed of numpy's Generator (default 0)")
    p.add_argument("--opset", type=int, default=17, help="ONNX opset (default 17; CNNs >= 11, BERT >= 17)")
    g = p.add_argument_group("CNN options (resnet50, mobilenet_v2)")
    g.add_argument("--image", type=int, default=224, help="input height and width (default 224)")
    g.add_argument("--classes", type=int, default=1000, help="number of logits (default 1000)")
    g.add_argument("--width-div", type=int, default=1, help="resnet50: divide every width by K (default 1)")
    g.add_argument("--blocks", type=_blocks, default=(3, 4, 6, 3),
                   help="resnet50: bottleneck blocks per stage (default 3,4,6,3)")
    g.add_argument("--width-mult", type=float, default=1.0, help="mobilenet_v2: width multiplier (default 1.0)")
    g.add_argument("--max-repeats", type=int, default=None,
                   help="mobilenet_v2: at most N inverted residual blocks per stage (default: all)")
    g = p.add_argument_group("BERT options (bert_base)")
    g.add_argument("--layers", type=int, default=12, help="encoder layers (default 12)")
    g.add_argument("--hidden", type=int, default=768, help="hidden size (default 768)")
    g.add_argument("--heads", type=int, default=12, help="attention heads (default 12)")
    g.add_argument("--ffn", type=int, default=3072, help="intermediate (FFN) size (default 3072)")
    g.add_argument("--vocab", type=int, default=30522, help="vocabulary size (default 30522)")
    g.add_argument("--max-positions", type=int, default=512,
                   help="position embeddings = longest sequence (default 512)")
    g.add_argument("--token-type-ids", action="store_true",
                   help="take token_type_ids as a third input instead of the all-zero buffer")
    return p.parse_args(argv)


def build(args):
    """Returns the ModelProto that the parsed arguments describe."""
    rng = np.random.default_rng(args.seed)
    if args.model == "resnet50":
        return cnn.resnet50(rng, args.opset, args.width_div, args.blocks, args.image, args.classes)
    if args.model == "mobilenet_v2":
        if args.max_repeats is not None and args.max_repeats < 1:
            raise ValueError("--max-repeats must be >= 1")
        return cnn.mobilenet_v2(rng, args.opset, args.width_mult, args.max_repeats, args.image, args.classes)
    return bert.bert(rng, args.opset, args.layers, args.hidden, args.heads, args.ffn, args.vocab,
                     args.max_positions, token_type_ids=args.token_type_ids)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        model = build(args)
    except ValueError as e:
        print("modelgen: %s" % e, file=sys.stderr)
        return 2
    out_dir = os.path.dirname(os.path.abspath(args.output))
    os.makedirs(out_dir, exist_ok=True)
    tmp = args.output + ".tmp"
    onnx.save(model, tmp)
    os.replace(tmp, args.output)  # readers never see a half-written model
    return 0


if __name__ == "__main__":
    sys.exit(main())
