"""What a tree uses: the models it loads and the kind of work it does (assess, parts 2 and 3).

Read from the files only: Python and notebooks through CPython's `ast` (after the guard's
checks, as the scan does), Hugging Face `config.json` files through `json`, TorchTitan TOML
configs through `tomllib`. Nothing from the tree is imported or executed.

Models are found where code names them literally:
- `X.from_pretrained("org/name")` (first argument or `pretrained_model_name_or_path=`);
- Hugging Face model classes imported from `transformers` (`LlamaForCausalLM`);
- `"model_type"` in a `config.json`;
- TorchTitan model names: `[model] name = "llama3"` in a TOML file, `--model.name llama3`.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

from migrator.core.fsutil import Unreadable, read_limited
from migrator.sources.codec import decode_python, decode_text
from migrator.sources.discover import discover, file_kind
from migrator.sources.guard import checked_tree

__all__ = ["Inventory", "ModelUse", "take_inventory", "MAX_CONFIG_BYTES"]

MAX_CONFIG_BYTES = 1024 * 1024  # a Hugging Face config.json is a few KiB
_MODEL_CLASS = re.compile(
    r"^(?!Auto|TF|Flax)([A-Z][A-Za-z0-9]*?)(ForCausalLM|ForConditionalGeneration|ForSequenceClassification|"
    r"ForTokenClassification|ForQuestionAnswering|ForMaskedLM|ForImageClassification|ForSpeechSeq2Seq|"
    r"ForMultipleChoice|LMHeadModel|Model)$")
_TITAN_FLAG = re.compile(r"--model\.name[ =]+[\"']?([A-Za-z0-9_.-]+)")
_TRAINING_CALLS = {"backward", "zero_grad", "clip_grad_norm_"}
_TRAINING_NAMES = {"Trainer", "TrainingArguments", "Seq2SeqTrainer", "SFTTrainer", "Accelerator", "LightningModule"}
_INFERENCE_CALLS = {"no_grad", "inference_mode", "generate", "pipeline", "trace"}


@dataclass
class ModelUse:
    """One model name as the code writes it, with where (path, line; line 0 for a config file)."""

    name: str
    how: str  # from_pretrained | class | config.json | torchtitan
    where: list[tuple[str, int]] = field(default_factory=list)


@dataclass
class Inventory:
    """Models named in the tree and the kinds of work its code does."""

    models: dict[tuple[str, str], ModelUse] = field(default_factory=dict)
    uses: set[str] = field(default_factory=set)  # training, inference, llm-serving, hf
    evidence: dict[str, set[str]] = field(default_factory=dict)  # use -> paths
    unread: list[tuple[str, str]] = field(default_factory=list)  # path, why
    # Imports with a fallback: inside `try: ... except ImportError` or under an
    # `if is_<library>_available():` test. A CUDA-only library imported so is optional.
    optional_imports: set[tuple[str, int]] = field(default_factory=set)

    def add_model(self, name: str, how: str, path: str, line: int) -> None:
        use = self.models.setdefault((name, how), ModelUse(name, how))
        if (path, line) not in use.where:
            use.where.append((path, line))

    def add_use(self, use: str, path: str) -> None:
        self.uses.add(use)
        self.evidence.setdefault(use, set()).add(path)


def _classify(path: Path) -> str | None:
    kind = file_kind(path)
    if kind in ("python", "notebook", "shell"):
        return kind
    name = path.name.lower()
    if name == "config.json":
        return "hf-config"
    if name.endswith(".toml") and name != "pyproject.toml":
        return "toml"
    return None


def take_inventory(paths: Iterable[str | Path], exclude: Iterable[str] = (), max_file_size: int = 5 * 1024 * 1024,
                   root: Path | None = None) -> Inventory:
    """Walk `paths` as the scan does (same excludes and `.gitignore`) and collect models and uses.

    A file that cannot be read or parsed is listed in `Inventory.unread` and skipped.
    """
    inv = Inventory()
    for p, kind in discover(paths, exclude, root=root, classify=_classify):
        path = p.as_posix()
        limit = MAX_CONFIG_BYTES if kind in ("hf-config", "toml") else max_file_size
        try:
            raw = read_limited(p, limit)
        except (Unreadable, OSError) as exc:
            inv.unread.append((path, str(exc)))
            continue
        try:
            if kind == "python":
                _python(inv, decode_python(raw), path, 0)
            elif kind == "notebook":
                _notebook(inv, decode_text(raw), path)
            elif kind == "shell":
                _flags(inv, decode_text(raw), path)
            elif kind == "hf-config":
                _hf_config(inv, raw, path)
            else:
                _toml(inv, raw, path)
        except (ValueError, SyntaxError, LookupError, UnicodeError, RecursionError, MemoryError) as exc:
            # a broken file (a bogus coding cookie is a SyntaxError): noted, the walk goes on
            inv.unread.append((path, f"{type(exc).__name__}: {exc}"[:200]))
    return inv


def _python(inv: Inventory, text: str, path: str, first_line: int) -> None:
    problem, tree = checked_tree(text)
    if tree is None:
        if problem:
            inv.unread.append((path, problem))
        return
    transformers_names: set[str] = set()
    _optional_imports(inv, tree, path, first_line)
    docstrings = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:  # `from .transformers` is local
            top = node.module.split(".")[0]
            _import_use(inv, top, path)
            if top == "transformers":
                for alias in node.names:
                    transformers_names.add(alias.asname or alias.name)
                    if _MODEL_CLASS.match(alias.name):
                        inv.add_model(alias.name, "class", path, first_line + node.lineno)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                _import_use(inv, alias.name.split(".")[0], path)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "transformers":
            if _MODEL_CLASS.match(node.attr):
                inv.add_model(node.attr, "class", path, first_line + node.lineno)
        elif isinstance(node, ast.Call):
            name = _callee(node.func)
            if name == "from_pretrained":
                arg = node.args[0] if node.args else next(
                    (k.value for k in node.keywords if k.arg == "pretrained_model_name_or_path"), None)
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and _hub_id(arg.value):
                    inv.add_model(arg.value, "from_pretrained", path, first_line + node.lineno)
            elif name in _TRAINING_CALLS or name == "step" and _callee_owner(node.func) in ("optimizer", "optim", "opt"):
                inv.add_use("training", path)
            elif name in _INFERENCE_CALLS:
                inv.add_use("inference", path)
            if name in _TRAINING_NAMES:
                inv.add_use("training", path)
            if name == "LLM" or name == "generate":
                inv.add_use("llm-serving", path)
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str) and "--model.name" in node.value
              and id(node) not in docstrings):  # a docstring that mentions the flag names no model
            _flags(inv, node.value, path, first_line + node.lineno)


_IMPORT_ERRORS = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(isinstance(t, ast.Name) and t.id in _IMPORT_ERRORS for t in types)


def _is_availability_test(test: ast.expr) -> bool:
    """`is_apex_available()`, `_is_package_available("x")`, `importlib.util.find_spec("x")`."""
    for node in ast.walk(test):
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name == "find_spec" or (name.lstrip("_").startswith("is_") and name.endswith("available")):
                return True
    return False


def _optional_imports(inv: Inventory, tree: ast.Module, path: str, first_line: int) -> None:
    def mark(body: list[ast.stmt]) -> None:
        for stmt in body:
            for node in ast.walk(stmt):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    inv.optional_imports.add((path, first_line + node.lineno))

    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(_catches_import_error(h) for h in node.handlers):
            mark(node.body)
        elif isinstance(node, ast.If) and _is_availability_test(node.test):
            mark(node.body)


def _import_use(inv: Inventory, top: str, path: str) -> None:
    if top in ("transformers", "diffusers", "accelerate", "peft", "trl", "optimum"):
        inv.add_use("hf", path)
    if top in ("vllm", "text_generation_server", "tensorrt_llm", "sglang"):
        inv.add_use("llm-serving", path)
        inv.add_use("inference", path)


def _callee(func: ast.expr) -> str | None:
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return None


def _callee_owner(func: ast.expr) -> str | None:
    if isinstance(func, ast.Attribute):
        owner = func.value
        if isinstance(owner, ast.Name):
            return owner.id.lower()
        if isinstance(owner, ast.Attribute):
            return owner.attr.lower()
    return None


_HUB_ID = re.compile(r"^(?:[A-Za-z0-9][A-Za-z0-9_.-]{0,95}/)?[A-Za-z0-9][A-Za-z0-9_.-]{0,95}$")


def _hub_id(value: str) -> bool:
    """A Hugging Face hub id (`org/name` or a legacy `name`), not a local path or URL."""
    if value.startswith((".", "/", "~")) or "\\" in value or "://" in value:
        return False
    return bool(_HUB_ID.match(value)) and not value.endswith((".bin", ".pt", ".safetensors", ".json"))


def _notebook(inv: Inventory, text: str, path: str) -> None:
    from migrator.sources.notebook import cell_code, join_cells

    joined = join_cells(text)
    for cell, code in cell_code(joined).items():
        # Magics are masked as comments; a cell that does not parse alone is skipped.
        _python(inv, code, f"{path} (cell {cell})", 0)


def _flags(inv: Inventory, text: str, path: str, line: int = 0) -> None:
    for m in _TITAN_FLAG.finditer(text):
        at = line or text.count("\n", 0, m.start()) + 1
        inv.add_model(m.group(1), "torchtitan", path, at)


def _hf_config(inv: Inventory, raw: bytes, path: str) -> None:
    data = json.loads(raw.decode("utf-8", "replace"))
    if isinstance(data, dict) and isinstance(data.get("model_type"), str) and len(data["model_type"]) < 100:
        inv.add_model(data["model_type"], "config.json", path, 0)


def _toml(inv: Inventory, raw: bytes, path: str) -> None:
    try:
        data = tomllib.loads(raw.decode("utf-8", "replace"))
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"not valid TOML: {exc}") from None
    model = data.get("model")
    if isinstance(model, dict) and isinstance(model.get("name"), str) and len(model["name"]) < 100:
        inv.add_model(model["name"], "torchtitan", path, 0)
        if "training" in data or "optimizer" in data:
            inv.add_use("training", path)
