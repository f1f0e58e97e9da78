"""Catalogue meta-tests: the schema, ids, docs and coverage every rule must have."""

import json
import shutil
from collections import Counter

import pytest

from migrator.core.catalogue import RuleError, load_catalogue, load_rule
from migrator.core.findings import CATEGORIES
from migrator.core.resources import rules_dir

CATALOGUE = load_catalogue()


def test_catalogue_covers_every_category_with_at_least_15_rules():
    assert len(CATALOGUE.rules) >= 15
    used = {r.category for r in CATALOGUE.rules}
    assert used >= {c for d, c in CATEGORIES.items() if 1 <= d <= 8}


def test_ids_are_unique_and_match_file_and_category():
    ids = Counter(r.id for r in CATALOGUE.rules)
    assert [i for i, n in ids.items() if n > 1] == []
    for rule in CATALOGUE.rules:
        assert rule.path.stem == f"{rule.id}-{rule.name}"
        assert CATEGORIES[int(rule.id[3])] == rule.category == rule.path.parent.name


@pytest.mark.parametrize("rule", CATALOGUE.rules, ids=[r.id for r in CATALOGUE.rules])
def test_rule_has_docs_references_and_examples(rule):
    assert rule.docs["what"].strip() and rule.docs["why"].strip()
    assert all(u.startswith("https://") for u in rule.docs["references"])
    assert rule.examples["bad"] and rule.examples["good"]
    if rule.fix and rule.fix["safety"] == "unsafe":
        assert rule.docs.get("fix_safety"), "an unsafe fix must say why"


def _broken_copy(tmp_path, text, name="NRN101-tensor-cuda-method.yaml"):
    folder = tmp_path / "device"
    folder.mkdir()
    path = folder / name
    path.write_text(text)
    return path


def test_missing_field_is_an_error_naming_file_and_field(tmp_path):
    text = (rules_dir() / "device" / "NRN101-tensor-cuda-method.yaml").read_text()
    path = _broken_copy(tmp_path, text.replace("summary: Tensor or module moved with `.cuda()`\n", ""))
    with pytest.raises(RuleError) as err:
        load_rule(path)
    assert str(path) in str(err.value) and "summary" in str(err.value)


def test_bad_matcher_kind_names_the_match_field(tmp_path):
    text = (rules_dir() / "device" / "NRN101-tensor-cuda-method.yaml").read_text()
    path = _broken_copy(tmp_path, text.replace("kind: method", "kind: methd", 1))
    with pytest.raises(RuleError, match=r"NRN101-tensor-cuda-method.yaml: field 'match"):
        load_rule(path)


def test_a_key_given_twice_is_an_error_naming_the_key_and_lines(tmp_path):
    text = (rules_dir() / "device" / "NRN101-tensor-cuda-method.yaml").read_text()
    # PyYAML alone keeps the last `message` and the rule silently loses the first.
    path = _broken_copy(tmp_path, text.replace("message:", "message: first\nmessage:", 1))
    with pytest.raises(RuleError, match=r"NRN101-tensor-cuda-method.yaml: field 'message': given twice \(lines 11 and 12\)$"):
        load_rule(path)


def test_wrong_category_folder_is_an_error(tmp_path):
    text = (rules_dir() / "device" / "NRN101-tensor-cuda-method.yaml").read_text()
    path = _broken_copy(tmp_path, text.replace("category: device", "category: runtime"))
    with pytest.raises(RuleError, match="category"):
        load_rule(path)


def test_invalid_yaml_is_an_error_naming_the_file(tmp_path):
    path = _broken_copy(tmp_path, "id: [unclosed\n")
    with pytest.raises(RuleError, match="NRN101-tensor-cuda-method.yaml"):
        load_rule(path)


def test_broken_rule_makes_the_cli_exit_2(tmp_path, cli, monkeypatch):
    # A checkout whose rules/ holds a broken file: the scan must refuse to run, naming it.
    import subprocess, sys, os
    from conftest import ROOT

    root = tmp_path / "checkout"
    shutil.copytree(ROOT / "migrator", root / "migrator")
    shutil.copytree(ROOT / "rules", root / "rules")
    shutil.copytree(ROOT / "templates", root / "templates")
    bad = root / "rules" / "device" / "NRN101-tensor-cuda-method.yaml"
    bad.write_text(bad.read_text().replace("severity: error", "severity: fatal"))
    (tmp_path / "x.py").write_text("x = 1\n")
    proc = subprocess.run([sys.executable, "-m", "migrator", "scan", str(tmp_path / "x.py")], capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(root)}, cwd=tmp_path)
    assert proc.returncode == 2
    assert "NRN101-tensor-cuda-method.yaml" in proc.stderr and "severity" in proc.stderr


def test_docs_rules_md_is_current():
    from conftest import ROOT
    from migrator.docgen import render_rules_doc

    assert (ROOT / "docs" / "rules.md").read_text() == render_rules_doc(load_catalogue()), "run `make docs`"


def test_tool_findings_are_catalogue_rules_with_docs(cli, tmp_path):
    # NRN000 and NRN001 were built in code: `rules NRN000` did not know them and SARIF had no help.
    catalogue = load_catalogue()
    for rule_id in ("NRN000", "NRN001"):
        rule = catalogue.by_id(rule_id)
        assert rule.category == "tool" and rule.docs["references"] and rule.examples["bad"]
        assert f"{rule_id} {rule.name}" in cli("rules", rule_id, check=0).stdout
    (tmp_path / "broken.py").write_text("import torch\nx = torch.ones(3).cuda(\n")
    (tmp_path / "stale.py").write_text("import torch\nx = 1  # noqa: NRN101\n")
    sarif = json.loads(cli("scan", ".", "--format", "sarif", "--report-unused-noqa", "--exit-zero").stdout)
    rules = {r["id"]: r for r in sarif["runs"][0]["tool"]["driver"]["rules"]}
    results = {r["ruleId"] for r in sarif["runs"][0]["results"]}
    assert results == {"NRN000", "NRN001"}
    for rule_id in results:
        rule = catalogue.by_id(rule_id)
        assert rules[rule_id]["name"] == rule.name and rules[rule_id]["helpUri"] == rule.docs["references"][0]


def test_targets_exist_once_and_match_the_fix_expressions():
    from migrator import cli, settings
    from migrator.core.catalogue import TARGETS, load_targets

    assert tuple(load_targets()) == TARGETS
    assert cli.TARGETS is TARGETS and settings.TARGETS is TARGETS  # imported, not copied


def test_the_shared_pytorch_vocabulary_is_schema_checked_data(tmp_path, monkeypatch):
    from migrator.core import catalogue

    rules = tmp_path / "rules"
    shutil.copytree(rules_dir(), rules)
    monkeypatch.setattr(catalogue, "rules_dir", lambda: rules)
    catalogue.load_vocabulary.cache_clear()
    try:
        words = catalogue.load_vocabulary()
        assert "map_location" in words["device_keywords"] and words["cuda_device"].match("cuda:1").group(1) == "1"
        text = (rules / "vocabulary.yaml").read_text()
        (rules / "vocabulary.yaml").write_text(text.replace("dtype_keywords: [", "dtype_keywords: [3, "))
        catalogue.load_vocabulary.cache_clear()
        with pytest.raises(RuleError, match=r"vocabulary.yaml: field 'dtype_keywords/0'"):
            catalogue.load_vocabulary()
        (rules / "vocabulary.yaml").write_text(text + "device_words: [gpu]\n")
        catalogue.load_vocabulary.cache_clear()
        with pytest.raises(RuleError, match="device_words"):
            catalogue.load_vocabulary()
    finally:
        catalogue.load_vocabulary.cache_clear()


def test_fix_functions_named_by_rules_exist_and_team_rules_cannot_bring_code(tmp_path):
    from migrator.api import ScanOptions, fix_source
    from migrator.fix.custom import FUNCTIONS

    named = {r.fix["function"] for r in load_catalogue().rules if r.fix and r.fix["kind"] == "function"}
    assert named and named <= set(FUNCTIONS)
    # A team rule may only name a registered function; any other name is no fix, not an import.
    folder = tmp_path / "team" / "custom"
    folder.mkdir(parents=True)
    text = (rules_dir() / "runtime" / "NRN205-cuda-device-count.yaml").read_text()
    text = text.replace("id: NRN205", "id: NRN901").replace("name: cuda-device-count", "name: team-count")
    text = text.replace("category: runtime", "category: custom").replace("function: device-count", "function: os-system")
    (folder / "NRN901-team-count.yaml").write_text(text)
    outcome = fix_source("import torch\nn = torch.cuda.device_count()\n", "a.py", "python",
                         ScanOptions(extend_rules=(tmp_path / "team",), ignore=("NRN205",)))
    assert not outcome.changed
    assert any("fix function 'os-system', which does not exist" in why for f, why in outcome.manual if f.rule_id == "NRN901")
