"""Load, validate and select the rule catalogue (`rules/<category>/NRNxxx-name.yaml`).

A rule is data: what to match, the message, the fix per target, its docs and its examples.
`load_catalogue()` validates every file against `rules/schema.json` and the checks a schema
cannot express (file name = id + name, folder = category, id range = category).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

from migrator.core.findings import CATEGORIES, Finding, Severity, Span
from migrator.core.resources import rules_dir

__all__ = ["EFFORTS", "DEFAULT_EFFORT", "RuleSpec", "Catalogue", "RuleError", "load_catalogue", "load_targets", "load_vocabulary", "load_operators", "tool_finding", "not_scanned", "TARGETS"]

TARGETS = ("portable", "neuron", "xla", "inf1")
EFFORTS = ("none", "low", "medium", "high")
DEFAULT_EFFORT = "medium"  # a rule that does not say (team rules): the middle bucket, not zero


class RuleError(ValueError):
    """A rule file is broken; the message names the file and the field."""


@dataclass(frozen=True)
class RuleSpec:
    """One validated rule. `raw` keeps the YAML mapping for docs and examples."""

    id: str
    name: str
    category: str
    summary: str
    severities: dict[str, Severity | None]
    matchers: tuple[dict[str, Any], ...]
    message: str
    messages: dict[str, str]
    fix: dict[str, Any] | None
    docs: dict[str, Any]
    examples: dict[str, list[dict[str, Any]]]
    path: Path
    raw: dict[str, Any] = field(repr=False, compare=False, default_factory=dict)
    # assess: the effort bucket per target (none/low/medium/high; a rule that names none, such
    # as a team rule, counts as DEFAULT_EFFORT) and why the flagged code has no Neuron path.
    efforts: dict[str, str] = field(default_factory=dict, compare=False)
    blocker: str | None = None
    # False: the rule reports nothing in test files (`in_tests: "off"`).
    in_tests: bool = True

    def effort_for(self, target: str) -> str:
        """The effort bucket of one finding of this rule on `target` (before `fix`)."""
        return self.efforts.get(target, DEFAULT_EFFORT)

    def severity_for(self, target: str) -> Severity | None:
        """Severity on `target`, or None when the rule is off there."""
        return self.severities[target]

    def message_for(self, target: str) -> str:
        return self.messages.get(target, self.message)

    def fix_safety_text(self) -> str:
        """What the fix's safety means for this rule: its own note, else what `safe` promises on
        the targets it rewrites for (portable: the GPU keeps its behaviour; neuron/xla: the
        target's device does what the GPU did). Empty without a fix."""
        if not self.fix:
            return ""
        if self.docs.get("fix_safety"):
            return " ".join(self.docs["fix_safety"].split())
        targets = set(self.fix["targets"])
        said = []
        if "portable" in targets:
            said.append("on portable the rewritten code keeps its behaviour on a CUDA GPU")
        moved = sorted(targets & {"neuron", "xla"})
        if moved:
            said.append(f"on {' and '.join(moved)} it does on that device what the code did on the GPU "
                        "(it no longer runs on a GPU)")
        if self.fix["safety"] != "safe":
            return "It may change numerics or meaning: review it, then apply it with --unsafe-fixes."
        text = "; ".join(said) + "."
        return text[0].upper() + text[1:]

    def fix_for(self, target: str) -> dict[str, Any] | None:
        """The fix entry for `target`, or None when the rule offers none there."""
        if not self.fix or target not in self.fix["targets"]:
            return None
        return self.fix["targets"][target]


@dataclass(frozen=True)
class Catalogue:
    """The enabled rules, in id order."""

    rules: tuple[RuleSpec, ...]

    def by_id(self, rule_id: str) -> RuleSpec:
        for rule in self.rules:
            if rule.id == rule_id.upper():
                return rule
        raise KeyError(rule_id)

    def for_target(self, target: str) -> "Catalogue":
        """Rules that are on for `target`."""
        return Catalogue(tuple(r for r in self.rules if r.severity_for(target) is not None))

    def select(self, select: Iterable[str] = (), ignore: Iterable[str] = ()) -> "Catalogue":
        """Keep rules whose id starts with a `select` prefix (all when empty), minus `ignore`."""
        sel = [s.upper() for s in select]
        ign = [s.upper() for s in ignore]
        kept = [
            r for r in self.rules
            if (not sel or any(r.id.startswith(s) for s in sel)) and not any(r.id.startswith(i) for i in ign)
        ]
        return Catalogue(tuple(kept))


@lru_cache(maxsize=1)
def _schema() -> dict[str, Any]:
    return json.loads((rules_dir() / "schema.json").read_text(encoding="utf-8"))


def _validate(data: Any, path: Path) -> None:
    import jsonschema  # imported here: only loading rules needs it

    validator = jsonschema.Draft202012Validator(_schema())
    errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    if errors:
        # The deepest error is usually the most precise (oneOf/anyOf wrap their causes).
        err = errors[0]
        best = jsonschema.exceptions.best_match([err]) or err
        where = "/".join(str(p) for p in best.absolute_path) or "(top level)"
        raise RuleError(f"{path}: field '{where}': {best.message}")
    stem = f"{data['id']}-{data['name']}"
    if path.stem != stem:
        raise RuleError(f"{path}: field 'id'/'name': file must be named {stem}.yaml")
    expected = CATEGORIES[int(data["id"][3])]
    if data["category"] != expected:
        raise RuleError(f"{path}: field 'category': {data['id']} is in the '{expected}' range, not '{data['category']}'")
    if path.parent.name != data["category"] and data["category"] != "custom":
        raise RuleError(f"{path}: field 'category': rule '{data['category']}' must live in folder {data['category']}/")
    for matcher in data["match"] if isinstance(data["match"], list) else [data["match"]]:
        for key in ("pattern",):
            if key in matcher:
                try:
                    re.compile(matcher[key])
                except re.error as exc:
                    raise RuleError(f"{path}: field 'match/{key}': bad regular expression: {exc}") from None
    fixed = [ex for ex in data["examples"]["bad"] if "fixed" in ex]
    if data.get("fix") and not fixed:
        raise RuleError(f"{path}: field 'examples/bad': a rule with a fix needs one example with 'fixed'")
    if not data.get("fix") and fixed:
        raise RuleError(f"{path}: field 'examples/bad': 'fixed' given but the rule has no fix")


def _read_rule_file(path: Path) -> bytes:
    """A rule file's bytes; a FIFO, a device or a file over 1 MiB is a RuleError, not a hang."""
    from migrator.core.fsutil import read_limited

    try:
        return read_limited(path, 1024 * 1024)
    except OSError as exc:
        raise RuleError(f"{path}: cannot read rule: {exc.strerror or exc}") from None


def load_rule(path: Path) -> RuleSpec:
    """Read and validate one rule file.

    Raises:
        RuleError: unreadable YAML or a field that breaks the schema (message names both).
    """
    import yaml  # imported here: a warm run reads the validated catalogue from the cache

    from migrator.core.yamldata import DuplicateKey, load_strict

    try:
        data = load_strict(_read_rule_file(path).decode("utf-8"))
    except DuplicateKey as exc:
        raise RuleError(f"{path}: field '{exc.key}': given twice (lines {exc.lines[0]} and {exc.lines[1]})") from None
    except (yaml.YAMLError, UnicodeDecodeError, RecursionError) as exc:
        raise RuleError(f"{path}: cannot read rule: {exc}") from None
    if not isinstance(data, dict):
        raise RuleError(f"{path}: field '(top level)': a rule must be a mapping")
    _validate(data, path)
    return _build(data, path)


def _build(data: dict[str, Any], path: Path) -> RuleSpec:
    sev = data["severity"]
    levels = {t: sev if isinstance(sev, str) else sev[t] for t in TARGETS}
    severities = {t: None if v == "off" else Severity(v) for t, v in levels.items()}
    matchers = data["match"] if isinstance(data["match"], list) else [data["match"]]
    effort = data.get("effort", {})
    efforts = {t: effort for t in TARGETS} if isinstance(effort, str) else dict(effort)
    return RuleSpec(
        id=data["id"],
        name=data["name"],
        category=data["category"],
        summary=data["summary"],
        severities=severities,
        matchers=tuple(matchers),
        message=data["message"],
        messages=data.get("messages", {}),
        fix=data.get("fix"),
        docs=data["docs"],
        examples=data["examples"],
        path=path,
        raw=data,
        efforts=efforts,
        blocker=data.get("blocker"),
        in_tests=data.get("in_tests") != "off",
    )


def load_catalogue(extra_dirs: Iterable[Path] = ()) -> Catalogue:
    """Load every rule under `rules/` (plus `extra_dirs`), validated, in id order.

    Raises:
        RuleError: a broken rule file, or two rules with one id.
    """
    return _load_cached(tuple(str(p) for p in extra_dirs))


@lru_cache(maxsize=8)
def _load_cached(extra: tuple[str, ...]) -> Catalogue:
    files = [path for root in (rules_dir(), *map(Path, extra)) for path in sorted(root.rglob("NRN*.yaml"))]
    # Validating 30+ YAML files against the schema costs about half a second; a catalogue whose
    # files are byte-for-byte unchanged is read back from a pickle instead (pre-commit speed).
    h = hashlib.sha256((rules_dir() / "schema.json").read_bytes() + Path(__file__).read_bytes())
    contents = {path: _read_rule_file(path) for path in files}
    for path in files:
        h.update(str(path).encode() + b"\0" + contents[path])
    # The store is signed JSON of the validated rule data in the user's cache folder (see
    # cache.signed_load): nothing from a scanned tree, and nothing unpickled.
    from migrator.core.store import signed_dump, signed_load, user_cache_dir

    store = user_cache_dir() / f"catalogue-{h.hexdigest()[:32]}.json"
    cached = signed_load(store)
    if isinstance(cached, list):
        try:
            return Catalogue(tuple(_build(data, Path(path)) for path, data in cached))
        except (KeyError, TypeError, ValueError, AttributeError):
            pass  # a damaged entry: validate the rule files again
    rules: dict[str, RuleSpec] = {}
    for path in files:
        rule = load_rule(path)
        if rule.id in rules:
            raise RuleError(f"{path}: field 'id': {rule.id} is already used by {rules[rule.id].path}")
        rules[rule.id] = rule
    catalogue = Catalogue(tuple(sorted(rules.values(), key=lambda r: r.id)))
    try:
        signed_dump(store, [[str(r.path), r.raw] for r in catalogue.rules])
    except (OSError, TypeError, ValueError):
        pass  # the cache is optional (and YAML may hold values JSON cannot)
    return catalogue


@lru_cache(maxsize=1)
def load_vocabulary() -> dict[str, Any]:
    """The PyTorch words the matchers share (`rules/vocabulary.yaml`), checked against
    `rules/vocabulary.schema.json`; the regular expressions come back compiled.

    Raises:
        RuleError: the file breaks its schema or holds a bad regular expression.
    """
    path, data = _checked_data("vocabulary")
    out = dict(data)
    try:
        out["cuda_device"] = re.compile(data["cuda_device"])
        out["device_name"] = re.compile(data["device_name"], re.IGNORECASE)
        out["allow_list_names"] = re.compile(data["allow_list_names"], re.IGNORECASE)
        out["allow_list_options"] = re.compile(data["allow_list_options"])
        out["index_names"] = re.compile(rf"^({'|'.join(data['index_names'])})$", re.IGNORECASE)
        out["index_calls"] = re.compile(rf"(^|\.)({'|'.join(data['index_calls'])})$")
    except re.error as exc:
        raise RuleError(f"{path}: bad regular expression: {exc}") from None
    return out


@lru_cache(maxsize=1)
def load_operators() -> list[dict[str, Any]]:
    """The operators and modes Neuron documents as unsupported or run on the CPU
    (`rules/operators.yaml`, for `operators` matchers), checked against
    `rules/operators.schema.json`.

    Raises:
        RuleError: the file breaks its schema.
    """
    _, data = _checked_data("operators")
    return list(data["operators"])


def _checked_data(name: str) -> tuple[Path, Any]:
    """`rules/NAME.yaml`, read strictly and checked against `rules/NAME.schema.json`.

    Raises:
        RuleError: unreadable, or breaks its schema (the message names the field).
    """
    import jsonschema
    import yaml

    from migrator.core.yamldata import load_strict

    path = rules_dir() / f"{name}.yaml"
    try:
        data = load_strict(_read_rule_file(path).decode("utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise RuleError(f"{path}: cannot read: {exc}") from None
    schema = json.loads((rules_dir() / f"{name}.schema.json").read_text(encoding="utf-8"))
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema).iter_errors(data))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
        raise RuleError(f"{path}: field '{where}': {error.message}")
    return path, data


@lru_cache(maxsize=1)
def load_targets() -> dict[str, dict[str, Any]]:
    """Per-target fix expressions from `rules/targets.yaml`."""
    from migrator.core.yamldata import load_strict

    return load_strict((rules_dir() / "targets.yaml").read_text(encoding="utf-8"))


def tool_finding(rule_id: str, path: str, span: Span, *, cell: int | None = None, severity: Severity | None = None,
                 snippet: str = "", text: str | None = None, **fields: str) -> Finding:
    """A finding the tool reports itself (NRN000 file-not-scanned, NRN001 unused-noqa), named,
    categorised and worded by its rule in `rules/tool/`.

    Args:
        fields: the placeholders of the rule's `message` (`reason`, `codes`).
        text: the whole message instead of the rule's wording.
        severity: instead of the rule's (a file left unscanned for its size is an error).
    """
    rule = load_catalogue().by_id(rule_id)
    return Finding(rule_id=rule.id, rule_name=rule.name, category=rule.category,
                   severity=severity or rule.severities["portable"], path=path, span=span,
                   message=text if text is not None else rule.message.format(**fields), cell=cell, snippet=snippet)


def not_scanned(path: str, message: str, line: int = 1, column: int = 1, cell: int | None = None,
                 prefix: str | None = None, severity: Severity | None = None) -> Finding:
    """The NRN000 file-not-scanned finding (`prefix` replaces the rule's "file not scanned: ")."""
    return tool_finding("NRN000", path, Span(line, column, line, column), cell=cell, severity=severity,
                        snippet=message, reason=message, text=None if prefix is None else f"{prefix}{message}")
