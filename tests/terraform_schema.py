"""The AWS Terraform provider's schema, read from the npm package @cdktf/provider-aws, and a check
of a parsed (python-hcl2) configuration against it.

`make test` unpacks the package's generated code into tests/terraform/provider-aws (Makefile
target `tests/terraform/provider-aws/.done`). Each resource's `lib/<name>/index.js` lists its
arguments and blocks (`synthesizeHclAttributes` and the `<struct>ToHclTerraform` functions, with
`isBlock`), and `index.d.ts` marks the required ones (a property without `?`). The package
version pins the provider version it was generated from (package.json `cdktf.provider.version`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent / "terraform" / "provider-aws" / "package"
PACKAGE_VERSION = "21.22.1"
# Arguments and blocks Terraform itself defines on every resource or data source.
META_ARGUMENTS = {"count", "for_each", "provider", "depends_on"}
META_BLOCKS = {"lifecycle", "provisioner", "connection", "dynamic", "timeouts"}

_ENTRY = re.compile(r'(\w+): \{\s*value: (.*?),\s*isBlock: (true|false),\s*type: "(\w+)"', re.DOTALL)
_STRUCT_FN = re.compile(r"(?<![\w.])([a-z]\w*)ToHclTerraform\b")
_INTERFACE = re.compile(r"export interface (\w+)[^{]*\{(.*?)\n\}", re.DOTALL)
_PROPERTY = re.compile(r"#(\w+) \w+#\w+\}\s*(?:\*[^\n]*\n\s*)*\*/\s*readonly \w+(\?)?:")


@dataclass
class Block:
    """One schema level: argument name -> nested Block (for blocks) or None (attributes)."""

    arguments: dict[str, Block | None] = field(default_factory=dict)
    required: set[str] = field(default_factory=set)


def _attrs(text: str) -> dict[str, tuple[bool, str | None]]:
    """name -> (is_block, struct function of a block) for one `const attrs = {...}` body."""
    found = {}
    for name, value, is_block, _ in _ENTRY.findall(text):
        struct = _STRUCT_FN.search(value)
        found[name] = (is_block == "true", struct.group(1) if struct else None)
    return found


def _required(texts: list[str]) -> dict[str, set[str]]:
    """interface name -> its required HCL argument names, from the .d.ts files."""
    required: dict[str, set[str]] = {}
    for text in texts:
        for name, body in _INTERFACE.findall(text):
            required[name] = {hcl for hcl, optional in _PROPERTY.findall(body) if not optional}
    return required


def _load_folder(folder: Path) -> tuple[str, Block] | None:
    js = [p.read_text(encoding="utf-8") for p in sorted(folder.rglob("*.js"))]
    main = folder / "index.js"
    if not main.exists():
        return None
    found = re.search(r'(\w+)\.tfResourceType = "([\w-]+)"', main.read_text(encoding="utf-8"))
    if not found:
        return None
    cls, tf_type = found.groups()
    required = _required([p.read_text(encoding="utf-8") for p in sorted(folder.rglob("*.d.ts"))])
    functions: dict[str, dict[str, tuple[bool, str | None]]] = {}
    top: dict[str, tuple[bool, str | None]] = {}
    for text in js:
        for part in re.split(r"\nfunction ", text):
            head = re.match(r"(\w+)ToHclTerraform\(struct\)", part)
            body = part.split("Object.fromEntries", 1)[0]
            if head:
                functions[head.group(1)] = _attrs(body)
        if "synthesizeHclAttributes() {" in text:
            top = _attrs(text.split("synthesizeHclAttributes() {", 1)[1].split("Object.fromEntries", 1)[0])

    def build(attrs: dict[str, tuple[bool, str | None]], interface: str, depth: int = 0) -> Block:
        block = Block(required=required.get(interface, set()))
        for name, (is_block, struct) in attrs.items():
            if is_block and struct in functions and depth < 12:
                block.arguments[name] = build(functions[struct], struct[0].upper() + struct[1:], depth + 1)
            else:
                block.arguments[name] = Block() if is_block else None
        return block

    return tf_type, build(top, f"{cls}Config")


def _check_package() -> None:
    package = ROOT / "package.json"
    assert package.exists(), ("the AWS provider schema (@cdktf/provider-aws) is unpacked by `make test` "
                              "(Makefile target tests/terraform/provider-aws/.done)")
    assert json.loads(package.read_text())["version"] == PACKAGE_VERSION


@cache
def schema_for(kind: str, tf_type: str) -> Block | None:
    """The schema of one resource, data source (`kind` "resource"/"data") or the provider
    ("provider", "aws"); None if the package has no such type. The package names each folder
    after the type (aws_launch_template -> lib/launch-template, data aws_partition ->
    lib/data-aws-partition); the folder's own tfResourceType is checked."""
    _check_package()
    if kind == "provider":
        folder = ROOT / "lib" / "provider"
    else:
        stem = tf_type.removeprefix("aws_").replace("_", "-")
        folder = ROOT / "lib" / (f"data-aws-{stem}" if kind == "data" else stem)
    loaded = _load_folder(folder) if folder.is_dir() else None
    if loaded is None or loaded[0] != tf_type:
        return None
    return loaded[1]


def provider_version() -> str:
    """The hashicorp/aws version the package was generated from."""
    return json.loads((ROOT / "package.json").read_text())["cdktf"]["provider"]["version"]


def _unquote(label: str) -> str:
    return label[1:-1] if label.startswith('"') and label.endswith('"') else label


def _check_body(body: dict[str, Any], block: Block, where: str, problems: list[str]) -> None:
    present = set()
    for key, value in body.items():
        if key.startswith("__"):
            continue
        present.add(key)
        if key in META_ARGUMENTS:
            continue
        if key == "dynamic":
            for dynamic in value:
                for label, spec in dynamic.items():
                    name = _unquote(label)
                    nested = block.arguments.get(name)
                    if not isinstance(nested, Block):
                        problems.append(f"{where}: dynamic {name!r} is not a block of this resource")
                        continue
                    present.add(name)
                    for content in spec.get("content", []):
                        _check_body(content, nested, f"{where}.{name}", problems)
            continue
        if key in META_BLOCKS:
            continue
        if key not in block.arguments:
            problems.append(f"{where}: unknown argument {key!r}")
            continue
        nested = block.arguments[key]
        is_block = isinstance(value, list) and value and all(isinstance(v, dict) and v.get("__is_block__") for v in value)
        if isinstance(nested, Block) and not is_block:
            problems.append(f"{where}: {key!r} is a block, written as an argument")
        elif nested is None and is_block:
            problems.append(f"{where}: {key!r} is an argument, written as a block")
        elif isinstance(nested, Block):
            for item in value:
                _check_body(item, nested, f"{where}.{key}", problems)
    for name in sorted(block.required - present):
        problems.append(f"{where}: required argument {name!r} is missing")


def check_configuration(doc: dict[str, Any]) -> list[str]:
    """Problems with a python-hcl2 parse of a configuration: unknown resource or data types, unknown
    arguments and blocks, blocks written as arguments (and back), missing required arguments."""
    problems: list[str] = []
    for kind in ("resource", "data"):
        for entry in doc.get(kind, []):
            for label, instances in entry.items():
                tf_type = _unquote(label)
                block = schema_for(kind, tf_type)
                if block is None:
                    problems.append(f"{kind} {tf_type}: not in the provider schema")
                    continue
                for name, body in instances.items():
                    _check_body(body, block, f"{tf_type}.{_unquote(name)}", problems)
    for entry in doc.get("provider", []):
        for label, body in entry.items():
            if _unquote(label) != "aws":
                problems.append(f"provider {label}: only aws is checked")
                continue
            _check_body(body, schema_for("provider", "aws"), "provider.aws", problems)
    return problems
