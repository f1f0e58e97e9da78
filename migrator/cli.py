"""neuron-migrator command line.

    neuron-migrator scan PATH... [--target portable|neuron|xla|inf1] [--format text|json]
                                 [--fail-on error|warning|info|never] [--select NRN1] [--ignore NRN209]
    neuron-migrator fix PATH... [--target ...] [--write] [--unsafe-fixes]
    neuron-migrator rules [NRN101]
    neuron-migrator instances [--format text|json]
    neuron-migrator generate launch-template --instance-type TYPE --region REGION --output DIR [...]

Exit codes: 0 clean; 1 findings at or above --fail-on (scan) or files left to change (fix
without --write); 2 usage, configuration or tool errors.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import List, Optional

import typer

from . import __version__

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Move CUDA PyTorch code to AWS Trainium/Inferentia.")
generate_app = typer.Typer(no_args_is_help=True, help="Generate deployment configs.")
app.add_typer(generate_app, name="generate")

TARGET_HELP = "Migration target: portable (torch.accelerator), neuron (TorchNeuron, Trn2/Trn3), xla (legacy, Trn1/Inf2), inf1."
TARGETS = ("portable", "neuron", "xla", "inf1")


def _fail(message: str) -> "typer.Exit":
    typer.echo(f"neuron-migrator: error: {message}", err=True)
    return typer.Exit(2)


def _check_target(target: str) -> None:
    if target not in TARGETS:
        raise _fail(f"--target: '{target}' is not one of {', '.join(TARGETS)}")


def _version(value: bool) -> None:
    if value:
        typer.echo(f"neuron-migrator {__version__}")
        raise typer.Exit(0)


@app.callback()
def _main(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version.")) -> None:
    """Scan, fix and deploy PyTorch code for AWS Neuron."""


@app.command()
def scan(
    paths: List[Path] = typer.Argument(..., help="Files or folders to scan."),
    target: str = typer.Option("portable", "--target", "-t", help=TARGET_HELP),
    fmt: str = typer.Option("text", "--format", "-f", help="text or json."),
    fail_on: str = typer.Option("error", "--fail-on", help="Lowest severity that makes the exit code 1: error, warning, info or never."),
    select: List[str] = typer.Option([], "--select", help="Only rules whose id starts with this (repeatable)."),
    ignore: List[str] = typer.Option([], "--ignore", help="Skip rules whose id starts with this (repeatable)."),
    exclude: List[str] = typer.Option([], "--exclude", help="gitignore-style pattern of paths to skip (repeatable)."),
    jobs: int = typer.Option(0, "--jobs", "-j", help="Worker processes (0 = one per CPU)."),
    statistics: bool = typer.Option(False, "--statistics", help="Also print counts per category."),
) -> None:
    """Report migration blockers in PATHS."""
    from .api import ScanOptions, scan_paths
    from .catalogue import RuleError
    from .findings import Severity
    from .reporters import REPORTERS

    _check_target(target)
    if fmt not in REPORTERS:
        raise _fail(f"--format: '{fmt}' is not one of {', '.join(REPORTERS)}")
    if fail_on not in ("error", "warning", "info", "never"):
        raise _fail(f"--fail-on: '{fail_on}' is not one of error, warning, info, never")
    options = ScanOptions(target=target, select=tuple(select), ignore=tuple(ignore), exclude=tuple(exclude),
                          jobs=jobs or (os.cpu_count() or 1))
    try:
        report = scan_paths(paths, options)
    except (FileNotFoundError, RuleError) as exc:
        raise _fail(str(exc)) from None
    stats = {"files": report.files, "lines": report.lines, "seconds": report.seconds, "statistics": statistics}
    sys.stdout.write(REPORTERS[fmt](report.findings, stats))
    if fail_on != "never" and report.count_at_or_above(Severity(fail_on)):
        raise typer.Exit(1)


@app.command()
def fix(
    paths: List[Path] = typer.Argument(..., help="Files or folders to fix."),
    target: str = typer.Option("portable", "--target", "-t", help=TARGET_HELP),
    write: bool = typer.Option(False, "--write", help="Write the changes (default: print a unified diff)."),
    unsafe_fixes: bool = typer.Option(False, "--unsafe-fixes", help="Also apply fixes that may change numerics or behaviour."),
    exclude: List[str] = typer.Option([], "--exclude", help="gitignore-style pattern of paths to skip (repeatable)."),
) -> None:
    """Rewrite what can be rewritten safely; print a diff unless --write."""
    from .api import ScanOptions, fix_paths

    _check_target(target)
    try:
        results = fix_paths(paths, ScanOptions(target=target, exclude=tuple(exclude)), unsafe=unsafe_fixes, write=write)
    except FileNotFoundError as exc:
        raise _fail(str(exc)) from None
    applied = manual = failed = 0
    pending = False
    for result in results:
        if result.outcome.changed and not write:
            sys.stdout.write(result.diff)
            pending = True
        applied += len(result.outcome.applied)
        manual += len(result.outcome.manual)
        if result.error:
            failed += 1
            typer.echo(f"{result.path}: not changed: {result.error}", err=True)
    if manual:
        typer.echo("Left for a person:", err=True)
        for result in results:
            for finding, reason in result.outcome.manual:
                typer.echo(f"  {finding.path}:{finding.span.line}:{finding.span.column} {finding.rule_id} {finding.message} [{reason}]", err=True)
    verb = "fixed" if write else "fixable"
    typer.echo(f"{applied} {verb}, {manual} left for a person, {failed} failed.", err=True)
    if failed:
        raise typer.Exit(2)
    if pending:
        raise typer.Exit(1)


@app.command()
def rules(rule_id: Optional[str] = typer.Argument(None, help="Show one rule in full.")) -> None:
    """List the rule catalogue, or explain one rule."""
    from .catalogue import RuleError, TARGETS as ALL, load_catalogue

    try:
        catalogue = load_catalogue()
    except RuleError as exc:
        raise _fail(str(exc)) from None
    if rule_id is None:
        typer.echo(f"{'id':7} {'name':28} {'category':13} {'portable':8} {'neuron':8} {'xla':8} fix")
        for r in catalogue.rules:
            sev = [(r.severity_for(t).value if r.severity_for(t) else "off") for t in ALL[:3]]
            typer.echo(f"{r.id:7} {r.name:28} {r.category:13} {sev[0]:8} {sev[1]:8} {sev[2]:8} {'yes' if r.fix else '-'}")
        return
    try:
        r = catalogue.by_id(rule_id)
    except KeyError:
        raise _fail(f"rule '{rule_id}' does not exist; see `neuron-migrator rules`") from None
    typer.echo(f"{r.id} {r.name}: {r.summary}\n")
    typer.echo(f"What it does\n  {r.docs['what'].strip()}\n\nWhy is this bad?\n  {r.docs['why'].strip()}\n")
    bad = r.examples["bad"][0]
    typer.echo("Example\n" + "".join(f"  {line}\n" for line in bad["code"].splitlines()))
    if "fixed" in bad:
        typer.echo(f"Fixed (target {bad.get('target', 'portable')})\n" + "".join(f"  {line}\n" for line in bad["fixed"].splitlines()))
    if r.fix:
        typer.echo(f"Fix safety\n  {r.fix['safety']}: {r.docs.get('fix_safety', 'keeps behaviour on the GPU').strip()}\n")
    typer.echo("References\n" + "".join(f"  {u}\n" for u in r.docs["references"]))


@app.command()
def instances(fmt: str = typer.Option("text", "--format", "-f", help="text or json.")) -> None:
    """Print the instance catalog (each fact with its source and confidence)."""
    from .deploy import load_instances

    catalog = load_instances()
    if fmt == "json":
        typer.echo(json.dumps(catalog, indent=2, sort_keys=True))
        return
    if fmt != "text":
        raise _fail(f"--format: '{fmt}' is not one of text, json")
    typer.echo(f"{'type':16} {'chips':>5} {'cores':>5} {'accel GiB':>9} {'vCPU':>5} {'mem GiB':>7} {'cards':>5} {'EFA':>4}  targets      confidence")
    for name, i in catalog.items():
        typer.echo(f"{name:16} {i['chips']:>5} {i['neuron_cores']:>5} {i['accelerator_memory_gib']:>9} {i['vcpus']:>5} {i['memory_gib']:>7} "
                   f"{i['network_cards']:>5} {i['efa_interfaces']:>4}  {','.join(i['targets']):12} {i['confidence']}")


@generate_app.command("launch-template")
def launch_template(
    instance_type: str = typer.Option(..., "--instance-type", help="e.g. trn2.48xlarge (see `neuron-migrator instances`)."),
    region: str = typer.Option(..., "--region", help="AWS region, e.g. us-east-2."),
    output: Path = typer.Option(..., "--output", "-o", help="Folder to write into (created)."),
    fmt: str = typer.Option("json", "--format", help="json (boto3 payloads) or cloudformation."),
    name: str = typer.Option("neuron", "--name", help="Prefix of resource names and the Name tag."),
    target: Optional[str] = typer.Option(None, "--target", help="neuron, xla or inf1 (default: the hardware's)."),
    efa: Optional[bool] = typer.Option(None, "--efa/--no-efa", help="EFA on every network card (default: when the type has EFA)."),
    subnet_id: List[str] = typer.Option([], "--subnet-id", help="Subnet for the interfaces."),
    security_group_id: List[str] = typer.Option([], "--security-group-id", help="Extra security groups for the interfaces."),
    root_volume_gib: int = typer.Option(512, "--root-volume-gib", help="Root gp3 volume size in GiB (>= 512 on Trn)."),
    ami_ssm_parameter: Optional[str] = typer.Option(None, "--ami-ssm-parameter", help="SSM parameter path of the AMI."),
    ami_id: Optional[str] = typer.Option(None, "--ami-id", help="A pinned AMI id instead of an SSM parameter."),
    tag: List[str] = typer.Option([], "--tag", help="KEY=VALUE tag (repeatable)."),
) -> None:
    """EC2 launch template with EFA, placement group, EFA security group, IMDSv2 and an encrypted root."""
    from .deploy import LaunchSpec, SpecError, generate_launch_template

    tags = []
    for item in tag:
        if "=" not in item:
            raise _fail(f"--tag: '{item}' is not KEY=VALUE")
        key, _, value = item.partition("=")
        tags.append((key, value))
    spec = LaunchSpec(
        instance_type=instance_type, region=region, name=name, target=target, efa=efa,
        subnet_ids=tuple(subnet_id), security_group_ids=tuple(security_group_id), root_volume_gib=root_volume_gib,
        ami_ssm_parameter=ami_ssm_parameter, ami_id=ami_id, tags=tuple(tags),
    )
    try:
        result = generate_launch_template(spec, output, fmt)
    except SpecError as exc:
        raise _fail(str(exc)) from None
    except ValueError as exc:
        raise _fail(str(exc)) from None
    for path in result.files:
        typer.echo(f"wrote {path}")
    for note in result.notes:
        typer.echo(f"note: {note}", err=True)


def main() -> None:
    """Console-script entry point; usage errors exit 2 (click's convention)."""
    app()
