"""`--format junit`: one test suite, one test case per file, one failure per finding."""

from __future__ import annotations

import re
from itertools import groupby
from typing import Any, Sequence
from xml.etree import ElementTree as ET

from migrator.core.findings import Finding

# XML 1.0 allows no other control characters, not even escaped: they become visible escapes.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml(text: str) -> str:
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}", text)


def render_junit(findings: Sequence[Finding], stats: dict[str, Any] | None = None) -> str:
    suite = ET.Element("testsuite", name="neuron-migrator", tests=str(len({f.path for f in findings}) or 1),
                       failures=str(len(findings)), errors="0")
    if not findings:
        ET.SubElement(suite, "testcase", name="neuron-migrator", classname="neuron-migrator")
    for path, group in groupby(findings, key=lambda f: f.path):
        case = ET.SubElement(suite, "testcase", name=_xml(path), classname="neuron-migrator")
        for f in group:
            failure = ET.SubElement(case, "failure", type=f.rule_id, message=_xml(f"{f.rule_id} {f.message}"))
            failure.text = _xml(f"{f.location} {f.rule_id} {f.message} ({f.severity.value})")
    suites = ET.Element("testsuites")
    suites.append(suite)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"
