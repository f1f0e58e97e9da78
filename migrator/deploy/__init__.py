"""Deployment configs for Trainium/Inferentia: spec -> plan -> render (jinja2) -> check -> write."""

from migrator.deploy.generate import generate_launch_template
from migrator.deploy.launch_template import GenerateResult, LaunchSpec, SpecError, load_instances

__all__ = ["GenerateResult", "LaunchSpec", "SpecError", "generate_launch_template", "load_instances"]
