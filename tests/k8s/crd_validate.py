"""Validate custom objects offline against a CRD's structural schema, as the API server does on create:
defaults first, then types, enums, patterns, sizes, required and unknown fields (kubectl's default
`--validate=strict` rejects those), then every `x-kubernetes-validations` CEL rule with cel-python.

Kubernetes-only CEL functions that cel-python lacks, implemented here after the Kubernetes CEL
libraries' definitions (https://kubernetes.io/docs/reference/using-api/cel/):
- `find(regex)` (Kubernetes regex library): the first match of the regex in the string, or "".
- `split(separator)` (cel-go strings extension): the string cut at every separator.
Transition rules (those that use `oldSelf`) run only on update, so a create skips them; they are
counted in `Report.skipped` rather than dropped silently.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import celpy
import yaml
from celpy import celtypes

CRDS = Path(__file__).parent / "crds"


def _find(value: Any, pattern: Any) -> celtypes.StringType:
    match = re.search(str(pattern), str(value))
    return celtypes.StringType(match.group(0) if match else "")


def _split(value: Any, separator: Any) -> celtypes.ListType:
    return celtypes.ListType([celtypes.StringType(p) for p in str(value).split(str(separator))])


KUBERNETES_FUNCTIONS = {"find": _find, "split": _split}
_ENV = celpy.Environment()
_PROGRAMS: dict[str, Any] = {}
_RESULTS: dict[tuple[str, str], Any] = {}  # a rule is a pure function of self: (rule, self as JSON) -> result


@dataclass
class Report:
    errors: list[str] = field(default_factory=list)
    rules_run: int = 0
    skipped: list[str] = field(default_factory=list)  # transition rules, with their path


@functools.cache
def load_schema(kind: str, folder: Path = CRDS) -> dict[str, Any]:
    """The v1 openAPIV3Schema of the CRD for `kind` (EC2NodeClass or NodePool) vendored in `folder`."""
    for path in folder.glob("*.yaml"):
        crd = yaml.safe_load(path.read_text())
        if crd["spec"]["names"]["kind"] == kind:
            return next(v for v in crd["spec"]["versions"] if v["name"] == "v1")["schema"]["openAPIV3Schema"]
    raise KeyError(kind)


def _default(value: Any, schema: dict[str, Any]) -> Any:
    if isinstance(value, dict):
        for key, sub in schema.get("properties", {}).items():
            if key not in value and "default" in sub:
                value[key] = copy.deepcopy(sub["default"])
            if key in value:
                value[key] = _default(value[key], sub)
        if isinstance(schema.get("additionalProperties"), dict):
            for key in value:
                value[key] = _default(value[key], schema["additionalProperties"])
    elif isinstance(value, list) and "items" in schema:
        value = [_default(v, schema["items"]) for v in value]
    return value


def _type_ok(value: Any, schema: dict[str, Any]) -> bool:
    if schema.get("x-kubernetes-int-or-string"):
        return isinstance(value, (int, str)) and not isinstance(value, bool)
    kind = schema.get("type")
    return {
        None: True,
        "object": isinstance(value, dict),
        "array": isinstance(value, list),
        "string": isinstance(value, str),
        "boolean": isinstance(value, bool),
        "integer": isinstance(value, int) and not isinstance(value, bool),
        "number": isinstance(value, (int, float)) and not isinstance(value, bool),
    }[kind]


def _check(value: Any, schema: dict[str, Any], path: str, report: Report) -> None:
    if not _type_ok(value, schema):
        report.errors.append(f"{path}: expected {schema.get('type', 'int-or-string')}, got {type(value).__name__}")
        return
    if "enum" in schema and value not in schema["enum"]:
        report.errors.append(f"{path}: {value!r} is not one of {schema['enum']}")
    if isinstance(value, str):
        if "pattern" in schema and not re.search(schema["pattern"], value):
            report.errors.append(f"{path}: {value!r} does not match {schema['pattern']}")
        if len(value) > schema.get("maxLength", len(value)) or len(value) < schema.get("minLength", 0):
            report.errors.append(f"{path}: length {len(value)} is out of bounds")
    if (isinstance(value, (int, float)) and not isinstance(value, bool)
            and (value < schema.get("minimum", value) or value > schema.get("maximum", value))):
        report.errors.append(f"{path}: {value} is out of [{schema.get('minimum')}, {schema.get('maximum')}]")
    if isinstance(value, dict):
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties")
        for key in schema.get("required", []):
            if key not in value:
                report.errors.append(f"{path}: required field {key!r} is missing")
        if len(value) > schema.get("maxProperties", len(value)):
            report.errors.append(f"{path}: more than {schema['maxProperties']} properties")
        for key, sub in value.items():
            if key in props:
                _check(sub, props[key], f"{path}.{key}", report)
            elif isinstance(extra, dict):
                _check(sub, extra, f"{path}[{key}]", report)
            elif props and path != "" and not schema.get("x-kubernetes-preserve-unknown-fields"):
                report.errors.append(f"{path}: unknown field {key!r}")
    if isinstance(value, list):
        if len(value) > schema.get("maxItems", len(value)) or len(value) < schema.get("minItems", 0):
            report.errors.append(f"{path}: {len(value)} items is out of bounds")
        for i, item in enumerate(value):
            _check(item, schema.get("items", {}), f"{path}[{i}]", report)
    for rule in schema.get("x-kubernetes-validations", []):
        if "oldSelf" in rule["rule"]:
            report.skipped.append(f"{path}: {rule['rule']}")
            continue
        report.rules_run += 1
        key = (rule["rule"], json.dumps(value, sort_keys=True))
        if key not in _RESULTS:
            program = _PROGRAMS.get(rule["rule"])
            if program is None:
                program = _PROGRAMS[rule["rule"]] = _ENV.program(_ENV.compile(rule["rule"]), functions=KUBERNETES_FUNCTIONS)
            try:
                _RESULTS[key] = program.evaluate({"self": celpy.json_to_cel(value)})
            except Exception as err:  # noqa: BLE001 - an evaluation error fails the rule, as in the API server
                _RESULTS[key] = err
        result = _RESULTS[key]
        if not (isinstance(result, celtypes.BoolType) and bool(result)):
            detail = "" if isinstance(result, celtypes.BoolType) else f" (evaluation error: {result!r})"
            report.errors.append(f"{path}: {rule.get('message', rule['rule'])}{detail}")


def validate(obj: dict[str, Any], folder: Path = CRDS) -> Report:
    """Validate one Karpenter object (a dict from YAML) against its CRD in `folder`; the object is not changed."""
    schema = load_schema(obj["kind"], folder)
    value = _default(copy.deepcopy(obj), schema)
    report = Report()
    _check(value, schema, "", report)
    # The top level has apiVersion, kind, metadata and spec only (status is the controller's).
    report.errors += [f"unknown top-level field {k!r}" for k in value if k not in schema["properties"]]
    return report
