"""Hostile repositories: nothing a scanned tree contains may run code, fool a hook, write
outside the tree, or stop the run. Every bad input from the issue is run here (code, notebooks
and deployment specs); the closing note of the issue lists which tests failed on the tool before.

Each scan runs the real console entry point in a subprocess, so a crash, a hang (pytest-timeout)
or a segfault of the parser shows as what a user would see.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import stat
import subprocess
import sys
import tempfile
import textwrap
import threading
from pathlib import Path

import pytest
from conftest import ROOT
from typer.testing import CliRunner

from migrator.api import fix_source, scan_source
from migrator.cli import app
from migrator.deploy import SpecError
from migrator.deploy.generate import generate
from migrator.deploy.spec import build_spec
from migrator.sources.notebook import join_cells

CUDA = "import torch\ntorch.cuda.synchronize()\n"
FIXED = "torch.accelerator.synchronize()"


def run(*args, cwd, env=None, timeout=120, user=None):
    """`neuron-migrator ARGS` in `cwd`; `user` runs it as another uid (for permission tests)."""
    cmd = [sys.executable, "-m", "migrator", *map(str, args)]
    if user is not None:
        cmd = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", *cmd]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(textwrap.dedent(text))
    return path


class Payload:
    """Unpickling this creates a marker file: proof that a cache was unpickled."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


# -- 1. caches -------------------------------------------------------------------------------
def test_a_scan_writes_no_cache_into_the_scanned_tree_and_ignores_a_planted_pickle(tmp_path):
    repo = tmp_path / "repo"
    write(repo / "train.py", CUDA)
    marker = tmp_path / "pwned"
    planted = repo / ".neuron-migrator-cache"
    planted.mkdir()
    for name in ("scan.pickle", "catalogue.pickle"):
        (planted / name).write_bytes(pickle.dumps({"train.py": Payload(str(marker))}))
    first = run("scan", ".", "--format", "json", cwd=repo, env={"NRN_CACHE_DIR": str(tmp_path / "user-cache")})
    before = sorted(p.name for p in planted.iterdir())
    second = run("scan", ".", "--format", "json", cwd=repo, env={"NRN_CACHE_DIR": str(tmp_path / "user-cache")})
    assert first.returncode == second.returncode == 1, first.stderr + second.stderr
    assert [f["rule_id"] for f in json.loads(second.stdout)] == ["NRN202"]
    assert not marker.exists()
    assert sorted(p.name for p in planted.iterdir()) == before == ["catalogue.pickle", "scan.pickle"]
    assert {p.name for p in repo.iterdir()} == {"train.py", ".neuron-migrator-cache"}
    cache = tmp_path / "user-cache"
    assert (cache / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")
    assert not list(cache.rglob("*.pickle"))
    assert list((cache / "scan").glob("*.json"))


def test_a_tampered_or_foreign_cache_entry_is_ignored(tmp_path):
    from migrator.api import ScanOptions, scan_paths

    write(tmp_path / "src" / "train.py", CUDA)
    cache = tmp_path / "cache"
    options = ScanOptions(cache_dir=cache, root=tmp_path)
    assert [f.rule_id for f in scan_paths([tmp_path / "src"], options).findings] == ["NRN202"]
    (file,) = cache.glob("scan-*.json")
    mac, _, body = file.read_bytes().partition(b"\n")
    data = json.loads(body)
    for entry in data["files"].values():
        entry[1] = []  # "no findings here", without the signature to back it
    file.write_bytes(mac + b"\n" + json.dumps(data).encode())
    again = scan_paths([tmp_path / "src"], options)
    assert [f.rule_id for f in again.findings] == ["NRN202"] and again.cached == 0
    file.write_bytes(b"\x80\x04garbage")
    assert [f.rule_id for f in scan_paths([tmp_path / "src"], options).findings] == ["NRN202"]


def test_the_catalogue_cache_is_not_a_pickle(tmp_path):
    env = {"XDG_CACHE_HOME": str(tmp_path / "xdg"), "NRN_CACHE_DIR": str(tmp_path / "nrn")}
    assert run("rules", cwd=tmp_path, env=env).returncode == 0
    assert run("rules", cwd=tmp_path, env=env).returncode == 0
    assert not list(tmp_path.rglob("*.pickle"))
    assert list((tmp_path / "nrn").glob("catalogue-*.json"))


# -- 2. argument injection and 3. excludes, through the real pre-commit -------------------------
@pytest.mark.timeout(600)
def test_hooks_take_dash_file_names_as_files_and_keep_out_of_excluded_code(tmp_path, hook_repo):
    repo, rev = hook_repo
    user = tmp_path / "user"
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pc"), "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e"}
    subprocess.run(["git", "init", "-q", str(user)], check=True)
    write(user / ".pre-commit-config.yaml",
          f"repos:\n- repo: {repo}\n  rev: {rev}\n  hooks:\n  - id: neuron-migrator\n  - id: neuron-migrator-fix\n")
    write(user / "pyproject.toml", '[tool.neuron-migrator]\nextend-exclude = ["vendor/"]\n')
    vendored = write(user / "vendor" / "lib.py", CUDA)

    def hook(name):
        # Staged files, passed by pre-commit as they are named: as in a real `git commit`.
        subprocess.run(["git", "add", "-A"], cwd=user, env=env, check=True)
        return subprocess.run([sys.executable, "-m", "pre_commit", "run", name], cwd=user, env=env,
                              capture_output=True, text=True)

    # Only the excluded file is staged: both hooks pass and the vendored code is not rewritten.
    assert hook("neuron-migrator").returncode == 0
    assert hook("neuron-migrator-fix").returncode == 0
    assert vendored.read_text() == CUDA
    # A file named like an option is a file: its CUDA call blocks the commit.
    write(user / "--select=NRN9.py", CUDA)
    write(user / "-dash.py", CUDA)
    blocked = hook("neuron-migrator")
    assert blocked.returncode == 1, blocked.stdout + blocked.stderr
    assert blocked.stdout.count("NRN202") == 2
    assert hook("neuron-migrator-fix").returncode == 1  # files changed
    assert FIXED in (user / "-dash.py").read_text() and FIXED in (user / "--select=NRN9.py").read_text()


def test_select_and_ignore_values_are_checked_like_the_configuration(tmp_path):
    write(tmp_path / "train.py", CUDA)
    # A comma list is split as ruff does, and each part is checked on its own.
    for flag in ("--select=x.py", "--ignore=NRN20X", "--select=NRN1,x.py", "--select=NRN1;NRN2"):
        proc = run("scan", "train.py", flag, cwd=tmp_path)
        assert proc.returncode == 2 and "is not a rule id or prefix" in proc.stderr, flag


def test_force_exclude_applies_configured_excludes_to_named_files(tmp_path):
    write(tmp_path / "pyproject.toml", '[tool.neuron-migrator]\nexclude = ["third_party/"]\n')
    write(tmp_path / "third_party" / "x" / "lib.py", CUDA)
    assert run("scan", "third_party/x/lib.py", cwd=tmp_path).returncode == 1  # named: scanned, as ruff does
    assert run("scan", "--force-exclude", "third_party/x/lib.py", cwd=tmp_path).returncode == 0
    fixed = run("fix", "--write", "--force-exclude", "third_party/x/lib.py", cwd=tmp_path)
    assert fixed.returncode == 0 and (tmp_path / "third_party" / "x" / "lib.py").read_text() == CUDA


# -- 4. writes ---------------------------------------------------------------------------------
def test_fix_never_writes_through_a_link_out_of_the_tree(tmp_path):
    outside = write(tmp_path / "outside" / "victim.py", CUDA)
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "link.py").symlink_to(outside)
    write(repo / "ok.py", CUDA)
    proc = run("fix", "--write", ".", cwd=repo)  # walked: the link is not even read
    assert proc.returncode == 2 and "link.py: not changed: file not scanned: a symbolic link to outside" in proc.stderr
    named = run("fix", "--write", "link.py", "ok.py", cwd=repo)  # named: read, but never written through
    assert named.returncode == 2 and "outside the folders being fixed" in named.stderr
    assert outside.read_text() == CUDA
    assert FIXED in (repo / "ok.py").read_text()  # the rest of the run went on


def test_fix_keeps_owner_and_refuses_read_only_files_and_hard_links(tmp_path):
    owned = write(tmp_path / "owned.py", CUDA)
    if os.geteuid() == 0:
        os.chown(owned, 4321, 4321)
    owner = (owned.stat().st_uid, owned.stat().st_gid)
    readonly = write(tmp_path / "readonly.py", CUDA)
    readonly.chmod(0o444)
    linked = write(tmp_path / "linked.py", CUDA)
    os.link(linked, tmp_path / "other-name.txt")
    proc = run("fix", "--write", "owned.py", "readonly.py", "linked.py", cwd=tmp_path)
    assert FIXED in owned.read_text() and (owned.stat().st_uid, owned.stat().st_gid) == owner
    assert readonly.read_text() == CUDA and stat.S_IMODE(readonly.stat().st_mode) == 0o444
    assert linked.read_text() == CUDA and linked.stat().st_nlink == 2
    assert proc.returncode == 2
    assert "readonly.py: is read-only" in proc.stderr and "hard links" in proc.stderr


# -- 5. output ---------------------------------------------------------------------------------
def test_escape_sequences_in_names_and_code_never_reach_the_terminal(tmp_path):
    write(tmp_path / "a\x1b]0;owned\x07\x1b[2J.py", "import torch\nx = torch.device('cuda\x1b[31m')\n" + CUDA)
    for args in (("scan", "."), ("scan", ".", "--format", "github"), ("fix", ".")):
        proc = run(*args, cwd=tmp_path)
        # A diff on a pipe is a patch: its code lines stay byte-exact (`git apply` must work);
        # its file names and everything on stderr are escaped.
        shown = proc.stderr + "\n".join(line for line in proc.stdout.splitlines()
                                         if args[0] != "fix" or line.startswith(("---", "+++")))
        assert "\x1b" not in shown and "\x07" not in shown, args
        assert "\\x1b" in shown, args


def test_sarif_uris_are_encoded_and_junit_is_well_formed(tmp_path):
    from xml.etree import ElementTree

    write(tmp_path / "my file #1%.py", CUDA)
    write(tmp_path / "ctl\x01.py", CUDA)
    sarif = json.loads(run("scan", ".", "--format", "sarif", cwd=tmp_path).stdout)
    uris = sorted(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in sarif["runs"][0]["results"])
    assert uris == ["ctl%01.py", "my%20file%20%231%25.py"]
    junit = run("scan", ".", "--format", "junit", cwd=tmp_path).stdout
    names = [case.get("name") for case in ElementTree.fromstring(junit).iter("testcase")]
    assert names == ["ctl\\x01.py", "my file #1%.py"]


def test_noqa_inside_a_string_suppresses_nothing(tmp_path):
    write(tmp_path / "a.py", 'import torch\nNOTE = "# noqa"; torch.cuda.synchronize()\n'
                             'DOC = """\n# neuron-migrator: noqa\n"""\ntorch.cuda.synchronize()  # noqa: NRN202\n')
    found = json.loads(run("scan", "a.py", "--format", "json", cwd=tmp_path).stdout)
    assert [(f["rule_id"], f["line"]) for f in found] == [("NRN202", 2)]


# -- bad input never stops the run -------------------------------------------------------------
def _scan_beside(tmp_path, name: str, content: bytes | str, *extra) -> tuple[subprocess.CompletedProcess, list]:
    """Scan a folder holding one bad file and one ordinary CUDA file; returns findings by path."""
    bad = tmp_path / "bad"
    bad.mkdir(exist_ok=True)
    target = bad / name
    if isinstance(content, bytes):
        target.write_bytes(content)
    else:
        target.write_text(content)
    write(bad / "good.py", CUDA)
    proc = run("scan", ".", "--format", "json", *extra, cwd=bad, timeout=180)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    return proc, json.loads(proc.stdout)


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name,source,why", [
    ("parens.py", "import torch\nx = " + "(" * 3000 + "torch.cuda.synchronize()" + ")" * 3000 + "\n", "nested brackets"),
    ("unary.py", "import torch\nx = torch.cuda.device_count() + " + "-" * 100000 + "1\n", "nested too deeply"),
    ("chain.py", "import torch\nx = " + " + ".join(["torch.cuda.device_count()"] * 3000) + "\n", "deep"),
])
def test_deep_nesting_is_a_finding_for_that_file(tmp_path, name, source, why):
    proc, found = _scan_beside(tmp_path, name, source)
    bad = [f for f in found if f["path"].endswith(name)]
    assert [f["rule_id"] for f in bad] == ["NRN000"] and why in bad[0]["message"]
    assert any(f["path"].endswith("good.py") and f["rule_id"] == "NRN202" for f in found)
    fixed = run("fix", name, cwd=tmp_path / "bad", timeout=180)
    assert fixed.returncode == 2 and "not rewritten" in fixed.stderr


@pytest.mark.timeout(300)
def test_a_480_term_expression_is_scanned_and_fixed(tmp_path):
    source = "import torch\nn = " + " + ".join(["torch.cuda.device_count()"] * 480) + "\n" + CUDA
    write(tmp_path / "long.py", source)
    found = json.loads(run("scan", "long.py", "--format", "json", cwd=tmp_path, timeout=240).stdout)
    assert len(found) == 481 and "NRN000" not in {f["rule_id"] for f in found}, found[0]["message"]
    fixed = run("fix", "--write", "long.py", cwd=tmp_path, timeout=240)
    assert fixed.returncode in (0, 2) and "Traceback" not in fixed.stderr
    compile((tmp_path / "long.py").read_text(), "long.py", "exec")


@pytest.mark.timeout(300)
@pytest.mark.parametrize("expression", [" and ".join(["x"] * 600), " ".join(['"a"'] * 600)])
def test_fix_writes_a_file_with_a_long_and_chain_or_string_run_and_goes_on(tmp_path, expression):
    # The parser takes these (flat in CPython's tree), but libcst generating the code again for the
    # written bytes recursed once per operand: a traceback that ended the whole run.
    write(tmp_path / "a.py", "import torch\ny = " + expression + '\nt = torch.zeros(1).to("cuda")\n')
    write(tmp_path / "z.py", 'import torch\nt = torch.zeros(1).to("cuda")\n')
    fixed = run("fix", "--write", ".", cwd=tmp_path, timeout=240)
    assert fixed.returncode == 0 and "Traceback" not in fixed.stderr, fixed.stderr[-2000:]
    for name in ("a.py", "z.py"):
        text = (tmp_path / name).read_text()
        compile(text, name, "exec")
        assert ".to(DEVICE)" in text


@pytest.mark.timeout(300)
def test_a_50_mib_python_file_is_refused_not_parsed(tmp_path):
    big = ("x = torch.cuda.device_count()  # " + "#" * 60 + "\n") * (50 * 2**20 // 96)
    proc, found = _scan_beside(tmp_path, "huge.py", "import torch\n" + big)
    (bad,) = [f for f in found if f["path"].endswith("huge.py")]
    assert bad["rule_id"] == "NRN000" and "limit" in bad["message"]
    assert any(f["path"].endswith("good.py") for f in found)


def test_a_planted_torch_package_marker_cannot_hang_or_hide_code_silently(tmp_path):
    """NRN002 decides "PyTorch's own source" by names only: an `__init__.py` that is a FIFO or a
    link to a device is not read (no hang) and makes no package, and a real `torch/` package
    planted in a repository is reported (one NRN002 finding naming it), never silently dropped."""
    repo = tmp_path / "repo"
    fake = repo / "torch"
    fake.mkdir(parents=True)
    os.mkfifo(fake / "__init__.py")
    write(fake / "ops.py", CUDA)
    linked = repo / "vendor" / "torch"
    linked.mkdir(parents=True)
    (linked / "__init__.py").symlink_to("/dev/zero")
    write(linked / "ops.py", CUDA)
    planted = repo / "third_party" / "torch"
    write(planted / "__init__.py", "")
    write(planted / "hidden.py", CUDA)
    proc = run("scan", ".", "--format", "json", "--fail-on", "never", cwd=repo, timeout=60)
    found = json.loads(proc.stdout)
    by_file = {(f["path"], f["rule_id"]) for f in found}
    # Neither a FIFO nor a link to a device makes a package: those folders are scanned as code.
    assert ("torch/ops.py", "NRN202") in by_file and ("vendor/torch/ops.py", "NRN202") in by_file
    assert [f["path"] for f in found if f["rule_id"] == "NRN002"] == ["third_party/torch/__init__.py"]
    assert not any(path.startswith("third_party/") for path, rule in by_file if rule != "NRN002")


@pytest.mark.timeout(120)
def test_fifos_and_devices_behind_links_are_findings_not_hangs(tmp_path):
    bad = tmp_path / "bad"
    bad.mkdir()
    os.mkfifo(bad / "pipe.py")
    (bad / "zero.py").symlink_to("/dev/zero")
    (bad / "requirements.txt").symlink_to("/dev/zero")
    write(bad / "good.py", CUDA)
    for args in (("scan", ".", "--format", "json"), ("scan", ".", "--format", "json", "pipe.py", "zero.py")):
        proc = run(*args, cwd=bad, timeout=60)
        found = json.loads(proc.stdout)
        messages = {f["path"].rsplit("/", 1)[-1]: f["message"] for f in found if f["rule_id"] == "NRN000"}
        assert "FIFO" in messages["pipe.py"]
        # Walked, a link out of the folder is not opened at all; named, the device is refused.
        assert ("outside" if len(args) == 4 else "device") in messages["zero.py"]
        assert any(f["rule_id"] == "NRN202" for f in found)
    fixed = run("fix", "--write", ".", cwd=bad, timeout=60)
    assert fixed.returncode == 2 and FIXED in (bad / "good.py").read_text()


@pytest.mark.timeout(120)
def test_a_folder_without_the_x_bit_is_reported_and_the_walk_goes_on(tmp_path):
    top = Path(tempfile.mkdtemp(prefix="nrn-perm-", dir="/tmp"))
    try:
        os.chmod(top, 0o755)
        write(top / "good.py", CUDA)
        locked = top / "locked"
        write(locked / "inner.py", CUDA)
        write(locked / "sub" / "x.py", CUDA)
        os.chmod(locked, 0o644)  # readable, not searchable
        for path in (top, top / "good.py"):
            os.chmod(path, 0o755 if path.is_dir() else 0o644)
        user = 65534 if os.geteuid() == 0 else None  # root ignores permission bits
        proc = run("scan", ".", "--format", "json", "--no-cache", cwd=top, user=user)
        assert proc.returncode == 1, proc.stderr[-2000:]
        found = json.loads(proc.stdout)
        assert any(f["path"] == "good.py" and f["rule_id"] == "NRN202" for f in found)
        assert any(f["rule_id"] == "NRN000" and "locked" in f["path"] for f in found)
    finally:
        os.chmod(top / "locked", 0o755)
        shutil.rmtree(top)


def test_utf16_files_are_read_or_reported_never_passed(tmp_path):
    requirements = "torch==2.3.0+cu121\nnumpy\n"
    write(tmp_path / "requirements.txt", b"\xff\xfe" + requirements.encode("utf-16-le"))
    write(tmp_path / "train.py", b"\xff\xfe" + CUDA.encode("utf-16-le"))
    found = json.loads(run("scan", ".", "--format", "json", cwd=tmp_path).stdout)
    by_path = {f["path"]: f for f in found}
    assert {f["rule_id"] for f in found if f["path"] == "requirements.txt"} >= {"NRN802"}
    assert by_path["train.py"]["rule_id"] == "NRN000" and "UTF-16" in by_path["train.py"]["message"]
    proc = run("fix", "--write", "--unsafe-fixes", "requirements.txt", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    data = (tmp_path / "requirements.txt").read_bytes()
    assert data.startswith(b"\xff\xfe") and "torch==2.3.0\n" in data[2:].decode("utf-16-le")


def test_unusual_line_separators_are_kept_by_fix(tmp_path):
    text = "numpy # note\u2028more\x0cpage\x85end\ntorch==2.3.0+cu121\nscipy\n"
    path = write(tmp_path / "requirements.txt", text.encode("utf-8"))
    found = json.loads(run("scan", "requirements.txt", "--format", "json", cwd=tmp_path).stdout)
    assert {(f["rule_id"], f["line"]) for f in found} >= {("NRN802", 2)} and {f["line"] for f in found} == {2}
    assert run("fix", "--write", "--unsafe-fixes", "requirements.txt", cwd=tmp_path).returncode == 0
    lines = path.read_bytes().decode("utf-8").split("\n")
    assert "numpy # note\u2028more\x0cpage\x85end" in lines and "torch==2.3.0" in lines and "scipy" in lines


@pytest.mark.parametrize("pyproject,message", [
    ('tool = "neuron-migrator"\n', "'tool' must be a table"),
    ("[tool]\nneuron-migrator = 5\n", "must be a table"),
    ("[tool]\nneuron-migrator = [1, 2]\n", "must be a table"),
    ("[tool.neuron-migrator]\nselect = 5\n", "key 'select'"),
    ("[tool.neuron-migrator]\nexclude = [\"a\\u0000b\"]\n", "key 'exclude'"),
    ("[tool.neuron-migrator\nselect = []\n", "cannot read"),
])
def test_malformed_pyproject_tables_exit_2_with_the_key(tmp_path, pyproject, message):
    write(tmp_path / "pyproject.toml", pyproject)
    write(tmp_path / "train.py", CUDA)
    proc = run("scan", "train.py", cwd=tmp_path)
    assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("pyproject", ["[tool.black\nline-length = 1\n", "tool = 5\n", "tool = [1]\n"])
def test_a_broken_pyproject_of_another_tool_does_not_stop_the_scan(tmp_path, pyproject):
    write(tmp_path / "pyproject.toml", pyproject)
    write(tmp_path / "train.py", CUDA)
    proc = run("scan", "train.py", cwd=tmp_path)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr


@pytest.mark.timeout(60)
@pytest.mark.parametrize("content", [
    "[" * 100000 + "]" * 100000,
    '{"format": 1, "findings": [{"fingerprint": 5}]}',
    '{"format": 1, "findings": [{"fingerprint": ["a"]}]}',
    '{"format": 1, "findings": {"fingerprint": "a"}}',
    '{"format": 1}',
    "fifo",
])
def test_malformed_baselines_exit_2_naming_the_file(tmp_path, content):
    baseline = tmp_path / "base.json"
    if content == "fifo":
        os.mkfifo(baseline)
    else:
        baseline.write_text(content)
    write(tmp_path / "train.py", CUDA)
    proc = run("scan", "train.py", "--baseline", "base.json", cwd=tmp_path, timeout=30)
    assert proc.returncode == 2 and "base.json" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.timeout(120)
def test_a_team_rule_with_a_catastrophic_pattern_cannot_hang_the_scan(tmp_path):
    write(tmp_path / "team" / "custom" / "NRN901-slow-pattern.yaml", """\
        id: NRN901
        name: slow-pattern
        summary: A pattern with exponential backtracking
        category: custom
        severity: error
        since: 0.1.0
        match:
          kind: text
          pattern: "^(a|a?)+$"
          file_kinds: [shell]
        message: "this line backtracks badly"
        docs:
          what: Backtracks.
          why: To test the time limit.
          references: [https://example.com]
        examples:
          bad:
            - code: |
                aaaa
          good:
            - code: |
                b
        """)
    write(tmp_path / "pyproject.toml", '[tool.neuron-migrator]\nextend-rules = ["team"]\n')
    write(tmp_path / "run.sh", "a" * 5000 + "b\nnvidia-smi\n")
    proc = run("scan", "run.sh", "--format", "json", cwd=tmp_path, timeout=60)
    found = json.loads(proc.stdout)
    assert {f["rule_id"] for f in found} == {"NRN000", "NRN702"}
    assert "NRN901" in next(f["message"] for f in found if f["rule_id"] == "NRN000")


@pytest.mark.parametrize("jobs", ["-1", "100000"])
def test_unbounded_jobs_are_refused(tmp_path, jobs):
    write(tmp_path / "train.py", CUDA)
    proc = run("scan", "train.py", "-j", jobs, cwd=tmp_path)
    assert proc.returncode == 2 and "--jobs" in proc.stderr


def test_a_crash_of_the_tool_exits_2_and_the_run_goes_on(tmp_path):
    write(tmp_path / "a.py", CUDA)
    write(tmp_path / "b.sh", "nvidia-smi\n")
    crash = ("import sys, migrator.scan.engine as e\n"
             "def boom(*a, **k): raise RuntimeError('boom')\n"
             "e.scan_python = boom\n"
             "from migrator.cli import main\n"
             "sys.argv = ['neuron-migrator', 'scan', '.', '--no-cache', '-j', '1']\n"
             "main()\n")
    proc = subprocess.run([sys.executable, "-c", crash], cwd=tmp_path, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "NRN702" in proc.stdout and "internal error" in proc.stdout + proc.stderr


# -- notebooks: one bad cell is a diagnostic; fix touches only edited cells -----------------------
# A notebook is hostile input: one bad cell is a diagnostic, and a fix touches only what it edits.
def code(source, **extra):
    return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source, **extra}


def notebook(*cells, **top) -> str:
    return json.dumps({"cells": list(cells), "metadata": {}, "nbformat": 4, "nbformat_minor": 5, **top}, indent=1)


GOOD = code(["import torch\n", "x = torch.ones(1).cuda()\n"])
SYNC = code("torch.cuda.synchronize()\n")


def found(text: str, bad_cell: int | None = None) -> list[tuple[str, int | None, int]]:
    """(rule, cell, line) of the findings; a parse error (NRN000) may only name the bad cell."""
    findings = [(f.rule_id, f.cell, f.span.line) for f in scan_source(text.encode(), "nb.ipynb", "notebook")]
    assert [cell for rule, cell, _ in findings if rule == "NRN000"] in ([], [bad_cell]), findings
    return [f for f in findings if f[0] != "NRN000"]


@pytest.mark.parametrize("bad, why", [
    ({"cell_type": "code", "metadata": {}, "outputs": [], "source": 5}, "`source` is not a string or a list of strings (number)"),
    (code(["import os\n", None]), "`source` item 2 is not a string (null)"),
    (code(["x = 1\n", 3]), "`source` item 2 is not a string (number)"),
    ({"cell_type": "code", "metadata": {}, "outputs": []}, "code cell has no `source`"),
    ({"metadata": {}, "source": "x = 1"}, "cell has no `cell_type`"),
    ({"cell_type": 4, "source": "x = 1"}, "cell has no `cell_type`"),
    (7, "cell is not a JSON object (number)"),
    ("import torch", "cell is not a JSON object (string)"),
    ([GOOD], "cell is not a JSON object (array)"),
    (code("s = '\ud800'\n"), "`source` holds a lone surrogate escape (not valid Unicode)"),
], ids=["source-number", "source-null-item", "source-number-item", "no-source", "no-cell-type", "cell-type-number",
        "cell-number", "cell-string", "cell-array", "lone-surrogate"])
def test_one_unusable_cell_is_skipped_and_the_other_cells_are_still_scanned(bad, why):
    text = notebook(GOOD, bad, SYNC)
    assert found(text, bad_cell=2) == [("NRN101", 1, 2), ("NRN202", 3, 1)]
    joined = join_cells(text)
    assert joined.problems == [(2, why)]
    assert [c.cell_type for c in joined.notebook.cells] == ["code", "unusable", "code"]


def test_a_fix_rewrites_the_good_cells_and_leaves_the_unusable_one_byte_for_byte():
    bad = '{"cell_type": "code", "source": ["x = t.cuda()\\n", 5]}'
    text = notebook(GOOD, {"placeholder": True}).replace('{\n   "placeholder": true\n  }', bad)
    outcome = fix_source(text.encode(), "nb.ipynb", "notebook")
    assert outcome.failed is None and outcome.changed
    assert bad in outcome.source
    assert "x = torch.ones(1).to(DEVICE)\n" in json.loads(outcome.source)["cells"][0]["source"]


@pytest.mark.parametrize("text", ["{ not json", "", "[1, 2]", '"cells"', "5", "{}", '{"cells": 3, "nbformat": 4}',
                                  '{"worksheets": [3], "nbformat": 3}', "[" * 100_000, '{"a": ' * 100_000],
                         ids=["not-json", "empty", "array", "string", "number", "no-cells", "cells-number",
                              "worksheet-number", "deep-array", "deep-object"])
def test_what_is_not_a_notebook_is_one_parse_error_never_a_crash(text):
    with pytest.raises(ValueError, match="not a readable notebook"):
        join_cells(text)
    assert [f.rule_id for f in scan_source(text.encode(), "nb.ipynb", "notebook")] == ["NRN000"]
    outcome = fix_source(text.encode(), "nb.ipynb", "notebook")
    assert outcome.failed and outcome.source == text and not outcome.changed


def test_nbformat_3_worksheets_are_scanned_with_one_bad_cell_skipped():
    nb = {"nbformat": 3, "nbformat_minor": 0, "metadata": {"name": ""}, "worksheets": [
        {"cells": [{"cell_type": "heading", "level": 1, "metadata": {}, "source": "Train"},
                   {"cell_type": "code", "input": ["import torch\n", "x = torch.ones(1).cuda()\n"], "language": "python",
                    "metadata": {}, "outputs": [], "collapsed": False}]},
        {"cells": [{"cell_type": "code", "input": 3, "language": "python", "metadata": {}, "outputs": []},
                   {"cell_type": "code", "input": "torch.cuda.synchronize()", "language": "python", "metadata": {},
                    "outputs": []}]}]}
    text = json.dumps(nb, indent=1)
    assert found(text, bad_cell=3) == [("NRN101", 2, 2), ("NRN202", 4, 1)]
    assert join_cells(text).problems == [(3, "`input` is not a string or a list of strings (number)")]
    outcome = fix_source(text.encode(), "nb.ipynb", "notebook")
    assert "nbformat 3" in outcome.failed and outcome.source == text  # as before: scanned, not rewritten


@pytest.mark.parametrize("line", ["# nrn-cell 1", "pass  # nrn-magic 1.1", "import nrn_magic  # nrn-magic 1.1"])
def test_a_cell_with_a_line_like_the_tools_own_markers_is_skipped_not_merged_into_another_cell(line):
    # The markers join cells into one module; read back from a cell, they would move or replace
    # lines of other cells.
    first = code(["%matplotlib inline\n", "import torch\n", "x = torch.ones(1).cuda()\n"])
    forged = code(["y = 1\n", line + "\n", "z = w.cuda()\n"])
    text = notebook(first, forged)
    outcome = fix_source(text.encode(), "nb.ipynb", "notebook")
    cells = json.loads(outcome.source)["cells"]
    assert cells[0]["source"][0] == "%matplotlib inline\n" and cells[0]["source"][-1] == "x = torch.ones(1).to(DEVICE)\n"
    assert cells[1]["source"] == forged["source"]
    assert join_cells(text).problems == [(2, "line 2 looks like one of this tool's markers (`# nrn-cell`, `# nrn-magic`)")]


def test_a_line_separator_inside_a_string_is_not_a_line_break():
    # str.splitlines() breaks at U+2028 and form feed; Python (and the kernel) do not.
    text = notebook(code("import torch\ns = 'a\u2028b'  # \x0c\nx = torch.ones(1).cuda()\n"))
    assert found(text) == [("NRN101", 1, 3)]
    source = json.loads(fix_source(text.encode(), "nb.ipynb", "notebook").source)["cells"][0]["source"]
    assert "s = 'a\u2028b'  # \x0c\n" in source and "x = torch.ones(1).to(DEVICE)\n" in source


# Written by hand the way no tool writes it: indent 2, keys out of nbformat's order, escapes.
UNUSUAL = r'''{
  "nbformat_minor": 5,
  "cells": [
    {
      "source": [
        "# Caf\u00e9 notes   \n",
        "x = 1   "
      ],
      "cell_type": "markdown",
      "metadata": {}
    },
    {
      "outputs": [
        {"output_type": "stream", "name": "stdout", "text": ["r\u00e9sultat\n"]}
      ],
      "source": [
        "import torch\n",
        "y = 2  # caf\u00e9 \/ \"slash\"\n",
        "x = torch.ones(1).cuda()\n",
        "torch.cuda.synchronize()"
      ],
      "metadata": {"tags": []},
      "execution_count": 3,
      "cell_type": "code"
    },
    {
      "cell_type": "code",
      "execution_count": null,
      "metadata": {},
      "outputs": [],
      "source": "print('na\u00efve')   \nz = 3\n"
    }
  ],
  "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3"}},
  "nbformat": 4
}
'''


def edited_span(text: str, first_line: str) -> tuple[int, int]:
    """The offsets of the `[...]` source value that starts with `first_line` (no `]` inside)."""
    start = text.index('"source": [\n        ' + first_line) + len('"source": ')
    return start, text.index("]", start) + 1


def test_fix_changes_only_the_bytes_of_the_edited_cells_source():
    outcome = fix_source(UNUSUAL.encode(), "nb.ipynb", "notebook")
    after = outcome.source
    assert outcome.changed and outcome.failed is None
    start, end = edited_span(UNUSUAL, '"import torch')
    assert after[:start] == UNUSUAL[:start]
    assert after.endswith(UNUSUAL[end:])
    new_value = after[start:len(after) - len(UNUSUAL) + end]
    # The lines the fix kept keep their bytes (escapes included) and the list its layout.
    assert new_value.startswith('[\n        "import torch\\n",\n        "DEVICE = ')
    assert '\n        "y = 2  # caf\\u00e9 \\/ \\"slash\\"\\n",\n' in new_value
    assert new_value.endswith('"\n      ]')
    before_nb, after_nb = json.loads(UNUSUAL), json.loads(after)
    edited = "".join(after_nb["cells"][1]["source"])
    assert "x = torch.ones(1).to(DEVICE)\n" in edited and "torch.cuda" not in edited
    assert after_nb["cells"][0] == before_nb["cells"][0] and after_nb["cells"][2] == before_nb["cells"][2]
    assert {k: v for k, v in after_nb["cells"][1].items() if k != "source"} == \
        {k: v for k, v in before_nb["cells"][1].items() if k != "source"}


def test_fix_of_a_compact_notebook_with_string_sources_stays_compact_and_keeps_raw_unicode():
    cells = [code("import torch\nx = t.cuda()  # café\n"), code("print('naïve')   \n")]
    text = json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5},
                      separators=(",", ":"), ensure_ascii=False)
    after = fix_source(text.encode(), "nb.ipynb", "notebook").source
    old_value = json.dumps(cells[0]["source"], ensure_ascii=False)
    start = text.index(old_value)
    end = start + len(old_value)
    assert after[:start] == text[:start] and after.endswith(text[end:])
    new_value = after[start:len(after) - len(text) + end]
    assert json.loads(new_value) == json.loads(after)["cells"][0]["source"]
    assert "x = t.to(DEVICE)  # café\n" in json.loads(new_value) and "café" in new_value  # not \u00e9


def test_a_notebook_fix_has_nothing_to_do_leaves_the_text_as_it_was():
    text = UNUSUAL.replace(".cuda()", ".cpu()").replace("torch.cuda.synchronize()", "pass")
    outcome = fix_source(text.encode(), "nb.ipynb", "notebook")
    assert not outcome.changed and outcome.source == text


def test_a_cell_left_out_by_the_caller_is_not_joined_and_a_fix_leaves_its_bytes():
    # For a cell that does not parse on its own (Jupyter compiles each cell alone): the caller
    # finds it with `cell_code` and joins again without it.
    import libcst as cst

    from migrator.sources.notebook import cell_code, split_cells

    broken = code(["y = (1,\n", "z = t.cuda()\n"])
    text = notebook(GOOD, broken, SYNC)
    codes = cell_code(join_cells(text))
    assert codes[2] == "y = (1,\nz = t.cuda()\n"
    with pytest.raises(cst.ParserSyntaxError):
        cst.parse_module(codes[2])
    joined = join_cells(text, skip={2})
    assert "# nrn-cell 2" not in joined.source and joined.problems == []
    fixed = json.loads(split_cells(joined, joined.source.replace(".cuda()", ".to(DEVICE)")))
    assert fixed["cells"][0]["source"][1] == "x = torch.ones(1).to(DEVICE)\n"
    assert fixed["cells"][1] == broken


# -- generate: spec YAML 1.2 without aliases, checked text, all-or-nothing writes -----------------
# `generate` on input a repository controls: spec YAML read as YAML 1.2 with no aliases, text fields
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


def test_unwritable_parent_is_refused_before_writing():
    # Root ignores permission bits: as root, the generator runs as `nobody` (setpriv).
    top = Path(tempfile.mkdtemp(prefix="nrn-gen-", dir="/tmp"))
    try:
        os.chmod(top, 0o755)
        locked = top / "locked"
        locked.mkdir()
        locked.chmod(0o555)
        script = ("import sys\nfrom migrator.deploy import SpecError\nfrom migrator.deploy.generate import generate\n"
                  "from migrator.deploy.spec import build_spec\n"
                  f"try:\n    generate('terraform', build_spec(None, {FLAGS!r}), {str(locked / 'out')!r})\n"
                  "except SpecError as exc:\n    print('refused:', exc)\n")
        cmd = [sys.executable, "-c", script]
        if os.geteuid() == 0:
            cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *cmd]
        proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert "refused:" in proc.stdout and "permission denied" in proc.stdout, proc.stdout + proc.stderr
        assert tree(locked) == []
    finally:
        os.chmod(top / "locked", 0o755)
        shutil.rmtree(top)


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


# -- the hooks' file pattern and the scanner agree ---------------------------------------------
@pytest.mark.parametrize("name", [
    "a.py", "a.pyi", "nb.ipynb", "run.sh", "run.bash", "run.zsh", ".bashrc", "Dockerfile", "Dockerfile.gpu",
    "Dockerfile-cuda", "Dockerfile_cuda", "Containerfile.gpu", "x.dockerfile", "requirements.txt",
    "requirements-dev.in", "constraints.txt", "requirements/base.txt", "environment.yml", "environment-gpu.yaml",
    "conda.yaml", "pyproject.toml", "setup.cfg", "k.cu", "k.cuh", "README.md", "conda-lock.yml", "notes.txt",
    "setup.py", "a.pyc", "docs/requirements.md", "gpu.Dockerfile", "Dockerfile-cuda12", "configs/fit.yaml",
    ".github/workflows/ci.yml", "accelerate_config.yml", "data.json",
])
def test_every_file_a_hook_passes_is_scanned_and_every_scanned_kind_is_passed(name):
    import re

    import yaml

    from migrator.sources.discover import file_kind

    for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text()):
        passed = re.search(hook["files"], name) is not None
        assert passed == (file_kind(Path(name)) is not None), (hook["id"], name)


@pytest.mark.timeout(300)
def test_a_file_of_many_short_lines_is_refused_and_blocks_the_hook(tmp_path):
    write(tmp_path / "many.py", "import torch\ntorch.cuda.synchronize()\n" + "x = 1\n" * 700_000)  # 4.0 MiB: under the size limit
    proc = run("scan", "many.py", "--format", "json", cwd=tmp_path, timeout=240)
    (found,) = json.loads(proc.stdout)
    assert found["rule_id"] == "NRN000" and "lines" in found["message"] and found["severity"] == "error"
    assert proc.returncode == 1  # not scanned is not clean: a padded file cannot pass the hook


def test_a_coding_cookie_cannot_hide_cuda_calls(tmp_path):
    write(tmp_path / "u7.py", "# -*- coding: utf-7 -*-\nimpor+AHQ- +AHQ-or+AGM-h\n+AHQ-or+AGM-h.+AGM-uda.syn+AGM-hronize()\n")
    write(tmp_path / "ue.py", "# coding: unicode_escape\nimport torch\n\\x74orch.\\x63uda.synchronize()\n")
    found = json.loads(run("scan", "u7.py", "ue.py", "--format", "json", cwd=tmp_path).stdout)
    assert [(f["path"], f["rule_id"]) for f in found] == [("u7.py", "NRN202"), ("ue.py", "NRN202")]


def test_links_out_of_the_tree_are_neither_read_nor_followed_and_outputs_replace_links(tmp_path):
    victim = write(tmp_path / "victim" / "secret.py", CUDA + 'API_KEY = "sk-secret"\n')
    write(tmp_path / "victim" / "other.py", CUDA)
    repo = tmp_path / "repo"
    write(repo / "a.py", CUDA)
    (repo / "train.py").symlink_to(victim)
    (repo / "evil").symlink_to(tmp_path / "victim")
    (repo / ".neuron-migrator-baseline.json").symlink_to(victim)
    fixed = run("fix", ".", "evil", cwd=repo)
    assert "sk-secret" not in fixed.stdout + fixed.stderr
    assert run("fix", "--write", "--", ".", "evil", cwd=repo).returncode == 2
    assert run("baseline", "create", ".", cwd=repo).returncode == 0
    assert victim.read_text() == CUDA + 'API_KEY = "sk-secret"\n' and (tmp_path / "victim" / "other.py").read_text() == CUDA
    assert FIXED in (repo / "a.py").read_text()
    assert not (repo / ".neuron-migrator-baseline.json").is_symlink()
    long_name = "n" * 240 + ".py"
    write(repo / long_name, CUDA)
    assert run("fix", "--write", long_name, cwd=repo).returncode == 0 and FIXED in (repo / long_name).read_text()


def test_file_names_that_are_not_utf8_work_in_every_format(tmp_path):
    os.makedirs(tmp_path / "t")
    with open(os.fsencode(tmp_path / "t") + b"/bad\xff\xfename.py", "w") as handle:
        handle.write(CUDA)
    for fmt in ("text", "json", "sarif", "github", "junit"):
        proc = run("scan", ".", "--format", fmt, cwd=tmp_path / "t")
        assert proc.returncode == 1 and "Traceback" not in proc.stderr, (fmt, proc.stderr[-500:])
    assert run("baseline", "create", ".", cwd=tmp_path / "t").returncode == 0
    assert run("scan", ".", "--baseline", ".neuron-migrator-baseline.json", cwd=tmp_path / "t").returncode == 0


@pytest.mark.timeout(120)
def test_pathological_ignore_patterns_and_rule_files_cannot_hang_the_run(tmp_path):
    write(tmp_path / ".gitignore", "*a" * 30 + "b\n")
    write(tmp_path / ("a" * 200 + ".py"), CUDA)
    assert run("scan", ".", cwd=tmp_path, timeout=60).returncode == 1
    write(tmp_path / "pyproject.toml", '[tool.neuron-migrator]\nexclude = ["' + "*a" * 30 + 'b"]\n')
    proc = run("scan", ".", cwd=tmp_path, timeout=60)
    assert proc.returncode == 2 and "wildcards" in proc.stderr
    os.makedirs(tmp_path / "team" / "custom")
    os.mkfifo(tmp_path / "team" / "custom" / "NRN901-x.yaml")
    write(tmp_path / "pyproject.toml", '[tool.neuron-migrator]\nextend-rules = ["team"]\n')
    proc = run("scan", ".", cwd=tmp_path, timeout=60)
    assert proc.returncode == 2 and "NRN901-x.yaml" in proc.stderr
    write(tmp_path / "pyproject.toml", '[tool.neuron-migrator]\nextend-rules = ["/"]\n')
    proc = run("scan", ".", cwd=tmp_path, timeout=60)
    assert proc.returncode == 2 and "outside" in proc.stderr


@pytest.mark.timeout(120)
def test_a_file_of_many_unclosed_map_calls_scans_in_its_length(tmp_path):
    """Hostile helper, session 19: 100,000 `.map(` in a string took a minute (each call's
    arguments were read 4000 bytes on, byte by byte); the batched `.map` below still counts."""
    write(tmp_path / "t.py", "from transformers import AutoTokenizer\ntok = AutoTokenizer.from_pretrained('x')\n"
                             "def enc(b):\n    return tok(b['text'], padding=True)\n"
                             f"NOTE = '''{'.map(' * 100000}'''\nds.map(enc, batched=True)\n")
    proc = run("scan", "t.py", "--format", "json", "--no-cache", "-j", "1", cwd=tmp_path, timeout=30)
    assert proc.returncode == 0 and [f["rule_id"] for f in json.loads(proc.stdout)] == ["NRN517"]  # info


@pytest.mark.timeout(120)
def test_long_lines_of_many_commands_scan_in_their_length(tmp_path):
    """Hostile helper, session 19: a line of 5,000 `( pip install x` took 20 s in a Dockerfile,
    8,000 `then pip install x` 44 s in a script (each command start read the rest of the line);
    the same for `srun`. Each command's arguments now end where the next command starts."""
    write(tmp_path / "Dockerfile", "FROM x\nRUN pip install x " + "( pip install x " * 8000 + "\n"
          + 'RUN ["/bin/sh", "-c", "' + "( pip install x " * 8000 + '"]\n')
    write(tmp_path / "run.sh", "then pip install x " * 8000 + "\n" + "( srun -N 1 x " * 8000 + "\n"
          + "pip install numpy xformers\n")
    proc = run("scan", ".", "--format", "json", "--no-cache", "-j", "1", cwd=tmp_path, timeout=60)
    assert [(f["rule_id"], f["line"]) for f in json.loads(proc.stdout)] == [("NRN805", 3)]


@pytest.mark.timeout(120)
def test_a_dict_copied_from_itself_many_times_scans_in_a_moment(tmp_path):
    """Hostile helper, session 19: `args = dict(args, k=1)` a hundred times took 20-70 s (every
    assignment of the name was followed two levels deep, by every path); the fp16 is found."""
    head = "from transformers import TrainingArguments\nimport copy\n"
    write(tmp_path / "a.py", head + "A = {'fp16': True}\n" + "A = dict(A, A, A)\n" * 60 + "TrainingArguments(**A)\n")
    write(tmp_path / "b.py", head + "args = {'fp16': True}\n" + "args = dict(args, k=1)\n" * 100
          + "args = {**args, 'k': 2}\n" * 100 + "args = copy.deepcopy(args)\n" * 100 + "TrainingArguments(**args)\n")
    proc = run("scan", ".", "--format", "json", "--no-cache", "-j", "1", cwd=tmp_path, timeout=40)
    assert sorted((f["path"], f["rule_id"]) for f in json.loads(proc.stdout)) == [("a.py", "NRN313"), ("b.py", "NRN313")]


@pytest.mark.timeout(180)
def test_many_dicts_passed_as_spread_and_long_lines_of_one_name_scan_in_their_length(tmp_path):
    """Hostile helper, session 19: a line of 300,000 `A` (each occurrence re-read the line before
    it), 5,000 dicts passed as `**` (the file searched once per name, the pruner's name sets
    joined per statement) and an f-string of 3,000 placeholders (a variant of the whole string
    per placeholder) each took from half a minute to over a minute."""
    head = "from transformers import TrainingArguments\nimport subprocess\n"
    write(tmp_path / "a.py", head + "A = {'fp16': True}\nL = [" + "A, " * 300000 + "]\nTrainingArguments(**A)\n")
    write(tmp_path / "b.py", head + "".join(f"N{i} = {{'fp16': True}}\nTrainingArguments(**N{i})\n" for i in range(5000)))
    write(tmp_path / "c.py", head + "".join(f"p = 'fp16{i}'\n" for i in range(8))
          + 'subprocess.run(f"accelerate launch --mixed_precision ' + "{p}" * 3000 + '")\n')
    proc = run("scan", ".", "--format", "json", "--no-cache", "-j", "1", cwd=tmp_path, timeout=90)
    found = json.loads(proc.stdout)
    assert {f["path"] for f in found} == {"a.py", "b.py"} and len(found) == 5001
