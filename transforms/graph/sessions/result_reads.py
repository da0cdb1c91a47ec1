"""Which reads of a fetched result may be converted with `.numpy()` where they are.

sess.run gave one NumPy array per fetch, and a program may write into it (`action[0] = 2`), keep it
under a second name (`target = values`, `row = values[0]`: the same memory), or hand it to code
that writes into it (`np.random.shuffle(order)`). A step function returns a tensor instead, and
each `.numpy()` of it is a new array: a write into one is not seen by the next read. Such a result
must be converted once, where it is bound, so that the program keeps working on one array.

A read is converted where it is only when it just looks at the value: it is not written to (item or
attribute assignment, `del`, in-place methods), not bound as it is or as a view (subscripts and
attributes share memory; returning it is a read, the name is not read after), and not passed to
code that may write into it. Code known to leave its arguments alone: the reading builtins, NumPy
functions other than the writing and view-making ones, `str.format`, and the program's own
functions whose parameter is itself only read (followed a few calls deep). Appending to a list
counts as a read: the list holds a copy, which only differs if the program writes into the array
through the list and then reads the name again.
"""
from __future__ import annotations

import libcst as cst

_IN_PLACE_METHODS = frozenset({
    "sort", "fill", "resize", "put", "itemset", "partition", "setfield", "setflags", "byteswap",
})
_VIEW_LINKS = (cst.Subscript, cst.Attribute)
_STORING_PARENTS = (cst.Assign, cst.AnnAssign, cst.NamedExpr, cst.Yield, cst.For,
                    cst.CompFor, cst.WithItem, cst.Lambda)
_DISPLAYS = (cst.Tuple, cst.List, cst.Set, cst.Dict, cst.Element, cst.DictElement, cst.StarredElement)
_COLLECTING_METHODS = frozenset({"append", "extend", "insert", "add"})
_READING_BUILTINS = frozenset({
    "print", "len", "float", "int", "str", "repr", "format", "abs", "round", "bool", "sum", "any",
    "all", "isinstance", "type", "hash", "id",
})
# NumPy functions that write into an argument, or return a view of it (a name bound to the view
# writes into the result).
_NUMPY_WRITING_OR_VIEWING = frozenset({
    "shuffle", "copyto", "put", "place", "putmask", "fill_diagonal", "put_along_axis",
    "asarray", "asanyarray", "ascontiguousarray", "asfortranarray", "reshape", "ravel", "squeeze",
    "transpose", "swapaxes", "moveaxis", "rollaxis", "expand_dims", "atleast_1d", "atleast_2d",
    "atleast_3d", "broadcast_to", "broadcast_arrays", "diagonal", "real", "imag", "frombuffer",
    "split", "array_split", "hsplit", "vsplit", "dsplit", "flip", "fliplr", "flipud", "rot90",
})


class ResultReads:
    """Answers `reads_only` from the transform's resolver (parents, scopes, qualified names)."""

    _CALL_DEPTH = 3  # helpers calling helpers: deeper chains are taken as possibly writing

    def __init__(self, resolver) -> None:
        self.resolver = resolver

    def reads_only(self, read: cst.CSTNode, depth: int = 0) -> bool:
        """Whether `read` (a name holding a fetched result, or `results[<key>]`) only looks at it."""
        parent_of = self.resolver.parent
        top, parent = read, parent_of(read)
        while isinstance(parent, _VIEW_LINKS) and parent.value is top:
            if isinstance(parent, cst.Attribute) and parent.attr.value in _IN_PLACE_METHODS:
                return False
            top, parent = parent, parent_of(parent)
        if top is not read and _is_written(top, parent, parent_of):
            return False
        if isinstance(parent, cst.Arg):
            return self._leaves_argument_alone(parent, parent_of(parent), depth)
        while isinstance(parent, _DISPLAYS):
            parent = parent_of(parent)
        return not isinstance(parent, _STORING_PARENTS + (cst.AugAssign, cst.Del))

    def _leaves_argument_alone(self, arg: cst.Arg, call: cst.CSTNode, depth: int) -> bool:
        if not isinstance(call, cst.Call) or arg.keyword is not None and arg.keyword.value == "out":
            return False
        func = call.func
        if isinstance(func, cst.Attribute) and (
                func.attr.value in _COLLECTING_METHODS
                or func.attr.value == "format" and isinstance(func.value, (cst.SimpleString, cst.ConcatenatedString))):
            return True
        names = self.resolver.transform.qualified_names(func)
        if len(names) == 1:
            head, _, rest = next(iter(names)).partition(".")
            if head == "builtins":
                return rest in _READING_BUILTINS
            if head == "numpy":
                return bool(rest) and rest.rsplit(".", 1)[-1] not in _NUMPY_WRITING_OR_VIEWING
        parameter = self._parameter_receiving(arg, call)
        accesses = self._accesses_of(parameter) if parameter is not None and depth < self._CALL_DEPTH else None
        return accesses is not None and all(self.reads_only(access.node, depth + 1) for access in accesses)

    def _parameter_receiving(self, arg: cst.Arg, call: cst.Call) -> cst.Name | None:
        """The parameter of the program's own function `call` calls that `arg` is passed to."""
        if not isinstance(call.func, cst.Name) or arg.star:
            return None
        bindings = self.resolver.assignments_of(call.func)
        function = bindings[0].node if len(bindings) == 1 else None
        if not isinstance(function, cst.FunctionDef) or any(a.star for a in call.args):
            return None
        params = function.params
        if arg.keyword is not None:
            named = [p for p in (*params.params, *params.kwonly_params) if p.name.value == arg.keyword.value]
            return named[0].name if named else None
        index = [a for a in call.args if a.keyword is None].index(arg)
        positional = [*params.posonly_params, *params.params]
        return positional[index].name if index < len(positional) else None

    def _accesses_of(self, parameter: cst.Name) -> list | None:
        scope = self.resolver.scope(parameter)
        bindings = [a for a in scope.assignments[parameter.value]
                    if isinstance(a.node, cst.Param) and a.node.name is parameter] if scope else []
        return [access for binding in bindings for access in binding.references] if bindings else None


def _is_written(top: cst.CSTNode, parent: cst.CSTNode, parent_of) -> bool:
    """Whether `top` (an item or attribute of the result) is a target: assigned, deleted, bound."""
    while isinstance(parent, _DISPLAYS):
        top, parent = parent, parent_of(parent)
    if isinstance(parent, (cst.AssignTarget, cst.Del)):
        return True
    if isinstance(parent, (cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor)):
        return parent.target is top
    return isinstance(parent, cst.AsName)
