"""Build a `DeploymentSpec` from a YAML spec file and command-line flags (flags win).

The file uses the same field names as `DeploymentSpec` (`-` or `_`), e.g.::

    instance_type: trn2.48xlarge
    region: us-east-2
    nodes: 4
    tags: {team: ml-platform}

See samples/deploy-spec.yaml for every field, commented.

A spec file may come from a repository nobody here has read, so it is read strictly:

- YAML 1.2 core schema: only `true`/`false` are booleans, `null`/`~` null, integers are decimal
  (or `0o`/`0x`), floats are 1.2 floats. No sexagesimal (`1:30`), no `_` in numbers, no
  `yes`/`no`/`on`/`off` booleans, no timestamps, no merge keys.
- A field that holds text (names, ids, tags, versions) keeps the text as written: `0123`
  stays `"0123"`, `1.30` stays `"1.30"`; a number is never re-read into a string.
- Anchors and aliases (`&a`, `*a`) are refused, so an alias bomb cannot expand; so are
  explicit tags other than the core ones, keys given twice, and non-regular or huge files.
"""

from __future__ import annotations

import dataclasses
import math
import re
import stat
from pathlib import Path
from typing import Any

import yaml

from migrator.deploy.launch_template import DeploymentSpec, SpecError, _is_control, _show

__all__ = ["build_spec", "FIELDS"]

FIELDS = {f.name: f for f in dataclasses.fields(DeploymentSpec)}
_TYPES = {
    "instance_type": str, "region": str, "name": str, "workload": str, "nodes": int, "target": str, "efa": bool,
    "subnet_ids": list, "security_group_ids": list, "key_name": str, "capacity": str,
    "capacity_reservation_id": str, "root_volume_gib": int, "ami_ssm_parameter": str, "ami_id": str,
    "plain_ami": bool, "s3_prefix": str, "kubernetes_version": str, "image": str, "tags": dict, "custom_instance": dict,
    "cluster_name": str, "fsx_storage_gib": int, "fsx_file_system_id": str, "fsx_mount_name": str, "kms_key_arn": str,
    "vpc_cidr": str, "restrict_egress": bool,
}
_TEXT_IN_CUSTOM = {"name"}  # custom_instance fields that hold text; `targets` is a list of text
MAX_SPEC_BYTES = 1 << 20

_TAG = "tag:yaml.org,2002:"
_STR, _NULL, _BOOL, _INT, _FLOAT = (_TAG + t for t in ("str", "null", "bool", "int", "float"))
_SEQ, _MAP = _TAG + "seq", _TAG + "map"


class _SpecLoader(yaml.SafeLoader):
    """SafeLoader that resolves YAML 1.2 core-schema scalars and refuses anchors and aliases.

    Only composition is used (`get_single_node`, no constructor): `_from_file` turns the nodes
    into values itself, so that fields holding text keep the text as written.
    """

    yaml_implicit_resolvers: dict = {}  # replaces SafeLoader's YAML 1.1 resolvers (see below)
    path: str = "--spec"

    def compose_node(self, parent: Any, index: Any) -> yaml.Node:
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            raise SpecError(_where(self.path, event.start_mark),
                            "anchors and aliases (&name, *name) are not allowed in a spec file; write the value out")
        return super().compose_node(parent, index)


# YAML 1.2.2 §10.3.2 (core schema). `\Z`, not `$`: `$` also matches before a trailing newline.
for _tag, _pattern, _first in (
    (_NULL, r"(?:~|null|Null|NULL|)\Z", ["~", "n", "N", ""]),
    (_BOOL, r"(?:true|True|TRUE|false|False|FALSE)\Z", list("tTfF")),
    (_INT, r"(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)\Z", list("-+0123456789")),
    (_FLOAT, r"(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))\Z",
     list("-+.0123456789")),
):
    _SpecLoader.add_implicit_resolver(_tag, re.compile(_pattern), _first)


def _where(path: str, mark: Any) -> str:
    return f"{path}:{mark.line + 1}" if mark is not None else str(path)


def _scalar(node: yaml.ScalarNode, where: str) -> Any:
    """A core-schema scalar as Python; explicit tags outside the core schema are refused."""
    value = node.value
    if node.tag == _STR:
        return value
    if node.tag == _NULL and re.fullmatch(r"~|null|Null|NULL|", value):
        return None
    if node.tag == _BOOL and value in ("true", "True", "TRUE", "false", "False", "FALSE"):
        return value.lower() == "true"
    if node.tag == _INT:
        try:
            if re.fullmatch(r"[-+]?[0-9]+", value):
                return int(value, 10)
            if re.fullmatch(r"0o[0-7]+|0x[0-9a-fA-F]+", value):
                return int(value[2:], 8 if value[1] == "o" else 16)
        except ValueError:  # more digits than Python converts
            raise SpecError(where, f"{_show(value)} is too large") from None
    if node.tag == _FLOAT:
        special = value.lstrip("+-").lower()
        if special in (".inf", ".nan"):
            return math.nan if special == ".nan" else (-math.inf if value.startswith("-") else math.inf)
        if re.fullmatch(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?", value):
            return float(value)
    if node.tag in (_NULL, _BOOL, _INT, _FLOAT):
        raise SpecError(where, f"{_show(value)} is not a valid {node.tag[len(_TAG):]}")
    raise SpecError(where, f"the tag '{node.tag}' is not allowed (plain YAML values only)")


def _text(node: yaml.Node, where: str) -> str:
    """A field that holds text: the scalar as written (`0123`, `1.30`, `true` stay text); not null."""
    if not isinstance(node, yaml.ScalarNode):
        raise SpecError(where, "expected a string, got a " + ("list" if isinstance(node, yaml.SequenceNode) else "mapping"))
    if node.tag == _STR or (node.style is None and node.tag in (_INT, _FLOAT, _BOOL)):
        text = node.value
    else:
        value = _scalar(node, where)
        raise SpecError(where, f"expected a string, got {value!r}")
    bad = next((c for c in text if _is_control(c)), None)
    if bad is not None:
        raise SpecError(where, f"{_show(text)} contains a control character (U+{ord(bad):04X}); "
                        "newlines, tabs and escapes are not allowed")
    return text


def _value(node: yaml.Node, where: str) -> Any:
    """Any value (core-schema scalars, lists, mappings with text keys)."""
    if isinstance(node, yaml.ScalarNode):
        return _scalar(node, where)
    if isinstance(node, yaml.SequenceNode):
        if node.tag != _SEQ:
            raise SpecError(where, f"the tag '{node.tag}' is not allowed (plain YAML values only)")
        return [_value(item, where) for item in node.value]
    if node.tag != _MAP:
        raise SpecError(where, f"the tag '{node.tag}' is not allowed (plain YAML values only)")
    values: dict[str, Any] = {}
    for key_node, value_node in node.value:
        key = _text(key_node, where)
        if key in values:
            raise SpecError(where, f"key '{key}' is given twice")
        values[key] = _value(value_node, where)
    return values


def _pairs(node: yaml.MappingNode, path: str, prefix: str = "") -> list[tuple[str, str, yaml.Node]]:
    """(key text, where, value node) of a mapping; `where` names the file, line and field.

    A key given twice, or a key that is not text, is refused.
    """
    if node.tag != _MAP:
        raise SpecError(_where(path, node.start_mark) + (f": field '{prefix[:-1]}'" if prefix else ""),
                        f"the tag '{node.tag}' is not allowed (plain YAML values only)")
    pairs: list[tuple[str, str, yaml.Node]] = []
    seen: set[str] = set()
    for key_node, value_node in node.value:
        key = _text(key_node, _where(path, key_node.start_mark) + (f": field '{prefix[:-1]}' (a key)" if prefix else ": a key"))
        where = f"{_where(path, key_node.start_mark)}: field '{prefix}{key}'"
        if key in seen:
            raise SpecError(where, "is given twice")
        seen.add(key)
        pairs.append((key, where, value_node))
    return pairs


def _compose(path: Path) -> yaml.Node | None:
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            raise SpecError("--spec", f"{path} is not a regular file")
        if info.st_size > MAX_SPEC_BYTES:
            raise SpecError("--spec", f"{path} is larger than {MAX_SPEC_BYTES // 1024} KiB; a spec file is a few lines")
        with open(path, "rb") as handle:
            raw = handle.read(MAX_SPEC_BYTES + 1)
        if len(raw) > MAX_SPEC_BYTES:
            raise SpecError("--spec", f"{path} is larger than {MAX_SPEC_BYTES // 1024} KiB; a spec file is a few lines")
        text = raw.decode("utf-8")
        loader = _SpecLoader(text)
        loader.path = str(path)
        try:
            return loader.get_single_node()
        finally:
            loader.dispose()
    except (OSError, yaml.YAMLError, UnicodeDecodeError) as exc:
        raise SpecError("--spec", f"cannot read {path}: {exc}") from None
    except RecursionError:
        raise SpecError("--spec", f"cannot read {path}: nested too deeply") from None


def _from_file(path: Path) -> dict[str, Any]:
    root = _compose(Path(path))
    if root is None or (isinstance(root, yaml.ScalarNode) and root.tag == _NULL):
        return {}
    if not isinstance(root, yaml.MappingNode):
        raise SpecError("--spec", f"{path} must hold a mapping of field: value")
    out: dict[str, Any] = {}
    seen: dict[str, str] = {}
    for raw_key, where, node in _pairs(root, str(path)):
        key = raw_key.replace("-", "_")
        if key not in _TYPES:
            raise SpecError(where, f"unknown field; allowed: {', '.join(sorted(_TYPES))}")
        if key in seen:  # `node-count` and `node_count`
            raise SpecError(where, f"is given twice (also as '{seen[key]}')")
        seen[key] = raw_key
        expected = _TYPES[key]
        if expected is str:
            value: Any = _text(node, where)
        elif expected is list:
            if not isinstance(node, yaml.SequenceNode):
                raise SpecError(where, f"expected a list of strings, got {_describe(node, where)}")
            value = tuple(_text(item, f"{where[:-1]}[{i}]'") for i, item in enumerate(node.value))
        elif expected is dict:
            if not isinstance(node, yaml.MappingNode):
                raise SpecError(where, f"expected a mapping, got {_describe(node, where)}")
            pairs = _pairs(node, str(path), f"{key}.")
            if key == "tags":
                value = tuple((k, _text(v, w)) for k, w, v in pairs)
            else:
                value = tuple((k, _custom_value(k, v, w)) for k, w, v in pairs)
        else:
            value = _value(node, where)
            if type(value) is not expected:  # bool is an int subclass: `nodes: true` is refused
                raise SpecError(where, f"expected {expected.__name__}, got {_describe(node, where)}")
        out[key] = value
    return out


def _custom_value(key: str, node: yaml.Node, where: str) -> Any:
    if key in _TEXT_IN_CUSTOM:
        return _text(node, where)
    if key == "targets" and isinstance(node, yaml.SequenceNode):
        return [_text(item, where) for item in node.value]
    return _value(node, where)


def _describe(node: yaml.Node, where: str) -> str:
    if isinstance(node, yaml.SequenceNode):
        return "a list"
    if isinstance(node, yaml.MappingNode):
        return "a mapping"
    if node.tag == _STR or node.style is not None:
        return _show(node.value)
    return repr(_scalar(node, where))


def build_spec(spec_file: Path | None, flags: dict[str, Any]) -> DeploymentSpec:
    """Merge the spec file (if any) and the flags given (None = not given) into a DeploymentSpec.

    Raises:
        SpecError: unreadable file, unknown field, wrong type, or a missing required field.
    """
    values = _from_file(spec_file) if spec_file else {}
    values.update({k: v for k, v in flags.items() if v is not None and v != ()})
    for required in ("instance_type", "region"):
        if not values.get(required):
            raise SpecError(f"--{required.replace('_', '-')}", "is required (as a flag or in the --spec file)")
    return DeploymentSpec(**values)
