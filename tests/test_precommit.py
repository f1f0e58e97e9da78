"""The shipped hook, run by the real pre-commit in a temporary git repository."""

import os
import subprocess
import sys




def git(*args, cwd):
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()


def test_commit_adding_cuda_is_blocked_and_clean_commit_passes(tmp_path, hook_repo):
    repo, rev = hook_repo
    user = tmp_path / "user"
    user.mkdir()
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache"), "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e"}
    git("init", "-q", cwd=user)
    (user / ".pre-commit-config.yaml").write_text(
        f"repos:\n- repo: {repo}\n  rev: {rev}\n  hooks:\n  - id: neuron-migrator\n")
    precommit = [sys.executable, "-m", "pre_commit"]
    subprocess.run([*precommit, "install"], cwd=user, env=env, check=True, capture_output=True)

    def commit(message):
        subprocess.run(["git", "add", "-A"], cwd=user, env=env, check=True)
        return subprocess.run(["git", "commit", "-m", message], cwd=user, env=env, capture_output=True, text=True)

    (user / "README.md").write_text("no python here\n")
    empty = commit("no matching files")
    assert empty.returncode == 0, empty.stdout + empty.stderr

    (user / "train.py").write_text("import torch\nmodel = torch.nn.Linear(2, 2)\n")
    clean = commit("clean")
    assert clean.returncode == 0, clean.stdout + clean.stderr

    (user / "train.py").write_text("import torch\nmodel = torch.nn.Linear(2, 2).cuda()\n")
    blocked = commit("add cuda")
    assert blocked.returncode != 0
    assert "NRN101" in blocked.stdout + blocked.stderr
    assert git("log", "--format=%s", cwd=user).splitlines() == ["clean", "no matching files"]

    (user / "run.sh").write_text("nvidia-smi\n")
    (user / "train.py").write_text("import torch\nmodel = torch.nn.Linear(2, 2)\n")
    (user / "Dockerfile").write_text("FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\n")
    docker = commit("cuda base image")
    assert docker.returncode != 0 and "NRN801" in docker.stdout + docker.stderr


def test_fix_hook_rewrites_staged_files(tmp_path, hook_repo):
    repo, rev = hook_repo
    user = tmp_path / "user"
    user.mkdir()
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache")}
    git("init", "-q", cwd=user)
    (user / ".pre-commit-config.yaml").write_text(
        f"repos:\n- repo: {repo}\n  rev: {rev}\n  hooks:\n  - id: neuron-migrator-fix\n")
    (user / "train.py").write_text("import torch\nx = torch.ones(1).cuda()\ntorch.cuda.manual_seed_all(0)\n")
    git("add", "-A", cwd=user)
    proc = subprocess.run([sys.executable, "-m", "pre_commit", "run", "--all-files"], cwd=user, env=env,
                          capture_output=True, text=True)
    assert proc.returncode == 1 and "files were modified by this hook" in proc.stdout
    text = (user / "train.py").read_text()
    assert ".to(DEVICE)" in text and "manual_seed_all" in text  # the unsafe fix was not applied
