"""A `tf.cond` on a placeholder each run feeds one literal (transforms/graph/writing/constant_conds.py),
through the whole pipeline and the harness."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from migrate.runner import migrate_path
from tests.test_sessions_to_functions_examples import code_names

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "legacy_examples" / "graph_context_dropout_cond.py"


def test_each_step_function_keeps_the_branch_its_run_takes():
    result = migrate_path(str(EXAMPLE))
    assert result.level == "tf2", result.findings
    assert not code_names(result.new_source) & {"cond", "compat", "Session", "placeholder"}
    train_step = result.new_source.split("def train_step(")[1].split("\n\n")[0]
    validation = result.new_source.split("def compute_loss_and_accuracy(")[1].split("\n\n")[0]
    assert "tf.nn.dropout(hidden" in train_step and "dropout" not in validation


def test_the_dropout_cond_example_is_equivalent_under_the_harness(tmp_path: Path):
    report = tmp_path / "report.json"
    process = subprocess.run([sys.executable, "-m", "migrate", "verify", str(EXAMPLE), "--report", str(report)],
                             capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert process.returncode == 0, process.stdout[-3000:] + process.stderr[-3000:]
    program = json.loads(report.read_text())["programs"][0]
    assert program["verdict"] == "equivalent" and program["migration"]["level"] == "tf2"
    # the dropout line maps back to the cond's, so both sides draw the same masks and the training
    # losses count strictly; unaligned, they would all be advisory and the verdict inconclusive
    train_site = next(site for site in program["sites"] if site["migrated"] == "fn:train_step")
    assert train_site["status"] == "match" and train_site["fetches"][0]["compared"] == train_site["legacy_calls"]
