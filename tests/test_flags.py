"""absl flags read the way TF1 read them: a program reading FLAGS at import time (before app.run
parses the command line) runs after migration and sees the command line's values, as it did on TF1."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from migrate.runner import migrate_code

FIXTURES = Path(__file__).parent / "fixtures" / "use_absl_flags_and_logging"
ARGS = ["--batch_size", "7", "--learning_rate", "0.5"]


def run(args: list[str], cwd: Path) -> str:
    done = subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_flags_read_at_import_time_see_the_command_line_after_migration(tmp_path):
    legacy = tmp_path / "legacy.py"
    legacy.write_text((FIXTURES / "import_time_reads.in.py").read_text())
    migrated = tmp_path / "migrated.py"
    migrated.write_text(migrate_code(legacy.read_text()).module.code)
    expected = run(["-m", "migrate.legacy_runtime", str(legacy), *ARGS], Path.cwd())
    assert expected.split() == ["7", "0.5", "1.0", "7"]
    assert run([str(migrated), *ARGS], tmp_path) == expected
