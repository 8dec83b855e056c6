# ocr_cls_data.py - renders a labelled data set for the PP-OCR text direction classifier
# (ch_ppocr_mobile_v2.0_cls): text-line images, each upright (label 0, "0") or turned 180 degrees
# (label 1, "180"), half and half, preprocessed as text_cls.py does (see ocr_cls_common.py).
#
#   python bench/accuracy/ocr_cls_data.py --out DIR [--n-eval 1000] [--n-calib 300] [--seed 0]
#
# writes DIR/eval/x.npy (float32 [N,3,48,192]), DIR/eval/labels.npy (int64 [N]), DIR/eval/texts.txt,
# and a calibration set rendered from another word list and seed: DIR/calib/<input>.<k>.npy (float32
# [1,3,48,192] each, <input> = the model's input name) and DIR/calib_small/ (its first 32).
# The same seed gives the same files (with the same Pillow/FreeType and fonts-dejavu-core).
import argparse
import os
import shutil
import string

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont

import ocr_cls_common as common

FONT_DIR = "/usr/share/fonts/truetype/dejavu"
FONTS = ("DejaVuSans.ttf", "DejaVuSans-Bold.ttf", "DejaVuSerif.ttf", "DejaVuSerif-Bold.ttf",
         "DejaVuSansMono.ttf", "DejaVuSansMono-Bold.ttf")       # the six of fonts-dejavu-core
N_SMALL = 32

# Two disjoint word lists: the eval set draws from the first, calibration from the second.
WORDS_EVAL = """the of and to in is that for it as was with be by on not he this are or his from at which
but have an they you were her she there been one all we their has would when if so what out up said its
about into them than can only other new some could time these two may then do first any my now such like
our over man me even most made after also did many before must through back years where much your way
well down should because each just those people how too little state good very make world still own see
men work long get here between both life being under never day same another know while last might us
great old year off come since against go came right used take three states himself few house use during
without again place american around however home small found thought went say part once general high upon
school every does got united left number course war until always away something fact though water less
public put think almost hand enough far took head yet government system better set told nothing night end
why called didn find going look asked later knew point next program city business give group toward young
days let room president side social present given several order national possible rather second face per
among form important often things looked early white case john become large big need four within felt
along children saw best church ever least power development light thing family interest want members mind
country area others done turned although open god service certain kind problem began different door thus
help sense means whole matter perhaps itself york times law human line above name example action company
hands local show whether five history gave today either act feet across taken past quite anything having
seen death experience body word half really week field car words already themselves information tell
""".split()
WORDS_CALIB = """market garden window river yellow coffee pencil summer winter bridge forest silver engine
mountain orange purple ticket station letter doctor island planet rocket dinner breakfast village castle
monday friday london paris berlin tokyo museum theatre airport harbour kitchen blanket pocket basket
jacket hammer ladder mirror pillow candle button cotton marble copper bronze crystal diamond falcon eagle
rabbit turtle monkey tiger lizard salmon shrimp lobster cherry banana lemon peach melon grape olive
pepper garlic ginger butter cheese yogurt bread pasta pizza salad soup sugar honey cookie muffin
circle square triangle sphere cube arrow anchor helmet shield sword spear bottle kettle teapot saucer
napkin fork spoon knife plate bowl cup glass tray shelf drawer closet attic cellar garage porch fence
gate path road street avenue lane highway tunnel canal valley desert jungle meadow prairie glacier
volcano canyon lagoon delta coast shore beach cliff cave""".split()


def random_token(rng, words):
    kind = rng.choice(["word", "word", "word", "Word", "WORD", "int", "dec", "price", "date", "code"])
    if kind in ("word", "Word", "WORD"):
        w = words[rng.integers(len(words))]
        return w if kind == "word" else (w.capitalize() if kind == "Word" else w.upper())
    if kind == "int":
        return str(rng.integers(0, 10 ** int(rng.integers(2, 7))))
    if kind == "dec":
        return f"{rng.uniform(0, 1000):.{int(rng.integers(1, 4))}f}"
    if kind == "price":
        return rng.choice(["$", "EUR ", "", "#"]) + f"{rng.uniform(1, 500):.2f}"
    if kind == "date":
        return f"{rng.integers(1990, 2030)}-{rng.integers(1, 13):02d}-{rng.integers(1, 29):02d}"
    alphabet = string.ascii_letters + string.digits          # mixed-case code, e.g. "aB3xQ9"
    return "".join(alphabet[i] for i in rng.integers(0, len(alphabet), int(rng.integers(4, 10))))


def random_text(rng, words):
    n_tokens = int(rng.choice([1, 2, 2, 3, 3, 4, 5]))
    text = " ".join(random_token(rng, words) for _ in range(n_tokens))
    if rng.random() < 0.2:
        text += rng.choice([".", ",", ":", "!", "?", ";"])
    return text[:40]


def random_colors(rng):
    dark = tuple(int(v) for v in rng.integers(0, 90, 3))
    light = tuple(int(v) for v in rng.integers(170, 256, 3))
    return (light, dark) if rng.random() < 0.15 else (dark, light)   # (text, background)


def render(rng, text, font_cache):
    """One text-line crop as a PIL RGB image, upright."""
    font_file = FONTS[rng.integers(len(FONTS))]
    size = int(rng.integers(16, 45))
    key = (font_file, size)
    if key not in font_cache:
        font_cache[key] = ImageFont.truetype(os.path.join(FONT_DIR, font_file), size)
    font = font_cache[key]
    fg, bg = random_colors(rng)
    x0, y0, x1, y1 = ImageDraw.Draw(Image.new("RGB", (1, 1))).textbbox((0, 0), text, font=font)
    pad = [int(v) for v in rng.integers(1, max(3, size // 3), 4)]   # left, top, right, bottom
    img = Image.new("RGB", (x1 - x0 + pad[0] + pad[2], y1 - y0 + pad[1] + pad[3]), bg)
    ImageDraw.Draw(img).text((pad[0] - x0, pad[1] - y0), text, font=font, fill=fg)
    if rng.random() < 0.5:
        img = img.filter(ImageFilter.GaussianBlur(float(rng.uniform(0.3, 1.0))))
    a = np.asarray(img, dtype=np.float32)
    a = a + rng.normal(0.0, float(rng.uniform(0.0, 8.0)), a.shape)
    return Image.fromarray(np.clip(a + 0.5, 0, 255).astype(np.uint8))


def make_set(n, seed, words):
    """n preprocessed samples, half upright and half rotated, in random order."""
    rng = np.random.default_rng(seed)
    labels = rng.permutation(np.arange(n, dtype=np.int64) % 2)
    x = np.zeros((n,) + common.CLS_SHAPE, dtype=np.float32)
    texts, font_cache = [], {}
    for i in range(n):
        text = random_text(rng, words)
        img = render(rng, text, font_cache)
        if labels[i] == 1:
            img = img.transpose(Image.Transpose.ROTATE_180)
        x[i] = common.preprocess(img)
        texts.append(text)
    return x, labels, texts


def main():
    ap = argparse.ArgumentParser(description="render the OCR direction-classifier data set")
    ap.add_argument("--out", required=True)
    ap.add_argument("--n-eval", type=int, default=1000)
    ap.add_argument("--n-calib", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--model", default=None, help="cls .onnx, for its input name (default: rapidocr's)")
    args = ap.parse_args()
    name = common.input_name(args.model or common.model_path())

    ev = os.path.join(args.out, "eval")
    os.makedirs(ev, exist_ok=True)
    x, labels, texts = make_set(args.n_eval, args.seed, WORDS_EVAL)
    np.save(os.path.join(ev, "x.npy"), x)
    np.save(os.path.join(ev, "labels.npy"), labels)
    with open(os.path.join(ev, "texts.txt"), "w") as f:
        f.writelines(f"{label}\t{t}\n" for label, t in zip(labels, texts))

    xc, _, _ = make_set(args.n_calib, args.seed + 1_000_003, WORDS_CALIB)
    for sub, count in (("calib", args.n_calib), ("calib_small", min(N_SMALL, args.n_calib))):
        d = os.path.join(args.out, sub)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        for k in range(count):
            np.save(os.path.join(d, f"{name}.{k}.npy"), xc[k:k + 1])
    print(f"{args.out}: eval {args.n_eval} ({int(labels.sum())} rotated), calib {args.n_calib}, "
          f"calib_small {min(N_SMALL, args.n_calib)}, input '{name}', seed {args.seed}")


if __name__ == "__main__":
    main()
