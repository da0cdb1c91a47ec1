"""TFM601: TF1's MNIST tutorial loader -> `read_mnist_data_sets`, the same loader on TF2 APIs,
defined in the file.

    from tensorflow.examples.tutorials.mnist import input_data         (import removed)
    mnist = input_data.read_data_sets("MNIST_data/", one_hot=True)  ->  mnist = read_mnist_data_sets("MNIST_data/", one_hot=True)

TensorFlow 2 ships neither `tensorflow.examples.tutorials.mnist.input_data` nor
`tensorflow.contrib.learn.python.learn.datasets.mnist`, which tutorials and research code load MNIST
with. The helper (transforms/datasets/_mnist_emulation.py) reads the same files into the same arrays
and batches, including TF1's re-seeding of NumPy's global random state when the data sets are built:
with the call's `seed`, else with the graph-level seed set before the call. That seed is passed as
`global_seed=` when a single module-level `tf.set_random_seed(...)` statement comes before a
module-level call; a seed set anywhere else is reported, since the order of the two is not known here.

Left alone, with the reason: a call asking for `fake_data=True` (a flag is passed on: the loader raises
when it is set), and files that use other parts of those
modules (`input_data.DataSet`, `extract_images`, ...).
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import libcst as cst
from libcst.metadata import ParentNodeProvider, PositionProvider, QualifiedNameProvider

from transforms.base import TFTransform
from transforms.common.imports import position_after_imports
from transforms.common.inserted_code import insert_definitions, parsed_definitions
from transforms.common.qualnames import canonical_tf_name, dotted_name, tensorflow_alias
from transforms.common.syntax import Refusal, bind_arguments, code, is_literal, keyword_arg, walk

HELPER = "read_mnist_data_sets"
LOADERS = frozenset({
    "tf.examples.tutorials.mnist.input_data.read_data_sets",
    "tf.contrib.learn.python.learn.datasets.mnist.read_data_sets",
    "tf.contrib.learn.datasets.mnist.read_data_sets",
})
LOADER_MODULES = ("tf.examples.tutorials.mnist", "tf.contrib.learn.python.learn.datasets.mnist",
                  "tf.contrib.learn.datasets.mnist")
SEED_SETTERS = frozenset({"tf.set_random_seed", "tf.random.set_random_seed", "tf.compat.v1.set_random_seed",
                          "tf.compat.v1.random.set_random_seed", "tf.random.set_seed"})
TF1_SIGNATURE = ["train_dir", "fake_data", "one_hot", "dtype", "reshape", "validation_size", "seed", "source_url"]
HELPER_IMPORTS = ("collections", "gzip", "os", "tempfile", "urllib.request", "numpy")


@lru_cache(maxsize=1)
def emulation_source() -> str:
    """The helper's definitions: _mnist_emulation.py below its imports."""
    module = cst.parse_module((Path(__file__).with_name("_mnist_emulation.py")).read_text(encoding="utf-8"))
    return cst.Module(body=module.body[position_after_imports(list(module.body)):]).code


class EmulateTutorialMnist(TFTransform):
    CODE = "TFM601"
    DESCRIPTION = "TF1's MNIST tutorial loader (input_data.read_data_sets) -> the same loader on TF2 APIs, defined in the file"
    SAFETY = "safe"
    PHASE = 44  # after TFM201 read the program (the loader is plain Python to it), before the renames
    TRIGGERS = ("read_data_sets",)

    METADATA_DEPENDENCIES = (QualifiedNameProvider, PositionProvider, ParentNodeProvider)

    def visit_Module(self, node: cst.Module) -> None:
        self.tf = tensorflow_alias(node)
        calls = [(n, self.tf_name(n.func)) for n in walk(node) if isinstance(n, cst.Call)]
        self.calls = [call for call, name in calls if name in LOADERS]
        self.seed_calls = [call for call, name in calls if name in SEED_SETTERS]
        self.arguments: dict[int, list[cst.Arg]] = {}
        self.refusal: Refusal | None = None
        if not self.calls:
            self.replaced = False
            return
        try:
            self._check_file(node)
            self.arguments = {id(call): self._arguments(call) for call in self.calls}
        except Refusal as refusal:
            self.refusal = refusal
        self.replaced = bool(self.arguments)

    def _check_file(self, module: cst.Module) -> None:
        """Raise Refusal when the file uses more of the loader modules than the helper, or has its names."""
        defined = {n.name.value for n in module.body if isinstance(n, (cst.FunctionDef, cst.ClassDef))}
        clashes = sorted(defined & {HELPER, "MnistDataSet"})
        if clashes:
            raise Refusal(self.calls[0], f"the file already defines {clashes[0]}")
        nodes = list(walk(module))
        expected = {id(node) for call in self.calls for node in walk(call.func)}  # the calls, and imports:
        expected |= {id(node) for statement in nodes if isinstance(statement, (cst.Import, cst.ImportFrom))
                     for node in walk(statement)}  # removed with the last call
        for node in nodes:
            if isinstance(node, (cst.Name, cst.Attribute)) and id(node) not in expected \
                    and _in_loader_module(self.tf_name(node)):
                raise Refusal(node, f"{self.tf_name(node)} is not part of the emulated loader")

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if not any(original is call for call in self.calls):
            return updated
        if self.refusal is not None:
            self.report(self.refusal.node or original, f"MNIST tutorial loader not emulated: {self.refusal.message}; "
                        "TensorFlow 2 does not have it", fixed=False, severity="error")
            return updated
        self.report(original, f"{self.tf_name(original.func)} -> {HELPER}(), defined in this file: TF1's loader "
                    "on TF2 APIs (same files, arrays, batches and NumPy re-seeding)", fixed=True)
        return updated.with_changes(func=cst.Name(HELPER), args=self.arguments[id(original)])

    def _arguments(self, call: cst.Call) -> list[cst.Arg]:
        """The call's arguments for the helper: as they were, but `fake_data` (which must be false)
        left out and the arguments after it passed by keyword, plus the graph-level seed."""
        bound = bind_arguments(call, TF1_SIGNATURE, "read_data_sets")
        if "train_dir" not in bound:
            raise Refusal(call, "read_data_sets() without a folder")
        fake_data = bound.pop("fake_data", None)
        if fake_data is not None and code(fake_data) == "True":
            raise Refusal(fake_data, "fake_data=True asks for TF1's fake images")
        if all(arg.keyword is not None for arg in call.args[1:]):
            arguments = [arg for arg in call.args if not (arg.keyword and arg.keyword.value == "fake_data")]
        else:
            arguments = [cst.Arg(bound.pop("train_dir"))]
            arguments += [keyword_arg(name, value) for name, value in bound.items()]
        if fake_data is not None and code(fake_data) != "False":  # a flag (TF's tutorials): raises when set
            arguments.append(keyword_arg("fake_data", fake_data))
        seed = self._global_seed(call)
        if seed is not None:
            arguments.append(keyword_arg("global_seed", seed))
        return _separated(arguments)

    def _global_seed(self, call: cst.Call) -> cst.BaseExpression | None:
        """The graph-level seed in force when TF1 ran the call, when the code shows it; otherwise None,
        and a finding when the program sets one somewhere."""
        if not self.seed_calls:
            return None
        seed_call = self.seed_calls[0]
        if len(self.seed_calls) == 1 and seed_call.args and seed_call.args[0].keyword is None \
                and self._at_module_level(seed_call) and self._at_module_level(call) \
                and self._line(seed_call) < self._line(call) \
                and (is_literal(seed_call.args[0].value) or isinstance(seed_call.args[0].value, cst.Name)):
            return seed_call.args[0].value
        self.report(call, f"TF1's loader re-seeded NumPy with the graph-level seed, which the program sets with "
                    f"`{code(seed_call)}`; whether that runs before this call is not known here, so "
                    "NumPy is re-seeded with the call's seed (or from the system): pass global_seed= if the "
                    "graph seed was set first", fixed=False, severity="warning")
        return None

    def _at_module_level(self, node: cst.CSTNode) -> bool:
        """`node` is in a statement of the module body, or of `with` blocks there (which run their body
        once, in order), not in a function, loop or conditional block."""
        parent = self.get_metadata(ParentNodeProvider, node, None)
        while parent is not None and not isinstance(parent, cst.SimpleStatementLine):
            parent = self.get_metadata(ParentNodeProvider, parent, None)
        parent = self.get_metadata(ParentNodeProvider, parent, None) if parent is not None else None
        while isinstance(parent, cst.IndentedBlock) and isinstance(
                block := self.get_metadata(ParentNodeProvider, parent, None), cst.With):
            parent = self.get_metadata(ParentNodeProvider, block, None)
        return isinstance(parent, cst.Module)

    def _line(self, node: cst.CSTNode) -> int:
        return self.get_metadata(PositionProvider, node).start.line

    def leave_ImportFrom(self, original: cst.ImportFrom, updated: cst.ImportFrom):
        if isinstance(updated.names, cst.ImportStar) or updated.module is None:
            return updated
        module = dotted_name(updated.module)
        return self._without_loader_aliases(updated, lambda alias: f"{module}.{dotted_name(alias.name)}")

    def leave_Import(self, original: cst.Import, updated: cst.Import):
        return self._without_loader_aliases(updated, lambda alias: dotted_name(alias.name))

    def _without_loader_aliases(self, statement, imported):
        """The import without the names of the loader modules (removed when nothing else is left)."""
        if not self.replaced:
            return statement
        kept = [alias for alias in statement.names if not _in_loader_module(canonical_tf_name(imported(alias)))]
        if len(kept) == len(statement.names):
            return statement
        if not kept:
            return cst.RemoveFromParent()
        return statement.with_changes(names=[*kept[:-1], kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)])

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        if not self.replaced:
            return updated
        if self.tf is None:
            self.add_import("tensorflow", asname="tf")
        for module in HELPER_IMPORTS:
            self.add_import(module)
        body = list(updated.body)
        helpers = parsed_definitions([emulation_source()], self.tf or "tf")
        return updated.with_changes(body=insert_definitions(body, position_after_imports(body), helpers))


def _in_loader_module(name: str | None) -> bool:
    return name is not None and any(name == module or name.startswith(module + ".") for module in LOADER_MODULES)


def _separated(arguments: list[cst.Arg]) -> list[cst.Arg]:
    """Arguments with a comma after each but the last (kept ones keep theirs)."""
    comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    separated = [a if isinstance(a.comma, cst.Comma) else a.with_changes(comma=comma) for a in arguments[:-1]]
    return separated + [argument.with_changes(comma=cst.MaybeSentinel.DEFAULT) for argument in arguments[-1:]]

