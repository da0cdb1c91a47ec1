"""Which step-call arguments a fused loop can compute in its graph (TFM301).

An argument is either loop-invariant (its names are bound neither by the loop nor its body), or a
batch: an invariant array sliced along its first axis by an index computed from the loop variable
with integer arithmetic (`X[i * B:(i + 1) * B]`, or `X[batch]` after `batch = slice(a, b)`), or
gathered by a batch of an invariant index array (`X[batch]` after `batch = order[a:b]`, or
`X[order[a:b]]`: NumPy's integer-array indexing, `tf.gather` in the graph; the transform then checks
that the index array holds integers, see `fuse_step_loops`).
Such index statements before the call are copied into the graph loop, where the loop variable is a
tensor: integer `+ - * // %`, `len(array)` and `slice(...)` mean the same there; anything else (floats,
`**`, other calls) may not, and is refused.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

INTEGER_OPS = (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide, cst.Modulo)
ARITHMETIC_OPS = (*INTEGER_OPS, cst.Divide, cst.Power)
ORDER_OPS = (cst.Equal, cst.NotEqual, cst.LessThan, cst.LessThanEqual, cst.GreaterThan, cst.GreaterThanEqual)
NUMERIC_BUILTINS = frozenset({"float", "int", "abs", "min", "max", "round"})


@dataclass
class ArgumentFacts:
    """Collected while checking arguments: arrays sliced per step, invariant names passed whole."""

    sliced: list[str] = field(default_factory=list)
    whole: list[str] = field(default_factory=list)
    indices: list[str] = field(default_factory=list)  # invariant arrays whose batches index others
    uses_loop_var: bool = False


class IndexChecker:
    """Checks index arithmetic; `per_step` names (loop var, copied index names) may appear in it."""

    def __init__(self, loop_var: str, per_step: dict[str, cst.BaseExpression], forbidden: set[str]):
        self.loop_var = loop_var
        self.per_step = per_step  # name -> the value its copied statement assigns
        self.forbidden = forbidden  # names the body rebinds, or TensorFlow state
        self.facts = ArgumentFacts()

    def integer(self, node: cst.BaseExpression) -> str | None:
        """Why `node` is not integer index arithmetic, or None."""
        if isinstance(node, cst.Integer):
            return None
        if isinstance(node, cst.Name):
            return self.name(node.value)
        if isinstance(node, cst.Attribute):
            return self.invariant(node)
        if isinstance(node, cst.BinaryOperation):
            if not isinstance(node.operator, INTEGER_OPS):
                return "uses an operator other than integer + - * // %"
            return self.integer(node.left) or self.integer(node.right)
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
            return self.integer(node.expression)
        if _call_of(node, "len") and len(node.args) == 1:
            return self.invariant(node.args[0].value)
        return f"computes `{cst.Module([]).code_for_node(node)}`, which is not integer index arithmetic"

    def name(self, name: str) -> str | None:
        if name == self.loop_var:
            self.facts.uses_loop_var = True
            return None
        if name in self.per_step:
            return None
        return f"reads `{name}`, which the loop body changes or which is TensorFlow state" \
            if name in self.forbidden else None

    def invariant(self, node: cst.BaseExpression) -> str | None:
        """Names and attributes of names the loop does not change."""
        if isinstance(node, cst.Name):
            return "uses the loop variable where an invariant is needed" if node.value == self.loop_var \
                else self.name(node.value)
        if isinstance(node, cst.Attribute):
            return self.invariant(node.value)
        return f"uses `{cst.Module([]).code_for_node(node)}` where a plain name is needed"

    def is_slice_value(self, node: cst.BaseExpression) -> bool:
        return _call_of(node, "slice") and 1 <= len(node.args) <= 2 and not any(a.keyword for a in node.args)

    def batch(self, node: cst.Subscript) -> str | None:
        """`array[a:b]` or `array[name]` (name bound to `slice(a, b)`) of an invariant array."""
        if not isinstance(node.value, cst.Name) or len(node.slice) != 1:
            return "indexes something other than one invariant array along its first axis"
        problem = self.invariant(node.value)
        index = node.slice[0].slice
        if isinstance(index, cst.Slice) and index.step is None:
            bounds = [b for b in (index.lower, index.upper) if b is not None]
        elif isinstance(index, cst.Index) and isinstance(index.value, cst.Name) \
                and self.is_slice_value(self.per_step.get(index.value.value)):
            bounds = [a.value for a in self.per_step[index.value.value].args]
        elif self.gathering_index(index) is not None:
            rows = self.gathering_index(index)
            problem = problem or self.batch(rows)
            if problem is None:
                self.facts.sliced.append(node.value.value)
                self.facts.indices.append(rows.value.value)
            return problem
        else:
            return "indexes an array with something other than a slice of steps"
        problem = problem or next((p for p in map(self.integer, bounds) if p), None)
        if problem is None:
            self.facts.sliced.append(node.value.value)
        return problem

    def gathering_index(self, index: cst.BaseSlice) -> cst.Subscript | None:
        """The batch of an index array that `index` is (`order[a:b]`, or a name bound to it), or None."""
        if not isinstance(index, cst.Index):
            return None
        value = index.value
        if isinstance(value, cst.Name):
            value = self.per_step.get(value.value)
        if isinstance(value, cst.Subscript) and isinstance(value.value, cst.Name) and len(value.slice) == 1 \
                and isinstance(value.slice[0].slice, cst.Slice) and value.slice[0].slice.step is None:
            return value
        return None

    def argument(self, node: cst.BaseExpression) -> str | None:
        """An argument of the step call: an invariant value or a batch."""
        if isinstance(node, cst.Subscript):
            return self.batch(node)
        if isinstance(node, cst.Name) and node.value in self.per_step:
            return None if isinstance(self.per_step[node.value], cst.Subscript) else \
                f"passes `{node.value}`, a per-step value that is not a batch"
        if isinstance(node, cst.Name) and node.value != self.loop_var:
            problem = self.invariant(node)
            if problem is None:
                self.facts.whole.append(node.value)
            return problem
        if isinstance(node, (cst.Integer, cst.Float, cst.SimpleString)) or \
                (isinstance(node, cst.Name) and node.value in ("True", "False")):
            return None
        return f"passes `{cst.Module([]).code_for_node(node)}`, which is neither invariant nor a batch"


    def copied_value(self, node: cst.BaseExpression) -> str | None:
        """The value of an index statement copied into the graph: a batch, a slice or an integer."""
        if isinstance(node, cst.Subscript):
            return self.batch(node)
        if self.is_slice_value(node):
            return next((p for p in (self.integer(a.value) for a in node.args) if p), None)
        return self.integer(node)


    def schedule(self, node: cst.BaseExpression) -> bool:
        """Plain Python arithmetic of the loop variable and invariants (`0.3 * 0.95 ** step`): its
        per-step values can be computed in Python before the steps, exactly as the loop would."""
        if isinstance(node, (cst.Integer, cst.Float)):
            return True
        if isinstance(node, cst.Name):
            return node.value == self.loop_var or (node.value not in self.per_step and node.value not in self.forbidden)
        if isinstance(node, cst.Attribute):
            return self.invariant(node) is None
        if isinstance(node, cst.BinaryOperation):
            return isinstance(node.operator, ARITHMETIC_OPS) and self.schedule(node.left) and self.schedule(node.right)
        if isinstance(node, cst.UnaryOperation):
            return isinstance(node.operator, (cst.Minus, cst.Plus)) and self.schedule(node.expression)
        return (isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in NUMERIC_BUILTINS
                and not any(a.keyword or a.star for a in node.args) and all(self.schedule(a.value) for a in node.args))

    def condition(self, node: cst.BaseExpression) -> bool:
        """A test of the loop variable and invariants alone (`step % 10 == 0`): it holds at the same
        steps whether it is evaluated before the steps run or after."""
        if isinstance(node, cst.Comparison):
            return all(isinstance(c.operator, ORDER_OPS) for c in node.comparisons) and \
                self.schedule(node.left) and all(self.schedule(c.comparator) for c in node.comparisons)
        if isinstance(node, cst.BooleanOperation):
            return self.condition(node.left) and self.condition(node.right)
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
            return self.condition(node.expression)
        return self.schedule(node)


def _call_of(node, name: str) -> bool:
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == name
