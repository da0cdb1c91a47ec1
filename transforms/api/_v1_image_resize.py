"""TF1's image resizing, which TF2's `tf.image.resize` computes differently, and the TF2 code that
computes it as TF1 did (TFM109).

TF1's `tf.image.resize_bilinear`, `resize_nearest_neighbor`, `resize_bicubic` and `resize_area` were
the kernels themselves, called with TF1's defaults: no half-pixel centers. TF2's `tf.image.resize`
samples at half-pixel centers, so the same call gives other values. `tf.raw_ops` still exposes the
kernels, with every TF1 argument: RAW_OPS maps each function to its kernel and parameters.

`tf.image.resize_images` also resized a 3-D image as a batch of one, and returned images whose static
size already was `size` without resizing them (keeping their dtype). RESIZE_IMAGES_SOURCE does the
same on TF2 API. Its checks read static shapes, as TF1's did when the graph was built: code traced with
unknown sizes resizes, eager code whose sizes are known may skip, as TF1 code with known shapes did.
"""
from __future__ import annotations

_AREA_PARAMETERS = ("images", "size", "align_corners", "name")
_SAMPLING_PARAMETERS = (*_AREA_PARAMETERS, "half_pixel_centers")
# v1 function -> (tf.raw_ops kernel, the v1 function's parameters in order)
RAW_OPS = {
    "tf.image.resize_bilinear": ("ResizeBilinear", _SAMPLING_PARAMETERS),
    "tf.image.resize_nearest_neighbor": ("ResizeNearestNeighbor", _SAMPLING_PARAMETERS),
    "tf.image.resize_bicubic": ("ResizeBicubic", _SAMPLING_PARAMETERS),
    "tf.image.resize_area": ("ResizeArea", _AREA_PARAMETERS),
}

RESIZE_IMAGES = "tf.image.resize_images"
RESIZE_IMAGES_HELPER = "tf1_resize_images"
RESIZE_IMAGES_SIGNATURE = ("images", "size", "method", "align_corners", "preserve_aspect_ratio", "name")

RESIZE_IMAGES_SOURCE = '''
def tf1_resize_images(images, size, method=0, align_corners=False, preserve_aspect_ratio=False, name=None):
    """tf.image.resize_images as TF 1.x computed it: TF1's kernels (no half-pixel centers), a 3-D image
    resized as a batch of one, images whose static size is already `size` returned as they are."""
    if preserve_aspect_ratio:
        raise ValueError("tf1_resize_images does not model preserve_aspect_ratio=True")
    with tf.name_scope(name or "resize"):
        images = tf.convert_to_tensor(images, name="images")
        if images.shape.rank not in (3, 4):
            raise ValueError("'images' must have either 3 or 4 dimensions.")
        is_batch = images.shape.rank == 4
        if not is_batch:
            images = tf.expand_dims(images, 0)
        size = tf.convert_to_tensor(size, tf.int32, name="size")
        new_size = tf.get_static_value(size)
        new_height, new_width = (None, None) if new_size is None else (int(new_size[0]), int(new_size[1]))
        if images.shape[1] is not None and (images.shape[1], images.shape[2]) == (new_height, new_width):
            return images if is_batch else tf.squeeze(images, axis=[0])
        if method in (0, "bilinear"):
            images = tf.raw_ops.ResizeBilinear(images=images, size=size, align_corners=align_corners)
        elif method in (1, "nearest"):
            images = tf.raw_ops.ResizeNearestNeighbor(images=images, size=size, align_corners=align_corners)
        elif method in (2, "bicubic"):
            images = tf.raw_ops.ResizeBicubic(images=images, size=size, align_corners=align_corners)
        elif method in (3, "area"):
            images = tf.raw_ops.ResizeArea(images=images, size=size, align_corners=align_corners)
        else:
            raise ValueError("Resize method is not implemented: {}".format(method))
        images.set_shape([None, new_height, new_width, None])
        return images if is_batch else tf.squeeze(images, axis=[0])
'''
