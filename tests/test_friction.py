"""What a new user trips over first (issue 15): where the configuration is found, baselines that
travel, README commands that run as written, readable --help, hints that can be copied, and the
flags ruff users reach for."""

import json
import shutil
from pathlib import Path

import pytest

PYPROJECT = '[project]\nname = "proj"\n\n[tool.neuron-migrator]\n'
CODE = "import torch\nx = y.cuda()\ntorch.cuda.synchronize()\n"  # NRN101 (error, fixable), NRN2xx


def project(root: Path, table: str = "", code: str = CODE) -> Path:
    """`root/pyproject.toml` with `[tool.neuron-migrator]` + `table`, and `root/src/train.py`."""
    (root / "src").mkdir(parents=True)
    (root / "pyproject.toml").write_text(PYPROJECT + table)
    (root / "src" / "train.py").write_text(code)
    return root


def rule_ids(stdout: str) -> set[str]:
    return {f["rule_id"] for f in json.loads(stdout)}


# -- 1. configuration is found from the scanned path ------------------------------------------
def test_scan_reads_the_configuration_of_the_scanned_project_not_of_the_working_directory(cli, tmp_path):
    proj = project(tmp_path / "proj", 'ignore = ["NRN101"]\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    found = rule_ids(cli("scan", proj / "src", "--format", "json", "--exit-zero", cwd=elsewhere, check=0).stdout)
    assert found and "NRN101" not in found
    # A file named directly finds it too, and --config still wins over the search.
    found = rule_ids(cli("scan", proj / "src" / "train.py", "--format", "json", "--exit-zero", cwd=elsewhere).stdout)
    assert found and "NRN101" not in found
    (elsewhere / "other.toml").write_text('[tool.neuron-migrator]\nselect = ["NRN101"]\n')
    found = rule_ids(cli("scan", proj / "src", "--format", "json", "--exit-zero", "--config", elsewhere / "other.toml",
                         cwd=elsewhere).stdout)
    assert found == {"NRN101"}


def test_a_configuration_in_the_working_directory_does_not_apply_to_another_project(cli, tmp_path):
    proj = project(tmp_path / "proj")  # its own (empty) table: the defaults
    (tmp_path / "pyproject.toml").write_text('[tool.neuron-migrator]\nignore = ["NRN1"]\n')
    assert "NRN101" in rule_ids(cli("scan", proj / "src", "--format", "json", "--exit-zero", cwd=tmp_path).stdout)


def test_fix_and_baseline_read_the_configuration_of_the_given_path(cli, tmp_path):
    proj = project(tmp_path / "proj", 'target = "neuron"\nignore = ["NRN2"]\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    diff = cli("fix", proj / "src", cwd=elsewhere, check=1).stdout
    assert '+x = y.to("neuron")' in diff and "-torch.cuda.synchronize()" not in diff
    out = cli("baseline", "create", proj / "src", "-o", elsewhere / "b.json", cwd=elsewhere, check=0).stdout
    assert "1 findings recorded" in out
    assert [e["rule_id"] for e in json.loads((elsewhere / "b.json").read_text())["findings"]] == ["NRN101"]


# -- 2. baselines hold paths relative to the project root ---------------------------------------
@pytest.mark.parametrize("table", [None, ""], ids=["no-configuration", "configuration"])
def test_a_baseline_matches_from_another_working_directory_and_another_checkout(cli, tmp_path, table):
    proj = project(tmp_path / "proj", table or "")
    if table is None:
        (proj / "pyproject.toml").unlink()  # the root is then the common folder of the paths
    cli("baseline", "create", "src", "-o", "base.json", cwd=proj, check=0)
    entries = json.loads((proj / "base.json").read_text())["findings"]
    assert {e["path"] for e in entries} == {"src/train.py" if table is not None else "train.py"}
    # The same project, checked out somewhere else and scanned from a third folder.
    moved = tmp_path / "elsewhere" / "checkout"
    shutil.copytree(proj, moved)
    (tmp_path / "cwd").mkdir()
    proc = cli("scan", moved / "src", "--baseline", moved / "base.json", cwd=tmp_path / "cwd", check=0)
    assert "Found 0 findings" in proc.stdout and f"{len(entries)} more in the baseline" in proc.stdout
    (moved / "src" / "train.py").write_text(CODE + "z = w.cuda()\n")  # a new finding still fails
    assert "Found 1 finding" in cli("scan", moved / "src", "--baseline", moved / "base.json", cwd=moved, check=1).stdout


def test_a_format_1_baseline_with_paths_as_given_still_works(cli, tmp_path):
    proj = project(tmp_path / "proj")
    found = json.loads(cli("scan", "src", "--format", "json", cwd=proj, check=1).stdout)
    old = {"format": 1, "tool": "neuron-migrator 0.1.0",
           "findings": [{"fingerprint": f["fingerprint"], "rule_id": f["rule_id"], "path": f["path"]} for f in found]}
    (proj / "old.json").write_text(json.dumps(old))
    proc = cli("scan", "src", "--baseline", "old.json", cwd=proj, check=0)
    assert "Found 0 findings" in proc.stdout and f"{len(found)} more in the baseline" in proc.stdout


# -- 4. --help shows flags and defaults, not Python types ---------------------------------------
COMMANDS = [[], ["scan"], ["fix"], ["baseline"], ["baseline", "create"], ["rules"], ["instances"], ["generate"]]


def helptext(cli, monkeypatch, command, rich):
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setenv("TYPER_USE_RICH", "1" if rich else "0")
    out = cli(*command, "--help", check=0).stdout
    return " ".join(out.replace("│", " ").split())  # wrapped help cells read as one text


@pytest.mark.parametrize("rich", [True, False], ids=["rich", "plain"])
@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "top")
def test_help_shows_flags_not_python_types(cli, monkeypatch, command, rich):
    import re

    text = helptext(cli, monkeypatch, command, rich)
    assert not re.search(r"<(str|int|bool|float|path|Path|list\[[^>]*\])>|\{paths\}", text), text
    assert re.search(r"--help Show this message", text), text  # a flag takes no value


@pytest.mark.parametrize("command, shown", [
    (["scan"], ["TARGET", "--exit-zero Exit 0", "--select CODE", "--baseline FILE", "[default: portable]",
                "[default: text]", "[default: error]", "[default: 0]", "[default: no-force-exclude]",
                "[default: (the user cache folder)]", "[default: (the nearest one with the table)]"]),
    (["fix"], ["--write Write", "[default: portable]", "[default: no-unsafe-fixes]"]),
    (["baseline", "create"], ["[default: portable]", "[default: .neuron-migrator-baseline.json]"]),
    (["instances"], ["[default: text]"]),
    (["generate"], ["--instance-type TYPE", "[default: json]", "[default: (the hardware's)]",
                    "[default: (when the type has EFA)]"]),
])
def test_help_shows_every_default(cli, monkeypatch, command, shown):
    def squash(text):  # a plain-mode line break may fall inside a value
        return "".join(text.split())

    for rich in (True, False):
        text = helptext(cli, monkeypatch, command, rich)
        missing = [s for s in shown if squash(s) not in squash(text)]
        assert not missing, (rich, missing, text)


@pytest.mark.parametrize("command, sentence", [
    (["scan"], "Lowest severity that makes the exit code 1"),
    (["scan"], "Also scan PyTorch's own source (torch/, a"),
    (["fix"], "Migration target: portable"),
    (["generate"], "Folder to write into (created; nothing is"),
])
def test_help_reads_in_an_80_column_terminal(cli, monkeypatch, command, sentence):
    # New-user helper: in a standard terminal the long `--x / --no-x` names squeezed every
    # option's help into a column of about 20 characters, a few words per line.
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.delenv("TYPER_USE_RICH", raising=False)
    lines = cli(*command, "--help", check=0).stdout.splitlines()
    assert all(len(line) <= 80 for line in lines), max(lines, key=len)
    assert any(sentence in " ".join(line.replace("│", " ").split()) for line in lines), "\n".join(lines)


def test_a_wide_terminal_shows_each_commands_summary_whole(cli, monkeypatch):
    # Hostile helper: click capped the help at 80 columns and cut the summaries ("print a diff unless...").
    monkeypatch.setenv("COLUMNS", "120")
    out = cli("--help", check=0).stdout
    assert "Rewrite what can be rewritten safely; print a diff unless --write." in out
    assert "the rules a prefix starts" in cli("rules", "--help", check=0).stdout.replace("\n", " ").replace("  ", " ")


def test_generate_help_defaults_are_the_specs_defaults(cli, monkeypatch):
    import dataclasses

    from migrator.cli import GENERATE_DEFAULTS
    from migrator.deploy.launch_template import DeploymentSpec

    defaults = {f.name: f.default for f in dataclasses.fields(DeploymentSpec)}
    assert GENERATE_DEFAULTS == {name: defaults[name] for name in GENERATE_DEFAULTS}
    text = helptext(cli, monkeypatch, ["generate"], True)
    for name, value in GENERATE_DEFAULTS.items():
        assert f"[default: {'dlami' if value is False else value}]" in text, name


def test_flags_given_still_override_the_configuration_and_defaults_do_not(cli, tmp_path):
    proj = project(tmp_path / "proj", 'target = "neuron"\nfail-on = "warning"\n')
    (proj / "src" / "train.py").write_text("import torch\ntorch.cuda.empty_cache()\n")  # one warning
    cli("scan", proj / "src", check=1)  # the configured fail-on, not the --help default
    cli("scan", proj / "src", "--fail-on", "error", check=0)
    (proj / "src" / "b.py").write_text("import torch\nx = y.cuda()\n")
    assert '+x = y.to("neuron")' in cli("fix", proj / "src" / "b.py", check=1).stdout  # the configured target


def test_a_spec_files_values_are_not_replaced_by_the_defaults_shown_in_help(cli, tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text("instance_type: trn2.48xlarge\nregion: us-east-2\nnodes: 4\nname: llm-train\n")
    cli("generate", "cloudformation", "--spec", spec, "--output", tmp_path / "out", check=0)
    text = (tmp_path / "out" / "stack.cfn.yaml").read_text()
    assert 'DesiredCapacity: "4"' in text and "llm-train" in text


# -- 8. flags ruff users expect -----------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github", "junit"])
def test_scan_output_file_holds_the_report_in_every_format(cli, tmp_path, fmt):
    proj = project(tmp_path / "proj")
    to_stdout = cli("scan", "src", "--format", fmt, cwd=proj, check=1).stdout
    proc = cli("scan", "src", "--format", fmt, "-o", "report.out", cwd=proj, check=1)  # exit code unchanged
    written = (proj / "report.out").read_text()
    assert proc.stdout == "" and written
    if fmt in ("json", "sarif"):
        assert json.loads(written) == json.loads(to_stdout)
    elif fmt == "text":  # the same, but for the run time in the summary
        assert written.splitlines()[:-1] == to_stdout.splitlines()[:-1] and written.startswith("src/train.py\n")
    else:
        assert written == to_stdout
    assert sorted(p.name for p in proj.iterdir()) == ["pyproject.toml", "report.out", "src"]  # no temporary left
    cli("scan", "src", "--output-file", "report.out", "--format", fmt, "--exit-zero", cwd=proj, check=0)


def test_scan_output_file_that_cannot_be_written_exits_2(cli, tmp_path):
    proj = project(tmp_path / "proj")
    (proj / "taken").mkdir()
    proc = cli("scan", "src", "--output-file", "taken", cwd=proj)
    assert proc.returncode == 2 and "error: --output-file" in proc.stderr and "Traceback" not in proc.stderr


def test_extend_select_adds_to_the_configured_and_the_given_selection(cli, tmp_path):
    proj = project(tmp_path / "proj", 'select = ["NRN2"]\n')
    assert "NRN101" not in rule_ids(cli("scan", "src", "--format", "json", "--exit-zero", cwd=proj).stdout)
    found = rule_ids(cli("scan", "src", "--format", "json", "--exit-zero", "--extend-select", "NRN101", cwd=proj).stdout)
    assert "NRN101" in found and any(r.startswith("NRN2") for r in found)
    found = rule_ids(cli("scan", "src", "--format", "json", "--exit-zero", "--select", "NRN1", "--extend-select", "nrn2",
                         cwd=proj).stdout)
    assert "NRN101" in found and any(r.startswith("NRN2") for r in found)
    proc = cli("scan", "src", "--extend-select", "x.py", cwd=proj)
    assert proc.returncode == 2 and "--extend-select" in proc.stderr


def test_fix_select_and_ignore_choose_the_rules_that_are_fixed(cli, tmp_path):
    proj = project(tmp_path / "proj")
    only = cli("fix", "src", "--select", "NRN101", cwd=proj, check=1).stdout
    assert "+x = y.to(DEVICE)" in only and "-torch.cuda.synchronize()" not in only
    rest = cli("fix", "src", "--ignore", "NRN101", cwd=proj, check=1).stdout
    assert "-x = y.cuda()" not in rest and "-torch.cuda.synchronize()" in rest
    both = cli("fix", "src", "--select", "NRN101", "--extend-select", "NRN2", cwd=proj, check=1).stdout
    assert "-x = y.cuda()" in both and "-torch.cuda.synchronize()" in both


def test_fix_diff_prints_only_the_diff_writes_nothing_and_exits_1_on_changes(cli, tmp_path):
    proj = project(tmp_path / "proj")
    before = (proj / "src" / "train.py").read_text()
    for args in (["--diff"], ["--diff", "--write"]):  # as ruff: --diff never writes
        proc = cli("fix", "src", *args, cwd=proj, check=1)
        assert proc.stdout.startswith("--- ") and "+x = y.to(DEVICE)" in proc.stdout
        assert proc.stderr.strip().splitlines() == ["Would fix 2 findings in 1 file; 0 left for a person."], proc.stderr
        assert (proj / "src" / "train.py").read_text() == before
    (proj / "src" / "train.py").write_text("import torch\nx = torch.ones(1)\n")
    proc = cli("fix", "src", "--diff", cwd=proj, check=0)
    assert proc.stdout == "" and "Would fix 0 findings in 0 files" in proc.stderr


def test_rules_format_json_lists_the_catalogue_as_data(cli):
    from conftest import ROOT

    listing = json.loads(cli("rules", "--format", "json", check=0).stdout)
    text = cli("rules", check=0).stdout
    assert [r["id"] for r in listing] == [line.split()[0] for line in text.splitlines()[1:]]
    docs = (ROOT / "docs" / "rules.md").read_text()
    for rule in listing:
        assert {"id", "name", "category", "summary", "severity", "fixable", "fix_safety", "docs_url"} <= set(rule)
        assert set(rule["severity"]) == {"portable", "neuron", "xla", "inf1"}
        assert rule["fixable"] == any(rule["fix_safety"].values())
        assert f"## {rule['id']} {rule['name']}\n" in docs and rule["docs_url"].endswith(f"#{rule['id'].lower()}-{rule['name']}")
    nrn101 = next(r for r in listing if r["id"] == "NRN101")
    assert (nrn101["name"], nrn101["category"], nrn101["severity"]["portable"], nrn101["fix_safety"]["portable"]) == (
        "tensor-cuda-method", "device", "error", "safe")
    one = json.loads(cli("rules", "NRN101", "--format", "json", check=0).stdout)
    assert one["id"] == "NRN101" and one["what"] and one["why"]
    assert cli("rules", "--format", "xml").returncode == 2


def test_rules_takes_a_prefix_as_select_does(cli):
    # New-user helper: `rules NRN4` said "rule 'NRN4' does not exist", though `--select NRN4` works.
    listing = json.loads(cli("rules", "--format", "json", check=0).stdout)
    distributed = [r["id"] for r in listing if r["id"].startswith("NRN4")]
    assert len(distributed) > 1
    assert [line.split()[0] for line in cli("rules", "nrn4", check=0).stdout.splitlines()[1:]] == distributed
    assert [r["id"] for r in json.loads(cli("rules", "NRN4", "-f", "json", check=0).stdout)] == distributed
    assert cli("rules", "NRN101", check=0).stdout.startswith("NRN101 tensor-cuda-method: ")  # an id explains
    assert "no rule id is or starts with 'NRN99'" in cli("rules", "NRN99", check=2).stderr


# -- 5. the fix hint can be copied ----------------------------------------------------------------
def test_the_scan_hint_is_a_fix_command_for_the_same_target_selection_and_paths(cli, tmp_path):
    import re
    import shlex

    proj = project(tmp_path / "proj")
    scan = ["scan", "--target", "neuron", "--select", "NRN1", "--extend-exclude", "generated/", "src/"]
    summary = cli(*scan, cwd=proj, check=1).stdout.splitlines()[-1]
    count, command = re.search(r"(\d+) fixable with `([^`]+)`", summary).groups()
    assert command == "neuron-migrator fix --target neuron --select NRN1 --extend-exclude generated/ src/"
    words = shlex.split(command)
    proc = cli(*words[1:], cwd=proj, check=1)
    assert f"{count} fixable, " in proc.stderr and "-torch.cuda.synchronize()" not in proc.stdout  # NRN1 only
    cli(*words[1:], "--write", cwd=proj, check=0)
    assert (proj / "src" / "train.py").read_text() == 'import torch\nx = y.to("neuron")\ntorch.cuda.synchronize()\n'
    assert "fixable with" not in cli(*scan, cwd=proj, check=0).stdout


def test_the_fix_hint_quotes_paths_a_shell_would_split(cli, tmp_path):
    import shlex

    proj = project(tmp_path / "my proj")
    summary = cli("scan", proj / "src", cwd=tmp_path, check=1).stdout.splitlines()[-1]
    command = summary.split("`")[1]
    assert shlex.split(command)[-1] == str(proj / "src")


# -- 7. nothing to scan is said ---------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_scan_that_finds_no_files_warns_on_stderr_and_exits_0(cli, tmp_path, fmt):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "notes.txt").write_text("torch.cuda everywhere\n")
    proc = cli("scan", "docs", "--format", fmt, cwd=tmp_path, check=0)
    assert "warning: No files to scan found under the given path(s)" in proc.stderr
    if fmt == "json":
        assert json.loads(proc.stdout) == []
    proc = cli("baseline", "create", "docs", cwd=tmp_path, check=0)
    assert "warning: No files to scan found" in proc.stderr
    (tmp_path / "docs" / "a.py").write_text("x = 1\n")
    assert "warning" not in cli("scan", "docs", cwd=tmp_path, check=0).stderr


# -- 6. instances names its sources in text too -------------------------------------------------
def test_instances_text_output_shows_each_types_sources_with_their_links(cli):
    text = cli("instances", check=0).stdout
    data = json.loads(cli("instances", "--format", "json", check=0).stdout)
    sources_part = text.split("\nSources\n", 1)[1]
    for name, entry in data.items():
        assert f"  {name} " in sources_part and entry["source"] in sources_part, name
        assert entry["source_links"], f"{name}: its source names no known source"
        for link in entry["source_links"].values():
            assert link.startswith("https://") and link in text, (name, link)
        for fact, own in (entry.get("facts") or {}).items():
            assert f"{fact}* " in sources_part and own["source"] in sources_part
    assert "trn1-arch.html" in text and "setup-trn1-multi-node-execution.html" in text  # by family, and per fact
    assert data["trn2.3xlarge"]["source_links"]["moto"] == "https://github.com/getmoto/moto"


# -- 3. every `neuron-migrator generate` command of the README runs as written ------------------
def readme_generate_commands():
    import shlex

    from conftest import ROOT

    lines, fence = [], None
    for line in (ROOT / "README.md").read_text().splitlines():
        if line.startswith("```"):
            fence = None if fence is not None else line[3:].strip()
        elif fence in ("sh", "bash", "console", "") and line.startswith("neuron-migrator generate "):
            lines.append(line)
    kinds = ["launch-template", "cloudformation", "terraform", "parallelcluster", "eks", "user-data"]
    commands = []
    for line in lines:
        words = shlex.split(line, comments=True)[1:]
        commands += [[kind if w == "KIND" else w for w in words] for kind in kinds] if "KIND" in words else [words]
    return commands


def test_the_readme_has_generate_commands_for_every_kind():
    commands = readme_generate_commands()
    assert {c[1] for c in commands} == {"launch-template", "cloudformation", "terraform", "parallelcluster", "eks", "user-data"}


@pytest.mark.parametrize("words", readme_generate_commands(), ids=lambda w: " ".join(w[1:3]))
def test_each_readme_generate_command_runs_as_written(cli, tmp_path, words):
    from conftest import ROOT

    for word in words:  # files the command names (samples/deploy-spec.yaml) are there, as in a checkout
        if not word.startswith("-") and (ROOT / word).is_file():
            (tmp_path / word).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(ROOT / word, tmp_path / word)
    proc = cli(*words, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    output = tmp_path / words[words.index("--output") + 1]
    written = [line.split(" ", 1)[1] for line in proc.stdout.splitlines() if line.startswith("wrote ")]
    assert written and all((tmp_path / path).is_file() and (tmp_path / path).parent == output for path in written)


def test_parallelcluster_names_every_missing_resource_at_once(cli, tmp_path):
    proc = cli("generate", "parallelcluster", "--instance-type", "trn2.48xlarge", "--region", "us-east-2", "--output", "o",
               cwd=tmp_path)
    assert proc.returncode == 2 and "--subnet-id and --s3-prefix" in proc.stderr and not (tmp_path / "o").exists()


# -- found by a new user trying the README (second round) -------------------------------------
def test_a_baseline_without_our_table_still_matches_from_another_directory(cli, tmp_path):
    proj = tmp_path / "proj"
    (proj / "src").mkdir(parents=True)
    (proj / "pyproject.toml").write_text('[project]\nname = "proj"\n')  # no [tool.neuron-migrator]
    (proj / "src" / "train.py").write_text(CODE)
    cli("baseline", "create", ".", "-o", "base.json", cwd=proj, check=0)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc = cli("scan", proj / "src", "--baseline", proj / "base.json", cwd=elsewhere, check=0)
    assert "Found 0 findings" in proc.stdout and "warning" not in proc.stderr


def test_a_baseline_that_matches_nothing_says_so(cli, tmp_path):
    proj = project(tmp_path / "proj")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "train.py").write_text(CODE)
    cli("baseline", "create", tmp_path / "other", "-o", proj / "base.json", cwd=tmp_path, check=0)
    proc = cli("scan", "src", "--baseline", "base.json", cwd=proj, check=1)
    assert "warning: no finding matched the 2 entries of base.json" in proc.stderr


def test_select_takes_comma_lists_and_refuses_prefixes_that_match_no_rule(cli, tmp_path):
    proj = project(tmp_path / "proj")
    both = rule_ids(cli("scan", "src", "--format", "json", "--select", "NRN1,NRN2", cwd=proj, check=1).stdout)
    assert both == {"NRN101", "NRN202"}
    for flag in ("--select", "--ignore", "--extend-select"):
        proc = cli("scan", "src", flag, "NRN999", cwd=proj, check=2)
        assert f"{flag}: 'NRN999' matches no rule" in proc.stderr


def test_output_file_creates_its_folder(cli, tmp_path):
    proj = project(tmp_path / "proj")
    cli("scan", "src", "--format", "json", "-o", "reports/ci/scan.json", cwd=proj, check=1)
    assert rule_ids((proj / "reports" / "ci" / "scan.json").read_text()) == {"NRN101", "NRN202"}


def test_a_project_on_an_older_pytorch_gets_no_torch_accelerator_rewrites(cli, tmp_path):
    proj = project(tmp_path / "proj", 'torch-version = "2.4"\n')
    proc = cli("fix", "src", "--write", cwd=proj)
    assert (proj / "src" / "train.py").read_text() == CODE
    assert "needs PyTorch >= 2.9; the project runs PyTorch 2.4" in proc.stderr


def test_scan_without_a_path_scans_the_current_folder_as_ruff(cli, tmp_path):
    proj = project(tmp_path / "proj")
    assert rule_ids(cli("scan", "--format", "json", cwd=proj, check=1).stdout) == {"NRN101", "NRN202"}


# -- output read by `| head`: the command keeps its own exit code -------------------------------
def _first_line_then_close(tmp_path, *args):
    """Run the CLI with standard output read by a reader that takes one line and goes away."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    proc = subprocess.Popen([sys.executable, "-m", "migrator", *map(str, args)], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": str(root)})
    first = proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    return first, proc.wait(timeout=120), err


@pytest.mark.parametrize("args, code", [
    (["instances"], 0),
    (["rules"], 0),
    (["scan", "big.py", "--no-cache"], 1),  # findings: 1, as when the whole report is read
    (["fix", "big.py"], 1),  # changes pending
])
def test_output_read_by_head_keeps_the_commands_exit_code(tmp_path, args, code):
    # New-user helper: `instances | head` exited 1 ("findings") under `set -o pipefail`.
    # The report is longer than a pipe's buffer, so the writer does meet the closed pipe.
    (tmp_path / "big.py").write_text("import torch\n" + "".join(f"x{i} = y.cuda()\n" for i in range(3000)))
    first, returncode, err = _first_line_then_close(tmp_path, *args)
    assert first and returncode == code, (returncode, err)
    assert "Error" not in err and "Traceback" not in err, err


def test_ddp_on_inf1_is_described_for_inf1(cli, tmp_path):
    # New-user helper: on --target inf1 the finding described XLA torch-neuronx on trn1/inf2.
    (tmp_path / "serve.py").write_text("import torch\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n"
                                       "model = DDP(torch.nn.Linear(2, 2))\n")
    out = cli("scan", "serve.py", "--target", "inf1", "--no-cache", check=1).stdout
    assert "NRN403" in out and "torch_neuron.trace" in out and "trn1/inf2" not in out
    assert "trn1/inf2" in cli("scan", "serve.py", "--target", "xla", "--no-cache", check=1).stdout


@pytest.mark.parametrize("redirect, args, code, said", [
    # stderr read by `| head` too: click exited 1 ("findings") for the notes `generate` prints there
    ("2>&1 | head -1 >/dev/null; exit ${PIPESTATUS[0]}",
     ["generate", "eks", "-o", "g", "--instance-type", "trn1.32xlarge", "--region", "us-east-1"], 0, ""),
    # a closed standard output: the report is dropped, the exit code stays the scan's
    (">&-", ["scan", "big.py", "--no-cache"], 1, ""),
    (">&-", ["rules"], 0, ""),
    # a full disk behind `> file`: one line and exit 2, not a traceback or a silent 0
    (">/dev/full", ["rules"], 2, "cannot write to standard output: No space left on device"),
    (">/dev/full", ["instances"], 2, "cannot write to standard output"),
    (">/dev/full", ["scan", "big.py", "--no-cache"], 2, "cannot write to standard output"),
])
def test_standard_streams_that_break_keep_the_exit_code_meaningful(tmp_path, redirect, args, code, said):
    # Hostile helper: these gave exit 1, tracebacks ("'NoneType' object has no attribute
    # 'write'") or exit 0 with the output lost.
    import os
    import shlex
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    (tmp_path / "big.py").write_text("import torch\n" + "".join(f"x{i} = y.cuda()\n" for i in range(300)))
    command = f"{shlex.quote(sys.executable)} -m migrator {shlex.join(args)} {redirect}"
    errors = tmp_path / "stderr.txt"
    if "2>&1" not in redirect:
        command = f"{command} 2>{shlex.quote(str(errors))}"
    proc = subprocess.run(["bash", "-c", command], cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(root)}, timeout=120)
    err = errors.read_text() if errors.exists() else ""
    assert proc.returncode == code, err
    assert "Traceback" not in err and said in err, err


def test_fix_without_a_path_fixes_the_current_folder_as_scan_does(cli, tmp_path):
    # New-user helper: `fix` alone exited 2 ("Missing argument 'PATH'") where `scan` takes ".".
    proj = project(tmp_path / "proj")
    assert cli("fix", cwd=proj, check=1).stdout == cli("fix", ".", cwd=proj, check=1).stdout != ""


def test_assess_on_a_terminal_fits_its_width(tmp_path):
    # New-user helper: the text report was 100 columns wide on an 80-column terminal.
    import os
    import pty
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    proj = project(tmp_path / "proj")
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "migrator", "assess", "."], cwd=proj, stdout=slave, stderr=subprocess.DEVNULL,
                            env={**os.environ, "PYTHONPATH": str(root), "COLUMNS": "80"})
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the other end closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    proc.wait(timeout=120)
    os.close(master)
    lines = b"".join(chunks).decode("utf-8", "replace").replace("\r", "").splitlines()
    assert lines and max(map(len, lines)) <= 80, max(lines, key=len)


def test_fix_safety_says_what_safe_means_on_the_targets_the_rule_rewrites_for(cli):
    # New-user helper: `rules NRN506` said "safe: keeps behaviour on the GPU" of a rewrite to
    # backend="neuron", which does not run on a GPU.
    neuron_only = cli("rules", "NRN506", check=0).stdout
    assert "no longer runs on a GPU" in neuron_only and "keeps its behaviour on a CUDA GPU" not in neuron_only
    assert "keeps its behaviour on a CUDA GPU" in cli("rules", "NRN101", check=0).stdout


def test_job_scripts_and_named_files_with_a_shebang_are_scanned_as_shell(tmp_path):
    # New user: `scan slurm/train.sbatch slurm/launch.slurm` found "no files to scan".
    script = "#!/bin/bash\n#SBATCH --nodes=2\nexport CUDA_VISIBLE_DEVICES=0,1\nsrun python train.py\n"
    for name in ("train.sbatch", "launch.slurm", "job"):
        (tmp_path / name).write_text(script)
    (tmp_path / "notes").write_text("export CUDA_VISIBLE_DEVICES=0\n")  # no shebang, no known name
    from migrator import ScanOptions, scan_paths

    named = scan_paths([tmp_path / "job", tmp_path / "notes"], ScanOptions())
    walked = scan_paths([tmp_path], ScanOptions())
    assert sorted(Path(f.path).name for f in named.findings) == ["job"]
    assert sorted(Path(f.path).name for f in walked.findings) == ["launch.slurm", "train.sbatch"]


# -- the project's own PyTorch pin holds back rewrites it cannot run (new-user helper, session 18) --
def _fixable(stdout: str) -> set[str]:
    return {f["rule_id"] for f in json.loads(stdout) if f["fixable"]}


def test_a_project_pinned_to_an_old_pytorch_gets_no_rewrite_it_cannot_run(cli, tmp_path):
    """`torch.accelerator` needs PyTorch 2.9: a project pinned to 2.3 would fail at import on the
    GPU it runs on today, so scan offers no Python fix and `fix --write` leaves the code alone."""
    proj = project(tmp_path / "proj")
    (proj / "requirements.txt").write_text("torch==2.3.1+cu121  # the cluster's build\nnumpy\n")
    found = cli("scan", proj, "--format", "json", "--exit-zero").stdout
    assert "NRN101" in rule_ids(found) and not _fixable(found) & {"NRN101", "NRN202"}
    cli("fix", proj, "--write", check=None)
    assert (proj / "src" / "train.py").read_text() == CODE
    # One file named on its own (the pre-commit hook) reads the same pin.
    assert not _fixable(cli("scan", proj / "src" / "train.py", "--format", "json", "--exit-zero").stdout) & {"NRN101"}


def test_the_configured_torch_version_wins_over_the_pin_and_a_new_pin_limits_nothing(cli, tmp_path):
    proj = project(tmp_path / "proj", 'torch-version = "2.13"\n')
    (proj / "requirements.txt").write_text("torch==2.3.1\n")
    assert "NRN101" in _fixable(cli("scan", proj, "--format", "json", "--exit-zero").stdout)
    other = project(tmp_path / "other")
    (other / "requirements.txt").write_text("# torch==2.3.1 was the old pin\ntorch==2.13.0\n")
    assert "NRN101" in _fixable(cli("scan", other, "--format", "json", "--exit-zero").stdout)


def test_the_pin_is_the_lowest_in_the_projects_dependency_files(tmp_path):
    from migrator.sources.pins import pinned_torch

    (tmp_path / "requirements").mkdir()
    (tmp_path / "requirements" / "gpu.txt").write_text("torch==2.4.0+cu121\n")
    (tmp_path / "pyproject.toml").write_text('[project]\ndependencies = ["torch==2.13.0"]\n')
    (tmp_path / "Dockerfile").write_text("FROM python:3.11\nRUN pip install torch==2.5.1\n")
    (tmp_path / "notes.md").write_text("we used torch==1.13 once\n")  # not a dependency file
    assert pinned_torch(tmp_path) == "2.4"
    (tmp_path / "requirements" / "gpu.txt").unlink()
    assert pinned_torch(tmp_path) == "2.5"
    assert pinned_torch(tmp_path / "nowhere") is None


def test_an_unreadable_pin_is_skipped_and_the_others_still_count(tmp_path):
    """Hostile helper, session 19: a pin of 4301 digits ended the whole read (int() refuses it),
    so the real torch==2.3.1 pin was lost and the rewrites went through; `torch==٢.٣` (digits
    pip does not read) held every rewrite back."""
    from migrator.sources.pins import pinned_torch

    (tmp_path / "requirements.txt").write_text("torch==2.3.1\n")
    (tmp_path / "requirements-zz.txt").write_text(f"torch=={'9' * 4301}.0\n")
    assert pinned_torch(tmp_path) == "2.3"
    (tmp_path / "requirements.txt").write_text("torch==\u0662.\u0663\n")
    assert pinned_torch(tmp_path) is None


@pytest.mark.parametrize("value", ["9" * 4301 + ".0", "\u0662.\u0663"])
def test_a_torch_version_setting_that_is_no_version_is_a_clear_error(cli, tmp_path, value):
    proj = project(tmp_path / "proj", f'torch-version = "{value}"\n')
    proc = cli("scan", proj, check=None)
    assert proc.returncode == 2 and "torch-version" in proc.stderr and "Traceback" not in proc.stderr


def test_a_version_test_of_thousands_of_digits_is_no_version(cli, tmp_path):
    (tmp_path / "t.py").write_text("import torch\nfrom transformers.utils import is_torch_greater_or_equal\n"
                                   f"if is_torch_greater_or_equal('{'9' * 4301}.1'):\n    x = torch.ones(1).cuda()\n")
    proc = cli("scan", tmp_path / "t.py", "--format", "json", check=None)
    assert proc.returncode == 1 and rule_ids(proc.stdout) == {"NRN101"}


def test_a_project_named_through_a_link_reads_its_pin(cli, tmp_path):
    """Hostile helper, session 19: `fix proj/a.py` held the rewrite back for the torch==2.3.1
    pin, `fix proj-link/a.py` (a link to the same project) did not."""
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "requirements.txt").write_text("torch==2.3.1\n")
    (proj / "a.py").write_text(CODE)
    (tmp_path / "proj-link").symlink_to(proj)
    found = cli("scan", tmp_path / "proj-link" / "a.py", "--format", "json", "--exit-zero").stdout
    assert "NRN101" in rule_ids(found) and not _fixable(found) & {"NRN101"}


def test_a_utf16_requirements_file_is_read_for_its_pin_as_the_scan_reads_it(tmp_path):
    """Hostile helper, session 19: the scan reported the UTF-16 file's old pin (NRN804), the
    pin reader decoded it as UTF-8, found nothing, and let the rewrites through."""
    from migrator.sources.pins import pinned_torch

    (tmp_path / "requirements.txt").write_bytes("torch==2.3.1\nnumpy\n".encode("utf-16"))
    assert pinned_torch(tmp_path) == "2.3"


def test_a_folder_above_that_cannot_be_entered_is_passed_over_in_the_settings_search(tmp_path, monkeypatch):
    """Hostile helper, session 19: run below a folder this user may not enter, the search for
    pyproject.toml raised PermissionError out of the CLI (a traceback)."""
    from migrator import settings

    project(tmp_path / "proj", 'torch-version = "2.13"\n')
    locked = tmp_path / "proj" / "src"
    real = Path.is_file

    def is_file(path):
        if path.parent == locked:
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(Path, "is_file", is_file)
    assert settings.find_config(locked / "deeper") == tmp_path / "proj" / "pyproject.toml"
