"""The base class every tf-migrate transform derives from.

A transform is a libcst `CSTTransformer` with a little metadata (code, description, fix safety,
phase) and helpers to resolve TensorFlow symbols by qualified name, record findings and add imports.
It mirrors the surface of libcst's `VisitorBasedCodemodCommand` (a `context` with `scratch`,
`transform_module`, `SkipFile`) without importing `libcst.codemod`, whose import of `libcst.matchers`
alone costs about half a second of start-up: `tf-migrate diff` on one file must stay well under that.
Transforms never import TensorFlow either.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Literal

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider, QualifiedNameProvider

from migrate.findings import Finding, Severity
from transforms.common import read_only_visit
from transforms.common.pruning import SubtreeTypes, hooked_types, subtree_types
from transforms.common.syntax import children, code_identifiers
from transforms.common.dispatch import FastDispatch
from transforms.common.imports import ImportRequest, add_imports
from transforms.common.lazy_metadata import LazyMetadataWrapper, may_name_tensorflow, positions_known
from transforms.common.qualnames import canonical_tf_name, module_aliases, unaliased

read_only_visit.install()

FINDINGS_KEY = "tf_migrate.findings"
RUN_SITES_KEY = "tf_migrate.run_sites"
IMPORTS_KEY = "tf_migrate.imports"
MOVED_KEY = "tf_migrate.moved"  # (node of a transform's output, line of its input it stands for)

Safety = Literal["safe", "unsafe"]


@dataclass
class TransformContext:
    """State shared by the transforms that run over one file."""

    filename: str = "<string>"
    scratch: dict[str, Any] = field(default_factory=dict)


class SkipFile(Exception):
    """Raised by a transform to leave the whole file as it is (the message says why)."""


class TFTransform(FastDispatch, cst.CSTTransformer):
    """Base for all transforms. Subclasses set the class attributes below and override visitors (found
    once per node type, see transforms/common/dispatch.py)."""

    #: Unique code, `TFM` + three digits; the hundreds digit is the family (see transforms/README.md).
    CODE: ClassVar[str] = ""
    #: One line, shown by `tf-migrate list`.
    DESCRIPTION: ClassVar[str] = ""
    #: "safe": never changes behaviour. "unsafe": may change behaviour in corner cases; off unless selected.
    SAFETY: ClassVar[Safety] = "safe"
    #: Transforms run in ascending phase: structural rewrites (10-49) before renames (50+).
    PHASE: ClassVar[int] = 50

    METADATA_DEPENDENCIES = (QualifiedNameProvider, PositionProvider)

    def __init__(self, context: TransformContext) -> None:
        super().__init__()
        self.context = context
        self._subtrees: SubtreeTypes | None = None
        self._hooked, self._leaving = hooked_types(type(self))
        self._changed = True
        self._unplaced: list[tuple[int, cst.CSTNode]] | None = None  # a list during the instance's own pass
        context.scratch.setdefault(FINDINGS_KEY, [])

    #: Cheap pre-check: when set, the transform runs only on code whose text contains one of these.
    TRIGGERS: ClassVar[tuple[str, ...]] = ()

    #: For a transform that does nothing (and reports nothing) unless a setting is on: the setting's
    #: name and the values that turn it on. The default of every setting is "off".
    ENABLED_BY: ClassVar[tuple[str, tuple[str, ...]] | None] = None

    #: Stricter than TRIGGERS where it holds: the transform runs only on code that uses one of these
    #: identifiers (as a name, an attribute or in an import; see code_identifiers).
    IDENTIFIERS: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def applies_to(cls, code: str) -> bool:
        """False only when the transform provably has nothing to do (or report) in `code`."""
        if cls.TRIGGERS and not any(trigger in code for trigger in cls.TRIGGERS):
            return False
        if not cls.IDENTIFIERS:
            return True
        identifiers = code_identifiers(code)
        return identifiers is None or not identifiers.isdisjoint(cls.IDENTIFIERS)

    @classmethod
    def enabled(cls, settings: Mapping[str, str]) -> bool:
        """False when the transform is off under these settings (it would do and report nothing)."""
        if cls.ENABLED_BY is None:
            return True
        name, values = cls.ENABLED_BY
        return settings.get(name, "off") in values

    def transform_module(self, module: cst.Module) -> cst.Module:
        """Run this transform over `module` (and add the imports it asked for)."""
        return self.transform_wrapper(LazyMetadataWrapper(module))

    def transform_wrapper(self, wrapper: MetadataWrapper) -> cst.Module:
        """Run this transform over `wrapper.module`, reusing metadata the wrapper already resolved
        (the runner shares one wrapper across transforms until one of them changes the code).

        Returns `wrapper.module` itself when the transform changed nothing, so that the caller can
        tell without generating the code (see transforms/common/pruning.py)."""
        self._start_pass(wrapper, pruned=self._dispatches_by_hooks())
        try:
            result = wrapper.visit(self)
        except SkipFile:
            return wrapper.module
        finally:
            self._subtrees = None
            self._place_findings(wrapper)
        requests = self.context.scratch.pop(IMPORTS_KEY)
        if requests:
            return add_imports(result, requests)
        return result if self._changed else wrapper.module

    # -- traversal ---------------------------------------------------------------------------------

    def _start_pass(self, wrapper: MetadataWrapper, pruned: bool) -> None:
        """The state a walk over `wrapper.module` starts from (`pruned`: skipping what no hook reaches)."""
        self.context.scratch[IMPORTS_KEY] = []
        self._unplaced = []
        self._module, self._aliases = wrapper.module, None
        self._subtrees = subtree_types(wrapper.module) if pruned else None
        self._changed = not pruned

    @classmethod
    def _dispatches_by_hooks(cls) -> bool:
        """Whether the transform acts only through its visit_/leave_ hooks (none overrides the
        generic on_visit/on_leave), so that the pass may skip what no hook can reach."""
        return all(getattr(cls, name) is getattr(TFTransform, name)
                   for name in ("on_visit", "on_leave", "on_visit_attribute", "on_leave_attribute"))

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self._subtrees is None:
            return super().on_visit(node)
        types = self._subtrees.of(node)
        if types is None or types & self._leaving:
            return super().on_visit(node)
        if types & self._hooked:
            self._visit_only(node)
        return False

    def visit_only(self, module: cst.Module) -> None:
        """Call the visit_ hooks over `module` in libcst's order, changing nothing (for a transform
        whose visit_ hooks decide what its pass would do; metadata must be resolved)."""
        self._visit_only(module)

    def _visit_only(self, node: cst.CSTNode) -> None:
        """The visit_ hooks of `node`'s subtree, in libcst's order, without rebuilding it."""
        if super().on_visit(node):
            for child in children(node):
                if self._subtrees.of(child) & self._hooked:
                    self._visit_only(child)

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode) -> object:
        result = super().on_leave(original_node, updated_node)
        if result is not updated_node:
            self._changed = True
        return result

    # -- symbol resolution -------------------------------------------------------------------------

    def tf_names(self, node: cst.CSTNode) -> set[str]:
        """Canonical `tf.`-names that `node` may refer to (empty if none is TensorFlow's), following
        module-level aliases such as `flags = tf.app.flags` or `relu = tf.nn.relu`."""
        if not may_name_tensorflow(self, node):
            return set()
        qualified = self.get_metadata(QualifiedNameProvider, node, set())
        names = {canonical_tf_name(q.name) or self._through_alias(q.name) for q in qualified}
        return {name for name in names if name}

    def qualified_names(self, node: cst.CSTNode) -> set[str]:
        """Every qualified name `node` may refer to (TensorFlow's or not), as libcst resolves them."""
        return {q.name for q in self.get_metadata(QualifiedNameProvider, node, set())}

    def _through_alias(self, qualified_name: str) -> str | None:
        if self._aliases is None:
            self._aliases = module_aliases(self._module, self._canonical_of)
        head, _, rest = qualified_name.partition(".")
        target = self._aliases.get(head)
        return None if target is None else unaliased(f"{target}.{rest}" if rest else target)

    def _canonical_of(self, node: cst.CSTNode) -> str | None:
        if not may_name_tensorflow(self, node):
            return None
        names = {canonical_tf_name(q.name) for q in self.get_metadata(QualifiedNameProvider, node, set())}
        names.discard(None)
        return next(iter(names)) if len(names) == 1 else None

    def tf_name(self, node: cst.CSTNode) -> str | None:
        """The single canonical TF name of `node`, or None when it has none or is ambiguous."""
        names = self.tf_names(node)
        return next(iter(names)) if len(names) == 1 else None

    # -- findings and imports ----------------------------------------------------------------------

    def report(self, node: cst.CSTNode, message: str, *, fixed: bool,
               severity: Severity = "info", code: str | None = None) -> None:
        """Record a finding at `node`'s position in the module this transform is visiting (line and
        column 0 for a node that is not in it). In the transform's own pass the position is filled in
        when the pass ends, for all its findings at once (an instance that a transform runs on another
        module, resolved by hand, places each finding at once)."""
        findings = self.context.scratch[FINDINGS_KEY]
        findings.append(Finding(code or self.CODE, 0, 0, severity, message, fixed))
        if self._unplaced is not None:
            self._unplaced.append((len(findings) - 1, node))
        else:
            self._place(len(findings) - 1, self.get_metadata(PositionProvider, node, None))

    def _place_findings(self, wrapper: MetadataWrapper) -> None:
        """Give this pass's findings their nodes' positions, found together (see positions_known)."""
        unplaced, self._unplaced = self._unplaced or [], None
        if unplaced:
            positions = positions_known(wrapper, [node for _, node in unplaced])
            for index, node in unplaced:
                self._place(index, positions.get(node))

    def _place(self, index: int, position: CodeRange | None) -> None:
        if position is not None:
            findings = self.context.scratch[FINDINGS_KEY]
            findings[index] = replace(findings[index], line=position.start.line, col=position.start.column + 1)

    def moved_from(self, node: cst.CSTNode, origin: cst.CSTNode) -> None:
        """Say that `node`, made by this pass, is `origin` of the module it visits, moved or copied:
        the findings and run sites a later transform reports at its line then name `origin`'s line
        (the line the user wrote), not the start of the region this pass rewrote."""
        line = self.get_metadata(PositionProvider, origin).start.line
        self.context.scratch.setdefault(MOVED_KEY, []).append((node, line))

    def add_import(self, module: str, name: str | None = None, asname: str | None = None) -> None:
        """Ask for `import module [as asname]` or `from module import name [as asname]` once the
        transform is done (nothing is added when the file already has it)."""
        self.context.scratch[IMPORTS_KEY].append(ImportRequest(module, name, asname))

    @classmethod
    def summary(cls) -> dict[str, str]:
        return {"code": cls.CODE, "name": cls.__module__.rsplit(".", 1)[-1],
                "description": cls.DESCRIPTION, "safety": cls.SAFETY}
