"""Cold-start import cost of the Lambda handler module, against its bare dependencies.

    .venv/bin/python bench/cold_import.py [--runs N]

Routes load lazily (chalicelib.api.lazy), so it also times `import app` plus the modules a cold
function's first request loads, and plus every route module (what an eager app would pay).

Each measurement is a fresh interpreter (as a Lambda cold start is) timing only the import
statement, not interpreter start-up. Byte-code caches are warmed first, as a deployed package's
would be after the first start. Prints the median of N runs for `import app` and for a bare
`import chalice, boto3, pynamodb, pydantic`, their ratio against the goal, and the slowest
chalicelib modules from `python -X importtime`. Prints figures only; always exits 0.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOAL_RATIO = 1.25
DEFAULT_RUNS = 7

# What a Lambda's environment holds: its stage, the secret, a region. Nothing else from this shell.
LAMBDA_ENVIRONMENT = {
    "TOCSIN_STAGE": "dev",
    "API_KEY_HMAC_SECRET": "bench-secret-not-used-for-anything",
    "AWS_DEFAULT_REGION": "us-east-1",
    "TABLE_PREFIX": "tocsin-dev-",
    "QUEUE_PREFIX": "tocsin-dev-",
    "AWS_EC2_METADATA_DISABLED": "true",
}

TIMER = "import time; _t = time.perf_counter(); {statement}; print(time.perf_counter() - _t)"
APP_IMPORT = "import app"
BARE_IMPORT = "import chalice, boto3, pynamodb, pydantic"
# `import pynamodb` and `import pydantic` load little (pydantic is lazy): the modules any app built on
# them pays for are these. Shown for context; the goal is measured against BARE_IMPORT.
USED_IMPORT = (
    "from chalice.app import Chalice; import boto3; from pynamodb.models import Model; from pydantic import BaseModel"
)
OWN_MODULES = ("app", "chalicelib")
# Routes are imported on first use (chalicelib.api.lazy), so the import alone is not the whole cold
# start: these add what a cold function's first request (or batch) loads, for an honest comparison.
FIRST_REQUEST_IMPORTS = {
    "first incidents request": "import app; import chalicelib.api.routes.incidents",
    "first webhook request": "import app; import chalicelib.api.routes.webhooks",
    "first worker batch": "import app; import chalicelib.workers.handlers",
    # Jinja2 loads and compiles the page's templates at the first HTML page rendered.
    "first status page render": (
        "import app; import chalicelib.api.routes.public_status; from chalicelib.statuspage import page_html; "
        "page_html.render_status_page(summary={}, components={}, incidents=[], maintenance=[], now=None)"
    ),
    "every route (eager)": "import app; from chalicelib.api import lazy; lazy.load_all()",
}


@dataclass(frozen=True)
class ImportTime:
    module: str
    self_us: int
    cumulative_us: int


def _environment() -> dict[str, str]:
    environment = {name: os.environ[name] for name in ("PATH", "HOME", "LANG", "SYSTEMROOT") if name in os.environ}
    environment.update(LAMBDA_ENVIRONMENT)
    return environment


def _python(arguments: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *arguments],
        cwd=ROOT,
        env=_environment(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def time_import(statement: str) -> float:
    """Seconds the statement takes in a fresh interpreter."""
    completed = _python(["-c", TIMER.format(statement=statement)])
    if completed.returncode != 0:
        raise RuntimeError(f"`{statement}` failed:\n{completed.stderr.strip()}")
    return float(completed.stdout.strip().splitlines()[-1])


def sample_imports(statements: list[str], runs: int) -> dict[str, list[float]]:
    """Runs interleave the statements, so load on a shared machine hits each of them alike."""
    for statement in statements:
        time_import(statement)  # warm the byte-code cache; not counted
    samples: dict[str, list[float]] = {statement: [] for statement in statements}
    for _ in range(runs):
        for statement in statements:
            samples[statement].append(time_import(statement))
    return samples


def parse_importtime(stderr: str) -> list[ImportTime]:
    """Lines look like `import time:       631 |     202222 |       chalicelib.api.ratelimits`."""
    found = []
    for line in stderr.splitlines():
        if not line.startswith("import time:"):
            continue
        fields = line[len("import time:") :].split("|")
        if len(fields) != 3 or not fields[0].strip().isdigit():
            continue  # the header line
        found.append(ImportTime(fields[2].strip(), int(fields[0]), int(fields[1])))
    return found


def importtimes(statement: str) -> list[ImportTime]:
    return parse_importtime(_python(["-X", "importtime", "-c", statement]).stderr)


def slowest_own_modules(app_times: list[ImportTime], limit: int = 10) -> list[ImportTime]:
    own = [t for t in app_times if t.module.split(".")[0] in OWN_MODULES]
    return sorted(own, key=lambda t: t.cumulative_us, reverse=True)[:limit]


def extra_packages(app_times: list[ImportTime], bare_times: list[ImportTime], limit: int = 10) -> list[tuple[str, int]]:
    """Self time of the modules only `import app` loads, summed per top-level package."""
    bare = {t.module for t in bare_times}
    totals: dict[str, int] = {}
    for entry in app_times:
        if entry.module not in bare:
            package = entry.module.split(".")[0]
            totals[package] = totals.get(package, 0) + entry.self_us
    return sorted(totals.items(), key=lambda item: item[1], reverse=True)[:limit]


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:7.1f} ms"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=DEFAULT_RUNS, help=f"runs per import (default {DEFAULT_RUNS})")
    args = parser.parse_args(argv)
    runs = max(1, args.runs)

    print(f"Cold import, fresh interpreter each run, median of {runs} (Python {sys.version.split()[0]})")
    print(f"environment: {', '.join(f'{k}={v}' for k, v in LAMBDA_ENVIRONMENT.items() if 'SECRET' not in k)}")
    print()
    labels = {APP_IMPORT: "app", BARE_IMPORT: "bare", USED_IMPORT: "used"}
    samples = sample_imports([*labels, *FIRST_REQUEST_IMPORTS.values()], runs)
    medians = {statement: statistics.median(values) for statement, values in samples.items()}
    ratio = medians[APP_IMPORT] / medians[BARE_IMPORT]
    for statement, values in samples.items():
        if statement not in labels:
            continue
        spread = f"min {min(values) * 1000:6.1f}, max {max(values) * 1000:6.1f}"
        print(f"  {labels[statement]:<5} {_ms(medians[statement])}   ({spread})   {statement}")
    print()
    verdict = "within" if ratio <= GOAL_RATIO else "ABOVE"
    print(f"  ratio app / bare: {ratio:.2f}  ({verdict} the goal of {GOAL_RATIO:.2f})")
    print(f"  ratio app / used: {medians[APP_IMPORT] / medians[USED_IMPORT]:.2f}  (only the modules the app needs)")
    print()
    print("Import plus what a cold function's first use loads (ratio against bare):")
    for label, statement in FIRST_REQUEST_IMPORTS.items():
        ratio_to_bare = medians[statement] / medians[BARE_IMPORT]
        print(f"  {label:<25} {_ms(medians[statement])}   {ratio_to_bare:.2f}   {statement}")
    print()
    app_times = importtimes(APP_IMPORT)
    bare_times = importtimes(BARE_IMPORT)
    print("Slowest chalicelib modules (python -X importtime -c 'import app'; cumulative includes what they import):")
    print(f"  {'cumulative':>12} {'self':>10}  module")
    for entry in slowest_own_modules(app_times):
        print(f"  {entry.cumulative_us / 1000:>9.1f} ms {entry.self_us / 1000:>7.1f} ms  {entry.module}")
    print()
    print("The same, by self time (each module's own top-level code: model classes, decorators, tables):")
    for entry in sorted(
        (t for t in app_times if t.module.split(".")[0] in OWN_MODULES), key=lambda t: t.self_us, reverse=True
    )[:10]:
        print(f"  {entry.self_us / 1000:>9.1f} ms  {entry.module}")
    print()
    print("What `import app` loads beyond the bare imports (self time of those modules, per top-level package):")
    for package, self_us in extra_packages(app_times, bare_times):
        print(f"  {self_us / 1000:>9.1f} ms  {package}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
