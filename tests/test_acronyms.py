"""mdfts.acronyms: the acronyms a text defines, either way round, and what is no definition."""

from __future__ import annotations

import json

import pytest

from mdfts.acronyms import defined, defined_json


@pytest.mark.parametrize(("text", "pairs"), [
    ("Each virtual machine (VM) runs in a pod.", [("VM", "virtual machine")]),
    ("**Object Storage Daemons** (OSDs) store the data.", [("OSD", "object storage daemon")]),
    ("The HPA (Horizontal Pod Autoscaler) scales it.", [("HPA", "horizontal pod autoscaler")]),
    ("The HPA\t(Horizontal Pod Autoscaler) scales it.", [("HPA", "horizontal pod autoscaler")]),
    ("Claim a [Persistent Volume Claim](https://example.org/pvc) (PVC) first.", [("PVC", "persistent volume claim")]),
    ("PersistentVolumeClaims (PVCs) bind volumes.", [("PVC", "persistentvolumeclaim")]),
    ("Set the Quality of Service (QoS) class.", [("QoS", "quality of service")]),
    ("Ask the Department for Work and Pensions (DWP).", [("DWP", "department for work and pension")]),
    ("Turn on multi-factor authentication (MFA).", [("MFA", "multi-factor authentication")]),
    ("Watch the CMO (cluster-monitoring-operator) pod.", [("CMO", "cluster-monitoring-operator")]),
    ("Both the Glaze Drip Tray (GDT) and the Pyrometric Cone Sensor (PCS).",
     [("GDT", "glaze drip tray"), ("PCS", "pyrometric cone sensor")]),
], ids=["long-then-short", "plural-bold", "short-then-long", "short-tab-long", "link-text", "camelcase", "small-word-kept",
        "small-words-skipped", "hyphenated", "one-hyphenated-word", "two"])
def test_a_definition_gives_the_acronym_and_its_long_form(text: str, pairs: list[tuple[str, str]]) -> None:
    assert defined(text) == pairs


@pytest.mark.parametrize("text", [
    "See the notes (README) and run it (OK).",        # no words before spell it
    "Restart the VM (see below).",                    # the bracket is no long form
    "Restart vm.VM (virtual machine) by hand.",       # the acronym is part of a longer word
    "The virtual machine\n(VM) is new.",              # no line break inside: a bracket of its own line
    "Call it the (VM).",                              # the words before spell nothing
    "Read the Virtual Machine Manual (VM).",          # the fewest words that spell VM are not there
], ids=["words-before-spell-nothing", "not-words", "part-of-a-word", "line-break", "nothing-before",
        "extra-word"])
def test_what_is_no_definition(text: str) -> None:
    assert defined(text) == []


def test_defined_json_is_null_without_a_definition() -> None:
    assert defined_json(None) is None
    assert defined_json("Plain prose (with brackets).") is None
    assert json.loads(defined_json("A virtual machine (VM).") or "") == [["VM", "virtual machine"]]


def test_only_the_first_thousand_brackets_are_read() -> None:
    """A document of a million brackets must not hold the build up: a definition comes early."""
    assert defined("See (it) here. " * 999 + "A virtual machine (VM).") == [("VM", "virtual machine")]
    assert defined("See (it) here. " * 1000 + "A virtual machine (VM).") == []
