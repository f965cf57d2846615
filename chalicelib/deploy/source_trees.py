"""Parsed source files, parsed once per process.

The IAM policy scan (chalicelib/deploy/awscalls.py), the layer graph (scripts/import_graph.py)
and the code-rule tests each walk the syntax tree of every chalicelib module, some twice per
run: about a dozen parses of ~550 files (~2.5 s each) in one test process. A tree is kept per
file and reused while the file is unchanged (same modification time and size). Callers only
read the trees (ast.walk, NodeVisitor); none may change one.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path


def parsed(path: Path) -> ast.Module:
    status = path.stat()
    return _parsed(str(path.resolve()), status.st_mtime_ns, status.st_size)


@functools.cache
def _parsed(path: str, modified_ns: int, size: int) -> ast.Module:
    return ast.parse(Path(path).read_text(), path)
