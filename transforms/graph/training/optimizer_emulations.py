"""The TF1-emulating optimizer classes a converted program constructs (tf1_optimizer_classes.py),
written into the module after the import of TensorFlow, with one finding per emulated optimizer."""
from __future__ import annotations

import libcst as cst

from transforms.common.imports import position_after_imports
from transforms.common.inserted_code import (after_blank_lines, insert_definitions, parsed_definitions,
                                             top_level_definitions)
from transforms.common.syntax import Refusal, walk
from transforms.graph.training.tf1_optimizer_classes import BASE_CLASS, CLASSES, class_sources


def with_emulating_optimizers(program, module: cst.Module, emulated: dict[str, tuple[cst.Call, str, str]]) -> cst.Module:
    """`module` with the classes the optimizers in `emulated` (name -> TF1 call, TF1 name, class) use."""
    if not emulated:
        return module
    classes = [name for _, _, name in emulated.values()]
    taken = top_level_definitions(module) & {BASE_CLASS, *classes}
    if taken:
        call = next(iter(emulated.values()))[0]
        raise Refusal(call, f"the file already defines {', '.join(sorted(taken))}, the name of an optimizer "
                            "class the conversion writes")
    for call, tf_name, name in emulated.values():
        program.transform.report(call, f"{tf_name} -> {name}, a Keras optimizer defined in this file that runs "
                                 f"{CLASSES[name].what}: the same updates as TF1", fixed=True)
    definitions = [after_blank_lines(statement) for statement in parsed_definitions(class_sources(classes))]
    body = list(module.body)
    return module.with_changes(body=insert_definitions(body, _after_tensorflow_import(body), definitions))


def _after_tensorflow_import(body: list[cst.BaseStatement]) -> int:
    """After the leading imports, or after the top-level statement binding `tf` when that comes later
    (the classes' base is `tf.keras.optimizers.Optimizer`, read when they are defined)."""
    position = position_after_imports(body)
    for index, statement in enumerate(body):
        if index >= position and any(_binds_tf(node) for node in walk(statement)):
            position = index + 1
    return position


def _binds_tf(node: cst.CSTNode) -> bool:
    if not isinstance(node, (cst.Import, cst.ImportFrom)) or isinstance(node.names, cst.ImportStar):
        return False
    return any((alias.asname.name.value if alias.asname else alias.name.value) == "tf"
               for alias in node.names if isinstance(alias.asname.name if alias.asname else alias.name, cst.Name))
