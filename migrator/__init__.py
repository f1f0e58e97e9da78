"""neuron-migrator: find CUDA-only PyTorch code, rewrite it for AWS Neuron, generate deployments.

Public API (the CLI is a thin shell over it)::

    from migrator import scan_paths, ScanOptions
    report = scan_paths(["src/"], ScanOptions(target="neuron"))
"""

from migrator.core.version import __version__  # noqa: E402

from migrator.api import FileFix, ScanOptions, ScanReport, fix_paths, fix_source, scan_paths, scan_source  # noqa: E402
from migrator.core.catalogue import Catalogue, RuleError, RuleSpec, load_catalogue  # noqa: E402
from migrator.core.findings import Finding, Fix, Safety, Severity, Span  # noqa: E402

__all__ = [
    "__version__", "scan_paths", "scan_source", "fix_paths", "fix_source", "ScanOptions", "ScanReport", "FileFix",
    "Finding", "Fix", "Safety", "Severity", "Span", "Catalogue", "RuleSpec", "RuleError", "load_catalogue",
]
