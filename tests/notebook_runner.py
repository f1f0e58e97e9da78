"""Run a notebook's code cells in order in one namespace, as a kernel would (no Jupyter needed).

IPython magics and `!shell` lines are skipped and listed on stderr: the tools they call
(nvidia-smi, neuron-ls) exist on neither kind of host this runs on.

    python notebook_runner.py NOTEBOOK.ipynb
"""

import sys

import nbformat


def main(path: str) -> None:
    notebook = nbformat.read(path, as_version=4)
    namespace: dict = {"__name__": "__main__"}
    for number, cell in enumerate(notebook.cells, start=1):
        if cell.cell_type != "code":
            continue
        lines = []
        for line in cell.source.splitlines():
            if line.lstrip().startswith(("!", "%")):
                print(f"skipped magic in cell {number}: {line.strip()}", file=sys.stderr)
                line = line[: len(line) - len(line.lstrip())] + "pass"
            lines.append(line)
        exec(compile("\n".join(lines), f"{path}:cell {number}", "exec"), namespace)  # noqa: S102


if __name__ == "__main__":
    main(sys.argv[1])
