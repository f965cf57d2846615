"""The Jinja2 environment's rules. Imported only by `chalicelib.templates.environment()`, at the
first rendering, so this module may import Jinja2 at the top.

- Escaping by file name: `.html` and `.xml` (the status page's feeds) autoescaped, `.txt`
  (plain-text email parts) not, anything else refused. The escapes (`&amp; &lt; &gt; &quot; &#x27;`)
  are valid XML as they are HTML.
- Autoescape writes quotes as the standard library's `html.escape` does (`&quot;`, `&#x27;`), not
  as MarkupSafe does (`&#34;`, `&#39;`): postmortem HTML is stored and status page ETags hash the
  bytes, so the renderings keep the bytes they had before templates. MarkupSafe still escapes
  whatever the finalizer returns unmarked, so a slip here cannot unescape a value. None renders
  as nothing in HTML, as the hand-built HTML did.
- Compact HTML: in a `.html` template, a line break and the indentation around it are dropped
  when they sit between two tags (`>` or `}` before, `<` or `{` after), and so is the line break
  that ends the file. Templates are written one element per line; the output has no whitespace
  between elements, as it always had. A space wanted between two elements is written on the same
  line. Text is never touched.
- Undefined variables raise (StrictUndefined): a template and its caller cannot drift apart
  silently.
- Times are shown in a reader's zone with the zone named, by two filters (chalicelib/zones.py):
  `{{ moment | console_time(zone) }}` "27 Nov 2026, 14:05 CET" and `{{ moment | message_time(zone) }}`
  "Thu 27 Nov 2026, 14:05 CET". A moment may be a datetime or an RFC 3339 string.
- Counts read as English: `{{ n | counted("minute") }}` "1 minute", "5 minutes" (words.py).
"""

from __future__ import annotations

import html
import re
from datetime import datetime
from pathlib import Path
from typing import Any

import jinja2
from jinja2.ext import Extension
from jinja2.nodes import EvalContext
from markupsafe import Markup

from chalicelib import zones
from chalicelib.templates.words import counted, minutes_in_words

AUTOESCAPE_BY_SUFFIX = {".html": True, ".xml": True, ".txt": False}
# `>`/`}` ends an HTML tag or a Jinja tag; `<`/`{` starts one.
_BREAK_BETWEEN_TAGS = re.compile(r"(?<=[>}])[ \t]*\n[ \t\n]*(?=[<{])")


def autoescape_for(name: str | None) -> bool:
    suffix = Path(name or "").suffix
    if suffix not in AUTOESCAPE_BY_SUFFIX:
        raise ValueError(f"template {name!r}: name it .html or .xml (escaped) or .txt (plain text)")
    return AUTOESCAPE_BY_SUFFIX[suffix]


@jinja2.pass_eval_context
def finalize(eval_context: EvalContext, value: Any) -> Any:
    """What `{{ value }}` writes: in plain text the value; in HTML markup (a macro's output) as it
    is and anything else escaped."""
    if not eval_context.autoescape or hasattr(value, "__html__"):
        return value
    return Markup(html.escape("" if value is None else str(value), quote=True))


class CompactHtml(Extension):
    def preprocess(self, source: str, name: str | None, filename: str | None = None) -> str:
        if name is None or not name.endswith(".html"):
            return source
        return _BREAK_BETWEEN_TAGS.sub("", source).rstrip("\n")


def _moment(value: datetime | str) -> datetime:
    return value if isinstance(value, datetime) else datetime.fromisoformat(value.replace("Z", "+00:00"))


def console_time(value: datetime | str, zone: str | None) -> str:
    return zones.console_time(_moment(value), zone)


def message_time(value: datetime | str, zone: str | None) -> str:
    return zones.message_time(_moment(value), zone)


def build_environment(directory: Path) -> jinja2.Environment:
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(directory),
        extensions=[CompactHtml],
        autoescape=autoescape_for,
        undefined=jinja2.StrictUndefined,
        finalize=finalize,
        # Block tags own their line, in .txt templates too: no stray newlines in the output.
        trim_blocks=True,
        lstrip_blocks=True,
        # A .txt template is the text as written, down to its final line break.
        keep_trailing_newline=True,
        auto_reload=False,
    )
    environment.filters["console_time"] = console_time
    environment.filters["message_time"] = message_time
    environment.filters["counted"] = counted
    environment.filters["minutes_in_words"] = minutes_in_words
    return environment
