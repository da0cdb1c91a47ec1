"""The codemods. Every module in this package that defines a `TFTransform` subclass is registered:
adding a transform is adding a file (plus its fixtures under tests/fixtures/<module name>/)."""
from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

from transforms.base import TFTransform

_NOT_TRANSFORMS = {"base", "qualnames", "tables"}


@lru_cache(maxsize=1)
def all_transforms() -> tuple[type[TFTransform], ...]:
    """Every transform class, in the order they run (phase, then code)."""
    found: list[type[TFTransform]] = []
    for info in pkgutil.iter_modules(__path__):
        if info.name in _NOT_TRANSFORMS or info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        found.extend(
            obj for obj in vars(module).values()
            if isinstance(obj, type) and issubclass(obj, TFTransform)
            and obj is not TFTransform and obj.__module__ == module.__name__ and obj.CODE
        )
    return tuple(sorted(found, key=lambda t: (t.PHASE, t.CODE)))


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
