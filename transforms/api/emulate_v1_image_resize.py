"""TFM109: TF1's image resizing -> the same kernels through TF2 API (transforms/api/_v1_image_resize.py).

`tf.image.resize_bilinear(images, size)` becomes `tf.raw_ops.ResizeBilinear(images=images, size=size)`
(and likewise for nearest-neighbor, bicubic and area): the kernel the v1 function called, with its
arguments as keywords. `tf.image.resize_images(images, size, method=...)` becomes
`tf1_resize_images(...)`, defined in the file. Renaming them to TF2's `tf.image.resize` would change
the values (half-pixel centers), and TFM101 would otherwise keep them on tf.compat.v1. A call passing
*args / **kwargs, or `preserve_aspect_ratio=` other than False, is left to TFM101 with the reason.
"""
from __future__ import annotations

import libcst as cst
from libcst.metadata import PositionProvider, QualifiedNameProvider

from transforms.api._v1_image_resize import (RAW_OPS, RESIZE_IMAGES, RESIZE_IMAGES_HELPER, RESIZE_IMAGES_SIGNATURE,
                                             RESIZE_IMAGES_SOURCE)
from transforms.base import TFTransform
from transforms.common.imports import position_after_imports
from transforms.common.inserted_code import insert_definitions, parsed_definitions
from transforms.common.qualnames import tensorflow_alias
from transforms.common.syntax import Refusal, bind_arguments, code, keyword_arg


class EmulateV1ImageResize(TFTransform):
    CODE = "TFM109"
    DESCRIPTION = ("TF1's image resizing (resize_images, resize_bilinear, ...) -> TF1's kernels through "
                   "tf.raw_ops, not tf.image.resize, which samples at half-pixel centers")
    SAFETY = "safe"
    PHASE = 49  # after TFM201 and the contrib emulations, before the renames
    TRIGGERS = ("resize_",)
    IDENTIFIERS = frozenset(name.rsplit(".", 1)[1] for name in [*RAW_OPS, RESIZE_IMAGES])

    METADATA_DEPENDENCIES = (QualifiedNameProvider, PositionProvider)

    def visit_Module(self, node: cst.Module) -> None:
        self.tf = tensorflow_alias(node)
        self.defined = {statement.name.value for statement in node.body
                        if isinstance(statement, (cst.FunctionDef, cst.ClassDef))}
        self.helper_used = False

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        name = self.tf_name(original.func)
        if name not in RAW_OPS and name != RESIZE_IMAGES:
            return updated
        try:
            replacement = self._replacement(name, original, updated)
        except Refusal as refusal:
            self.report(refusal.node or original, f"{name} left on tf.compat.v1: {refusal.message}", fixed=False,
                        severity="info")
            return updated
        if name == RESIZE_IMAGES:
            self.helper_used = True
            self.report(original, f"{name} -> {RESIZE_IMAGES_HELPER}(), defined in this file: TF1's kernels (not "
                        "tf.image.resize, which samples at half-pixel centers), 3-D images and images already "
                        "of the size as TF1 handled them", fixed=True)
        else:
            self.report(original, f"{name} -> tf.raw_ops.{RAW_OPS[name][0]}, the kernel TF1's function called "
                        "(tf.image.resize samples at half-pixel centers, so its values differ)", fixed=True)
        return replacement

    def _replacement(self, name: str, original: cst.Call, updated: cst.Call) -> cst.Call:
        if self.tf is None:
            raise Refusal(original, "the module does not import tensorflow under a name the rewrite can use")
        if name == RESIZE_IMAGES:
            bound = bind_arguments(original, list(RESIZE_IMAGES_SIGNATURE), name)
            aspect = bound.get("preserve_aspect_ratio")
            if aspect is not None and code(aspect) != "False":
                raise Refusal(aspect, "preserve_aspect_ratio= is not modelled")
            if RESIZE_IMAGES_HELPER in self.defined:
                raise Refusal(original, f"the file already defines {RESIZE_IMAGES_HELPER}")
            return updated.with_changes(func=cst.Name(RESIZE_IMAGES_HELPER))
        kernel, signature = RAW_OPS[name]
        bind_arguments(original, list(signature), name)  # refuses *args and unknown keywords
        arguments = [keyword_arg(arg.keyword.value if arg.keyword else signature[index], arg.value).with_changes(
                         comma=arg.comma) for index, arg in enumerate(updated.args)]
        return updated.with_changes(func=cst.parse_expression(f"{self.tf}.raw_ops.{kernel}"), args=arguments)

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        if not self.helper_used:
            return updated
        body = list(updated.body)
        helpers = parsed_definitions([RESIZE_IMAGES_SOURCE], self.tf)
        return updated.with_changes(body=insert_definitions(body, position_after_imports(body), helpers))
