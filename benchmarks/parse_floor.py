"""What a libcst pipeline cannot go below on real files: parsing, generating code, one walk, scopes.

    python benchmarks/parse_floor.py [--corpus DIR]

For every `.py` file of the corpus (the development corpus by default, `.corpus/`), in one process,
one after the other: `libcst.parse_module`, generating the module's code again, one read-only walk
with no hooks (the walk every transform pass makes at least once), libcst's `ScopeProvider`, and
CPython's `ast.parse` for scale. CPU seconds for all the files, each part on its own. Issue 17's cold
target compares `tf-migrate diff -j 2` with `tf_upgrade_v2` in one process (benchmarks/throughput.py):
these parts, times the passes a migration makes, are the floor of the first.
"""
from __future__ import annotations

import argparse
import ast
import glob
import os
import platform
import time
from importlib import metadata

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default=os.path.join(ROOT, ".corpus"))
    args = parser.parse_args()

    import libcst as cst
    from libcst.metadata import MetadataWrapper, ScopeProvider

    from transforms.common import read_only_visit

    read_only_visit.install()
    sources = []
    for path in sorted(glob.glob(os.path.join(args.corpus, "**", "*.py"), recursive=True)):
        try:
            with open(path, encoding="utf-8") as handle:
                source = handle.read()
            ast.parse(source)  # Python 2 files and the like: neither tool migrates them
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        sources.append(source)

    class NoHooks(cst.CSTVisitor):
        pass

    def timed(what: str, work) -> object:
        started = time.process_time()
        result = work()
        print(f"{what:34s} {time.process_time() - started:7.2f} s")
        return result

    print(f"# {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
          f"libcst {metadata.version('libcst')}")
    print(f"{len(sources)} files, {sum(len(s) for s in sources) / 1e6:.2f} MB (CPU seconds, one process)")
    modules = [m for m in timed("libcst parse", lambda: [_parsed(cst, s) for s in sources]) if m is not None]
    print(f"{len(modules)} of them parsed by libcst; the rest of the parts on those")
    timed("libcst code generation", lambda: [m.code for m in modules])
    timed("one read-only walk, no hooks", lambda: [m.visit(NoHooks()) for m in modules])
    timed("libcst ScopeProvider", lambda: [MetadataWrapper(m, unsafe_skip_copy=True).resolve(ScopeProvider)
                                           for m in modules])
    timed("CPython ast.parse", lambda: [ast.parse(s) for s in sources])


def _parsed(cst, source: str):
    """The module, or None for the rare file CPython parses and libcst does not (tf-migrate skips it)."""
    try:
        return cst.parse_module(source)
    except cst.ParserSyntaxError:
        return None


if __name__ == "__main__":
    main()
