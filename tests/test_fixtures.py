"""Fixture pairs on disk, discovered automatically.

tests/fixtures/<transform module>/<case>.in.py   input
tests/fixtures/<transform module>/<case>.out.py  expected output (absent: the input must come back unchanged)
tests/fixtures/<transform module>/<case>.findings  optional: expected findings, one `CODE LINE` per line
tests/fixtures/<transform module>/<case>.settings.json  optional: the settings the case runs with
                                                  (e.g. {"mixed_precision": "auto"}; default none)

Only the named transform runs. Free checks on every case: the output parses, a second run changes
nothing, and the findings match when a .findings file is given.
"""
from __future__ import annotations

import json
from pathlib import Path

import libcst as cst
import pytest

from transforms import transform_by_module_name
from transforms.base import FINDINGS_KEY, TransformContext

FIXTURES = Path(__file__).parent / "fixtures"
CASES = sorted(FIXTURES.glob("*/*.in.py"))


def run_transform(module_name: str, source: str, settings: dict | None = None) -> tuple[str, list]:
    context = TransformContext(filename="fixture.py", scratch={"settings": dict(settings or {})})
    transform = transform_by_module_name(module_name)(context)
    output = transform.transform_module(cst.parse_module(source)).code
    return output, context.scratch.get(FINDINGS_KEY, [])


def expected_output(case: Path) -> str:
    out = case.with_name(case.name.replace(".in.py", ".out.py"))
    return (out if out.exists() else case).read_text(encoding="utf-8")


@pytest.mark.parametrize("case", CASES, ids=[f"{c.parent.name}/{c.name[:-6]}" for c in CASES])
def test_fixture(case: Path) -> None:
    module_name = case.parent.name
    settings_file = case.with_name(case.name.replace(".in.py", ".settings.json"))
    settings = json.loads(settings_file.read_text()) if settings_file.exists() else {}
    output, findings = run_transform(module_name, case.read_text(encoding="utf-8"), settings)
    assert output == expected_output(case)
    cst.parse_module(output)
    again, _ = run_transform(module_name, output, settings)
    assert again == output, "second run changed the output"
    findings_file = case.with_name(case.name.replace(".in.py", ".findings"))
    if findings_file.exists():
        expected = sorted(line.split()[:2] for line in findings_file.read_text().splitlines() if line.strip())
        actual = sorted([f.code, str(f.line)] for f in findings)
        assert actual == expected


def test_every_transform_has_fixtures() -> None:
    from transforms import all_transforms
    for transform in all_transforms():
        name = transform.__module__.rsplit(".", 1)[-1]
        assert list((FIXTURES / name).glob("*.in.py")), f"transform {name} has no fixtures"
