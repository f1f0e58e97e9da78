"""Build a `DeploymentSpec` from a YAML spec file and command-line flags (flags win).

The file uses the same field names as `DeploymentSpec` (`-` or `_`), e.g.::

    instance_type: trn2.48xlarge
    region: us-east-2
    nodes: 4
    tags: {team: ml-platform}

See samples/deploy-spec.yaml for every field, commented.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import yaml

from .launch_template import DeploymentSpec, SpecError

__all__ = ["build_spec", "FIELDS"]

FIELDS = {f.name: f for f in dataclasses.fields(DeploymentSpec)}
_TYPES = {
    "instance_type": str, "region": str, "name": str, "workload": str, "nodes": int, "target": str, "efa": bool,
    "subnet_ids": list, "security_group_ids": list, "key_name": str, "capacity": str,
    "capacity_reservation_id": str, "root_volume_gib": int, "ami_ssm_parameter": str, "ami_id": str,
    "plain_ami": bool, "s3_prefix": str, "kubernetes_version": str, "image": str, "tags": dict, "custom_instance": dict,
}


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that refuses a key given twice (YAML would keep the last one silently)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(None, None, f"field '{key}' is given twice", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def _from_file(path: Path) -> dict[str, Any]:
    try:
        data = yaml.load(Path(path).read_text(encoding="utf-8"), Loader=_UniqueKeyLoader)  # noqa: S506 - SafeLoader subclass
    except (OSError, yaml.YAMLError, UnicodeDecodeError) as exc:
        raise SpecError("--spec", f"cannot read {path}: {exc}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise SpecError("--spec", f"{path} must hold a mapping of field: value")
    out: dict[str, Any] = {}
    for raw_key, value in data.items():
        key = str(raw_key).replace("-", "_")
        where = f"{path}: field '{raw_key}'"
        if key not in _TYPES:
            raise SpecError(where, f"unknown field; allowed: {', '.join(sorted(_TYPES))}")
        expected = _TYPES[key]
        if key == "kubernetes_version" and isinstance(value, float):
            value = f"{value:.2f}"
        if value is None or (expected is int and isinstance(value, bool)) or not isinstance(value, expected):
            raise SpecError(where, f"expected {expected.__name__}, got {value!r}")
        if key in ("subnet_ids", "security_group_ids"):
            if not all(isinstance(v, str) for v in value):
                raise SpecError(where, "expected a list of strings")
            value = tuple(value)
        elif key == "tags":
            if not all(isinstance(k, str) and isinstance(v, (str, int, float)) for k, v in value.items()):
                raise SpecError(where, "expected a mapping of tag key: value")
            value = tuple((k, str(v)) for k, v in value.items())
        elif key == "custom_instance":
            value = tuple(value.items())
        out[key] = value
    return out


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
