"""TFM301 (fuse_step_loops) beyond its fixtures: the fused programs compute what the loops did, and
the rewrite keeps its promises on the migrated legacy examples."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from migrate.runner import Options, migrate_code, migrate_path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "fuse_step_loops"


def run_program(source: str, tmp_path: Path, name: str) -> str:
    script = tmp_path / name
    script.write_text(source)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, check=False,
                          env={"TF_CPP_MIN_LOG_LEVEL": "3", "PATH": "/usr/bin:/bin", "CUDA_VISIBLE_DEVICES": "-1"})
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.mark.parametrize("case", ["basic", "batches", "in_function_dict", "schedule", "nested_epochs",
                                  "evaluation_mid_loop", "evaluation_outputs", "nested_helper", "method_loop",
                                  "defined_later"])
def test_fused_fixture_prints_what_the_loop_printed(case: str, tmp_path: Path) -> None:
    """Same per-step values, same order, same Python work: the printed output is identical."""
    before = run_program((FIXTURES / f"{case}.in.py").read_text(), tmp_path, "loop.py")
    after = run_program((FIXTURES / f"{case}.out.py").read_text(), tmp_path, "fused.py")
    assert "_loop" in (FIXTURES / f"{case}.out.py").read_text()
    assert before.strip() and after == before


def test_fusion_is_part_of_the_default_migration() -> None:
    result = migrate_path(str(ROOT / "legacy_examples" / "core_batch_norm.py"))
    assert result.status == "changed"
    assert "def train_step_loop(first, stop" in result.new_source
    assert any(f.code == "TFM301" and f.fixed for f in result.findings)


def test_ignoring_tfm301_keeps_the_python_loop() -> None:
    result = migrate_path(str(ROOT / "legacy_examples" / "core_batch_norm.py"), Options(ignore=("TFM301",)))
    assert "_loop(" not in result.new_source


def test_second_step_loop_of_the_same_function_is_refused_not_clobbered() -> None:
    source = (FIXTURES / "basic.in.py").read_text()
    twice = source + "for again in range(3):\n    train_step(x_data, y_data)\n"
    outcome = migrate_code(twice, Options(select=("TFM301",)))
    assert outcome.module.code.count("def train_step_loop(") == 1
    refused = [f for f in outcome.findings if not f.fixed]
    assert refused and "already used" in refused[0].message
