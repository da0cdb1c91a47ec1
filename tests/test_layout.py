"""The layout keeps its promises: transforms/ holds only the registry and the base class at its top,
each family package's public modules are transforms, and no module of ours imports itself in a cycle."""
from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import transforms
from transforms.base import TFTransform

ROOT = Path(__file__).resolve().parent.parent


def test_the_top_of_transforms_holds_only_the_registry_and_the_base():
    assert sorted(path.name for path in (ROOT / "transforms").glob("*.py")) == ["__init__.py", "base.py"]


def test_every_public_module_of_a_family_is_one_registered_transform():
    registered = {transform.__module__ for transform in transforms.all_transforms()}
    for family in pkgutil.iter_modules(transforms.__path__):
        if not family.ispkg or family.name == "common":
            continue
        package = importlib.import_module(f"transforms.{family.name}")
        for info in pkgutil.iter_modules(package.__path__):
            if not info.ispkg and not info.name.startswith("_"):
                assert f"{package.__name__}.{info.name}" in registered, info.name
    assert all(issubclass(t, TFTransform) for t in transforms.all_transforms())


def _imports(path: Path, modules: set[str]) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            candidates = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            found.update(name for name in candidates if name in modules)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in modules)
    return found


def test_no_import_cycles():
    paths = {}
    for package in ("migrate", "transforms"):
        for path in (ROOT / package).rglob("*.py"):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
            paths[name] = path
    graph = {name: _imports(path, set(paths)) - {name} for name, path in paths.items()}
    cycles = []
    for start in graph:  # a module that can reach itself again is in a cycle
        seen, stack = set(), list(graph[start])
        while stack:
            current = stack.pop()
            if current == start:
                cycles.append(start)
                break
            if current not in seen:
                seen.add(current)
                stack.extend(graph[current])
    assert not cycles, f"modules in import cycles: {sorted(cycles)}"
