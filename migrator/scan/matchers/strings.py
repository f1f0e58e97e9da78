"""`device-string`, `backend-string` and `string` rules: a string literal in a context (a device, a
backend, an environment key) or matching a rule's pattern."""

from __future__ import annotations

import re
from typing import Any

import libcst as cst

from migrator.scan.nodes import cuda_fstring as _cuda_fstring
from migrator.scan.values import string_value as _string_value
from migrator.scan.words import CUDA_DEVICE

__all__ = ["match"]

MIXED_NCCL = re.compile(r"(^|,)\s*cuda\s*:\s*nccl\s*(,|$)")


def match(ctx: Any, node: cst.SimpleString | cst.FormattedString) -> None:
    if id(node) in ctx.suppressed or id(node) in ctx.docstrings:
        return
    if ctx.is_test and id(node) in ctx.scaffolding:
        return  # test scaffolding: a fake `tmp_path / "nvidia-smi"` binary
    where = ctx.device_ctx.get(id(node))
    value = _string_value(node)
    if where == "backend":
        if value in ("nccl", "NCCL"):  # torch.distributed.Backend lower-cases the name
            held = ctx.held_strings.get(id(node))
            for rule in ctx.index.backend_strings:
                ctx.add(rule, node, value=value, context={"backend_kind": "text", **({"manual_reason": held, "held_string": True} if held else {})})
                return
        elif value is not None and MIXED_NCCL.search(value):
            # "cpu:gloo,cuda:nccl": one backend per device type; which one Neuron's device takes
            # beside gloo is not in our sources, so no rewrite.
            for rule in ctx.index.backend_strings:
                ctx.add(rule, node, value=value, context={"backend_kind": "text", "manual_reason": (
                    "a per-device backend list: replace cuda:nccl by the target's device and backend by hand")})
                return
        return
    if where and value is not None and (match := CUDA_DEVICE.match(value)):
        kind = "comparison" if where == "comparison" else "device"
        for rule in ctx.index.device_strings.get(kind, []):
            type_test = ctx.type_tests.get(id(node))
            manual = ("a branch on the device type: decide whether it should also run on the target's device"
                      if kind == "comparison" and type_test is None else None)
            ctx.add(rule, node, value=value, context={"device_kind": where, "index": match.group(1), "text": id(node) not in ctx.api_args,
                                                       "device_call": ctx.device_calls.get(id(node)),
                                                       "type_test": type_test, "manual_reason": manual})
            return
    if where in ("device", "device_type") and (expr := _cuda_fstring(node)) is not None:
        for rule in ctx.index.device_strings.get("device", []):
            ctx.add(rule, node, value=ctx.module.code_for_node(node), context={
                "device_kind": where, "fstring": expr, "text": id(node) not in ctx.api_args, "device_call": ctx.device_calls.get(id(node))})
            return
    fstring = value is None and isinstance(node, cst.FormattedString)
    if fstring:
        # f"CUDA_VISIBLE_DEVICES={i} python train.py": only `command` patterns read an f-string,
        # its literal text with each {...} as `{}`.
        value = "".join(p.value if isinstance(p, cst.FormattedStringText) else "{}" for p in node.parts)
    # An environment key (`os.environ.get("X")`) is never a message, even inside `.split(...)`.
    # In a test, text asserted on (`assert "nvidia-smi" in out`) is scaffolding, not a use.
    if value is not None and (not ctx.quiet or id(node) in ctx.env_ctx) and not (ctx.is_test and ctx.asserts):
        reported = _match_patterns(ctx, node, value, fstring)
        if fstring and not ctx.quiet and "--" in value:  # a flag whose value a name may hold
            for text, reason in _held_variants(ctx, node):  # type: ignore[arg-type]
                reported |= _match_patterns(ctx, node, text, True, reported, reason)


# Each variant is the whole f-string again, read by every command pattern: a hostile one of
# 3,000 placeholders took half a minute. A command line has a handful.
_MAX_VARIANTS = 64


def _held_variants(ctx: Any, node: cst.FormattedString) -> list[tuple[str, str]]:
    """f"--mixed_precision {precision}": the f-string's text with one placeholder that is a
    plain name replaced by a string that name holds (an assignment in scope, else a
    parameter's default), each with the reason a finding on it is left for a person."""
    parts = node.parts
    plain = [p.value if isinstance(p, cst.FormattedStringText) else "{}" for p in parts]
    out: list[tuple[str, str]] = []
    for i, part in enumerate(parts):
        if len(out) >= _MAX_VARIANTS:
            break
        if not (isinstance(part, cst.FormattedStringExpression) and isinstance(part.expression, cst.Name)
                and part.conversion is None and part.format_spec is None and part.equal is None):
            continue
        values, holder = ctx.value_scopes[-1].values_of(part.expression.value)
        for held, _ in values[:8]:
            text = _string_value(held)
            if text is not None and "{" not in text:
                out.append(("".join(plain[:i]) + text + "".join(plain[i + 1:]),
                            f"the value comes from {holder} ({text!r}): change it where it is set"))
    return out


def _match_patterns(ctx: Any, node: cst.SimpleString | cst.FormattedString, text: str, fstring: bool,
                    reported: set[str] | None = None, held: str | None = None) -> set[str]:
    """The `string` rules whose pattern `text` matches: one finding per rule (a command line
    such as `CUDA_VISIBLE_DEVICES=0 python eval.py --fp16` can hold several), except those in
    `reported`; the ids of the rules reported. `held`: the f-string's text holds a value a name
    holds (`_held_variants`), and why its finding is left for a person."""
    reported = set() if reported is None else set(reported)
    found_now: set[str] = set()
    plain = "".join(p.value if isinstance(p, cst.FormattedStringText) else "{}" for p in node.parts) \
        if held is not None and isinstance(node, cst.FormattedString) else ""
    for pattern, rule, context, names in ctx.index.strings:
        if rule.id in reported:
            continue
        value = text
        if names and ctx.file_name not in names:
            continue
        if fstring and context != "command":
            continue
        if context == "command" and id(node) in ctx.declarations:
            continue  # `add_argument("--fp16", help=...)` declares the flag, it does not pass it
        if context == "env-set" and id(node) in ctx.env_reads:
            continue  # os.environ.get("NCCL_DEBUG"): a variable only read; Neuron leaves it unset
        if held is not None and _token(pattern) not in plain:
            continue  # the flag itself must be written in the f-string (`--mixed_precision {p}`), as pruning reads it
        found = pattern.search(value)
        if not found and context == "command" and id(node) in ctx.next_words:
            # ["--mixed_precision", "fp16"]: the flag and its value as two items of one list.
            found = pattern.search(joined := f"{value} {ctx.next_words[id(node)]}")
            value = joined if found else value
        options = ctx.index.string_options.get(id(pattern)) if found else None
        if options is not None and not _options_hold(ctx, node, rule, options):
            continue
        if found and (context not in ("env", "env-set") or id(node) in ctx.env_ctx):
            names_list = ctx.env_lists.get(id(node)) if context in ("env", "env-set") else None
            if names_list is not None:
                if (rule.id, names_list) in ctx.env_lists_reported:
                    continue  # one finding per rule and list of names: the list is one choice
                ctx.env_lists_reported.add((rule.id, names_list))
            ctx.add(rule, node, value=value, **({"context": {"manual_reason": held}} if held else {}))
            reported.add(rule.id)
            found_now.add(rule.id)
            if options is not None and options[1]:
                ctx.once_reported.add(rule.id)
    return found_now


_TOKENS: dict[str, str] = {}


def _token(pattern: Any) -> str:
    """The text every match of a string rule's pattern contains (the prefilter's and pruning's token)."""
    token = _TOKENS.get(pattern.pattern)
    if token is None:
        from migrator.scan.index import _literal_token

        token = _TOKENS[pattern.pattern] = _literal_token(pattern.pattern)
    return token


_LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1", "0.0.0.0")


def _options_hold(ctx: Any, node: cst.CSTNode, rule: Any, options: tuple[Any, bool, bool, bool]) -> bool:
    """A string rule's file-wide conditions (`unless_file_matches`, `once`), `value_set` and `remote_value`."""
    unless, once, remote, value_set = options
    if once and rule.id in ctx.once_reported:
        return False
    value = ctx.env_values.get(id(node))
    if (value_set or remote) and value is None:
        return False  # an environment key not set here: read, popped, unset, or only named
    if remote and (_string_value(value) in _LOCAL_HOSTS or (
            isinstance(value, cst.Call) and value.args and _string_value(value.args[0].value) in _LOCAL_HOSTS)):
        return False  # set to this host (`= "localhost"`, `str("127.0.0.1")`)
    return unless is None or unless.search(ctx._module_code()) is None
