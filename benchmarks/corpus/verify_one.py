"""Verify one corpus program with the harness, with its recipe's arguments, and write the JSON report.

    python benchmarks/corpus/verify_one.py CONFIG.json

CONFIG: {"legacy", "migrated", "sites", "args", "timeout_s", "report"}. The same as
`tf-migrate verify LEGACY MIGRATED --device cpu --report REPORT --timeout T`, except that the
program gets its command-line arguments (the CLI gives none). It runs in its own process so that
the stand-in layer's environment (set by benchmarks/corpus.py) reaches both of the harness's sides.
"""
from __future__ import annotations

import json
import os
import sys
import tempfile


def main(config_path: str) -> int:
    from migrate.harness.programs import Program
    from migrate.harness.report import build_report, write_report
    from migrate.harness.verify import Settings, verify_program

    with open(config_path, encoding="utf-8") as handle:
        config = json.load(handle)
    program = Program(os.path.basename(config["legacy"]), config["legacy"], config["migrated"], config["sites"])
    settings = Settings(device="cpu", timeout_s=config["timeout_s"], args=tuple(config["args"]))
    with tempfile.TemporaryDirectory(prefix="corpus-verify-") as work:
        result = verify_program(program, settings, work)
    write_report(build_report([result], settings.to_dict()), config["report"])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
