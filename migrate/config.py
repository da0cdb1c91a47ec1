"""`[tool.tf-migrate]` in pyproject.toml, merged into click's default_map so that flags win."""
from __future__ import annotations

import tomllib
from pathlib import Path

KNOWN_KEYS = {"select", "ignore", "exclude", "jobs", "unsafe", "max_bytes"}


class ConfigError(Exception):
    pass


def find_pyproject(start: Path) -> Path | None:
    for folder in (start, *start.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def load_config(start: Path) -> dict:
    """Options from the nearest pyproject.toml, with list values as tuples; {} if none."""
    path = find_pyproject(start.resolve())
    if path is None:
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"{path}: {error}") from error
    section = data.get("tool", {}).get("tf-migrate", {})
    unknown = set(section) - KNOWN_KEYS
    if unknown:
        raise ConfigError(f"{path}: unknown [tool.tf-migrate] keys: {', '.join(sorted(unknown))}")
    return {key.replace("-", "_"): tuple(value) if isinstance(value, list) else value
            for key, value in section.items()}
