"""`tf-migrate tune`: the variant table and the choice of the fastest equivalent variant."""
from __future__ import annotations

from migrate.harness.tune import Trial, best, table


def test_the_fastest_equivalent_variant_wins_and_inequivalent_ones_never_do():
    trials = [Trial("plain", ["equivalent"] * 3, [0.9, 1.0, 1.1], "a.py"),
              Trial("fused", ["equivalent"] * 3, [2.0, 2.4, 2.2], "b.py", legacy_rates=[100.0, 90.0, 110.0],
                    migrated_rates=[200.0, 216.0, 242.0]),
              Trial("xla", ["equivalent", "mismatch", "equivalent"], [5.0, 5.0, 5.0], "c.py", "loss differs")]
    winner = best(trials)
    assert winner.variant == "fused" and winner.speedup == 2.2
    text = table(trials, winner)
    fused = next(line for line in text.splitlines() if line.startswith("fused")).split()
    assert fused == ["fused", "yes", "100", "216", "2.20x", "*"]  # medians of steps/s and of the ratios
    row = next(line for line in text.splitlines() if line.startswith("xla"))
    assert "equivalent/mismatch" in row and "*" not in row and "loss differs" in row
    assert best([trials[2]]) is None
