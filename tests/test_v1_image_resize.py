"""What TFM109 writes computes what TF1's resizing computed: TF's own v1 functions, still shipped as
tf.compat.v1.image.*, are the reference, called on the same images eagerly and in a function traced
with unknown sizes (as TF1 graphs built from placeholders had them)."""
from __future__ import annotations

import json
import subprocess
import sys

from transforms.api._v1_image_resize import RAW_OPS, RESIZE_IMAGES_SOURCE

CHECK = """
import json
import numpy as np
import tensorflow as tf
exec(HELPER, globals())

rng = np.random.RandomState(0)
images = {"float 4-D": rng.rand(2, 9, 7, 3).astype(np.float32),
          "uint8 3-D": rng.randint(0, 255, size=(9, 7, 3)).astype(np.uint8)}
sizes = ([18, 14], [9, 7], [5, 4])
checked, worst = 0, 0.0


def compare(ours, theirs):
    global checked, worst
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape, (ours.dtype, theirs.dtype, ours.shape)
    worst = max(worst, float(np.max(np.abs(ours.astype(np.float64) - theirs.astype(np.float64)))))
    checked += 1


for label, image in images.items():
    unknown = tf.TensorSpec([None] * image.ndim, tf.as_dtype(image.dtype))
    for size in sizes:
        for method in (0, 1, 2, 3, tf.image.ResizeMethod.NEAREST_NEIGHBOR):
            for corners in (False, True):
                if corners and method == 3:
                    continue
                options = dict(method=method, align_corners=corners)
                reference = tf.compat.v1.image.resize_images(image, size, **options)
                compare(tf1_resize_images(image, size, **options), reference)
                traced = tf.function(lambda x: tf1_resize_images(x, size, **options), input_signature=[unknown])
                reference_traced = tf.function(lambda x: tf.compat.v1.image.resize_images(x, size, **options),
                                               input_signature=[unknown])
                compare(traced(image), reference_traced(image))
    for function, (kernel, _) in RAW_OPS.items():
        v1 = getattr(tf.compat.v1.image, function.rsplit(".", 1)[1])
        batch = image if image.ndim == 4 else image[None]
        compare(getattr(tf.raw_ops, kernel)(images=batch, size=[13, 5]), v1(batch, [13, 5]))
print(json.dumps({"checked": checked, "worst": worst}))
"""


def test_resize_emulations_compute_what_tf1_computed():
    script = f"HELPER = {RESIZE_IMAGES_SOURCE!r}\nRAW_OPS = {RAW_OPS!r}\n" + CHECK
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["checked"] == 2 * 3 * 9 * 2 + 2 * 4
    assert result["worst"] == 0.0
