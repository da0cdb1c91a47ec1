"""Migrate one file: a pure function of (path, options) that returns a FileResult and never raises.

Every rewrite is checked before it is offered: the output must parse, and migrating it again must
change nothing. A file that fails either check is reported as failed and left untouched.
"""
from __future__ import annotations

import difflib
import traceback
from dataclasses import dataclass, replace

import libcst as cst

from migrate.budget import BudgetExceeded, check_parse, checkpoint, enforced
from migrate.family_sites import family_counts
from migrate.findings import FileResult, Finding
from migrate.levels import classify
from migrate.options import DEFAULT_MAX_BYTES, Budget, Options, unreadable_reason
from migrate.sourcefile import SourceError, decode_python, describe_parse_error, syntax_problem
from transforms import selected_transforms
from transforms.base import FINDINGS_KEY, MOVED_KEY, RUN_SITES_KEY, TransformContext
from transforms.common.lazy_metadata import LazyMetadataWrapper
from transforms.common.positions import positions_of
from transforms.common.qualnames import mentions_tensorflow
from transforms.common.syntax import module_code, remember_code

__all__ = ["DEFAULT_MAX_BYTES", "Budget", "Options", "migrate_code", "migrate_path", "migrate_bytes",
           "migrate_text", "transform_module", "unreadable_reason"]


@dataclass(frozen=True)
class CodeOutcome:
    module: cst.Module
    #: `module`'s wrapper, with the metadata the last transforms resolved on it.
    wrapper: LazyMetadataWrapper
    #: The input's wrapper (metadata resolved by the first transform that ran).
    original: LazyMetadataWrapper
    findings: tuple[Finding, ...]
    run_sites: tuple[tuple[int, str], ...]
    #: The index (in the selected transforms) from which every transform saw a fresh parse of the
    #: final code and left it unchanged; None when they saw a rewritten tree that did not parse.
    settled_from: int | None = None


def transform_module(module: cst.Module, options: Options, filename: str = "<string>") -> CodeOutcome:
    """Run every selected transform over a module as `libcst.parse_module` returns it. Exceptions
    propagate to the caller.

    Metadata (scopes, qualified names) is most of the cost, so one MetadataWrapper serves every
    transform until one of them changes the code; a transform whose triggers do not occur in the
    code as the earlier transforms left it, or that is off under the settings, is not run at all.
    The code a transform changed is parsed afresh for the next ones, so every transform sees a tree
    exactly as the parser makes it (and the stability check's second run can rely on what the first
    run saw: see check_rewrite)."""
    return _run_transforms(LazyMetadataWrapper(module, unsafe_skip_copy=True), options, filename)


def _run_transforms(wrapper: LazyMetadataWrapper, options: Options, filename: str,
                    stop_unchanged_at: int | None = None) -> CodeOutcome:
    """`transform_module` on the module `wrapper` wraps; with `stop_unchanged_at`, it stops before
    that transform when none of the transforms before it changed the code."""
    context = TransformContext(filename=filename, scratch={"settings": dict(options.settings)})
    settings = context.scratch["settings"]
    code = module_code(wrapper.module)
    original = wrapper
    to_input = LineMap()
    settled_from: int | None = None
    for index, transform_class in enumerate(selected_transforms(options.select, options.ignore, options.unsafe)):
        if index == stop_unchanged_at and not to_input.steps:
            break
        checkpoint()  # a file over its budget stops here when the watchdog cannot interrupt
        if not (transform_class.enabled(settings) and transform_class.applies_to(code)):
            continue
        reported = _reported(context)
        result = transform_class(context).transform_wrapper(wrapper)
        to_input.relocate(context, reported)
        moved = context.scratch.pop(MOVED_KEY, ())
        if result is wrapper.module:
            continue
        new_code = module_code(result)
        if new_code != code:
            to_input.add(code, new_code, _moved_lines(result, moved))
            code = new_code
            wrapper, parsed = _next_wrapper(result, new_code)
            settled_from = index + 1 if parsed else None
    module = wrapper.module
    findings = tuple(context.scratch.get(FINDINGS_KEY, ()))
    run_sites = tuple(context.scratch.get(RUN_SITES_KEY, ()))
    return CodeOutcome(module, wrapper, original, findings, run_sites, settled_from)


def _next_wrapper(result: cst.Module, code: str) -> tuple[LazyMetadataWrapper, bool]:
    """The wrapper the next transforms see, and whether it wraps a fresh parse of `code` (not when the
    code does not parse: then a copy of the transform's output, as the check will fail the file)."""
    try:
        return LazyMetadataWrapper(_parsed(code), unsafe_skip_copy=True), True
    except cst.ParserSyntaxError:
        return LazyMetadataWrapper(result), False


def _parsed(code: str) -> cst.Module:
    module = cst.parse_module(code)
    remember_code(module, code)
    return module


def _moved_lines(module: cst.Module, moved) -> dict[int, int]:
    """{line of `module`: line of the code before the transform} for what the transform said it moved."""
    if not moved:
        return {}
    positions = positions_of(module, [node for node, _ in moved])
    return {positions[node].start.line: line for node, line in moved if node in positions}


def _reported(context: TransformContext) -> tuple[int, int]:
    return len(context.scratch.get(FINDINGS_KEY, ())), len(context.scratch.get(RUN_SITES_KEY, ()))


class LineMap:
    """Lines of the code a later transform sees -> lines of the input, so that findings and run sites
    name the line the user wrote even after an earlier transform added or removed lines (an expanded
    arg_scope block). A line inside a rewritten region maps to where that region starts."""

    def __init__(self) -> None:
        self.steps: list[list[int]] = []  # per code change: new line index -> old line index (0-based)

    def add(self, old: str, new: str, moved: dict[int, int] | None = None) -> None:
        """One code change, old -> new; `moved` gives lines of new code a statement moved to (1-based,
        new line: old line), which the diff would map to the start of their rewritten region."""
        old_lines, new_lines = old.splitlines(), new.splitlines()
        mapping = [0] * (len(new_lines) + 1)
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False).get_opcodes():
            for j in range(j1, j2):
                mapping[j] = i1 + (j - j1) if tag == "equal" else i1
        mapping[len(new_lines)] = len(old_lines)
        for new_line, old_line in (moved or {}).items():
            mapping[new_line - 1] = old_line - 1
        self.steps.append(mapping)

    def line(self, line: int) -> int:
        index = line - 1
        for mapping in reversed(self.steps):
            index = mapping[min(max(index, 0), len(mapping) - 1)]
        return index + 1

    def relocate(self, context: TransformContext, reported: tuple[int, int]) -> None:
        """Map what the transform just reported (after `reported` counts) onto input lines."""
        if not self.steps:
            return
        findings = context.scratch.get(FINDINGS_KEY, [])
        findings[reported[0]:] = [replace(f, line=self.line(f.line)) if f.line else f for f in findings[reported[0]:]]
        sites = context.scratch.get(RUN_SITES_KEY, [])
        sites[reported[1]:] = [(self.line(line), name) for line, name in sites[reported[1]:]]


def migrate_code(source: str, options: Options = Options(), filename: str = "<string>") -> CodeOutcome:
    """Migrate Python source text. Raises libcst.ParserSyntaxError on unparsable input."""
    return transform_module(cst.parse_module(source), options, filename)


def check_rewrite(new_code: str, options: Options, filename: str, settled_from: int | None = None,
                  parsed: LazyMetadataWrapper | None = None) -> tuple[str | None, CodeOutcome | None]:
    """Why a rewritten module must not be written (None when it is sound), and the second run.

    The second run migrates `new_code` again. `settled_from` is the first run's: from that transform
    on, every transform saw a fresh parse of `new_code` (with the same settings) and left it
    unchanged. When the transforms before it leave `new_code` unchanged as well, the rest would see
    the same parse again and do the same, so the second run stops there: the code is stable.

    `parsed` (the first run's last wrapper, when it wraps a fresh parse of `new_code`) spares the
    second run parsing `new_code` again and resolving the metadata the first run resolved on it: the
    parser makes the same tree from the same code, and metadata depends on the tree alone."""
    try:
        if parsed is None:
            parsed = LazyMetadataWrapper(_parsed(new_code), unsafe_skip_copy=True)
        again = _run_transforms(parsed, options, filename, stop_unchanged_at=settled_from)
    except cst.ParserSyntaxError as error:
        return f"rewrite produced code that does not parse ({error.message}); left untouched", None
    if module_code(again.module) != new_code:
        return "rewrite is not stable (a second run changes it again); left untouched", again
    return None, again


def migrate_text(path: str, text: str, options: Options) -> FileResult:
    """Migrate decoded Python text; the shared core of .py files and notebook cells."""
    if not mentions_tensorflow(text):
        return FileResult(path, "skipped", reason="does not use TensorFlow")
    check_parse(len(text))  # over the memory budget before the (uninterruptible) parsers start
    problem = syntax_problem(text, path)
    if problem:
        return FileResult(path, "skipped", "tf1", problem)
    try:
        module = _parsed(text)
    except cst.ParserSyntaxError as error:
        return FileResult(path, "skipped", "tf1", describe_parse_error(text, error))
    outcome = transform_module(module, options, path)
    new_code = module_code(outcome.module)
    if new_code == text:
        return FileResult(path, "unchanged", classify(outcome.wrapper), findings=outcome.findings,
                          families=family_counts(outcome.original, outcome.wrapper))
    fresh_parse = outcome.wrapper if outcome.settled_from is not None else None
    problem, second_run = check_rewrite(new_code, options, path, outcome.settled_from, fresh_parse)
    if problem:
        return FileResult(path, "failed", classify(outcome.original), problem, outcome.findings,
                          families=family_counts(outcome.original, outcome.original))
    return FileResult(path, "changed", classify(second_run.wrapper), findings=outcome.findings,
                      families=family_counts(outcome.original, second_run.wrapper),
                      old_source=text, new_source=new_code, run_sites=outcome.run_sites)


def migrate_path(path: str, options: Options = Options(), budget: Budget | None = None) -> FileResult:
    """Migrate one file on disk without writing it, within `budget` (None: unbounded). Never raises."""
    try:
        problem = unreadable_reason(path, options.max_bytes)
        if problem:
            return FileResult(path, "skipped", reason=problem)
        with open(path, "rb") as handle:
            data = handle.read()
    except Exception as error:
        return _internal_error(path, error)
    return migrate_bytes(path, data, options, budget)


def migrate_bytes(path: str, data: bytes, options: Options = Options(), budget: Budget | None = None) -> FileResult:
    """Migrate the contents `data` of the file at `path` (a .py or .ipynb), within `budget`. A file over
    its budget is skipped with the reason; the caller goes on with the next file. Never raises."""
    try:
        with enforced(budget) as watchdog:
            result = _migrate_bytes(path, data, options)
    except BudgetExceeded as error:
        return FileResult(path, "skipped", reason=f"{error}; left untouched")
    if watchdog is not None and watchdog.reason:
        # Over budget, but the interrupt landed where Python cannot raise (a weakref callback run by the
        # garbage collector drops the exception): what the interrupted step computed is not trusted.
        return FileResult(path, "skipped", reason=f"{watchdog.reason}; left untouched")
    return result


def _migrate_bytes(path: str, data: bytes, options: Options) -> FileResult:
    try:
        if path.endswith(".ipynb"):
            from migrate.notebook import migrate_notebook
            return migrate_notebook(path, data, lambda source: migrate_text(path, source, options))
        decoded = decode_python(data)
        result = migrate_text(path, decoded.text, options)
        if result.status == "changed":
            new_bytes = decoded.encode(result.new_source)
            return _with_bytes(result, new_bytes)
        return result
    except SourceError as error:
        return FileResult(path, "skipped", reason=str(error))
    except Exception as error:  # one bad file never stops a run
        return _internal_error(path, error)


def _internal_error(path: str, error: Exception) -> FileResult:
    detail = traceback.format_exception_only(type(error), error)[-1].strip()
    return FileResult(path, "failed", reason=f"internal error: {detail}; file left untouched")


def _with_bytes(result: FileResult, new_bytes: bytes) -> FileResult:
    from dataclasses import replace
    return replace(result, new_bytes=new_bytes)
