"""The codemods, grouped in family packages by code: `api` (TFM1xx), `graph` (TFM2xx), `speed`
(TFM3xx), `flags` (TFM4xx), `contrib` (TFM5xx), `datasets` (TFM6xx); `common` holds what they share.

In a family package, every module whose name does not start with `_` is one transform and is
registered: adding a transform is adding a file (plus its fixtures under
tests/fixtures/<module name>/). `_`-prefixed modules and subpackages are that family's helpers.
"""
from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache
from types import ModuleType

from transforms.base import TFTransform

_SHARED_PACKAGES = {"common"}


@lru_cache(maxsize=1)
def all_transforms() -> tuple[type[TFTransform], ...]:
    """Every transform class, in the order they run (phase, then code)."""
    found: list[type[TFTransform]] = []
    for module in _transform_modules():
        found.extend(
            obj for obj in vars(module).values()
            if isinstance(obj, type) and issubclass(obj, TFTransform)
            and obj is not TFTransform and obj.__module__ == module.__name__ and obj.CODE
        )
    return tuple(sorted(found, key=lambda t: (t.PHASE, t.CODE)))


def _transform_modules() -> list[ModuleType]:
    """The public modules directly inside each family package."""
    modules = []
    for family in pkgutil.iter_modules(__path__):
        if not family.ispkg or family.name in _SHARED_PACKAGES:
            continue
        package = importlib.import_module(f"{__name__}.{family.name}")
        for info in pkgutil.iter_modules(package.__path__):
            if not info.ispkg and not info.name.startswith("_"):
                modules.append(importlib.import_module(f"{package.__name__}.{info.name}"))
    return modules


def transform_by_module_name(name: str) -> type[TFTransform]:
    for transform in all_transforms():
        if transform.__module__.rsplit(".", 1)[-1] == name:
            return transform
    raise KeyError(name)


def selected_transforms(select: tuple[str, ...] = (), ignore: tuple[str, ...] = (),
                        unsafe: bool = False) -> tuple[type[TFTransform], ...]:
    """Transforms whose code matches a prefix in `select` (all if empty) and none in `ignore`.

    Unsafe transforms run only when selected explicitly by code prefix, or when `unsafe` is True.
    """
    def matches(code: str, prefixes: tuple[str, ...]) -> bool:
        return any(code.startswith(prefix.upper()) for prefix in prefixes)

    chosen = []
    for transform in all_transforms():
        if select and not matches(transform.CODE, select):
            continue
        if ignore and matches(transform.CODE, ignore):
            continue
        if transform.SAFETY == "unsafe" and not (unsafe or (select and matches(transform.CODE, select))):
            continue
        chosen.append(transform)
    return tuple(chosen)
