"""The package's layers: folders that import only downwards, and no import cycles.

    core (Finding, Fix, options, catalogue, files)  <  deploy  <  scan  <  fix, report, testing,
    docgen  <  sources (each file kind's codec, scanner and fixer)  <  api, settings  <  cli
    <  the package root (the public facade)

The CLI reaches every part through the API (its facade for scan, fix, baseline, rules,
instances and generate), besides the settings and core types.

Every import counts, also one inside a function or under TYPE_CHECKING: a lazy import still
ties the modules together.
"""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "migrator"
RANK = {"core": 0, "deploy": 1, "scan": 2, "fix": 3, "report": 3, "testing": 3, "docgen": 3, "sources": 3.5, "assess": 3.7, "api": 4,
        "settings": 4, "cli": 6, "__main__": 7, "": 8}


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = ["migrator", *path.relative_to(PACKAGE).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _imports() -> dict[str, set[str]]:
    modules = _modules()
    graph = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[:len(package.split(".")) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                candidates = [target] + [f"{target}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                candidates = [a.name for a in node.names]
            else:
                continue
            found.update(c for c in candidates if c in modules and c != name)
        graph[name] = found
    return graph


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_every_module_belongs_to_a_layer():
    assert {_layer(m) for m in _modules()} <= set(RANK), {_layer(m) for m in _modules()} - set(RANK)
    for folder in ("core", "sources", "scan", "fix", "report", "deploy"):
        assert (PACKAGE / folder / "__init__.py").is_file(), folder


def test_no_module_imports_a_layer_above_its_own():
    upward = [(a, b) for a, targets in _imports().items() for b in targets
              if _layer(a) != _layer(b) and RANK[_layer(b)] >= RANK[_layer(a)]]
    assert upward == []


def test_fix_and_report_do_not_import_each_other_and_report_reads_no_scan_or_fix():
    graph = _imports()
    for module, targets in graph.items():
        if _layer(module) == "report":
            assert not {_layer(t) for t in targets} & {"scan", "fix", "sources"}, (module, targets)
        if module in ("migrator.api",):
            # the API reads and writes files through the source registry, not per kind
            assert "migrator.sources.python" not in targets and "migrator.sources.ipynb" not in targets
        if _layer(module) == "fix":
            assert "report" not in {_layer(t) for t in targets}, (module, targets)


def test_there_are_no_import_cycles():
    graph = _imports()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    assert cycles == []


def test_the_cli_reaches_everything_through_the_api():
    reached = {_layer(t) for t in _imports()["migrator.cli"]}
    assert reached <= {"api", "settings", "core"}, reached


def test_only_the_cli_and_the_docs_script_print():
    for name, path in _modules().items():
        if name in ("migrator.cli", "migrator.docgen"):  # docgen's main() is `make docs`
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                assert node.func.id != "print", f"{name}:{node.lineno} prints"
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "sys":
                assert node.attr not in ("stdout", "stderr"), f"{name}:{node.lineno} writes to sys.{node.attr}"
