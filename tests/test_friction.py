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
