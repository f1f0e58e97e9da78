"""The context pass over one parsed module (see `Context`)."""

from __future__ import annotations

import re
from typing import Any, Sequence

import libcst as cst

from migrator.core.catalogue import RuleSpec
from migrator.scan.candidate import Candidate
from migrator.scan.dispatch import cuda_arms, cuda_entries
from migrator.scan.host_values import FACTORIES as HOST_FACTORIES, host_locals
from migrator.scan.host_tests import host_test_functions
from migrator.scan.index import RuleIndex
from migrator.scan.matchers.strings import MIXED_NCCL
from migrator.scan.matchers import (argument, builtin, device_index, imports, mask_index, method, option_default, reference,
                                    strings)
from migrator.scan.version_gate import old_torch_branch
from migrator.scan.resolve import dotted_name, import_bindings, importorskip_binding, module_bindings
from migrator.scan.values import ModuleValues, ScopeValues, is_cuda_test
from migrator.scan.nodes import literal as _literal
from migrator.scan.nodes import truth
from migrator.scan.values import string_value as _string_value
from migrator.scan.walk import is_node, syntax_fields, walk
from migrator.scan.words import (ALLOW_LIST_NAME, ALLOW_LIST_OPTION, CUDA_DEVICE, DEVICE_ARG0, DEVICE_KEYWORDS, DEVICE_NAME, DEVICE_TYPE_ARG0, DEVICE_TYPE_CALLS,
                                 DTYPE_KEYWORDS, ENV_METHODS, OTHER_ACCELERATORS, QUIET_CALLS, BACKEND_CALLS)

__all__ = ["Context"]

ENV_NAME = re.compile(r"[A-Z][A-Z0-9]*(_[A-Z0-9]+)+")  # MASTER_ADDR, CUDA_VISIBLE_DEVICES
_UPPER_NAME = re.compile(r"[A-Z][A-Z0-9_]*")
MAX_ENV_NAMES = 8
BACKEND_NAME = re.compile(r"(?i)(^|_)backend$")
# Calls that hand a module to be patched or probed, not used: `monkeypatch.setattr(torch.cuda, ...)`.
_PATCH_CALLS = frozenset({"setattr", "delattr", "object", "hasattr"})
# A name that says CUDA is present (`TEST_CUDA`, `HAS_CUDA`, `CUDA_AVAILABLE`): a guard like is_available().
_CUDA_FLAG = re.compile(r"^_?(TEST|HAS|USE)_CUDA\w*$|^_?CUDA_AVAILABLE$|^_?(has|use)_cuda$")
# An `if` test that tells the CUDA build from the ROCm one (`torch.version.hip`, `IS_HIP_EXTENSION`).
_GPU_BUILD = re.compile(r"\bhip\b|_HIP_|HIP_EXTENSION|\bROCM\b|WITH_ROCM|\brocm\b")
# A call that skips a test: pytest.mark.skipif, unittest.skipUnless, self.skipTest, pytest.skip, SkipTest.
_SKIP_CALL = re.compile(r"(?i)^(skip|skip_?if\w*|skip_?unless\w*|skiptest)$")
_SKIP_REASON = "a skip condition in a test; on Neuron the test is skipped unless the condition is changed"
# Calls that replace an attribute for a test (besides `monkeypatch.setattr` and `*.patch*`).
_PATCHERS = frozenset({"unittest.mock.patch", "unittest.mock.patch.object", "mock.patch", "mock.patch.object"})
# The objects whose setattr/patch/patch.object install a stand-in (pytest's monkeypatch, pytest-mock's mocker, mock).
_PATCH_OWNER = re.compile(r"(^|\.)(monkeypatch|mocker|mock|patch)$")
# A test's fixture parameter that installs a stand-in (`fake_nvidia_smi`, `mock_gpu`).
_FAKE_FIXTURE = re.compile(r"^(fake|mock|stub|dummy)_|_(fake|mock|stub)$")
# A test utility that decides which tests run: a skip decorator (named require_*/skip_* and
# calling a skip) or a capability probe (is_*_available, supports_*, has_*_support).
_SKIPPER = re.compile(r"^_?(require_|requires_|skip_if|skip_unless|skip_)")
_PROBE = re.compile(r"^_?(supports_\w+|is_\w+_(available|supported)|has_\w+_support)$")
_SKIP_CALL_TEXT = re.compile(r"\b(skip|skipIf|skipUnless|skipTest|SkipTest|skipif)\b")


def _is_probe(node: cst.FunctionDef, original: str | None) -> bool:
    """`original`: the file's whole text where the module was parsed from a pruned copy, whose
    function bodies may lack the skip call (a statement that matches no rule is left out)."""
    name = node.name.value
    if _PROBE.match(name):
        return True
    # `skip_connection(x, y)` and `require_grad_params(model)` are named alike but skip nothing.
    if not _SKIPPER.match(name):
        return False
    if any(isinstance(n, cst.Name) and _SKIP_CALL_TEXT.fullmatch(n.value) for n in _subtree(node.body)):
        return True
    if original is None:
        return False
    whole = re.search(rf"^def {re.escape(name)}\b.*?(?=^\S|\Z)", original, re.M | re.S)
    return whole is not None and _SKIP_CALL_TEXT.search(whole.group(0)) is not None
_PROBE_REASON = ("a test utility that decides which tests run (a skip decorator or a capability probe); on Neuron "
                 "the tests it guards are skipped unless it is changed")
# A name that keeps a setting to put it back (`old_allow_tf32 = torch.backends.cuda.matmul.allow_tf32`).
_SAVED_NAME = re.compile(r"^_?(old|orig|original|saved|cached|prev|previous|backup|before)(_|[A-Z]|$)")
# Calls that compare results (a check, not the computation): float64 arguments are host work.
_COMPARE_CALLS = frozenset({"assert_close", "assert_allclose", "allclose", "isclose", "assertEqual", "assertTrue"})
# Methods after which a tensor is on the host (`x.double().cpu().numpy()`): float64 there is host work.
_HOST_METHODS = frozenset({"cpu", "numpy", "tolist", "item"})
# Tensor methods that give another dtype than float64: a float64 tensor converted at once is none.
_NARROWING_METHODS = frozenset({"float", "half", "bfloat16", "int", "long", "short", "bool", "byte", "char"})
_TORCH_DTYPES = frozenset({"float32", "float", "float16", "half", "bfloat16", "float64", "double", "int8", "int16", "int32",
                           "int64", "int", "long", "short", "uint8", "bool", "float8_e4m3fn", "float8_e5m2"})


def _unpacked(target: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The targets an assignment target stands for: `a[m], (b, *c)` is `a[m]`, `b` and `c`."""
    if isinstance(target, (cst.Tuple, cst.List)):
        return [t for e in target.elements for t in _unpacked(e.value)]
    return [target]


def _stored_names(target: cst.BaseExpression) -> list[str]:
    """The names an assignment, loop or `as` target binds (`a`, `a, (b, *c)`)."""
    return [t.value for t in _unpacked(target) if isinstance(t, cst.Name)]


def _subtree(node: cst.CSTNode) -> list[cst.CSTNode]:
    """`node` and every syntax node below it."""
    out: list[cst.CSTNode] = []
    stack = [node]
    while stack:
        current = stack.pop()
        out.append(current)
        for name in syntax_fields(type(current)):
            value = getattr(current, name, None)
            kind = type(value)
            if kind is list or kind is tuple:
                stack.extend(v for v in value if is_node(type(v)))
            elif is_node(kind):
                stack.append(value)
    return out


def _subtree_ids(node: cst.CSTNode) -> set[int]:
    return {id(n) for n in _subtree(node)}


def _targets(target: cst.BaseExpression) -> set[int]:
    """The names an assignment target writes (`a.b = ...`, `a.b, c = ...`), not those it reads."""
    if isinstance(target, (cst.Tuple, cst.List)):
        return set().union(*(_targets(e.value) for e in target.elements)) if target.elements else set()
    if isinstance(target, cst.StarredElement):
        return _targets(target.value)
    return {id(target)}


# Names of a dict that holds an environment for a child process (`env`, `child_env`, `run_environ`).
_ENV_DICT = re.compile(r"^(?:\w+_)?env(?:iron(?:ment)?)?$", re.IGNORECASE)


def _on_host(value: cst.BaseExpression) -> bool:
    """Whether `value` is `<x>.cpu()` (then `.detach()`, `.clone()` or `.contiguous()`): a host copy."""
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and not value.args:
        if value.func.attr.value == "cpu":
            return True
        if value.func.attr.value not in ("detach", "clone", "contiguous"):
            return False
        value = value.func.value
    return False


def _dtype_only(args: Sequence[cst.Arg]) -> bool:
    """Whether `.to(...)` is given a dtype and no device: `torch.float64` or `dtype=` (and flags)."""
    for arg in args:
        if arg.keyword is None:
            if arg.star or not (dotted_name(arg.value) or "").startswith("torch."):
                return False
        elif arg.keyword.value not in ("dtype", "non_blocking", "copy", "memory_format"):
            return False
    return True

class Context(cst.CSTVisitor):
    """The one pass over a module: scopes, imports, loops and the contexts that make a value a
    device, a dtype, a backend or an environment key; at each node it hands over to the
    matcher of each rule kind (`migrator.scan.matchers`), which add candidates here."""

    def __init__(self, index: RuleIndex, module: cst.Module, path: str = "", is_test: bool = False) -> None:
        self.index = index
        self.module = module
        self.path = path.replace("\\", "/")
        self.file_name = self.path.rsplit("/", 1)[-1]
        self.is_test = is_test
        self.annotations = 0  # inside a type annotation: a type named, no CUDA code run
        self.asserts = 0  # inside an `assert` (in a test file, text asserted on is not a finding)
        self.scaffolding: set[int] = set()  # test-file strings that build paths (a fake `nvidia-smi`)
        self.own_package = False  # an import of this file's own CUDA-library package was reported
        self.moved: set[int] = set()  # calls whose result goes straight to `.to(...)` / `.cuda()`
        self.old_torch: dict[int, tuple[int, ...]] = {}  # in a branch for PyTorch older than the bound
        self.recast: set[int] = set()  # calls whose result is converted at once to a dtype other than float64
        self.host_casts: set[int] = set()  # float64 that stays on the host: `x.double().cpu()`, float(...), a test's CPU tensor
        self.scopes: list[dict[str, str]] = [module_bindings(module)]
        self.functions: list[str] = []
        self.classes: list[str] = []  # the enclosing class names, innermost last
        self.defs: list[str] = []  # the enclosing classes and functions, innermost last
        self._host_tests: set[str] | None = None  # CPU-only tests (qualified names), read when first needed
        self._host_locals: set[tuple[str, str]] | None = None  # CPU tensors only made into numbers (host_values)
        self.store_targets: set[int] = set()  # subscripts assigned to (`x[mask] = 0`), not read
        self.candidates: list[Candidate] = []
        self.inner: set[int] = set()
        self.callees: dict[int, cst.Call] = {}
        self.optional_tests: set[int] = set()
        self.wrapped_by: dict[int, cst.Call] = {}
        self.loop_nodes: list[cst.For | cst.While] = []
        self._code: str | None = None
        self._codes: dict[int, str] = {}
        self.arrays: list[dict[str, str]] = [{}]  # per function: name -> the value call that made it
        self.masks: list[set[str]] = [set()]  # per function: names holding a boolean mask (mask_index.holds_mask)
        self.batched_lambdas: set[int] = set()  # `ds.map(lambda b: tok(...), batched=True)`: those lambdas
        self.in_lambdas: list[bool] = []  # per enclosing lambda: whether it is one of batched_lambdas
        self.held_strings: dict[int, str] = {}  # backend strings kept in a dict: why a person changes them
        self.partials: set[int] = set()  # functools.partial calls read as calls of the function they wrap
        self.device_tables: set[int] = set()  # values of a dict keyed by CUDA and another accelerator
        self.suppressed: set[int] = set()
        self.device_ctx: dict[int, str] = {}
        self.bare_decorators: set[int] = set()  # `@torch.compile`: a decorator named without a call
        # APIs a test file replaced with a stand-in (qualified names), by the definitions (functions
        # and classes, outermost first) around the statement or decorator that installs it
        self.spoofed: dict[tuple[str, ...], set[str]] = {}
        self.params: list[frozenset[str]] = []  # the parameters of each function being walked (fixtures a test takes)
        self.docstrings: set[int] = set()
        self.quiet = 0
        self.dtype_ctx: set[int] = set()
        self.env_ctx: set[int] = set()
        self.env_reads: set[int] = set()  # environment keys only read: os.environ.get(X), getenv(X), X in os.environ, os.environ[X]
        self.env_values: dict[int, cst.BaseExpression] = {}  # an environment key set -> the value it is set to
        self.once_reported: set[str] = set()  # rules of `once` string matchers that reported in this file
        self.held_read: set[tuple[int, str, str, int]] = set()  # (scope, name, rule, matcher) argument._match_held read
        self._maps: frozenset[str] | None = None
        self.dict_changes: dict[str, tuple] = {}  # name -> where the file passes and changes it (argument._dict_changes)
        self.name_positions: dict[str, list[int]] | None = None  # name -> its offsets in the file's text (argument._occurrences)
        # (ids of scope and value, key, statement, depth, follow) -> (scope, value, what argument._spread_values found)
        self.spread_memo: dict[tuple, tuple] = {}
        self.moves: dict[str, list[tuple[int, bool]]] | None = None  # reference._moves: the file's moves by name, read once
        self.env_lists: dict[int, int] = {}  # a name in a list of variable names -> the list
        self.env_lists_reported: set[tuple[str, int]] = set()
        self.fstrings = 0
        self.values = ModuleValues(module)
        self.value_scopes: list[ScopeValues] = [self.values.module]
        self.api_args: set[int] = set()  # a device argument of a torch API, which takes a torch.device too
        self.device_calls: dict[int, tuple[cst.Call, cst.BaseExpression | None]] = {}  # torch.device(<this>[, index])
        self.type_tests: dict[int, tuple[cst.IfExp, cst.BaseExpression]] = {}  # "cuda" if "cuda" in <x> else "cpu"
        self.cuda_tests = False  # an `if device == "cuda":`-like branch exists
        self.attr_after: dict[int, str] = {}  # expression -> the attribute read from it (`finfo(...)` -> `min`)
        self.declarations: set[int] = set()  # an option's own name and help (`add_argument("--fp16", help=...)`)
        # A command-line item -> the item after it in the same list (`["--mixed_precision", "fp16"]`).
        self.next_words: dict[int, str] = {}
        self.assigned: dict[int, Any] = {}  # an assignment target -> the literal assigned (`assigned_values`)
        self.written: set[int] = set()  # every assignment target, whatever the value (`assigned: true`)
        self._optional_nodes: set[int] = set()
        self.optional = 0  # depth of `try: ... except ImportError` / `if is_x_available():` blocks
        self.assigning: list[cst.Assign] = []  # the enclosing assignments, innermost last
        self.cuda_guarded: set[int] = set()  # right of `torch.cuda.is_available() and ...`: runs only on CUDA
        self.records: set[int] = set()  # a value only recorded (`info["cuda"] = ...`, `{"cuda": ...}`)
        self.gpu_build: set[int] = set()  # inside an `if` test that tells CUDA from ROCm: GPU-internal dispatch
        self.compared: set[int] = set()  # an operand of a comparison: tested, not chosen
        self.type_branches: set[int] = set()  # under `if is_complex:`: code that handles the caller's complex tensors
        self.scaffold: dict[int, str] = {}  # test scaffolding (`@skipif(not torch.cuda.is_available())`) -> why
        self.skipped: set[int] = set()  # runs on no Neuron host (a ROCm-only branch), or only saves and restores a setting
        # The CUDA arm of a per-vendor dispatch (scan/dispatch.py): node -> (the arm, in its test).
        # An arm that chooses a device is read like any code; the others are not findings (settle_vendor_arms).
        self.vendor_arms: dict[int, tuple[int, bool]] = {}
        self.device_arms: set[int] = set()  # arms whose body chooses a device
        self._chained: set[int] = set()  # `elif` nodes of a chain already read from its first `if`

    # -- helpers ---------------------------------------------------------------------------
    def resolve(self, node: cst.BaseExpression) -> str | None:
        name = dotted_name(node)
        if name is None:
            return None
        head, _, rest = name.partition(".")
        for scope in reversed(self.scopes):
            if head in scope:
                return scope[head] + ("." + rest if rest else "")
        return None

    def add(self, rule: RuleSpec, node: cst.CSTNode, **values: Any) -> None:
        context = values.pop("context", {})
        if rule.id not in self.index.enabled or (self.is_test and not rule.in_tests):
            return
        if id(node) in self.cuda_guarded and rule.category == "environment":
            # `torch.cuda.is_available() and torch.version.cuda is not None`: the build asked about
            # only where a GPU is, so False on a Neuron host, which is right; the guard is the
            # finding. (A capability query there still picks a path: `... and is_bf16_supported()`.)
            return
        if id(node) in self.skipped:
            return
        if id(node) in self.old_torch:
            context = {**context, "old_torch": self.old_torch[id(node)]}
        if isinstance(context.get("argument"), dict) and context["argument"].get("manual") and "manual_reason" not in context:
            context = {**context, "manual_reason": context["argument"]["manual"]}  # the matcher's `manual:` (rules/schema.json)
        if self.partials and context.get("call") is not None and id(context["call"]) in self.partials:
            context = {**context, "manual_reason": "an argument of `functools.partial`: change it by hand"}
        where = self.index.not_in.get(rule.id)
        if where is not None and self._not_in(where):
            return
        if self.is_test and self.defs:
            # where the finding is, for settle_spoofs (a stand-in counts only where it is installed)
            context = {**context, "defs": tuple(self.defs), "fixtures": frozenset().union(*self.params)}
        if self.is_test and id(node) in self.scaffold:
            # A test's skip condition, isolation step or expected failure: reported at info as
            # test scaffolding (engine._finding), as issue 11's Precision list accepts.
            context = {**context, "scaffold": self.scaffold[id(node)]}
        if id(node) in self.gpu_build and rule.category in ("device", "environment"):
            # `if device == "cuda" and torch.version.hip:`: which GPU build, not which device.
            return
        if self.index.operator_info and (entry := self.index.operator(rule, str(values.get("name", "")))) is not None:
            # An operators.yaml entry: its status, SDK and source go into the message.
            values = {**values, "status": entry["status"], "sdk": entry["sdk"], "source": entry["source"],
                      "mode": f' mode "{values["value"]}"' if values.get("value") not in (None, values.get("name")) else ""}
        arm = self.vendor_arms.get(id(node))
        if arm is not None:
            if rule.category == "device" and not arm[1]:
                self.device_arms.add(arm[0])  # `device = torch.device("cuda")`: the arm is a device choice
            else:
                context = {**context, "vendor_arm": arm[0]}
        self.candidates.append(Candidate(rule, node, {k: str(v) for k, v in values.items()}, context))

    def settle_held_strings(self) -> None:
        """A backend kept in a dict that an argument rule also reports, passed as `**` to the call
        it names (`TrainingArguments(**{"ddp_backend": "nccl"})`): that rule's finding says more."""
        if not self.held_strings:
            return
        others = {id(c.node) for c in self.candidates if not c.context.get("held_string")}
        self.candidates = [c for c in self.candidates if not (c.context.get("held_string") and id(c.node) in others)]

    def settle_spoofs(self) -> None:
        """Uses of an API the test file replaced with a stand-in (`torch.cuda.is_available = lambda:
        True`, `monkeypatch.setattr(torch.cuda, "device_count", ...)`, `@mock.patch(...)`), wherever
        the stand-in is set: test scaffolding, and not rewritten (the rewrite would bypass it and
        change what the test checks)."""
        if not self.spoofed:
            return
        for cand in self.candidates:
            where = cand.context.get("defs")
            if where is None or "scaffold" in cand.context:
                continue
            # The stand-in is installed around the use (the same test or class, or a decorator on
            # them), or by a fixture the test takes (a module-level function named as a parameter).
            active: set[str] = set()
            for depth in range(1, len(where) + 1):
                active |= self.spoofed.get(where[:depth], set())
            for fixture in cand.context.get("fixtures", ()):
                active |= self.spoofed.get((fixture,), set())
            if cand.values.get("name") in active:
                cand.context = {**cand.context, "scaffold": "the test replaced this API with a stand-in, so it runs no CUDA code",
                                "manual_reason": "the test replaced this API with a stand-in: left as it is"}
            elif active and cand.node is not None and self._reads_any(cand.node, active):
                # `"cuda" if torch.cuda.is_available() else "cpu"` under a patched is_available: a
                # rewrite of the whole expression would no longer ask the stand-in.
                cand.context = {**cand.context, "manual_reason": "it reads an API the test replaced with a stand-in: left as it is"}

    def _reads_any(self, node: cst.CSTNode, names: set[str]) -> bool:
        """Whether `node` names one of the qualified `names` anywhere inside it."""
        return any(isinstance(inner, (cst.Attribute, cst.Name)) and self.resolve(inner) in names for inner in _subtree(node))

    def settle_vendor_arms(self) -> None:
        """After the walk: drop the candidates of a per-vendor dispatch's CUDA arm that chooses no
        device. One that does is a device choice the fixer migrates with its guard and calls
        (`if torch.cuda.is_available(): device = "cuda"` before `elif mps`), so all of it stays."""
        self.candidates = [c for c in self.candidates
                           if c.context.get("vendor_arm") is None or c.context["vendor_arm"] in self.device_arms]

    def _not_in(self, where: tuple[Any, Any, Any]) -> bool:
        """Inside code the rule's `not_in` names: a file, class or function by its name."""
        files, classes, functions = where
        return bool((files is not None and files.search(self.file_name))
                    or (classes is not None and any(classes.search(c) for c in self.classes))
                    or (functions is not None and any(functions.search(f) for f in self.functions)))

    def _set_ctx(self, node: cst.CSTNode | None, ctx: str) -> None:
        if node is not None:
            self.device_ctx[id(node)] = ctx

    # -- scopes and imports ----------------------------------------------------------------
    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.value_scopes.append(self.values.scope(node))
        if self.is_test:
            self.params.append(frozenset(p.name.value for p in (*node.params.params, *node.params.kwonly_params)))
        self.arrays.append({})
        self.masks.append(set())
        self.scopes.append({})
        self.functions.append(node.name.value)
        self.defs.append(node.name.value)
        self.inner.add(id(node.name))
        if self.is_test and node.name.value.startswith("test") and self._host_test(".".join(self.defs)):
            self.host_casts.update(_subtree_ids(node.body))  # a CPU-only test: its float64 stays on the host
        if self.is_test and node.name.value.startswith("test") and any(
                _FAKE_FIXTURE.search(p.name.value) for p in node.params.params):
            # `def test_nvidia_smi_is_faked(fake_nvidia_smi)`: the command lines it runs reach a fake.
            for inner in _subtree(node.body):
                if isinstance(inner, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)):
                    self.scaffold.setdefault(id(inner), "a command run against a fake the test installs (a fixture)")
        if self.is_test and len(self.defs) == 1 and _is_probe(node, self._code):
            # `def require_torch_multi_gpu(test_case)`, `def _is_torch_fp64_available(device)` in
            # testing utilities: what they ask of CUDA decides which tests run.
            for inner in _subtree_ids(node.body):
                self.scaffold.setdefault(inner, _PROBE_REASON)

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.value_scopes.pop()
        if self.is_test:
            self.params.pop()
        self.arrays.pop()
        self.masks.pop()
        self.scopes.pop()
        self.functions.pop()
        self.defs.pop()

    def _host_local(self, target: cst.Name, call: cst.Call) -> None:
        """`t = torch.tensor(xs, dtype=torch.float64)` only made into Python numbers: host work."""
        dtype = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "dtype"), None)
        if dtype is None or not (dotted_name(dtype) or "").endswith(("float64", "double")) \
                or not isinstance(call.func, cst.Attribute) or call.func.attr.value not in HOST_FACTORIES \
                or not (self.resolve(call.func) or "").startswith("torch."):
            return
        if self._host_locals is None:
            text = self._module_code()
            self._host_locals = host_locals(text) if re.search(r"float64|double", text) else set()
        if (".".join(self.defs), target.value) in self._host_locals:
            self.host_casts.add(id(dtype))

    def _host_test(self, qualified: str) -> bool:
        """Whether the test `qualified` (`Class.test_x`) runs on the CPU only (scan/host_tests.py),
        read once per file from its whole text, and only for a file that mentions float64."""
        if self._host_tests is None:
            text = self._module_code()
            self._host_tests = host_test_functions(text) if re.search(r"float64|double", text) else set()
        return qualified in self._host_tests

    def visit_For(self, node: cst.For) -> None:
        self._rebinds(node.target)
        self.loop_nodes.append(node)
        # `for h[~mask] in ...`: assigned to each iteration, not read
        self.store_targets.update(id(t) for t in _unpacked(node.target) if isinstance(t, cst.Subscript))

    def leave_For(self, node: cst.For) -> None:
        self.loop_nodes.pop()

    def visit_While(self, node: cst.While) -> None:
        self.loop_nodes.append(node)

    def leave_While(self, node: cst.While) -> None:
        self.loop_nodes.pop()

    def _module_code(self) -> str:
        if self._code is None:
            self._code = self.module.code
        return self._code

    def batched_maps(self) -> frozenset[str]:
        """The functions the file passes to a batched `.map` (index.batched_map_functions), read
        off the whole file's text once."""
        if self._maps is None:
            from migrator.scan.index import batched_map_functions

            self._maps = batched_map_functions(self._module_code().encode("utf-8", "surrogatepass"))
        return self._maps

    def _code_of(self, node: cst.CSTNode) -> str:
        """A loop's source, generated once per scan (several rules may ask)."""
        key = id(node)
        if key not in self._codes:
            self._codes[key] = self.module.code_for_node(node)
        return self._codes[key]

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self.in_lambdas.append(id(node) in self.batched_lambdas)
        self.scopes.append({})
        # `lambda alive: x[alive]`: its parameters are not the function's masks
        self.masks.append(self.masks[-1] - {p.name.value for p in (*node.params.params, *node.params.kwonly_params)})

    def leave_Lambda(self, node: cst.Lambda) -> None:
        self.in_lambdas.pop()
        self.scopes.pop()
        self.masks.pop()

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.inner.add(id(node.name))
        self.classes.append(node.name.value)
        self.defs.append(node.name.value)

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        self.classes.pop()
        self.defs.pop()

    def _import(self, node: cst.Import | cst.ImportFrom) -> bool:
        if len(self.scopes) > 1:
            self.scopes[-1].update(import_bindings(node))
        imports.match(self, node)
        return False  # names inside an import are not references

    def visit_Import(self, node: cst.Import) -> bool:
        return self._import(node)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return self._import(node)

    def visit_Annotation(self, node: cst.Annotation) -> None:
        self.annotations += 1

    def leave_Annotation(self, node: cst.Annotation) -> None:
        self.annotations -= 1

    def visit_Assert(self, node: cst.Assert) -> None:
        self.asserts += 1

    def leave_Assert(self, node: cst.Assert) -> None:
        self.asserts -= 1

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if self.is_test and isinstance(node.operator, cst.Divide):
            # `tmp_path / "nvidia-smi"`: a test writing a fake binary, not a call of the tool.
            self.scaffolding.update((id(node.left), id(node.right)))

    # -- contexts in which a string is a device --------------------------------------------
    def visit_Expr(self, node: cst.Expr) -> None:
        if isinstance(node.value, (cst.SimpleString, cst.ConcatenatedString)):
            self.docstrings.add(id(node.value))

    def visit_Param(self, node: cst.Param) -> None:
        self.inner.add(id(node.name))
        if node.default is not None and DEVICE_NAME.search(node.name.value):
            self._set_ctx(node.default, "device")
        elif node.default is not None and self.functions and (
                BACKEND_NAME.search(node.name.value) or node.name.value in self.value_scopes[-1].backend_names):
            # `def init_distributed(backend: str = "nccl")`: reported, not rewritten: a test's stand-in
            # (`def fake_init(backend="nccl")`) or a `Literal["nccl", "gloo"]` annotation would no
            # longer match what it checks.
            self._held_backend(node.default, f"the default of parameter `{node.name.value}`: change it by hand")

    def _held_backend(self, value: cst.BaseExpression, reason: str) -> None:
        """`value` chooses a backend that is reported for a person (`reason`), not rewritten; so
        does each branch of it (`"nccl" if ... else "gloo"`)."""
        self._set_ctx(value, "backend")
        self.held_strings.update(dict.fromkeys(_subtree_ids(value), reason))

    def _target_is_device(self, target: cst.BaseExpression) -> bool:
        name = target.attr.value if isinstance(target, cst.Attribute) else target.value if isinstance(target, cst.Name) else ""
        if isinstance(target, cst.Name) and not DEVICE_NAME.search(name):
            # `loc = f"cuda:{i}"` then `map_location=loc`: a name used as a device is one.
            scope = self.value_scopes[-1]
            return name in scope.owner(name).device_names
        return bool(DEVICE_NAME.search(name))

    def visit_Assign(self, node: cst.Assign) -> None:
        # `x[mask] = 0`, and each of `a[mask], b[mask] = f(x)`: assigned to, not read
        self.store_targets.update(id(target) for t in node.targets for target in _unpacked(t.target)
                                  if isinstance(target, cst.Subscript))
        for t in node.targets:
            if isinstance(t.target, cst.Subscript) and len(t.target.slice) == 1 and isinstance(t.target.slice[0].slice, cst.Index):
                self.env_values[id(t.target.slice[0].slice.value)] = node.value  # read only for environment keys
        if all(isinstance(t.target, cst.Subscript) for t in node.targets):
            self.records.add(id(node.value))  # version_info["cuda"] = torch.version.cuda
        if isinstance(node.value, (cst.Attribute, cst.Name)) and any(
                isinstance(t.target, cst.Name) and _SAVED_NAME.match(t.target.value) for t in node.targets):
            # old = torch.backends.cudnn.benchmark: kept to restore. Only a setting read as it is:
            # `cached_model = model.cuda()` still moves the model.
            self.skipped.update(_subtree_ids(node.value))
        elif isinstance(node.value, cst.Name) and _SAVED_NAME.match(node.value.value):
            for t in node.targets:
                self.skipped.update(_subtree_ids(t.target))  # torch.backends.cudnn.benchmark = old: put back
        value = node.value
        if isinstance(value, cst.Lambda) or (isinstance(value, cst.Call) and "mock" in (dotted_name(value.func) or "").lower()):
            # `torch.cuda.is_available = lambda: True`: a spoof (tests, the HF Trainer workaround
            # in Neuron's own guide) replaces the API with a function; it does not call it.
            # (A flag set to a value, `cudnn.benchmark = True`, is still a use.)
            self.inner.update(id(t.target) for t in node.targets if isinstance(t.target, cst.Attribute))
            if self.is_test:
                for t in node.targets:
                    if isinstance(t.target, cst.Attribute) and (name := self.resolve(t.target)) is not None:
                        self.spoofed.setdefault(tuple(self.defs), set()).add(name)
        if self.is_test and any(isinstance(t.target, cst.Attribute) and t.target.attr.value in ("return_value", "side_effect")
                                for t in node.targets):
            # run.return_value = CompletedProcess(["nvidia-smi"], 0, ...): what a mock answers, not what runs.
            for inner in _subtree(node.value):
                self.scaffold.setdefault(id(inner), "a mock's canned return value")
        if len(self.functions) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name) \
                and isinstance(value, cst.Call):
            self._host_local(node.targets[0].target, value)
        if self.index.conditions:
            for t in node.targets:
                self.written.update(_targets(t.target))
            value = _literal(node.value)
            if value is not None or (isinstance(node.value, cst.Name) and node.value.value == "None"):
                self.assigned.update((id(t.target), value) for t in node.targets)
        if self.index.callee_arguments:
            self.assigning.append(node)
        if "allow-list" in self.index.device_strings and any(
                isinstance(t.target, cst.Name) and ALLOW_LIST_NAME.search(t.target.value) for t in node.targets):
            self._allow_list(node.value)  # SUPPORTED_ACCELERATORS = {"cpu", "gpu", "cuda", "mps"}
        if len(self.scopes) > 1:
            self.scopes[-1].update(importorskip_binding(node))  # module-level ones: module_bindings
        if any(self._target_is_device(t.target) for t in node.targets):
            self._set_ctx(node.value, "device")
        elif any(self._target_is_backend(t.target) for t in node.targets):
            self._set_ctx(node.value, "backend")

    def _target_is_backend(self, target: cst.BaseExpression) -> bool:
        """`backend = "nccl"` where the name is later passed as a process-group backend."""
        if isinstance(target, cst.Name):
            scope = self.value_scopes[-1]
            # ... or a name that says it holds one (`DIST_BACKEND = "nccl"`, read by another module).
            return target.value in scope.owner(target.value).backend_names or BACKEND_NAME.search(target.value) is not None
        return isinstance(target, cst.Attribute) and target.attr.value in ("backend", "dist_backend")

    def leave_Assign(self, node: cst.Assign) -> None:
        if self.index.callee_arguments:
            self.assigning.pop()
        if self.index.mask_indexes and self.functions:
            held = mask_index.holds_mask(node.value, self.masks[-1])  # `alive = ~finished`, later `x[alive]`
            for t in node.targets:
                if isinstance(t.target, cst.Name):
                    (self.masks[-1].add if held else self.masks[-1].discard)(t.target.value)
                else:
                    self.masks[-1].difference_update(_stored_names(t.target))  # `alive, n = ...`

        # `arr = np.zeros(3)`: remember which names hold an array a value-call rule looks for.
        if not self.index.value_calls:
            return
        value = node.value
        inner = self.resolve(value.func) if isinstance(value, cst.Call) else None
        keeps = inner in self.index.value_calls and not any(a.keyword is not None and a.keyword.value == "dtype" for a in value.args)
        for t in node.targets:
            if isinstance(t.target, cst.Name):
                if keeps:
                    self.arrays[-1][t.target.value] = inner
                else:
                    self.arrays[-1].pop(t.target.value, None)

    def _rebinds(self, target: cst.BaseExpression | None, value: cst.BaseExpression | None = None) -> None:
        """A binding other than `name = value` (loop, `as`, `:=`, annotated assignment): the name
        holds a mask afterwards only when `value` is one."""
        if target is None or not (self.index.mask_indexes and self.functions):
            return
        names = _stored_names(target)
        if value is not None and len(names) == 1 and isinstance(target, cst.Name) and mask_index.holds_mask(value, self.masks[-1]):
            self.masks[-1].add(names[0])
        else:
            self.masks[-1].difference_update(names)

    def leave_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._rebinds(node.target, node.value)

    def leave_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._rebinds(node.target, node.value)

    def leave_WithItem(self, node: cst.WithItem) -> None:
        self._rebinds(node.asname.name if node.asname is not None else None)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if isinstance(node.target, cst.Subscript):
            self.store_targets.add(id(node.target))  # `tokens[~mask]: int = 1`
        if self.index.conditions and node.value is not None:
            self.written.update(_targets(node.target))
        if node.value is not None and self._target_is_device(node.target):
            self._set_ctx(node.value, "device")
        elif node.value is not None and self._target_is_backend(node.target):
            self._set_ctx(node.value, "backend")  # a dataclass field `backend: str = "nccl"`

    def visit_Return(self, node: cst.Return) -> None:
        if self.functions and "device" in self.functions[-1].lower():
            self._set_ctx(node.value, "device")
        elif self.functions and "backend" in self.functions[-1].lower():
            self._set_ctx(node.value, "backend")  # `def resolve_backend(args): return "nccl" if ... else "gloo"`

    def visit_Dict(self, node: cst.Dict) -> None:
        for value in cuda_entries(node):  # {"cuda": torch.cuda.empty_cache, "xpu": torch.xpu.empty_cache}
            self.vendor_arms.update(dict.fromkeys(_subtree_ids(value), (id(value), False)))
        keys = {_string_value(e.key) for e in node.elements if isinstance(e, cst.DictElement)}
        if keys & {"cuda", "gpu"} and keys & (OTHER_ACCELERATORS | {"neuron", "xla", "tpu"}):
            # {"cuda": "nccl", "xpu": "xccl", "neuron": "neuron"}: one backend per device type
            self.device_tables.update(id(e.value) for e in node.elements if isinstance(e, cst.DictElement))
        if any(isinstance(e, cst.StarredDictElement) and (dotted_name(e.value) or "").endswith("environ") for e in node.elements):
            # {**os.environ, "MASTER_ADDR": host}: a child process's environment, its values set
            self.env_values.update((id(e.key), e.value) for e in node.elements if isinstance(e, cst.DictElement))

    def visit_DictElement(self, node: cst.DictElement) -> None:
        self.env_ctx.add(id(node.key))  # {"CUDA_VISIBLE_DEVICES": "0"} as an environment for a process
        self.records.add(id(node.value))  # {"cuda_version": torch.version.cuda}: recorded, nothing decided
        key = _string_value(node.key)
        if key is not None and DEVICE_NAME.search(key):
            self._set_ctx(node.value, "device")
        elif key is not None and (BACKEND_NAME.search(key) or (key in ("cuda", "gpu") and id(node.value) not in self.device_tables)):
            # (a table that also names another accelerator, {"cuda": "nccl", "xpu": "xccl"}, dispatches per vendor)
            # {"ddp_backend": "nccl"}, {"gpu": "nccl", "cpu": "gloo"}: a backend kept in a dict
            self._held_backend(node.value, "a backend for the GPU in a per-device table: add the target's device and backend by hand"
                               if key in ("cuda", "gpu") else f"a backend kept in a dict under `{key}`: change it where the dict is used, by hand")

    def _names_list(self, node: cst.List | cst.Tuple | cst.Set) -> None:
        # ("CUDA_VISIBLE_DEVICES", "MASTER_ADDR") in a file that touches the environment: a list
        # of variable names the program reads, sets or forwards, so each is an environment key.
        values = [_string_value(e.value) for e in node.elements]
        # PATH and HOME have no underscore: every name upper case, at least one ENV_NAME-shaped.
        # More than MAX_ENV_NAMES names is an inventory a program logs or dumps (torch's DDP lists
        # every NCCL_* variable it prints), not the few it sets or forwards.
        if 1 < len(values) <= MAX_ENV_NAMES and all(v is not None and _UPPER_NAME.fullmatch(v) for v in values) \
                and any(ENV_NAME.fullmatch(v) for v in values) \
                and any(t in self._module_code() for t in ("environ", "getenv", "setenv")):
            self.env_ctx.update(id(e.value) for e in node.elements)
            self.env_lists.update((id(e.value), id(node)) for e in node.elements)

    def _command_items(self, node: cst.List | cst.Tuple) -> None:
        # An argument list a launcher builds keeps a flag and its value as two items: a `command`
        # pattern reads an item that starts with `--` together with the string after it.
        items = [e.value for e in node.elements]
        for item, after in zip(items, items[1:]):
            if isinstance(item, cst.SimpleString) and item.raw_value.startswith("--") \
                    and (word := _string_value(after)) is not None:
                self.next_words[id(item)] = word

    def visit_List(self, node: cst.List) -> None:
        self._names_list(node)
        self._command_items(node)

    def visit_Tuple(self, node: cst.Tuple) -> None:
        self._names_list(node)
        self._command_items(node)

    def visit_Set(self, node: cst.Set) -> None:
        self._names_list(node)

    def visit_Comparison(self, node: cst.Comparison) -> None:
        for target in node.comparisons:
            name = dotted_name(target.comparator)
            if isinstance(target.operator, (cst.In, cst.NotIn)) and name is not None and name.endswith("environ"):
                self.env_ctx.add(id(node.left))
                self.env_reads.add(id(node.left))
            if isinstance(target.operator, (cst.In, cst.NotIn)) and "allow-list" in self.index.device_strings:
                self._allow_list(target.comparator)
        # `backend == dist.Backend.NCCL`, `x.dtype in (torch.float64, torch.complex64)`: a constant
        # tested against, not chosen or given to a tensor (reference.match).
        for operand in [node.left] + [c.comparator for c in node.comparisons]:
            elements = operand.elements if isinstance(operand, (cst.Tuple, cst.List, cst.Set)) else None
            self.compared.update([id(e.value) for e in elements] if elements is not None else [id(operand)])
            if self.is_test and self.asserts and isinstance(operand, cst.Attribute) and dotted_name(operand) == "torch.cuda":
                # `assert device_module("cpu") is not torch.cuda`: which module the code picks, asserted.
                self.scaffold.setdefault(id(operand), "an assertion on which module the code under test picks")
        if id(node) in self.optional_tests:
            return
        if self.is_test and self.asserts and any(isinstance(c.operator, (cst.In, cst.NotIn)) for c in node.comparisons):
            return  # `assert "cuda" in out`: a test asserting on text it printed
        operands = [node.left] + [c.comparator for c in node.comparisons]
        if any(isinstance(o, cst.Attribute) and o.attr.value == "type" and isinstance(o.value, cst.Name)
               and o.value.value in self.values.module.accelerator_names for o in operands):
            return  # `DEVICE.type == "cuda"` on the resolved accelerator: a deliberate CUDA-only branch
        for operand in operands:
            if CUDA_DEVICE.match(_string_value(operand) or ""):
                self.device_ctx[id(operand)] = "comparison"
                if self.is_test and self.asserts:
                    # `assert pick_device().type == "cuda"`: what the test expects, not a branch.
                    self.scaffold.setdefault(id(operand), "an assertion on the device the test expects")

    def _allow_list(self, container: cst.BaseExpression) -> None:
        """`device not in {"cpu", "cuda", "mps"}`: a literal list of device types that names CUDA
        and the CPU but no Neuron or XLA device, so every other device is rejected or sent down
        the CPU path."""
        if not isinstance(container, (cst.Set, cst.List, cst.Tuple)) or len(container.elements) < 2:
            return
        values = [_string_value(e.value) for e in container.elements]
        if any(v is None for v in values):
            return
        kinds = set(values)
        if "cpu" in kinds and kinds & {"cuda", "gpu"} and not kinds & {"neuron", "xla", "privateuseone", "auto"}:
            for rule in self.index.device_strings["allow-list"]:
                self.add(rule, container, value=self.module.code_for_node(container)[:80], context={"device_kind": "allow-list"})
                break

    def visit_Try(self, node: cst.Try) -> None:
        names = [dotted_name(h.type) if h.type is not None else "" for h in node.handlers]
        if any(n in ("", "ImportError", "ModuleNotFoundError", "Exception") or isinstance(h.type, cst.Tuple)
               for n, h in zip(names, node.handlers)):
            self.optional += 1
            self._optional_nodes.add(id(node))

    def leave_Try(self, node: cst.Try) -> None:
        if id(node) in self._optional_nodes:
            self.optional -= 1

    def leave_If(self, node: cst.If) -> None:
        if id(node) in self._optional_nodes:
            self.optional -= 1

    def _cuda_presence(self, test: cst.BaseExpression) -> bool:
        """`torch.cuda.is_available()`, `x.is_cuda`, `TEST_CUDA`, `device.type == "cuda"`, or an `and` of one."""
        if isinstance(test, cst.BooleanOperation):
            return isinstance(test.operator, cst.And) and (self._cuda_presence(test.left) or self._cuda_presence(test.right))
        if isinstance(test, cst.Call):
            return self.resolve(test.func) in ("torch.cuda.is_available", "torch.cuda.is_initialized")
        if isinstance(test, cst.Name):
            return _CUDA_FLAG.match(test.value) is not None
        return is_cuda_test(test)

    def _rocm_presence(self, test: cst.BaseExpression) -> bool:
        """`TEST_WITH_ROCM`, `torch.version.hip`, `torch.version.hip is not None`, or an `and` of one."""
        if isinstance(test, cst.BooleanOperation):
            return isinstance(test.operator, cst.And) and (self._rocm_presence(test.left) or self._rocm_presence(test.right))
        if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.comparisons[0].operator, cst.IsNot):
            test = test.left
        if isinstance(test, cst.Name):
            return re.search(r"ROCM|^IS_HIP", test.value) is not None
        return isinstance(test, cst.Attribute) and test.attr.value == "hip" and self.resolve(test) == "torch.version.hip"

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
        if isinstance(node.operator, cst.And) and not _string_value(node.right) and self._cuda_presence(node.left):
            self.cuda_guarded.update(_subtree_ids(node.right))
        ctx = self.device_ctx.get(id(node))
        if ctx == "backend":
            # `backend = args.backend or "nccl"`: each side that can be the value is one, as an
            # IfExp's branches are (a literal left side decides: `"gloo" or x` is "gloo").
            left = truth(node.left)
            left_is_value = left == isinstance(node.operator, cst.Or)
            if left is None or left_is_value:
                self._set_ctx(node.left, ctx)
            if left is None or not left_is_value:
                self._set_ctx(node.right, ctx)

    def _type_branch(self, test: cst.BaseExpression, body: cst.CSTNode) -> None:
        if any(isinstance(n, cst.Name) and "complex" in n.value for n in _subtree(test)):
            # `if is_complex: out = torch.view_as_complex(out)`: gives back the complex type the
            # caller's tensor had; the caller's complex use is the finding.
            self.type_branches.update(_subtree_ids(body))

    def visit_Decorator(self, node: cst.Decorator) -> None:
        call = node.decorator
        if isinstance(call, (cst.Name, cst.Attribute)):
            self.bare_decorators.add(id(call))
        if self.is_test and isinstance(call, cst.Call) and _SKIP_CALL.match((dotted_name(call.func) or "").rsplit(".", 1)[-1]):
            self.scaffold.update(dict.fromkeys(_subtree_ids(call), _SKIP_REASON))  # @pytest.mark.skipif(not torch.cuda.is_available(), ...)

    def _skips(self, body: cst.BaseSuite) -> bool:
        """A block that skips the test (`self.skipTest(...)`, `pytest.skip(...)`, `raise unittest.SkipTest`);
        sources/prune.py keeps those calls, so a pruned parse sees the same."""
        for statement in body.body if isinstance(body, cst.IndentedBlock) else [body]:
            for small in getattr(statement, "body", []) if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) else []:
                value = small.value if isinstance(small, cst.Expr) else small.exc if isinstance(small, cst.Raise) else None
                if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and _SKIP_CALL.match(value.func.attr.value):
                    return True
        # `if not torch.cuda.is_available(): return`: the test ends there, as a skip would.
        statements = body.body if isinstance(body, cst.IndentedBlock) else [body]
        if len(statements) != 1 or not isinstance(statements[0], (cst.SimpleStatementLine, cst.SimpleStatementSuite)) \
                or len(statements[0].body) != 1:
            return False
        only = statements[0].body[0]
        return isinstance(only, cst.Return) and (only.value is None or (isinstance(only.value, cst.Name) and only.value.value == "None"))

    def visit_If(self, node: cst.If) -> None:
        self._gpu_build_branch(node)
        if id(node) not in self._chained:
            chain, arms = cuda_arms(node)
            self._chained.update(id(branch) for branch in chain[1:])
            for arm in arms:
                self.vendor_arms.update(dict.fromkeys(_subtree_ids(arm.test), (id(arm), True)))
                self.vendor_arms.update(dict.fromkeys(_subtree_ids(arm.body), (id(arm), False)))
        self._old_torch_branch(node)
        if self.index.reference_context:
            self._type_branch(node.test, node.body)
        if self.is_test and self._skips(node.body):
            self.scaffold.update(dict.fromkeys(_subtree_ids(node.test), _SKIP_REASON))  # if not torch.cuda.is_available(): self.skipTest(...)
        if self._rocm_presence(node.test) or (self.is_test and self._cuda_presence(node.test)):
            # `if TEST_WITH_ROCM:` runs on no Neuron host. In a test, `if torch.cuda.is_available():`
            # / `if TEST_CUDA:` adds CUDA-only cases that a Neuron run skips; the test still runs.
            self.skipped.update(_subtree_ids(node.body))
        test = self.module.code_for_node(node.test) if self.index.optional_imports else ""
        if "available(" in test or "find_spec(" in test:
            # `if is_torch_xla_available(): import torch_xla`: runs only where the package is.
            self.optional += 1
            self._optional_nodes.add(id(node))
        if is_cuda_test(node.test):
            self.cuda_tests = True

    def visit_With(self, node: cst.With) -> None:
        if self.is_test and any(isinstance(item.item, cst.Call) and (dotted_name(item.item.func) or "").rsplit(".", 1)[-1]
                                in ("assertRaises", "assertRaisesRegex", "raises") for item in node.items):
            self.scaffold.update(dict.fromkeys(_subtree_ids(node.body), "inside assertRaises: the test expects this to fail"))
        if any(isinstance(item.item, cst.Call) and self.resolve(item.item.func) == "torch.device" and item.item.args
               and _string_value(item.item.args[0].value) == "cpu" for item in node.items):
            # `with torch.device("cpu"):` builds its tensors on the host (a RoPE table cast to
            # float32 before it is used): float64 there stays on the host.
            self.host_casts.update(_subtree_ids(node.body))

    def _old_torch_branch(self, node: cst.If | cst.IfExp) -> None:
        """`X if is_torch_greater_or_equal("2.7") else torch.cuda.Stream()`: the branch for an older
        PyTorch is marked with its bound; the engine drops it for targets whose hosts run a newer one."""
        gate = old_torch_branch(node.test)
        if gate is not None:
            branch = node.body if gate[0] == "body" else node.orelse
            if branch is not None:
                self.old_torch.update(dict.fromkeys(_subtree_ids(branch), gate[1]))

    def visit_IfExp(self, node: cst.IfExp) -> None:
        test = node.test
        self._old_torch_branch(node)
        if self.is_test and self._cuda_presence(test):
            self.skipped.update(_subtree_ids(node.body))  # [cpu, cuda] if torch.cuda.is_available() else [cpu], in a test
        if self.index.reference_context:
            self._type_branch(test, node.body)
        if is_cuda_test(test):
            self.cuda_tests = True
        if (isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.comparisons[0].operator, cst.In)
                and _string_value(test.left) == "cuda" and _string_value(node.body) == "cuda" and _string_value(node.orelse) == "cpu"):
            # `"cuda" if "cuda" in device else "cpu"`: the device type, derived by a string test.
            self.type_tests[id(test.left)] = (node, test.comparisons[0].comparator)
        if isinstance(node.orelse, cst.Name) and node.orelse.value == "None":
            # `value if device.type == "cuda" else None` passes a CUDA-only argument only on CUDA:
            # portable on every device, so the comparison is not a skipped branch.
            self.optional_tests.add(id(node.test))
        ctx = self.device_ctx.get(id(node))
        if ctx:
            self._set_ctx(node.body, ctx)
            self._set_ctx(node.orelse, ctx)
        # Only the bare test is the "silently falls back to CPU" shape: with more conditions
        # (`is_available() and not args.no_cuda`) the script's own choice must survive, so the
        # string and the guard are rewritten one by one instead.
        guard = self._cuda_guard(node.test) if isinstance(node.test, cst.Call) else None
        branch = next((b for b in (node.body, node.orelse) if CUDA_DEVICE.match(_string_value(b) or "")), None)
        if guard is not None and branch is not None:
            for rule in self.index.device_strings.get("guarded", []):
                self.add(rule, node, value=_string_value(branch), context={
                    "device_kind": ctx or "device", "text": id(node) not in self.api_args, "device_call": self.device_calls.get(id(node)),
                    "index": CUDA_DEVICE.match(_string_value(branch) or "").group(1)})
                self.suppressed.update({id(guard), id(branch), id(guard.func)})
                break

    def _gpu_build_branch(self, node: cst.If) -> None:
        """`if device_type == "cuda" and torch.version.hip:`, or `if device == "cuda":` whose block
        asks for ROCm: code that tells the CUDA build from the ROCm one (kernel binary formats,
        library folders, compile defines). On Neuron the device type is neither and the other path
        is the one it takes; the elif branches of the chain count too. (sources/prune.py keeps
        every statement that reads `.hip`, so a pruned parse sees the same blocks.)"""
        test = _subtree(node.test)
        if not any(isinstance(n, (cst.SimpleString, cst.Name)) and "cuda" in (_string_value(n) or getattr(n, "value", "")).lower()
                   for n in test):
            return
        if any(isinstance(n, cst.Name) and _GPU_BUILD.search(n.value) for n in test) or any(
                isinstance(n, cst.Attribute) and n.attr.value == "hip" for n in _subtree(node.body)):
            branch: cst.CSTNode | None = node
            while isinstance(branch, cst.If):
                self.gpu_build.update(_subtree_ids(branch.test))
                branch = branch.orelse if isinstance(branch.orelse, cst.If) else None

    def _cuda_guard(self, test: cst.BaseExpression) -> cst.Call | None:
        finder = _FindCalls(self.resolve, "torch.cuda.is_available")
        walk(test, finder)
        return finder.found[0] if finder.found else None

    # -- calls, references, methods, arguments ---------------------------------------------
    def _spoof(self, node: cst.Call, attr: str | None, qname: str | None) -> None:
        """`monkeypatch.setattr(torch.cuda, "device_count", lambda: 8)`, `mock.patch("torch.cuda.is_available",
        return_value=True)`, `mock.patch.object(torch.cuda, "is_available")`: the API a test
        replaces with a stand-in (its uses in the file are scaffolding, see `add`)."""
        positional = [a.value for a in node.args if a.keyword is None and not a.star]
        if not positional:
            return
        first = _string_value(positional[0])
        if first is not None and "." in first:
            self.spoofed.setdefault(tuple(self.defs), set()).add(first)  # a dotted path as text
        elif len(positional) > 1 and (name := _string_value(positional[1])) is not None:
            owner = self.resolve(positional[0]) if isinstance(positional[0], (cst.Name, cst.Attribute)) else None
            if owner is not None:
                self.spoofed.setdefault(tuple(self.defs), set()).add(f"{owner}.{name}")

    def visit_Call(self, node: cst.Call) -> None:
        self.callees[id(node.func)] = node
        for arg in node.args:
            if isinstance(arg.value, cst.Call):
                self.wrapped_by[id(arg.value)] = node
        qname = self.resolve(node.func)
        attr = node.func.attr.value if isinstance(node.func, cst.Attribute) else None
        if attr == "map" and node.args and isinstance(node.args[0].value, cst.Lambda) and node.args[0].keyword is None and any(
                a.keyword is not None and a.keyword.value == "batched" and isinstance(a.value, cst.Name) and a.value.value == "True"
                for a in node.args):
            self.batched_lambdas.add(id(node.args[0].value))  # its body pads per map chunk (argument `in_map_functions`)
        if self.is_test and (qname in _PATCHERS or (attr in ("setattr", "patch", "object") and _PATCH_OWNER.search(
                dotted_name(node.func.value) or ""))):  # type: ignore[union-attr]
            self._spoof(node, attr, qname)
        last = attr or (node.func.value if isinstance(node.func, cst.Name) else "")
        self._probes(node, last)
        if self.is_test and _SKIP_CALL.match(last) and last.lower() != "skip":
            # pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(), ...)),
            # unittest.skipUnless(...)(case): a skip condition wherever it is written (decorators too).
            self.scaffold.update(dict.fromkeys(_subtree_ids(node), _SKIP_REASON))
        if _quiet_call(node, last):
            self.quiet += 1
        positional = [a for a in node.args if a.keyword is None and a.star == ""]
        torch_api = (qname or "").startswith("torch.") or (qname is None and attr in ("to", "cuda"))
        if attr == "add_argument" and "allow-list" in self.index.device_strings \
                and any(ALLOW_LIST_OPTION.search(_string_value(a.value) or "") for a in positional):
            # parser.add_argument("--device", choices=["cpu", "cuda", "mps"]): argparse refuses the rest
            for arg in node.args:
                if arg.keyword is not None and arg.keyword.value == "choices":
                    self._allow_list(arg.value)
        for arg in node.args:
            if arg.keyword is not None:
                self.inner.add(id(arg.keyword))
                ctx = DEVICE_KEYWORDS.get(arg.keyword.value)
                if ctx:
                    self._set_ctx(arg.value, ctx)
                    if torch_api or arg.keyword.value == "map_location":
                        self.api_args.add(id(arg.value))
                        if arg.keyword.value == "device":
                            device_index.match(self, node, arg.value)
                elif arg.keyword.value == "device_type" and (qname in DEVICE_TYPE_CALLS or last == "autocast"):
                    self._set_ctx(arg.value, "device_type")
                elif arg.keyword.value in DTYPE_KEYWORDS:
                    self.dtype_ctx.add(id(arg.value))
        if attr in ("to", "type") or qname in ("torch.set_default_dtype", "torch.get_default_dtype"):
            self.dtype_ctx.update(id(a.value) for a in positional)
        receiver = dotted_name(node.func.value) if isinstance(node.func, cst.Attribute) else None
        env_call = (attr in ENV_METHODS and receiver is not None and receiver.endswith("environ")) or \
            qname in ("os.getenv", "os.putenv", "os.unsetenv") or attr in ("setenv", "delenv") \
            or (attr == "setdefault" and receiver is not None and _ENV_DICT.match(receiver.rsplit(".", 1)[-1]) is not None)
        # (setenv/delenv: pytest's monkeypatch; `env.setdefault("NCCL_DEBUG", ...)`: a child's environment)
        if env_call and positional:
            self.env_ctx.add(id(positional[0].value))
            if len(positional) > 1 and (attr in ("setdefault", "putenv", "setenv") or qname == "os.putenv"):
                self.env_values[id(positional[0].value)] = positional[1].value  # set, not popped or read with a default
            if attr == "delenv" and self.is_test:
                self.scaffold[id(positional[0].value)] = "the test unsets it to isolate itself from the caller's environment"
            if attr == "get" or qname == "os.getenv":
                self.env_reads.add(id(positional[0].value))
        if positional:
            if qname == "torch.device" and (len(positional) > 1 or any(a.keyword is not None and a.keyword.value == "index" for a in node.args)):
                self._set_ctx(positional[0].value, "device_type")  # torch.device("cuda", rank): the type only
                index = positional[1].value if len(positional) > 1 else next(a.value for a in node.args if a.keyword is not None and a.keyword.value == "index")
                self.device_calls[id(positional[0].value)] = (node, index)
            elif qname in DEVICE_ARG0 or (attr == "to" and qname is None):
                self._set_ctx(positional[0].value, "device")
                self.api_args.add(id(positional[0].value))
                if qname == "torch.device" and len(node.args) == 1:
                    self.device_calls[id(positional[0].value)] = (node, None)
                if attr == "to" and qname is None:
                    device_index.match(self, node, positional[0].value)
            elif qname in DEVICE_TYPE_ARG0:
                self._set_ctx(positional[0].value, "device_type")
        if attr == "format" and id(node) in self.device_ctx and len(node.args) == 1 and node.args[0].keyword is None \
                and _string_value(node.func.value) == "cuda:{}":
            # 'cuda:{}'.format(args.gpu): an f-string written the old way.
            for rule in self.index.device_strings.get("device", []):
                self.add(rule, node, value=self.module.code_for_node(node), context={
                    "device_kind": self.device_ctx[id(node)], "fstring": node.args[0].value, "text": id(node) not in self.api_args,
                    "device_call": self.device_calls.get(id(node))})
                break
        if attr == "add_argument" and self.index.option_defaults:
            option_default.match(self, node, positional)
        if attr == "add_argument":
            # Declaring `--fp16` is not passing it: command-line string rules skip the option's
            # name and help text (its default is what the option-default rules read).
            self.declarations.update(id(a.value) for a in positional)
            self.declarations.update(id(a.value) for a in node.args if a.keyword is not None and a.keyword.value == "help")
        if attr == "add_argument" and any("backend" in (_string_value(a.value) or "") for a in positional):
            for arg in node.args:
                if arg.keyword is not None and arg.keyword.value == "default":
                    self._set_ctx(arg.value, "backend")
                elif arg.keyword is not None and arg.keyword.value == "choices" and isinstance(arg.value, (cst.List, cst.Tuple, cst.Set)):
                    # choices=["nccl", "gloo"]: rewritten with the default, or `--backend neuron` is refused
                    for element in arg.value.elements:
                        self._set_ctx(element.value, "backend")
        if last in BACKEND_CALLS:
            # init_process_group("cpu:gloo,cuda:nccl"): a per-device list (the argument rule takes "nccl" alone).
            given = next((a.value for a in node.args if a.keyword is not None and a.keyword.value == "backend"),
                         positional[0].value if positional else None)
            if given is not None and MIXED_NCCL.search(_string_value(given) or ""):
                self._set_ctx(given, "backend")
        if env_call and len(positional) > 1 and "BACKEND" in (_string_value(positional[0].value) or "").upper():
            self._set_ctx(positional[1].value, "backend")  # os.environ.get("DIST_BACKEND", "nccl")
        elif env_call and len(positional) > 1 and "DEVICE" in (_string_value(positional[0].value) or "").upper():
            self._set_ctx(positional[1].value, "device_type")  # os.environ.get("DEVICE", "cuda"): text, as a CLI default
        if attr == "add_argument" and any("device" in (_string_value(a.value) or "") for a in positional):
            # A command-line device is text: the default and the choices become device types.
            for arg in node.args:
                if arg.keyword is not None and arg.keyword.value == "default":
                    self._set_ctx(arg.value, "device_type")
                elif arg.keyword is not None and arg.keyword.value == "choices" and isinstance(arg.value, (cst.List, cst.Tuple, cst.Set)):
                    for element in arg.value.elements:
                        self._set_ctx(element.value, "device_type")
        if attr is not None and qname is None and attr in self.index.methods:
            method.match(self, node, attr)
        if isinstance(node.func, cst.Name) and node.func.value in self.index.builtins and qname is None:
            builtin.match(self, node, positional)
        if qname == "dict" or (qname is None and isinstance(node.func, cst.Name) and node.func.value == "dict"):
            for arg in node.args:
                if arg.keyword is not None and BACKEND_NAME.search(arg.keyword.value):
                    # dist_cfg=dict(backend="nccl"): a backend kept in a dict
                    self._held_backend(arg.value, f"a backend kept in a dict under `{arg.keyword.value}`: change it where the dict is used, by hand")
        if qname == "functools.partial" and positional and (inner := self.resolve(positional[0].value)) in self.index.arguments:
            # functools.partial(torch.compile, mode="max-autotune"): the arguments of a later call
            self.partials.add(id(node))
            for rule, m in self.index.arguments[inner]:
                argument.match(self, rule, m, node, positional[1:], inner)
        if qname is not None:
            for rule, m in self.index.arguments.get(qname, []):
                argument.match(self, rule, m, node, positional, qname)
        if self.index.callee_arguments and (qname is None or qname not in self.index.arguments) \
                and (callee := dotted_name(node.func)) is not None:
            # `tokenizer(texts, padding=True)`, `AutoModel.from_pretrained(..., device_map="cuda")`:
            # a callee matched by its spelling (as pruning reads it), whatever import names it.
            for pattern, rule, m in self.index.callee_arguments:
                if pattern.search(callee) and all(any(a.keyword is not None and a.keyword.value == k for a in node.args)
                                                  for k in m.get("with_keywords", ())):
                    argument.match(self, rule, m, node, positional, callee)

    def _narrowing_dtype(self, args: Sequence[cst.Arg]) -> bool:
        """Whether `.to(...)`/`.type(...)` arguments name a torch dtype other than float64."""
        for arg in args:
            if arg.keyword is not None and arg.keyword.value != "dtype":
                continue
            name = self.resolve(arg.value) if isinstance(arg.value, (cst.Name, cst.Attribute)) else None
            if name is not None and name.startswith("torch.") and name[6:] in _TORCH_DTYPES and name[6:] not in ("float64", "double"):
                return True
        return False

    def _probes(self, node: cst.Call, last: str) -> None:
        """Arguments that name a CUDA module without running CUDA code are not references."""
        args = node.args
        if last in _PATCH_CALLS and args and args[0].keyword is None:
            # monkeypatch.setattr(torch.cuda, "is_available", ...), mock.patch.object(torch.cuda, ...)
            self.inner.add(id(args[0].value))
        elif last == "getattr" and len(args) == 3 and all(a.keyword is None for a in args):
            name = _string_value(args[1].value)
            if name is not None and name.endswith(("Error", "Exception")):
                self.inner.add(id(args[0].value))  # getattr(torch.cuda, "OutOfMemoryError", None)
            elif dotted_name(args[0].value) is not None and self.resolve(args[0].value) == "torch":
                # getattr(torch, device_type, torch.cuda): device-agnostic, CUDA only as the fallback
                # (also with the name spelled out: getattr(torch, "npu", torch.cuda))
                self.inner.add(id(args[2].value))
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in ("to", "cuda") and isinstance(node.func.value, cst.Call):
            self.moved.add(id(node.func.value))  # torch.randn(..., dtype=torch.float64).to(device)
        if isinstance(node.func, cst.Attribute) and isinstance(node.func.value, cst.Call) and (
                node.func.attr.value in _NARROWING_METHODS
                or (node.func.attr.value in ("to", "type") and self._narrowing_dtype(args))):
            # torch.from_numpy(sigmas).to(dtype=torch.float32, device=device): the float64 tensor is
            # converted on the host, before it moves (a cross-device copy_ casts on its source side).
            self.recast.add(id(node.func.value))
        if self.is_test and id(node) not in self.moved and (self.resolve(node.func) or "").startswith("torch.") \
                and last not in ("to", "type"):
            # A test's float64 tensor made on the CPU (no device, or "cpu"/"meta"): a reference
            # value or the test's subject, computed on the host.
            keywords = {a.keyword.value: a.value for a in args if a.keyword is not None}
            device = keywords.get("device")
            if "dtype" in keywords and (device is None or _string_value(device) in ("cpu", "meta")):
                self.host_casts.add(id(keywords["dtype"]))
        if last in _COMPARE_CALLS:
            # torch.testing.assert_close(out.double(), ref.double()): float64 only to compare results
            self.host_casts.update(id(a.value) for a in args if isinstance(a.value, cst.Call))
        if (isinstance(node.func, cst.Name) and node.func.value in ("float", "int") and len(args) == 1
                and isinstance(args[0].value, cst.Call)):
            # float(torch.tensor(ms, dtype=torch.float64).mean()): made only to become a Python number.
            inner: cst.BaseExpression = args[0].value
            while isinstance(inner, cst.Call):
                self.host_casts.add(id(inner))
                self.host_casts.update(id(a.value) for a in inner.args)
                inner = inner.func.value if isinstance(inner.func, cst.Attribute) else inner.func
        if (isinstance(node.func, cst.Attribute) and node.func.attr.value in ("double", "to", "type")
                and _on_host(node.func.value) and (node.func.attr.value != "to" or _dtype_only(node.args))):
            # `x.detach().cpu().double()`: copied to the host first, so the cast is host work.
            self.host_casts.add(id(node))
            self.host_casts.update(id(a.value) for a in node.args)
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in _HOST_METHODS and isinstance(node.func.value, cst.Call):
            # `x.double().cpu().numpy()`: the float64 result goes to the host at once.
            inner = node.func.value
            if isinstance(inner.func, cst.Attribute) and inner.func.attr.value in ("double", "to", "type"):
                self.host_casts.add(id(inner))
                self.host_casts.update(id(a.value) for a in inner.args)

    def leave_Call(self, node: cst.Call) -> None:
        attr = node.func.attr.value if isinstance(node.func, cst.Attribute) else None
        last = attr or (node.func.value if isinstance(node.func, cst.Name) else "")
        if _quiet_call(node, last):
            self.quiet -= 1

    def visit_FormattedStringExpression(self, node: cst.FormattedStringExpression) -> None:
        self.fstrings += 1

    def leave_FormattedStringExpression(self, node: cst.FormattedStringExpression) -> None:
        self.fstrings -= 1

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if self.index.conditions:
            self.written.update(_targets(node.target))
        if isinstance(node.target, cst.Subscript):
            self.store_targets.add(id(node.target))

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if self.index.mask_indexes:
            mask_index.match(self, node)
        name = dotted_name(node.value)
        # os.environ["X"], or `env["X"] = ...` on a dict named as an environment (a child's).
        if name is not None and len(node.slice) == 1 and (
                name.endswith("environ") or (id(node) in self.store_targets and _ENV_DICT.match(name.rsplit(".", 1)[-1]))):
            element = node.slice[0].slice
            if isinstance(element, cst.Index):
                self.env_ctx.add(id(element.value))
                if id(node) not in self.store_targets:
                    self.env_reads.add(id(element.value))  # os.environ["X"] read, not assigned

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.attr_after[id(node.value)] = node.attr.value  # visited before its value: argument rules read it
        self.inner.add(id(node.value))
        self.inner.add(id(node.attr))
        reference.match(self, node)

    def visit_Name(self, node: cst.Name) -> None:
        reference.match(self, node)

    # -- strings ---------------------------------------------------------------------------
    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        strings.match(self, node)

    def visit_FormattedString(self, node: cst.FormattedString) -> None:
        strings.match(self, node)


class _FindCalls:
    """Calls of one qualified name (a class at module level: one defined per call would hold
    the visitor, and with it the whole tree, in a reference cycle until the next collection;
    scans run with the cycle collector paused, see api._gc_paused)."""

    def __init__(self, resolve: Any, qname: str) -> None:
        self.resolve, self.qname, self.found = resolve, qname, []

    def visit_Call(self, call: cst.Call) -> None:
        if self.resolve(call.func) == self.qname:
            self.found.append(call)


def _quiet_call(node: cst.Call, last: str) -> bool:
    """A call whose string arguments are messages or text pieces, not uses (`print`, `.split`).

    `shlex.split("--fp16 --bf16")` splits a command line: its text is a command, not quiet."""
    if not (last in QUIET_CALLS or last.endswith(("Error", "Exception", "Warning"))):
        return False
    return dotted_name(node.func) != "shlex.split"
