"""A strict reader of the OpenMetrics text format (the subset /metrics writes), for the tests:
prometheus_client is not in the test virtualenv. It refuses what a Prometheus parser would refuse
(a sample before its TYPE, a family split in two, a bad name, label or value, unescaped label
text, histogram buckets that are not cumulative or do not end at +Inf = _count, no `# EOF`)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL = r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\\\|\\"|\\n)*)"'
SAMPLE = re.compile(rf"^({NAME})(\{{(?:{LABEL}(?:,{LABEL})*)?\}})? (\S+)$")
META = re.compile(rf"^# (TYPE|HELP|UNIT) ({NAME})(?: (.*))?$")
SUFFIXES = {"counter": ("_total", "_created"), "histogram": ("_bucket", "_count", "_sum", "_created"), "gauge": ("",)}

Labels = tuple[tuple[str, str], ...]


@dataclass
class Family:
    name: str
    type: str
    help: str | None = None
    samples: list[tuple[str, Labels, float]] = field(default_factory=list)


def _unescape(value: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "\\": "\\", '"': '"'}[m.group(1)], value)


def parse(text: str) -> dict[str, Family]:
    if not text.endswith("# EOF\n"):
        raise ValueError("the exposition must end with '# EOF'")
    families: dict[str, Family] = {}
    current: Family | None = None
    for number, line in enumerate(text.splitlines()[:-1], 1):
        meta = META.match(line)
        if meta:
            what, name, rest = meta.groups()
            if current is None or current.name != name:
                if name in families:
                    raise ValueError(f"line {number}: family {name} appears twice")
                current = families.setdefault(name, Family(name, "unknown"))
            if what == "TYPE":
                if rest not in SUFFIXES or current.samples:
                    raise ValueError(f"line {number}: bad TYPE")
                current.type = rest
            elif what == "HELP":
                current.help = rest
            continue
        if line.startswith("#") or not line:
            raise ValueError(f"line {number}: unexpected {line!r}")
        sample = SAMPLE.match(line)
        if not sample or current is None:
            raise ValueError(f"line {number}: not a sample of a declared family: {line!r}")
        name = sample.group(1)
        suffix = name[len(current.name) :] if name.startswith(current.name) else None
        if suffix is None or suffix not in SUFFIXES[current.type]:
            raise ValueError(f"line {number}: {name} does not belong to {current.name} ({current.type})")
        labels = tuple((key, _unescape(value)) for key, value in re.findall(LABEL, sample.group(2) or ""))
        value = float(sample.group(sample.lastindex or 0))
        if math.isnan(value):
            raise ValueError(f"line {number}: NaN")
        current.samples.append((name, labels, value))
    for family in families.values():
        if family.type == "histogram":
            _check_histogram(family)
        if family.type == "counter" and any(value < 0 for _, _, value in family.samples):
            raise ValueError(f"{family.name}: a negative counter")
    return families


def _check_histogram(family: Family) -> None:
    series: dict[Labels, list[tuple[float, float]]] = {}
    counts: dict[Labels, float] = {}
    for name, labels, value in family.samples:
        plain = tuple(pair for pair in labels if pair[0] != "le")
        if name.endswith("_bucket"):
            le = dict(labels)["le"]
            series.setdefault(plain, []).append((math.inf if le == "+Inf" else float(le), value))
        elif name.endswith("_count"):
            counts[plain] = value
    for labels, buckets in series.items():
        bounds = [bound for bound, _ in buckets]
        values = [value for _, value in buckets]
        if bounds != sorted(bounds) or bounds[-1] != math.inf or values != sorted(values):
            raise ValueError(f"{family.name}{labels}: buckets are not cumulative up to +Inf")
        if counts.get(labels) != values[-1]:
            raise ValueError(f"{family.name}{labels}: _count is not the +Inf bucket")


def value(families: dict[str, Family], sample: str, **labels: str) -> float:
    family = next(f for f in families.values() if sample.startswith(f.name))
    for name, found, amount in family.samples:
        if name == sample and dict(found) == labels:
            return amount
    raise KeyError((sample, labels))
