"""A synthetic, seeded stand-in for small plain-text corpora (char-RNN's `tinyshakespeare/input.txt`).

About 20,000 characters of play-like text (speaker lines and verse made of a fixed vocabulary),
the same bytes on every call: enough for a character model to see every symbol and learn a little.
"""
from __future__ import annotations

import random

SEED = 20190701
WORDS = ("the king my lord good sweet love night day heart thou thee shall not what well come "
         "speak blood death fair true time know now hath doth upon away noble crown sword").split()
SPEAKERS = ("FIRST CITIZEN", "MENENIUS", "CORIOLANUS", "VOLUMNIA", "BRUTUS", "SICINIUS")


def play_text(characters: int = 20000) -> str:
    rng = random.Random(SEED)
    lines: list[str] = []
    size = 0
    while size < characters:
        speech = [rng.choice(SPEAKERS) + ":"]
        for _ in range(rng.randint(1, 4)):
            words = [rng.choice(WORDS) for _ in range(rng.randint(4, 9))]
            speech.append(" ".join(words).capitalize() + rng.choice((",", ".", ";", "!", "?")))
        block = "\n".join(speech) + "\n\n"
        lines.append(block)
        size += len(block)
    return "".join(lines)
