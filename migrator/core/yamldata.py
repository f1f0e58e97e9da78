"""Our own YAML data (rules, targets, instance facts) read strictly: a key given twice is an
error, where PyYAML keeps the last one silently and a rule would lose half its definition."""

from __future__ import annotations

from typing import Any

import yaml

__all__ = ["load_strict", "DuplicateKey"]


class DuplicateKey(yaml.constructor.ConstructorError):
    """A mapping names one key twice: `key`, and `lines` (1-based, first and second)."""

    def __init__(self, key: Any, lines: tuple[int, int], *args: Any) -> None:
        super().__init__(*args)
        self.key, self.lines = key, lines

    def __str__(self) -> str:
        return f"key {self.key!r} is given twice (lines {self.lines[0]} and {self.lines[1]})"


class _StrictLoader(yaml.SafeLoader):
    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, yaml.Node] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.get(key)
            except TypeError:  # an unhashable key: SafeLoader reports it
                break
            if first is not None:
                raise DuplicateKey(key, (first.start_mark.line + 1, key_node.start_mark.line + 1),
                                   "while reading a mapping", node.start_mark, "duplicate key", key_node.start_mark)
            seen[key] = key_node
        return super().construct_mapping(node, deep=deep)


def load_strict(text: str) -> Any:
    """`yaml.safe_load` that refuses duplicate keys.

    Raises:
        yaml.YAMLError: bad YAML, or `DuplicateKey` naming the key and its lines.
    """
    return yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass
