"""The emulator parses an UpdateExpression once per distinct text, and its validators stop
rebuilding their dispatch table at every node.

Every API request charges a rate-limit bucket with an UpdateItem, and most writes are UpdateItems,
so moto's update path is the hottest DynamoDB code in the suite. Profiled on the API, console
and service tests, moto there:
- tokenizes and parses the same few expression texts twice per UpdateItem (in the response
  handler and again in the backend): about 4% of those tests' CPU;
- walks the tree with nine validators, each asking `nodes_to_be_processed()` at every node, which
  builds the validator's {node class: method} dict and a tuple of its keys anew each time.

A parsed expression is only read by moto (`find_clauses`) or deep-copied by the validator before
anything changes it, so one parse per text serves every request; and every validator's node classes
are the literal keys of its `_processing_map`, the same for every instance, so they are looked up
once per class. What an UpdateItem does and answers is unchanged;
tests/service/test_moto_expressions.py holds the cached parse to a fresh one and runs updates that
share an expression.

Applied by the emulator process (chalicelib/local/moto_server.py) and the test suite's in-process
moto (tests/emulator.py), like chalicelib/local/moto_responses.py.
"""

from __future__ import annotations

import functools
from typing import Any

PARSED_EXPRESSIONS = 1024


def cheaper_update_expressions() -> None:
    """Idempotent."""
    # moto's parsing modules are untyped to mypy (it reads no attribute of them).
    from moto.dynamodb.parsing.ast_nodes import DepthFirstTraverser  # type: ignore[attr-defined]
    from moto.dynamodb.parsing.expressions import UpdateExpressionParser  # type: ignore[attr-defined]

    if getattr(DepthFirstTraverser.nodes_to_be_processed, "tocsin_per_class", False):
        return
    parse = functools.lru_cache(maxsize=PARSED_EXPRESSIONS)(UpdateExpressionParser.make)
    UpdateExpressionParser.make = staticmethod(parse)

    node_classes: dict[type, tuple[type, ...]] = {}

    def nodes_to_be_processed(self: Any) -> tuple[type, ...]:
        found = node_classes.get(type(self))
        if found is None:
            found = node_classes[type(self)] = tuple(self._processing_map())
        return found

    getter: Any = nodes_to_be_processed
    getter.tocsin_per_class = True
    DepthFirstTraverser.nodes_to_be_processed = getter
