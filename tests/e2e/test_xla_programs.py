"""`make e2e`: the blind programs of `tests/programs/` after `fix --target xla`, under PyTorch/XLA's CPU device.

The legacy XLA path replaces the CUDA device with `torch_xla.device()`, so there is no GPU path
to keep and no CUDA probe. What must hold: a program that ran on the CPU before `fix` still
runs after it (PJRT_DEVICE=CPU) with the same RESULT numbers within its tolerance.
`bench/programs_table.py --target xla`, run in `.venv-e2e`, prints how many run in all.
"""

import pytest

from program_check import check, programs


@pytest.mark.parametrize("program", programs(), ids=lambda p: p.name)
def test_xla_rewrite_breaks_no_program_that_ran(program, tmp_path):
    report = check(program, tmp_path, "xla")
    regressions = [p for p in report.problems if p.startswith(("ran before", "with its CPU flags"))]
    assert not regressions, "\n".join(regressions) + "\n--- fix said:\n" + report.fix_output[-3000:]
