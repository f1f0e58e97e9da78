"""Programs nobody here tuned to survive `fix --target portable --write --unsafe-fixes`.

`tests/programs/` was written blind, from a list of shapes of public training scripts only
(see its README). Each program is checked by `program_check.check`: no CUDA-probe regression,
the same RESULT numbers on the CPU where the original ran there (tolerance in its
`program.yaml`), and either a rewritten program that runs or an unchanged one with the blocker
named by `fix`.
"""

import pytest

from program_check import check, programs


@pytest.mark.parametrize("program", programs(), ids=lambda p: p.name)
def test_program_survives_fix(program, tmp_path):
    report = check(program, tmp_path)
    # The rewritten runs' own output too: a rare failure under a loaded full run (a torchrun child
    # that exits without RESULT) is otherwise known only by its last error line.
    runs = {"as it comes": report.after, "with its CPU flags": report.cpu_after_flags}
    said = "".join(f"\n--- the rewritten program {how} said:\n{run.tail[-4000:]}"
                   for how, run in runs.items() if run is not None and not run.ok)
    assert not report.problems, "\n".join(report.problems) + "\n--- fix said:\n" + report.fix_output[-3000:] + said
