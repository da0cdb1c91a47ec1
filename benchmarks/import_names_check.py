"""Check transforms/common/import_names.py against libcst's QualifiedNameProvider on real code.

For every expression node of every file: where ImportNames answers, its answer must be libcst's (a
node libcst gives no scope counts as no names, which is what every lookup's default is); where it
says a node cannot name TensorFlow, libcst's names for it must include no TensorFlow name, direct or
through a module alias. Prints the counts and every difference; exits 1 if there is one.

    python benchmarks/import_names_check.py [--corpus DIR] [--fixtures]
"""
from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

import libcst as cst
from libcst.metadata import MetadataWrapper, ParentNodeProvider, QualifiedNameProvider

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import transforms.base  # noqa: E402,F401  (installs the read-only visit the tool runs with)
from transforms.common.import_names import NO_SCOPE, ImportNames  # noqa: E402
from transforms.common.qualnames import canonical_tf_name, module_aliases  # noqa: E402
from transforms.common.syntax import walk  # noqa: E402


def check_file(path: Path, counts: Counter) -> list[str]:
    code = path.read_text(encoding="utf-8", errors="replace")
    try:
        module = cst.parse_module(code)
    except Exception:  # noqa: BLE001  (not our concern here: the tool reports unparsable files)
        counts["unparsable"] += 1
        return []
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    libcst_names = wrapper.resolve(QualifiedNameProvider)
    names = ImportNames(module, code, wrapper.resolve(ParentNodeProvider))
    counts["files" if names.census.usable else "files left to libcst"] += 1

    def expected(node: cst.CSTNode) -> set:
        found = libcst_names.get(node, set())
        return found() if callable(found) else found

    def canonical(value: cst.CSTNode) -> str | None:
        found = {canonical_tf_name(q.name) for q in expected(value)} - {None}
        return next(iter(found)) if len(found) == 1 else None

    alias_heads = set(module_aliases(module, canonical))
    problems = []
    for node in walk(module):
        if not isinstance(node, cst.BaseExpression):
            continue
        answer = names.qualified_names(node)
        if answer is None:
            counts["left to libcst"] += 1
        else:
            counts["answered"] += 1
            if (set() if answer is NO_SCOPE else answer) != expected(node):
                problems.append(f"{path}: {module.code_for_node(node)[:60]!r}: {answer} != {expected(node)}")
        if not names.may_name_tensorflow(node):
            counts["cannot name TensorFlow"] += 1
            if any(q.name.startswith(("tensorflow", "tf_slim")) or canonical_tf_name(q.name)
                   or q.name.split(".")[0] in alias_heads for q in expected(node)):
                problems.append(f"{path}: {module.code_for_node(node)[:60]!r} names TensorFlow: {expected(node)}")
    return problems


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, help="a folder of Python files (e.g. the materialised corpus)")
    parser.add_argument("--fixtures", action="store_true", help="also the fixtures and legacy examples")
    args = parser.parse_args(argv)
    paths = sorted(args.corpus.rglob("*.py")) if args.corpus else []
    if args.fixtures or not paths:
        paths += sorted((ROOT / "tests" / "fixtures").glob("*/*.py")) + sorted((ROOT / "legacy_examples").glob("*.py"))
    counts: Counter = Counter()
    problems = [problem for path in paths if path.is_file() for problem in check_file(path, counts)]
    print(", ".join(f"{key}: {value}" for key, value in counts.items()))
    print(f"differences from libcst: {len(problems)}")
    for problem in problems:
        print("  " + problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
