"""A synthetic, seeded stand-in for a GloVe word-vector archive (`glove.840B.300d.zip`).

A zip holding `glove.840B.300d.txt` in GloVe's text format (`word v1 ... v300` per line) for a small
vocabulary: common English words and the capitalised number words ("One" ... "Nine") that
tutorial programs look up. Vectors are random normal, fixed by the seed.
"""
from __future__ import annotations

import io
import zipfile

import numpy

SEED = 20190701
DIMENSION = 300
NUMBER_WORDS = ("One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine", "Zero")
COMMON_WORDS = ("the , . of to and a in \" 's that for is on was with he it as at by from his an were are which "
                "this be or has had not but one two three first new after their who they have been also").split()


def glove_zip(member: str = "glove.840B.300d.txt") -> bytes:
    rng = numpy.random.RandomState(SEED)
    lines = [" ".join([word] + [f"{value:.5f}" for value in rng.randn(DIMENSION)])
             for word in COMMON_WORDS + list(NUMBER_WORDS)]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(member, "\n".join(lines) + "\n")
    return buffer.getvalue()
