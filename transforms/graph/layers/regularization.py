"""`tf.losses.get_regularization_losses()` / `get_regularization_loss()` in graph code.

TF1 layers given a regularizer (`kernel_regularizer=`, slim's `weights_regularizer=`) added one loss per
regularized variable to the REGULARIZATION_LOSSES collection when they were built; these calls read
the collection as it stood, in creation order. The Keras layers keep their regularizers and compute
the same terms as `layer.losses`, so inside a step function the read becomes the `losses` of the
regularized layers created before it (`conv1.losses + fc3.losses`; `tf.add_n(...)` for the sum, and
TF1's `0.0` when there are none).

Refused: a read outside the step functions, one with `scope=`, and a step function that reads the
losses without calling every regularized layer it lists (a Keras layer not called there would give
no terms, or stale ones)."""
from __future__ import annotations

from transforms.common.graph_symbols import table
from transforms.common.syntax import Refusal


def regularization_aliases(block, scanner, functions) -> None:
    """Set `block.member_aliases` for each read, so the step functions write the layers' losses."""
    reads = scanner.regularization_reads
    if not reads:
        return
    created = _regularized_layers(scanner)
    for index, call in reads:
        if call.args:
            raise Refusal(call, "tf.losses.get_regularization_loss(es) with arguments (scope=, name=) is not modelled")
        layers = [(layer_index, name) for layer_index, name in created if layer_index < index]
        readers = [function for function in functions if index in function.items]
        if not readers:
            raise Refusal(call, "the regularization losses are read outside the session runs")
        for function in readers:
            missing = [name for layer_index, name in layers if layer_index not in function.items]
            if missing:
                raise Refusal(call, f"'{function.name}' reads the regularization losses without calling the layer "
                                    f"'{missing[0]}'")
        block.member_aliases[id(call)] = _expression(scanner.analyzer.category(call.func)[0],
                                                     [name for _, name in layers])


def _regularized_layers(scanner) -> list[tuple[int, str]]:
    """(item index, layer object) of the layers built with a regularizer, in creation order."""
    seen, found = set(), []
    for index in sorted(scanner.layer_uses):
        for use in scanner.layer_uses[index]:
            if use.regularized and use.object_name not in seen:
                seen.add(use.object_name)
                found.append((index, use.object_name))
    return found


def _expression(tf_name: str, layers: list[str]) -> str:
    terms = " + ".join(f"{name}.losses" for name in layers)
    if table("graph_api")["regularization_losses"][tf_name] == "list":
        return terms or "[]"
    return f"tf.add_n({terms})" if terms else "tf.constant(0.0)"
