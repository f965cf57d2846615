"""Count the suite's test functions and `assert` statements, now and at a git revision:
`python -m scripts.test_census [REV]` (REV defaults to main). A change that speeds the suite up
must not make it weaker: neither count may drop.

A test function is a `def test*` (module level or in a class; one per definition, however many
cases it is parametrized into); an assert is an `assert` statement anywhere under tests/ (helpers
included, since a helper's assert runs for every test that calls it).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Census:
    files: int
    test_functions: int
    asserts: int


def count(sources: dict[str, str]) -> Census:
    tests = asserts = 0
    for source in sources.values():
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test"):
                tests += 1
            elif isinstance(node, ast.Assert):
                asserts += 1
    return Census(len(sources), tests, asserts)


def working_tree() -> dict[str, str]:
    return {str(path.relative_to(ROOT)): path.read_text() for path in sorted((ROOT / "tests").rglob("*.py"))}


def at_revision(revision: str) -> dict[str, str]:
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout

    names = [n for n in git("ls-tree", "-r", "--name-only", revision, "tests").split() if n.endswith(".py")]
    return {name: git("show", f"{revision}:{name}") for name in names}


def main(argv: list[str]) -> int:
    revision = argv[0] if argv else "main"
    before, after = count(at_revision(revision)), count(working_tree())
    print(f"{'':16}{'files':>8}{'tests':>8}{'asserts':>9}")
    for label, census in ((revision, before), ("working tree", after)):
        print(f"{label[:16]:16}{census.files:>8}{census.test_functions:>8}{census.asserts:>9}")
    weaker = after.test_functions < before.test_functions or after.asserts < before.asserts
    if weaker:
        print("fewer test functions or asserts than at", revision)
    return 1 if weaker else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
