"""The equivalence harness behind `tf-migrate verify`.

Legacy and migrated program each run in their own subprocess (`legacy_side.py`, `migrated_side.py`,
sharing `side_common.py` and `alignment.py`); the parent pairs their run sites (`pairing.py`),
compares what they recorded (`compare.py`, `tolerance.py`, `result_lines.py`, `randomness.py`), times
them (`timing.py`), judges (`judge.py`, `verify.py`) and reports (`report.py`, `html_report.py`, their shared rows in `report_rows.py`).
Importing this package does not import TensorFlow.
"""
