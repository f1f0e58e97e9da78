"""`generate` on input a repository controls: spec YAML read as YAML 1.2 with no aliases, text fields
kept as written, every free-text value checked before it reaches a template, and the write phase
all-or-nothing (targets checked first, renames rolled back)."""

import json
import os
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from migrator.cli import app
from migrator.deploy import SpecError
from migrator.deploy.generate import generate
from migrator.deploy.spec import build_spec

HEAD = "instance_type: trn2.48xlarge\nregion: us-east-2\n"
FLAGS = {"instance_type": "trn2.48xlarge", "region": "us-east-2"}


def spec_file(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(body, encoding="utf-8")
    return path


def tree(folder: Path) -> list[str]:
    """Every path under `folder` (hidden temporary files included), relative, sorted."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def run_cli(*args) -> "object":
    return CliRunner().invoke(app, ["generate", *map(str, args)])


def lt_tags(out: Path) -> dict[str, str]:
    doc = json.loads((out / "launch-template.json").read_text())
    return {t["Key"]: t["Value"] for t in doc["TagSpecifications"][0]["Tags"]}


# -- spec YAML: aliases ----------------------------------------------------------------------
BILLION_LAUGHS = HEAD + "tags:\n  a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"  {chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 9)}]\n" for i in range(8))


def test_alias_bomb_is_refused_naming_the_line_and_writes_nothing(tmp_path):
    spec = spec_file(tmp_path, BILLION_LAUGHS)
    result = run_cli("launch-template", "--spec", spec, "--output", tmp_path / "out")
    assert result.exit_code == 2, result.output
    assert f"{spec}:4" in result.stderr and "aliases" in result.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("body", [
    HEAD + "tags: &t {team: ml}\n",                      # an anchor alone
    HEAD + "name: &n demo\nkey_name: *n\n",              # a scalar alias
    HEAD + "base: &b {nodes: 2}\n<<: *b\n",              # a YAML 1.1 merge key
])
def test_anchors_and_aliases_are_refused(tmp_path, body):
    with pytest.raises(SpecError, match=r"spec\.yaml:\d+: anchors and aliases"):
        build_spec(spec_file(tmp_path, body), {})


# -- spec YAML: YAML 1.1 surprises -----------------------------------------------------------
@pytest.mark.parametrize("line, field", [
    ("nodes: 1:30", "field 'nodes'"),            # sexagesimal: 90 in YAML 1.1
    ("nodes: 1_000", "field 'nodes'"),           # 1000 in YAML 1.1
    ("root_volume_gib: 0o1_000", "field 'root_volume_gib'"),
    ("efa: yes", "field 'efa'"),                 # True in YAML 1.1
    ("plain_ami: off", "field 'plain_ami'"),     # False in YAML 1.1
    ("nodes: true", "field 'nodes'"),            # a bool is not a count
    ("name: 2001-12-14", "--name"),              # a timestamp in YAML 1.1; text here, and not a name
    ("kubernetes_version: 1.3", "--kubernetes-version"),   # was read as 1.30
    ("nodes: !!python/object:os.system ls", "field 'nodes'"),
    ("name: !!binary ZGVtbw==", "field 'name'"),
])
def test_yaml_1_1_values_are_refused_naming_the_field(tmp_path, line, field):
    spec = spec_file(tmp_path, HEAD + line + "\n")
    with pytest.raises(SpecError) as err:
        generate("launch-template-json", build_spec(spec, {}), tmp_path / "out")
    assert field in str(err.value)
    assert not (tmp_path / "out").exists()


def test_text_fields_keep_what_was_written(tmp_path):
    spec = spec_file(tmp_path, HEAD + "tags:\n  Team: 0123\n  on: yes\n  Release: 1.10\n  Build: 0x1F\n"
                     "  Enabled: true\n  1: one\n")
    out = tmp_path / "out"
    generate("launch-template-json", build_spec(spec, {}), out)
    tags = lt_tags(out)
    assert {k: tags[k] for k in ("Team", "on", "Release", "Build", "Enabled", "1")} == {
        "Team": "0123", "on": "yes", "Release": "1.10", "Build": "0x1F", "Enabled": "true", "1": "one"}


def test_numbers_follow_the_yaml_1_2_core_schema(tmp_path):
    spec = build_spec(spec_file(tmp_path, HEAD + "nodes: 010\nroot_volume_gib: 0x400\nefa: true\n"), {})
    assert (spec.nodes, spec.root_volume_gib, spec.efa) == (10, 1024, True)  # 010 is ten, not eight


@pytest.mark.parametrize("body, field", [
    (HEAD + "tags:\n  team: a\n  team: b\n", "field 'tags.team': is given twice"),
    (HEAD + 'tags:\n  team: "ml\\nplatform"\n', "field 'tags.team'"),
    (HEAD + 'tags:\n  "te\\u2028am": ml\n', "field 'tags'"),
    (HEAD + 'name: "demo\\n"\n', "field 'name'"),
    (HEAD + 'subnet_ids: ["subnet-0123456789abcdef0\\n"]\n', "field 'subnet_ids[0]'"),
    (HEAD + "tags: {team: null}\n", "field 'tags.team'"),
    (HEAD + "instance-type: trn1.32xlarge\n", "given twice"),
])
def test_spec_text_with_control_characters_or_repeats_is_refused(tmp_path, body, field):
    with pytest.raises(SpecError) as err:
        build_spec(spec_file(tmp_path, body), {})
    assert field in str(err.value) and "\n" not in str(err.value)


def test_spec_that_is_a_fifo_is_refused_without_hanging(tmp_path):
    fifo = tmp_path / "spec.yaml"
    os.mkfifo(fifo)
    outcome: list[BaseException | None] = []

    def read():
        try:
            build_spec(fifo, {})
            outcome.append(None)
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            outcome.append(exc)

    worker = threading.Thread(target=read, daemon=True)
    worker.start()
    worker.join(2)
    if worker.is_alive():  # blocked opening the FIFO: unblock it, then fail
        with open(fifo, "w"):
            pass
        worker.join(2)
        pytest.fail("reading a FIFO as the spec file blocked")
    assert isinstance(outcome[0], SpecError) and "not a regular file" in str(outcome[0])


def test_huge_spec_file_is_refused(tmp_path):
    spec = spec_file(tmp_path, HEAD + "# " + "x" * (2 << 20) + "\n")
    with pytest.raises(SpecError, match="larger than"):
        build_spec(spec, {})


# -- names and free text ---------------------------------------------------------------------
@pytest.mark.parametrize("name", ["demo\n", "demo\r", "de\x1bmo", "demo\u2028", "-demo", "demo-", "1demo",
                                  "d\u00e9mo", "a" * 42])
def test_bad_names_exit_2_naming_the_field_and_write_nothing(tmp_path, name):
    result = run_cli("user-data", "--instance-type", "trn2.48xlarge", "--region", "us-east-2", "--name", name,
                     "--output", tmp_path / "out")
    assert result.exit_code == 2, result.output
    assert "--name" in result.stderr and "Traceback" not in result.output
    assert "\n" not in result.stderr.rstrip("\n") and "\x1b" not in result.stderr  # shown escaped
    assert list(tmp_path.iterdir()) == []


def test_good_names_still_work(tmp_path):
    for name in ("a", "llm-train", "Team-2", "a" * 41):
        generate("user-data", build_spec(None, {**FLAGS, "name": name}), tmp_path / name)


@pytest.mark.parametrize("flags, field", [
    ({"tags": (("team", "ml\u2028platform"),)}, "--tag"),
    ({"tags": (("team", "ml\x7f"),)}, "--tag"),
    ({"tags": (("team", "ml\x85"),)}, "--tag"),
    ({"tags": (("te\u202eam", "ml"),)}, "--tag"),               # a bidi override in a key
    ({"ami_ssm_parameter": "/aws/service/x\nmalicious: 1"}, "--ami-ssm-parameter"),
    ({"ami_ssm_parameter": "/aws/}}{{resolve:secretsmanager:x}}"}, "--ami-ssm-parameter"),
    ({"subnet_ids": ("subnet-0123456789abcdef0\n",)}, "--subnet-id"),
    ({"security_group_ids": ("sg-0123456789abcdef0\n",)}, "--security-group-id"),
    ({"key_name": "key\nname"}, "--key-name"),
    ({"workload": "training\n"}, "--workload"),
    ({"kubernetes_version": "1.34\n"}, "--kubernetes-version"),
    ({"region": "us-east-2\n"}, "--region"),
])
def test_free_text_that_could_inject_lines_is_refused(tmp_path, flags, field):
    for kind in ("terraform", "launch-template-cloudformation"):
        with pytest.raises(SpecError) as err:
            generate(kind, build_spec(None, {**FLAGS, **flags}), tmp_path / "out")
        assert str(err.value).startswith(field)
    assert not (tmp_path / "out").exists()


# -- all-or-nothing writes -------------------------------------------------------------------
def test_target_that_is_a_folder_exits_2_and_writes_nothing(tmp_path):
    out = tmp_path / "out"
    (out / "prerequisites.json").mkdir(parents=True)  # the second file of launch-template json
    result = run_cli("launch-template", "--instance-type", "trn2.48xlarge", "--region", "us-east-2", "--output", out)
    assert result.exit_code == 2, result.output
    assert "--output" in result.stderr and "prerequisites.json" in result.stderr and "is a folder" in result.stderr
    assert tree(tmp_path) == ["out", "out/prerequisites.json"]


def test_target_that_is_a_symlink_out_of_the_folder_is_refused(tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me\n")
    out = tmp_path / "out"
    out.mkdir()
    (out / "main.tf").symlink_to(outside)
    with pytest.raises(SpecError, match="main.tf' is a symbolic link"):
        generate("terraform", build_spec(None, FLAGS), out)
    assert outside.read_text() == "keep me\n" and (out / "main.tf").is_symlink()
    assert tree(out) == ["main.tf"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_unwritable_parent_is_refused_before_writing(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        with pytest.raises(SpecError, match="permission denied"):
            generate("terraform", build_spec(None, FLAGS), locked / "out")
        assert tree(locked) == []
    finally:
        locked.chmod(0o700)


@pytest.fixture
def second_rename_fails(monkeypatch):
    """os.replace fails when it places prerequisites.json (the second file of launch-template json)."""
    real = os.replace

    def replace(src, dst, *args, **kwargs):
        if Path(dst).name == "prerequisites.json":
            raise OSError(28, "No space left on device")
        return real(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", replace)


def test_failed_rename_midway_restores_the_older_files(tmp_path, second_rename_fails):
    out = tmp_path / "out"
    out.mkdir()
    (out / "launch-template.json").write_text("old template\n")
    (out / "prerequisites.json").write_text("old prerequisites\n")
    (out / "notes.txt").write_text("mine\n")
    with pytest.raises(SpecError, match="prerequisites.json.*No space left"):
        generate("launch-template-json", build_spec(None, FLAGS), out)
    assert (out / "launch-template.json").read_text() == "old template\n"
    assert (out / "prerequisites.json").read_text() == "old prerequisites\n"
    assert tree(tmp_path) == ["out", "out/launch-template.json", "out/notes.txt", "out/prerequisites.json"]


def test_failed_rename_midway_removes_what_it_created(tmp_path, second_rename_fails):
    with pytest.raises(SpecError, match="--output"):
        generate("launch-template-json", build_spec(None, FLAGS), tmp_path / "new" / "out")
    assert tree(tmp_path) == []


def test_rewriting_reports_replaced_files_and_leaves_no_temporary_files(tmp_path):
    out = tmp_path / "out"
    first = generate("launch-template-json", build_spec(None, FLAGS), out)
    second = generate("launch-template-json", build_spec(None, {**FLAGS, "name": "other"}), out)
    assert first.replaced == [] and second.replaced == second.files == [out / "launch-template.json",
                                                                          out / "prerequisites.json"]
    assert tree(out) == ["launch-template.json", "prerequisites.json"]
    assert "other-trn2-48xlarge" in (out / "launch-template.json").read_text()
