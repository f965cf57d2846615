"""Every page and email is a Jinja2 template in this directory; `render` is the one way to fill one.

Escaping belongs to the environment, never to a caller or a template: `.html` and `.xml` templates
are autoescaped, `.txt` templates (plain-text email parts) are not (the rules are in engine.py).
Jinja2 is imported by the first rendering, not by importing this module, so `import app` and the
modules that render nothing never pay for it. The environment is built once per process and keeps
its compiled templates.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jinja2 import Environment

__all__ = ["TEMPLATE_DIRECTORY", "environment", "render"]

# `chalice package` ships the whole chalicelib/ directory, templates included.
TEMPLATE_DIRECTORY = Path(__file__).resolve().parent


@cache
def environment() -> Environment:
    """The process's one environment, built on first use."""
    from chalicelib.templates.engine import build_environment

    return build_environment(TEMPLATE_DIRECTORY)


def render(name: str, /, **context: Any) -> str:
    """The template `name` (a path under this directory) filled with `context`."""
    return environment().get_template(name).render(**context)
