"""Writing methods out where `__init__` calls them (see transforms/graph/structure/class_methods.py):
the call statement becomes the method's parameters bound to the arguments, its statements, and the
call's target bound to what it returned; an early `if <test>: return` at the top level of `__init__`
becomes `if not <test>:` around the statements after it."""
from __future__ import annotations

import libcst as cst

from transforms.common.syntax import (NodeOrigins, Refusal, bind_arguments, is_constant, is_docstring,
                                      only_small_statement)
from transforms.graph.structure.class_method_calls import Method, called_method, method_call


class MethodWriter:
    def __init__(self, rebuilt: dict, methods: dict[str, Method], origins: NodeOrigins) -> None:
        self.rebuilt, self.methods, self.origins = rebuilt, methods, origins

    def block(self, original: cst.IndentedBlock, updated: cst.IndentedBlock, self_name: str,
              top_level: bool = False) -> list:
        """The statements of `updated` with the methods written out; at `__init__`'s top level, an early
        `if <test>: return` becomes `if not <test>:` around the statements after it."""
        statements = []
        pairs = list(zip(original.body, updated.body))
        for index, (statement, new) in enumerate(pairs):
            method = self.methods.get(called_method(statement, self_name))
            if top_level and is_early_return(statement) and index + 1 < len(pairs):
                rest = _block_of([s for s, _ in pairs[index + 1:]]), _block_of([n for _, n in pairs[index + 1:]])
                guarded = cst.If(test=_negated(new.test), body=cst.IndentedBlock(
                    body=non_empty(self.block(*rest, self_name, top_level=True))), leading_lines=new.leading_lines)
                statements.append(self._made(guarded, statement))
                break
            if method is not None:
                statements += self._written_out(statement, new, method)
            elif isinstance(statement, cst.If):
                statements.append(self._made(self._branches(statement, new, self_name), statement))
            else:
                statements.append(new)
        return statements

    def _branches(self, original: cst.If, updated: cst.If, self_name: str) -> cst.If:
        body = updated.body.with_changes(body=non_empty(self.block(original.body, updated.body, self_name)))
        orelse = updated.orelse
        if isinstance(original.orelse, cst.If):
            orelse = self._branches(original.orelse, updated.orelse, self_name)
        elif original.orelse is not None:
            orelse = updated.orelse.with_changes(body=updated.orelse.body.with_changes(
                body=non_empty(self.block(original.orelse.body, updated.orelse.body, self_name))))
        return updated.with_changes(body=body, orelse=orelse)

    def _written_out(self, call_statement: cst.SimpleStatementLine, updated: cst.SimpleStatementLine,
                     method: Method) -> list:
        node, new = method.node, self.rebuilt[id(method.node)]
        statements = [self._made(s, call_statement) for s in _bindings(call_statement, method)]
        body = list(zip(node.body.body, new.body.body))
        if body and is_docstring(body[0][0]):
            body = body[1:]
        returned, return_line = None, None
        if body and isinstance(only_small_statement(body[-1][0]), cst.Return):
            return_line = body[-1][1]
            returned = only_small_statement(return_line).value
            body = body[:-1]
        statements += self.block(_block_of([s for s, _ in body]), _block_of([n for _, n in body]), method.self_name)
        small = only_small_statement(updated)
        comments = {} if return_line is None else {"leading_lines": return_line.leading_lines,
                                                   "trailing_whitespace": return_line.trailing_whitespace}
        if isinstance(small, cst.Assign):
            value = returned if returned is not None else cst.Name("None")
            result = updated.with_changes(body=[small.with_changes(value=value)], **comments)
            statements.append(self._made(result, call_statement))
        elif returned is not None and not isinstance(returned, cst.Name):
            statements.append(self._made(cst.SimpleStatementLine([cst.Expr(returned)], **comments), call_statement))
        if statements:
            first = statements[0]
            statements[0] = first.with_changes(leading_lines=[*updated.leading_lines, *first.leading_lines])
            self.origins.add(statements[0], self.origins.origin(first, first))
        return statements

    def _made(self, statement: cst.BaseStatement, origin: cst.CSTNode) -> cst.BaseStatement:
        self.origins.add(statement, origin)
        return statement


def is_early_return(statement: cst.BaseStatement) -> bool:
    """`if <test>: return` (nothing else, no else branch): the rest of the function runs only when the
    test is false, which is what `if not <test>:` around the rest says."""
    if not isinstance(statement, cst.If) or statement.orelse is not None:
        return False
    body = statement.body.body if isinstance(statement.body, cst.IndentedBlock) else statement.body.body
    small = only_small_statement(body[0]) if isinstance(statement.body, cst.IndentedBlock) and len(body) == 1 \
        else (body[0] if len(body) == 1 else None)
    return isinstance(small, cst.Return) and small.value is None


def _negated(test: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not) and not test.lpar:
        return test.expression
    atom = isinstance(test, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) or test.lpar
    return cst.UnaryOperation(cst.Not(), test if atom else test.with_changes(lpar=[cst.LeftParen()],
                                                                               rpar=[cst.RightParen()]))


def non_empty(statements: list) -> list:
    return statements or [cst.SimpleStatementLine([cst.Pass()])]


def _block_of(statements: list) -> cst.IndentedBlock:
    return cst.IndentedBlock(body=statements)


def _bindings(call_statement: cst.SimpleStatementLine, method: Method) -> list[cst.SimpleStatementLine]:
    """`param = argument` for each parameter of `method` (defaults where the call gives none)."""
    call = method_call(call_statement)
    params = method.node.params.params[1:]
    values = bind_arguments(call, [param.name.value for param in params], f"'{method.node.name.value}'")
    statements = []
    for param in params:
        name = param.name.value
        value = values.get(name, param.default)
        if value is None:
            raise Refusal(call, f"'{method.node.name.value}' is called without its argument '{name}'")
        if name not in values and not is_constant(value):
            raise Refusal(param, f"'{method.node.name.value}' has a default that is not a literal (made once, "
                                 "when the class was defined)")
        target = method.renamed.get(name, name)
        if isinstance(value, cst.Name) and value.value == target:
            continue
        statements.append(cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(target))], value)]))
    return statements
