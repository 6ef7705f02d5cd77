"""Fast safe YAML loading with YAML 1.2 scalars, for data files read on hot paths.

ruamel.yaml (YAML 1.2, pure Python here) keeps comments and line numbers for files people
edit through intently, but parsing the gate's policy bundle with it cost about a tenth of a
second of every hook call. libyaml (through PyYAML) parses the same files roughly ten times
faster, but resolves scalars by YAML 1.1, where ``on``, ``off``, ``yes`` and ``no`` are
booleans and ``1:30`` is a number. A policy that says ``effect: no`` must not silently become
``False``, so this loader keeps libyaml's parser and swaps in the YAML 1.2 core schema's
rules for booleans, integers and floats: everything else stays a string.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

__all__ = ["YamlError", "load"]

YamlError = yaml.YAMLError

_BaseLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Yaml12Loader(_BaseLoader):  # type: ignore[misc,valid-type]
    """libyaml's safe loader with YAML 1.2 core-schema scalar resolution."""


_REPLACED = ("tag:yaml.org,2002:bool", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float")
_Yaml12Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag not in _REPLACED]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)
_Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:int", re.compile(r"^(?:[-+]?[0-9][0-9_]*|0o[0-7]+|0x[0-9a-fA-F]+)$"), list("-+0123456789")
)
_Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
    ),
    list("-+.0123456789"),
)


def _construct_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int:
    text = str(loader.construct_scalar(node)).replace("_", "")  # "1_000", as ruamel.yaml reads it
    if text.startswith("0o"):
        return int(text[2:], 8)
    if text.startswith("0x"):
        return int(text[2:], 16)
    return int(text, 10)  # "010" is ten in YAML 1.2, not octal eight as in 1.1


_Yaml12Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)


class _UniqueKeysLoader(_Yaml12Loader):
    """Refuses a mapping that names a key twice, as ruamel.yaml does (libyaml keeps the last)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        mapping: dict[Any, Any] = super().construct_mapping(node, deep)
        # A merge key (``<<``) also makes the two counts differ: refused too, as not plain data.
        if len(mapping) != len(node.value):
            seen: set[Any] = set()
            where = node.start_mark
            for key_node, _ in node.value:  # the mark of the key given again, for its line
                key = key_node.value if isinstance(key_node, yaml.ScalarNode) else id(key_node)
                if key in seen or key == "<<":
                    where = key_node.start_mark
                    break
                seen.add(key)
            raise yaml.constructor.ConstructorError(
                "while constructing a mapping", node.start_mark, "found a duplicate key", where
            )
        return mapping


def load(text: str, *, unique_keys: bool = False) -> Any:
    """Parse one YAML document with YAML 1.2 scalars; raises :data:`YamlError` with a mark.

    ``unique_keys``: a key given twice in one mapping (or a merge key) is an error, not the last
    value silently winning."""
    return yaml.load(text, Loader=_UniqueKeysLoader if unique_keys else _Yaml12Loader)
