"""Every rule's embedded good/bad examples, collected automatically (no per-rule test code)."""

import pytest

from migrator.core.catalogue import load_catalogue
from migrator.api import check_example
from migrator.testing import collect_examples

CASES = list(collect_examples(load_catalogue()))


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_rule_example(case):
    assert check_example(case) == []
