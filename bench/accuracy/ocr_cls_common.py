# ocr_cls_common.py - what the OCR direction-classifier scripts share: where the PP-OCR models of the
# rapidocr_onnxruntime package are (found without importing it: its __init__ needs opencv, which we do
# not install) and the classifier's preprocessing, reimplemented from
# rapidocr_onnxruntime/ch_ppocr_cls/text_cls.py (TextClassifier.resize_norm_img) with Pillow + numpy.
#
# Differences from text_cls.py, which uses cv2:
# - resize: Pillow's BILINEAR instead of cv2.resize's INTER_LINEAR. Both sample at pixel centres, but
#   Pillow widens the filter when it shrinks (antialiasing) and computes in float, while cv2 samples the
#   two nearest pixels with 11-bit fixed-point weights; the images differ by a few grey levels at most.
# - channel order: the images handed to PP-OCR come from cv2.imread (BGR), so the rendered RGB image is
#   flipped to BGR before normalising, as the model saw in training.
import importlib.util
import math
import os

import numpy as np
from PIL import Image

CLS_SHAPE = (3, 48, 192)          # config.yaml Cls.cls_image_shape
LABELS = ("0", "180")             # config.yaml Cls.label_list: index 1 = upside down
CLS_MODEL = "ch_ppocr_mobile_v2.0_cls_infer.onnx"
REC_MODEL = "ch_PP-OCRv4_rec_infer.onnx"


def model_path(name=CLS_MODEL):
    """Path of one of the .onnx models shipped in the rapidocr_onnxruntime package."""
    spec = importlib.util.find_spec("rapidocr_onnxruntime")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("rapidocr_onnxruntime is not installed (make venv installs it with --no-deps)")
    path = os.path.join(list(spec.submodule_search_locations)[0], "models", name)
    if not os.path.isfile(path):
        raise SystemExit(f"{path}: missing")
    return path


def input_name(onnx_path):
    """The model's (single) graph input name, read from the ONNX file."""
    import onnx
    model = onnx.load(onnx_path, load_external_data=False)
    inits = {i.name for i in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in inits]
    if len(names) != 1:
        raise SystemExit(f"{onnx_path}: expected one input, found {names}")
    return names[0]


def preprocess(img):
    """PIL RGB image of one text line -> float32 [3, 48, 192], as TextClassifier.resize_norm_img."""
    c, h, w = CLS_SHAPE
    ratio = img.width / float(img.height)
    resized_w = w if math.ceil(h * ratio) > w else int(math.ceil(h * ratio))
    resized = img.convert("RGB").resize((resized_w, h), Image.Resampling.BILINEAR)
    a = np.asarray(resized, dtype=np.float32)[:, :, ::-1]        # RGB -> BGR (cv2 order)
    a = a.transpose(2, 0, 1) / 255.0
    a = (a - 0.5) / 0.5
    out = np.zeros((c, h, w), dtype=np.float32)
    out[:, :, :resized_w] = a
    return out
