"""Reading and writing the document as YAML, keeping the line of every value.

The reader follows YAML 1.2's core types: `10:30` stays the string a time is (YAML 1.1 reads it
as 630), `no` stays a string and dates stay text for the model to parse. A key given twice is an
error, not a silent overwrite. Every value's line is kept by its path (("services", 2, "team")),
so a validation error names the line it is about."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import yaml

Path = tuple[str | int, ...]


class _CoreResolver(yaml.resolver.BaseResolver):
    """YAML 1.2 core schema: null, true/false, decimal/octal/hex integers, floats; the rest is text."""


_CoreResolver.add_implicit_resolver(
    "tag:yaml.org,2002:null", re.compile(r"^(?:~|null|Null|NULL|)$"), ["~", "n", "N", ""]
)
_CoreResolver.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)
_CoreResolver.add_implicit_resolver(
    "tag:yaml.org,2002:int", re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$"), list("-+0123456789")
)
_CoreResolver.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
    ),
    list("-+0123456789."),
)


class _Loader(
    yaml.reader.Reader,
    yaml.scanner.Scanner,
    yaml.parser.Parser,
    yaml.composer.Composer,
    yaml.constructor.SafeConstructor,
    _CoreResolver,
):
    def __init__(self, stream: str) -> None:
        yaml.reader.Reader.__init__(self, stream)
        yaml.scanner.Scanner.__init__(self)
        yaml.parser.Parser.__init__(self)
        yaml.composer.Composer.__init__(self)
        yaml.constructor.SafeConstructor.__init__(self)
        _CoreResolver.__init__(self)


def _int(loader: _Loader, node: yaml.ScalarNode) -> int:
    text = str(loader.construct_scalar(node))
    if text.startswith("0o"):
        return int(text[2:], 8)
    return int(text, 0) if text.startswith("0x") else int(text)


_Loader.add_constructor("tag:yaml.org,2002:int", _int)


class YamlError(Exception):
    def __init__(self, line: int | None, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


@dataclass
class Loaded:
    data: Any
    lines: dict[Path, int]

    def line_of(self, path: Path) -> int | None:
        """The line of the value at `path`, else of its nearest enclosing value that has one."""
        probe = tuple(path)
        while True:
            if probe in self.lines:
                return self.lines[probe]
            if not probe:
                return None
            probe = probe[:-1]


def load(text: str) -> Loaded:
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return Loaded(None, {})
        lines: dict[Path, int] = {}
        data = _build(loader, node, (), lines)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        raise YamlError(mark.line + 1 if mark else None, f"{error.problem or error.context}") from None
    except yaml.YAMLError as error:
        raise YamlError(None, str(error)) from None
    finally:
        loader.dispose()
    return Loaded(data, lines)


def _build(loader: _Loader, node: yaml.Node, path: Path, lines: dict[Path, int]) -> Any:
    lines[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        loader.flatten_mapping(node)  # merge keys (<<) as YAML defines them
        built: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            if not isinstance(key, str | int | bool | float) and key is not None:
                raise YamlError(key_node.start_mark.line + 1, "a mapping key must be a plain value")
            if key in built:
                raise YamlError(key_node.start_mark.line + 1, f"the key {key!r} is given twice")
            built[key] = _build(loader, value_node, (*path, str(key)), lines)
            lines[(*path, str(key))] = key_node.start_mark.line + 1
        return built
    if isinstance(node, yaml.SequenceNode):
        return [_build(loader, item, (*path, index), lines) for index, item in enumerate(node.value)]
    return loader.construct_object(node, deep=True)


# --- writing --------------------------------------------------------------------------------------


class _Dumper(yaml.SafeDumper):
    """Block style, keys in the model's order; multi-line text as a literal block. Strings a YAML
    1.1 reader would take for something else (10:30, yes, 2026-01-05) are quoted, as SafeDumper does."""

    def ignore_aliases(self, data: Any) -> bool:
        return True

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)  # list items indented under their key


def _text(dumper: _Dumper, value: str) -> yaml.ScalarNode:
    if "\n" in value:
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return dumper.represent_str(value)


_Dumper.add_representer(str, _text)


def dump(data: Any) -> str:
    text: str = yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100000, indent=2)
    return text
