"""A step loop's consecutive evaluations read as one (TFM301): the training loops of TensorFlow's
tutorials write their summaries every few steps and evaluate every few more,

    for step in range(STEPS):
        loss = train_step(x, y)
        if step % 10 == 0:                  if step % 10 == 0 or (step + 1) % 100 == 0:
            write_summaries(...)                if step % 10 == 0:
        if (step + 1) % 100 == 0:      ->           write_summaries(...)
            do_eval()                           if (step + 1) % 100 == 0:
                                                    do_eval()

and the fusion runs one evaluation block (fusion/plan.py): the steps up to a step where either runs
go first, then each runs on its own test, in its order, as before. The tests are of the loop
variable and invariants (fusion/body.py checks the block's), so evaluating them once more, before
the evaluations run, decides nothing differently: the outer test holds exactly when an inner one
will."""
from __future__ import annotations

import libcst as cst

_LOOSER_THAN_OR = (cst.IfExp, cst.Lambda, cst.NamedExpr)


def merged_evaluations(loop: cst.For, evaluations: list[cst.If]) -> tuple[cst.For, int, int] | None:
    """The loop with its evaluations, when several follow one another in its body, as one block;
    with where that block starts and how many it holds. None for anything else."""
    body = list(loop.body.body)
    positions = sorted(next(i for i, s in enumerate(body) if s is evaluation) for evaluation in evaluations)
    if len(positions) < 2 or positions != list(range(positions[0], positions[0] + len(positions))):
        return None
    return merged_at(loop, positions[0], len(positions)), positions[0], len(positions)


def merged_at(loop: cst.For, start: int, count: int) -> cst.For:
    """`loop` with the `count` evaluation blocks from `start` of its body held by one `if`."""
    body = list(loop.body.body)
    blocks = body[start:start + count]
    test = blocks[0].test
    for block in blocks[1:]:
        test = cst.BooleanOperation(_operand(test), cst.Or(), _operand(block.test))
    merged = cst.If(test=test, body=cst.IndentedBlock([blocks[0].with_changes(leading_lines=()), *blocks[1:]]),
                    leading_lines=blocks[0].leading_lines)
    return loop.with_changes(body=loop.body.with_changes(body=[*body[:start], merged, *body[start + count:]]))


def _operand(test: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(test, _LOOSER_THAN_OR) and not test.lpar:
        return test.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return test
