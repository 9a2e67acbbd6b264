"""Ranking v2 (queries/search.sql): one small corpus per mechanism, in a vocabulary of its own.

Six of the seven cases fail on the ranking before v2 (the expected first hit came second; the
verb case did not fail there, see /work/notes/issue-10.md); `CASES` is plain data so the same
cases can be run against another checkout's search.sql.
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

import mdfts
from mdfts.cli import cli
from mdfts.index import connect
from mdfts.queries import get_query, run_query

# A troubleshooting page whose Investigation, not its Symptoms, holds what a question describes.
INVESTIGATION_PAGE = {
    "guides/kiln-problems.md": (
        "# Kiln problems\n\n## Firing runs long\n\n### Symptoms\n\nA glaze firing takes hours longer than "
        "the schedule says.\n\n### Investigation\n\nRead the controller log: the zone two thermocouple "
        "reads low and the relay clicks every few seconds while the element stays cold.\n\n"
        "### Solution\n\nReplace the zone two relay, then fire an empty load to check it.\n"),
    "guides/glazes.md": "# Glazes\n\n## Mixing\n\nSieve every glaze twice before a firing.\n",
    **{f"notes/n{i}.md": f"# Note {i}\n\n## Clay\n\nClay for bench {i} is wrapped in plastic.\n" for i in range(4)},
}

# name → (files, query, expected first hit as (path, heading); heading None: any section of it)
def tool_page(name: str, summary: str, step: str, command: str) -> str:
    """A tldr-style page: the tool's name as its title, a one-line summary, one example."""
    return f"# {name}\n\n> {summary}\n\n- {step}:\n\n`{command}`\n"


# Four one-line tool pages, so that the words of the pages a case is about are rare ones.
FILLER_TOOLS = {f"pages/tool{i}.md": f"# tool{i}\n\n> Wedge clay on bench {i}.\n\n`tool{i} wedge`\n" for i in range(4)}

# Two tool pages that between them hold the task words of the with/using cases below, each
# only some of them, so the tool the question names after "using" or "with" is what decides.
DAMPER_TASK_PAGES = {
    "pages/bricks.md": "# bricks\n\n> Fold the damper shim flush.\n\n`bricks lay`\n",
    "pages/ports.md": "# ports\n\n> Mind the spyhole plug, the bung and the lintel.\n\n`ports check`\n",
}

KILN_VENT_PAGE = {
    "alerts/KilnVentStuck.md": (
        "# KilnVentStuck\n\n## Meaning\n\nThe kiln vent motor has not moved for ten minutes while the kiln "
        "is firing.\n\n## Impact\n\nFumes stay in the kiln room and the glaze on the top shelf can blister."
        "\n\n## Diagnosis\n\nLook at the vent motor's status light on the panel to see which relay is stuck."
        "\n\n## Mitigation\n\nOpen the vent by hand and replace the stuck motor relay after the firing.\n"),
}

CASES: dict[str, tuple[dict[str, str], str, tuple[str, str | None]]] = {
    # CamelCase siblings sharing a prefix: the name's parts name its own page, not a sibling.
    "camelcase-siblings": (
        {
            "alerts/LanternQueueStalled.md": (
                "# LanternQueueStalled\n\n## Meaning\n\nNo item has left the lantern queue for ten "
                "minutes.\n\n## Mitigation\n\nRestart the wick scheduler, then drain it by hand.\n"),
            "alerts/LanternQueueLatency.md": (
                "# LanternQueueLatency\n\n## Meaning\n\nLantern queue items wait longer than a minute; "
                "the queue is slow, not stalled (a stalled lantern queue is another alert).\n\n"
                "## Mitigation\n\nAdd wick workers.\n"),
        },
        "lantern queue stalled",
        ("alerts/LanternQueueStalled.md", None),
    ),
    # `tool` vs `tool-sub`: the page the query names in full wins over the one it half names.
    "tool-vs-tool-sub": (
        {
            "cli/kilnctl.md": (
                "# kilnctl\n\nkilnctl drives the kiln: kilnctl fire, kilnctl cool, kilnctl vent.\n\n"
                "## Options\n\nOptions every subcommand takes, fire included: `--kiln` which kiln, "
                "`--fire-log` where fire logs go, `--fire-rate` how fast a fire ramps, `--fire-id` "
                "which fire to follow.\n"),
            "cli/kilnctl-fire.md": (
                "# kilnctl fire\n\nStart a firing.\n\n## Options\n\n`--cone` the target cone, as the "
                "chart on the kiln door gives it; `--hold` the minutes to stay at peak temperature "
                "before the controller starts to cool down, zero by default; `--ramp` degrees an hour "
                "on the way up; `--delay` minutes to wait before the elements switch on.\n"),
        },
        "kilnctl fire options",
        ("cli/kilnctl-fire.md", "Options"),
    ),
    # A tool's own page among its many subcommand pages: "<tool> basics" names tool.md in full,
    # though the shorter tool-sub.md pages, each holding the tool's name as often, fill bm25's pools.
    "tool-page-among-its-subcommands": (
        {
            **{f"pages/kilnctl-{sub}.md": (
                f"# kilnctl {sub}\n\n> Run the {sub} step of a kiln.\n> More information: "
                f"<https://kiln.example/kilnctl/kilnctl-{sub}.html>.\n\n- Run it:\n\n`kilnctl {sub}`\n")
               for sub in ("fire list start stop vent cool drain load unload pause resume status logs config "
                           "version help login logout update upgrade install remove backup restore export "
                           "import check test clean shelf").split()},
            "pages/kilnctl.md": (
                "# kilnctl\n\n> Control kilns from the shell.\n> Some subcommands such as `fire` have their "
                "own usage documentation.\n> More information: <https://kiln.example/kilnctl>.\n\n"
                "- Fire a kiln:\n\n`kilnctl fire {{kiln_name}}`\n\n- List the kilns:\n\n`kilnctl list`\n"),
            **FILLER_TOOLS,
        },
        "kilnctl basics",
        ("pages/kilnctl.md", None),
    ),
    # The tool after "using" stays a key term though it is the commonest word of a long
    # question (past the eighth term, the commonest go while they weigh little): it names the
    # page ("using kilnctl vent" names kilnctl-vent.md in full).
    "tool-after-using-stays-a-key-term": (
        {
            **{f"pages/kilnctl-{sub}.md": (
                f"# kilnctl {sub}\n\n> {sub.capitalize()} a kiln from the shell.\n\n- {sub.capitalize()} "
                f"the kiln:\n\n`kilnctl {sub} {{{{kiln_name}}}}`\n")
               for sub in "fire list start stop vent cool drain load unload pause resume status".split()},
            **DAMPER_TASK_PAGES,
            **FILLER_TOOLS,
        },
        "fold each damper shim flush at the spyhole plug, bung and lintel, using kilnctl vent",
        ("pages/kilnctl-vent.md", None),
    ),
    # So does the second word after "with", a tool's name of two words, though its second word
    # is the commonest of the question ("logs" on a dozen pages).
    "two-word-tool-after-with-stays": (
        {
            **{f"pages/logger{i}.md": f"# logger{i}\n\n> Keep the logs of bench {i} and read the logs.\n\n`logger{i} logs`\n"
               for i in range(12)},
            "pages/kilnctl-logs.md": "# kilnctl logs\n\n> Show the logs of a kiln.\n\n`kilnctl logs {{kiln_name}}`\n",
            "pages/kilnctl-vent.md": "# kilnctl vent\n\n> Vent a kiln from the shell.\n\n`kilnctl vent {{kiln_name}}`\n",
            **DAMPER_TASK_PAGES,
        },
        "with kilnctl logs, how do I fold each damper shim flush at the spyhole plug, bung and lintel?",
        ("pages/kilnctl-logs.md", None),
    ),
    # index.md takes its folder's name; the extension names nothing.
    "index-md-folder": (
        {
            "guides/glazing/index.md": "# Overview\n\nHow we mix, test and apply every batch.\n",
            "guides/firing/index.md": "# Overview\n\nHow the schedule runs from load to unload.\n",
            "guides/overview.md": "# Overview\n\nWhat the guides cover, and glazing in one line.\n",
        },
        "glazing overview",
        ("guides/glazing/index.md", "Overview"),
    ),
    # A title-only h1 with children does not win on being short.
    "empty-h1-with-children": (
        {
            "notes/clay.md": (
                "# Clay storage\n\n## Bins\n\nClay storage bins stay sealed; clay storage shelves hold "
                "the bins off the floor.\n\n## Labels\n\nEach bin carries the date it was wedged.\n"),
            "notes/tools.md": "# Tools\n\nWire cutters and ribs live by the sink.\n",
        },
        "clay storage",
        ("notes/clay.md", "Bins"),
    ),
    # An ordinary verb that is a CLI token somewhere earns no full exact-token point.
    "verb-that-is-a-token": (
        {
            "cli/commands.md": (
                "# Commands\n\n| command | what |\n|---|---|\n| `install` | installs a plugin into the "
                "kiln |\n| `remove` | removes one |\n"),
            "setup/wall.md": (
                "# Wall mounting\n\n## Steps\n\nTo install the kiln controller, drill two holes, hang "
                "the bracket, then wire the thermocouple and check the door switch.\n"),
        },
        "install kiln controller",
        ("setup/wall.md", "Steps"),
    ),
    # Coordination: the section holding all four terms beats a short one holding three.
    "four-terms-beat-three": (
        {
            **{f"notes/tile-{i}.md": f"# Tile {i}\n\nTile {i} came out cracked.\n" for i in range(3)},
            # (common, not in most sections: a word in most of them is the corpus's own, see
            # corpus-wide-word)
            **{f"notes/tile-{i}.md": f"# Tile {i}\n\nTile {i} came out glossy.\n" for i in range(3, 6)},
            "notes/glaze.md": (
                "# Glaze\n\n## Notes\n\nGlaze bucket lid.\n\n## Storage faults\n\n"
                "When a glaze bucket sits in the sun for a week or two its lid warps and ends up cracked, "
                "and a cracked lid lets the water evaporate, so the glaze thickens and settles; move the "
                "bucket to the north shelf, stir it back with a drill paddle and order a new lid.\n"),
        },
        "glaze bucket lid cracked",
        ("notes/glaze.md", "Storage faults"),
    ),
    # "how do I fix X" asks for the Mitigation, not for the section that says most about X.
    "fix-asks-for-mitigation": (
        {
            "alerts/KilnOverheat.md": (
                "# KilnOverheat\n\n## Meaning\n\nKiln overheat: the kiln is above its setpoint. An overheat "
                "of the kiln shortens element life; a kiln that overheats twice a week needs a new relay.\n\n"
                "## Mitigation\n\nOpen the vent, lower the setpoint by 20 degrees and watch the kiln.\n"),
        },
        "how do I fix kiln overheat",
        ("alerts/KilnOverheat.md", "Mitigation"),
    ),
    # The steps under a role's heading are of that role: "Mitigation" over "Patch the shelf"
    # makes its child the fix asked for, though the Diagnosis says more about the crack.
    "role-of-the-parent-heading": (
        {
            "alerts/KilnShelfCracked.md": (
                "# KilnShelfCracked\n\n## Meaning\n\nA kiln shelf has a crack.\n\n## Diagnosis\n\nTap each "
                "shelf: a cracked one rings dull.\n\n## Mitigation\n\nWork through the steps below in order, "
                "and keep a note of each one in the studio log, with the date and the firing number, so that "
                "the next person who loads the kiln knows what was done to it and why, and can stop at once "
                "if the repair has not held.\n\n### Steps\n\nGrind the cracked edges of the kiln shelf flat, "
                "fill them with wash and fire it empty once.\n"),
        },
        "how do I fix a cracked kiln shelf",
        ("alerts/KilnShelfCracked.md", "Steps"),
    ),
    # "how do I troubleshoot it?" asks how to find out what is wrong: the Diagnosis, not the
    # Mitigation that "how do I" alone would pick.
    "troubleshoot-asks-for-diagnosis": (
        {
            "alerts/KilnZoneCold.md": (
                "# KilnZoneCold\n\n## Meaning\n\nOne zone of the kiln stays more than fifty degrees below "
                "the set point during a firing.\n\n## Impact\n\nThe glaze in that zone does not mature and "
                "the pots come out dry and rough.\n\n## Diagnosis\n\nRead each zone thermocouple on the "
                "panel and compare it with a handheld probe.\n\n## Mitigation\n\nReplace the zone element "
                "and fire an empty load.\n"),
        },
        "one kiln zone stays below the set point, how do I troubleshoot it?",
        ("alerts/KilnZoneCold.md", "Diagnosis"),
    ),
    # "what can go wrong" and "how serious is it" ask what a problem does: the Impact, not the
    # Meaning that restates the problem.
    "go-wrong-asks-for-impact": (
        KILN_VENT_PAGE,
        "the kiln vent motor has not moved during a firing, what can go wrong?",
        ("alerts/KilnVentStuck.md", "Impact"),
    ),
    "how-serious-asks-for-impact": (
        KILN_VENT_PAGE,
        "the kiln vent motor has not moved during a firing, how serious is it?",
        ("alerts/KilnVentStuck.md", "Impact"),
    ),
    # "what problems can it cause" and "is it a problem if" ask what a problem does: the Impact.
    "what-problems-asks-for-impact": (
        KILN_VENT_PAGE,
        "what problems can a stuck kiln vent motor cause during a firing?",
        ("alerts/KilnVentStuck.md", "Impact"),
    ),
    "problem-if-asks-for-impact": (
        KILN_VENT_PAGE,
        "is it a problem if the kiln vent motor has not moved during a firing?",
        ("alerts/KilnVentStuck.md", "Impact"),
    ),
    # "how bad is it" and "how risky" ask what a problem does: the Impact.
    "how-bad-asks-for-impact": (
        KILN_VENT_PAGE,
        "the kiln vent motor relay is stuck, how bad is it?",
        ("alerts/KilnVentStuck.md", "Impact"),
    ),
    "how-risky-asks-for-impact": (
        KILN_VENT_PAGE,
        "how risky is a stuck vent relay?",
        ("alerts/KilnVentStuck.md", "Impact"),
    ),
    # "how long can X ... before the alert" asks for the alert's condition: the Meaning.
    "how-long-asks-for-meaning": (
        KILN_VENT_PAGE,
        "how long can the vent relay be stuck before the alert?",
        ("alerts/KilnVentStuck.md", "Meaning"),
    ),
    # "what's the point of X" and "when does X go off" ask what an alert is and when it fires:
    # the Meaning, not the Mitigation and Diagnosis that name the relay.
    "point-of-asks-for-meaning": (
        KILN_VENT_PAGE,
        "what's the point of the kiln vent relay alert?",
        ("alerts/KilnVentStuck.md", "Meaning"),
    ),
    "go-off-asks-for-meaning": (
        KILN_VENT_PAGE,
        "when does the stuck vent relay alert go off?",
        ("alerts/KilnVentStuck.md", "Meaning"),
    ),
    # So do "fire when", "for X to fire", "before the alert fires": the alert's condition. The
    # second names "to" twice: a cue of two words is two neighbouring words as written, not only
    # each word's first place in the query.
    "fire-when-asks-for-meaning": (
        KILN_VENT_PAGE,
        "can KilnVentStuck fire when the vent relay is open?",
        ("alerts/KilnVentStuck.md", "Meaning"),
    ),
    "to-fire-asks-for-meaning": (
        KILN_VENT_PAGE,
        "which relay has to be stuck for KilnVentStuck to fire?",
        ("alerts/KilnVentStuck.md", "Meaning"),
    ),
    # "find out whether", "track down", inspect ask how to check: the Diagnosis, not the Mitigation that
    # "how do I" alone would pick.
    "find-out-asks-for-diagnosis": (
        KILN_VENT_PAGE,
        "how do I find out whether the kiln vent motor relay is stuck",
        ("alerts/KilnVentStuck.md", "Diagnosis"),
    ),
    "track-down-asks-for-diagnosis": (
        KILN_VENT_PAGE,
        "how do I track down the stuck kiln vent relay?",
        ("alerts/KilnVentStuck.md", "Diagnosis"),
    ),
    "inspect-asks-for-diagnosis": (
        KILN_VENT_PAGE,
        "the kiln vent motor relay is stuck, what should I inspect?",
        ("alerts/KilnVentStuck.md", "Diagnosis"),
    ),
    # A query that describes a problem matches the Symptoms section, which restates it; the
    # answer is the Solution beside it.
    "symptoms-then-solution": (
        {
            "guides/kiln-problems.md": (
                "# Kiln problems\n\n## Kiln stalls below peak\n\n### Symptoms\n\nThe kiln stalls "
                "below peak temperature halfway through a glaze firing and the controller shows a flat "
                "line.\n\n### Solution\n\nReplace the worn element relay and fire an empty load.\n"),
            "guides/glazes.md": "# Glazes\n\n## Mixing\n\nSieve every glaze twice before a firing.\n",
        },
        "kiln stalls halfway through a glaze firing",
        ("guides/kiln-problems.md", "Solution"),
    ),
    # The same when the description matches the page's Investigation (the log and status it
    # shows) rather than its Symptoms: the question asks for the fix.
    "investigation-then-solution": (
        INVESTIGATION_PAGE,
        "the relay keeps clicking and the zone two thermocouple reads low",
        ("guides/kiln-problems.md", "Solution"),
    ),
    # A kebab-case flag of three parts is an identifier: the one section that holds it beats
    # the "Feature flags" sections that hold only the query's common words.
    "kebab-flag-beside-common-words": (
        {
            "kilns/north.md": (
                "# North kiln\n\n## Feature flags\n\nThe north kiln reads `vent-delay` and `door-lock` "
                "at start.\n\n## Firing\n\nFire the north kiln at night.\n"),
            "kilns/south.md": (
                "# South kiln\n\n## Feature flags\n\nThe south kiln reads `door-lock` only.\n\n"
                "## Firing\n\nFire the south kiln by day.\n"),
            "kilns/east.md": "# East kiln\n\n## Feature flags\n\nThe east kiln has no flags of its own.\n",
            "glaze/drip.md": (
                "# Drip guard\n\n## Turning it on\n\nSet `glaze-drip-guard` to true and the shelf tray "
                "catches runs before they reach the kiln floor.\n"),
        },
        "enable the glaze-drip-guard flag",
        ("glaze/drip.md", "Turning it on"),
    ),
    # A page title with a line of its own (up to 120 characters) over its sections is still a
    # title: the section below that answers wins.
    "title-with-one-line-intro": (
        {
            "notes/clay.md": (
                "# Clay storage\n\nWhere the clay lives between orders.\n\n## Bins\n\nClay storage bins "
                "stay sealed; clay storage shelves hold the bins off the floor.\n\n## Labels\n\nEach bin "
                "carries the date it was wedged.\n"),
            "notes/tools.md": "# Tools\n\nWire cutters and ribs live by the sink.\n",
        },
        "clay storage",
        ("notes/clay.md", "Bins"),
    ),
    # A word most sections hold (the product's own name) is no missing term: the section that
    # answers without naming the product beats one that names it but answers vaguely.
    "corpus-wide-word": (
        {
            "guide/install.md": (
                "# Install\n\nKilnware installs on the kiln controller.\n\n## Upgrade\n\n"
                "Kilnware upgrades itself at night.\n"),
            "guide/logs.md": (
                "# Logs\n\nKilnware writes a log per firing.\n\n## Rotation\n\nKilnware rotates logs weekly.\n"),
            "guide/alarms.md": "# Alarms\n\nKilnware raises an alarm when the kiln overheats.\n",
            "guide/support.md": (
                "# Support matrix\n\n## Supported cones\n\nThe cones of the bisque and glaze firings: "
                "Kilnware supports them all.\n\n## Glaze cones\n\nSupported glaze cones: 06 to 10, at any ramp; "
                "a glaze fired past cone 10 runs off the pot.\n"),
        },
        "which glaze cones does kilnware support?",
        ("guide/support.md", "Glaze cones"),
    ),
    # A folder's name that most sections hold only in their path is no corpus-wide word: a
    # section outside the folder that lacks it has missed a term (else it outranks the one
    # in the folder the query names, as if the folder's name were the product's).
    "folder-word-is-not-corpus-wide": (
        {
            **{f"glaze/{n}.md": f"# {n.title()}\n\nA {n} recipe and its firing range.\n"
               for n in ("celadon", "shino", "tenmoku", "ash")},
            "glaze/defects.md": (
                "# Defects\n\n## Crawling\n\nBare patches where the coat pulls back from the pot; "
                "wipe dust off the bisque first.\n"),
            "clay/handling.md": "# Handling\n\n## Crawling\n\nCrawling slip: crawling shows as bare patches.\n",
            "clay/wedging.md": "# Wedging\n\nWedge the clay before throwing.\n",
        },
        "glaze crawling",
        ("glaze/defects.md", "Crawling"),
    ),
    # A heading's last word and the first word below it are no neighbouring pair (the text
    # column starts with the heading line): "Firing to cone" over "Pack shelves ..." does not
    # hold "cone pack"; the section about making a cone pack wins.
    "pair-across-heading-line": (
        {
            "firing.md": "# Firing\n\n## Firing to cone\n\nPack shelves loosely so heat moves.\n",
            "witness.md": (
                "# Witness cones\n\n## Making a pack\n\nPress three cones into a pad of clay and set one "
                "pack on each shelf, in sight of the spy hole, where you can watch the cones bend as the "
                "kiln nears its top temperature.\n"),
            "glazing.md": "# Glazing\n\nDip the pot for three seconds.\n",
        },
        "cone pack",
        ("witness.md", "Making a pack"),
    ),
    # A singular finds the synonyms of its plural (the table lists "checks" with checklist and
    # preflight; porter makes check and checks one word): "check" names "Firing checklist".
    "singular-finds-plurals-synonyms": (
        {
            "kiln.md": (
                "# Kiln\n\n## Firing checklist\n\nLoad the witness cones, close the lid and set the ramp.\n\n"
                "## Unloading\n\nWait until the kiln is below 50 C, then check each pot for cracks before "
                "you lift it out after the firing.\n"),
            "glazes.md": "# Glazes\n\nStir each glaze bucket before dipping.\n",
        },
        "what should I check before firing?",
        ("kiln.md", "Firing checklist"),
    ),
    # A short lead-in over children ("## Element failure: when an element burns out ...") tells
    # what its children solve, so it shares the question's words; the question, which does not
    # name its heading, asks for the child that answers.
    "short-lead-in-over-children": (
        {
            "repairs.md": (
                "# Kiln repairs\n\nWhat to do when the kiln misbehaves, from tripped breakers to cracked "
                "lids and worn parts.\n\n## Element failure\n\nWhen an element burns out the kiln stops "
                "heating in the middle of a firing.\n\n### Replacing the element\n\nUnplug the kiln, swap "
                "the coil and crimp it to the terminals: the kiln starts heating again.\n\n### Testing the "
                "relay\n\nMeasure the relay with a meter before you blame the coil.\n\n## Lid cracks\n\n"
                "Fill hairline cracks with kiln cement.\n"),
            "firing.md": "# Firing\n\nLoad the kiln, set the ramp and start the firing.\n",
        },
        "kiln element dead and not heating, what do I do?",
        ("repairs.md", "Replacing the element"),
    ),
    # A stop word in a file name counts as named when the query writes it: "kilnctl about ..."
    # names all of kilnctl-about.md, not half of it (else kilnctl-firmware.md, whose name the
    # query's content words fill, wins).
    "stop-word-in-file-name": (
        {
            "cli/kilnctl.md": (
                "# kilnctl\n\n> Drive the kiln controller.\n\n- Show the controller's firmware version:\n\n"
                "`kilnctl firmware --version`\n"),
            "cli/kilnctl-about.md": (
                "# kilnctl about\n\n> Print details about the kiln controller firmware.\n\n"
                "- Print the details:\n\n`kilnctl about`\n"),
            "cli/kilnctl-firmware.md": (
                "# kilnctl firmware\n\n> Manage kiln controller firmware: print its details, flash images.\n\n"
                "- Print the firmware details:\n\n`kilnctl firmware show`\n\n- Flash a firmware image:\n\n"
                "`kilnctl firmware flash image.bin`\n"),
        },
        "kilnctl about print details about the kiln controller firmware",
        ("cli/kilnctl-about.md", None),
    ),
    # Two forms of one word ("files", "file") name a one-word file name once, not twice over:
    # the share of the file name the query names is at most all of it.
    "two-forms-name-a-file-once": (
        {
            "cli/file.md": (
                "# file\n\n> Determine the type of a file.\n\n- List the types of all files in a folder:\n\n"
                "`file path/to/folder/*`\n\n- Look inside an archive:\n\n`file -z path/to/archive`\n"),
            "cli/glazeinfo.md": (
                "# glazeinfo\n\n> List what a glaze archive holds.\n\n- List all files in a glaze archive:\n\n"
                "`glazeinfo path/to/archive.glz`\n"),
        },
        "list all files in a glaze archive file",
        ("cli/glazeinfo.md", None),
    ),
    # Words the query puts together, found together: "wet clay keeps ... a sealed bin" beats a
    # shorter section that holds the same words apart.
    "neighbouring-words": (
        {
            "studio/clay.md": (
                "# Clay\n\n## Shelf life\n\nWet clay keeps for a month in a sealed bin, less in an open "
                "one; check it weekly.\n\n## Storage\n\nStore bags sealed. Clay dries fast, so keep a "
                "mister by the bin and spray it wet.\n"),
            "studio/glaze.md": "# Glaze\n\n## Shelf life\n\nMixed glaze lasts a year.\n",
        },
        "how long does wet clay keep in a sealed bin",
        ("studio/clay.md", "Shelf life"),
    ),
    # Words no section holds ("someone", "left", "rid") tell no section from another: the one
    # holding every other word of the question beats a shorter one that leaves "stuck" out.
    "words-no-section-holds": (
        {
            "glaze/care.md": (
                "# Care\n\n## Emptying a bucket\n\nWhen a glaze bucket has slop stuck in settling at "
                "the bottom (settling that sets hard), pour off the water that stands on top, scrape "
                "the sides and the bottom with a rubber rib, and keep the scrapings in a jar for test "
                "tiles before you wash the bucket out.\n"),
            "glaze/faults.md": (
                "# Faults\n\n## Bucket settling\n\nGlaze settling in the bucket: stir the settling "
                "glaze back in.\n"),
            "glaze/mixing.md": (
                "# Mixing\n\n## Weighing\n\nWeigh each glaze into a clean bucket.\n\n## Sieving\n\n"
                "Sieve the glaze twice into a second bucket.\n\n## Resting\n\nRest the glaze bucket "
                "overnight with its lid on.\n"),
            "glaze/colour.md": (
                "# Colour\n\n## Tests\n\nDip a test tile in each glaze bucket.\n\n## Records\n\n"
                "Label every glaze bucket with its recipe.\n"),
        },
        "someone left the glaze bucket stuck settling, how do I get rid of it?",
        ("glaze/care.md", "Emptying a bucket"),
    ),
    # A compound the docs write as one word in places still names a heading that writes it
    # apart: "prerequisites" names "Pre-requisites" (the halves, each a word the index holds,
    # as a phrase in the candidates' own lookups), so the kiln's own section beats the other
    # pages' "Prerequisites", which name none of "kiln".
    "compound-names-a-heading-written-apart": (
        {
            "guides/kiln.md": (
                "# Kiln\n\n## Loading\n\nStack the kiln shelves with the tall pots at the back, once the "
                "pre-requisites below are met.\n\n## Pre-requisites\n\nWear gloves, check the sitter and "
                "the cone pack before you close the lid.\n"),
            "guides/wheel.md": "# Wheel\n\n## Prerequisites\n\nA wheel, a bat and clay wedged the day before.\n",
            "guides/glaze.md": (
                "# Glaze\n\n## Prerequisites\n\nA sieve and a scale; the prerequisites differ per batch.\n"),
        },
        "kiln prerequisites",
        ("guides/kiln.md", "Pre-requisites"),
    ),
    # Two words the docs also write as one (kilnvent, a file's name) spell the whole name of
    # the page that writes them apart: "kiln vent" names all of kiln-vent.md, as it names all
    # of shelf-kilnvent.md's compound, so the shorter page that only passes options to it loses.
    "compound-spells-a-file-name-written-apart": (
        {
            **FILLER_TOOLS,
            "pages/kiln-vent.md": (
                "# kiln vent\n\n> Manage the vent settings of a kiln. The settings can be local to one "
                "firing or global.\n\n- List the vent settings:\n\n`kiln vent --list`\n\n- Open the vent "
                "halfway:\n\n`kiln vent --open 50`\n"),
            "pages/shelf-kilnvent.md": (
                "# shelf kilnvent\n\n> Pass options to kiln vent. Change the .kilnvent of a shelf. See "
                "also: kiln vent.\n\n`shelf kilnvent --edit`\n"),
            "pages/kiln.md": "# kiln\n\n> Fire a kiln. Each kiln reads its own kilnvent file.\n\n`kiln fire`\n",
        },
        "kiln vent",
        ("pages/kiln-vent.md", "kiln vent"),
    ),
    # A compound the query writes whole and a heading writes apart is one span there: "setup"
    # names both words of "Get set up", so that heading is named as fully as "Using the kiln
    # portal", which holds more of the question's words and wins on them otherwise.
    "compound-written-apart-in-a-heading": (
        {
            **{f"notes/n{i}.md": (f"# Note {i}\n\n## Clay\n\nClay for bench {i} is set on a board; the setup "
                                  f"of bench {i} is in the shed.\n") for i in range(4)},
            "guides/kiln-portal.md": (
                "# Kiln portal\n\n## Using the kiln portal\n\nThe kiln portal lists each firing; an account "
                "holder books a firing there and sees its cone.\n\n## Get set up\n\nAsk the studio manager for "
                "an account, then sign in to the kiln portal and choose a password.\n"),
        },
        "kiln portal account setup",
        ("guides/kiln-portal.md", "Get set up"),
    ),
    # A compound heading word the query names in part counts in part: "kiln" names half of
    # "Kiln-side", so "Kiln glaze" (named in full) beats "Kiln-side glaze" (three quarters),
    # though the shorter section holds the words more densely.
    "compound-heading-named-in-part": (
        {
            **{f"notes/n{i}.md": f"# Note {i}\n\n## Clay\n\nClay for bench {i} is wedged by hand.\n" for i in range(6)},
            "kiln/a.md": "# Work\n\n## Kiln-side glaze\n\nA glaze bucket beside each kiln.\n",
            "kiln/b.md": (
                "# Stock\n\n## Kiln glaze\n\nA glaze made to fire in the kiln at cone six, mixed from the "
                "dry stock in the back room, sieved twice before it goes on the shelf.\n"),
        },
        "glaze for the kiln",
        ("kiln/b.md", "Kiln glaze"),
    ),
    # Not so a CamelCase heading word, a name: "glaze" names none of GlazeRoom (its parts,
    # glaze-room, are indexed with the heading), so the heading "Glaze" wins.
    "camelcase-heading-named-in-part": (
        {
            **{f"notes/n{i}.md": f"# Note {i}\n\n## Clay\n\nClay for bench {i} is wedged by hand.\n" for i in range(6)},
            "kiln/a.md": "# Work\n\n## GlazeRoom\n\nThe glaze is mixed in here, then stirred.\n",
            "kiln/b.md": (
                "# Stock\n\n## Glaze\n\nHow a glaze is mixed: weigh the dry stock on the scale, add water, "
                "stir it with a drill paddle and sieve it twice before it goes on the shelf.\n"),
        },
        "glaze mixing",
        ("kiln/b.md", "Glaze"),
    ),
    # A CamelCase word of the question finds a heading that writes its words apart (the build
    # splits a heading's CamelCase words for the other direction): DoorLeftOpen names all of
    # "Door Left Open", which beats "Alarms", the one heading the question's other word names.
    "camelcase-query-word": (
        {
            **{f"notes/n{i}.md": f"# Note {i}\n\n## Clay\n\nClay for bench {i} is wedged by hand.\n" for i in range(6)},
            "kiln/alarms.md": (
                "# Kiln alarms\n\n## Alarms\n\nEach alarm beeps on the panel until it is cleared.\n\n"
                "## Door Left Open\n\nShut the door, wait a minute, then clear the alarm on the panel before "
                "the next firing starts.\n"),
        },
        "DoorLeftOpen alarm",
        ("kiln/alarms.md", "Door Left Open"),
    ),
    # "let" and "allow" are one verb of permission (mdfts_synonyms): "how do I let apprentices
    # fire ..." finds the section headed "Allow apprentices to fire ...", not one that says let.
    "let-is-allow": (
        {
            **FILLER_TOOLS,
            "kiln/access.md": (
                "# Kiln access\n\n## Allow apprentices to fire on their own\n\nAdd the apprentice's badge "
                "to the controller's list of firers; the controller then starts a firing from their badge "
                "alone.\n"),
            "kiln/apprentices.md": (
                "# Apprentices\n\n## First weeks\n\nApprentices fire the kiln with a potter beside them and "
                "let it cool overnight before they open it.\n"),
        },
        "how do I let apprentices fire the kiln on their own?",
        ("kiln/access.md", "Allow apprentices to fire on their own"),
    ),
    # A plain word a question uses also searches the docs' term for it (mdfts_plain): "how many
    # copies of the kiln controller run?" asks about its replicas, not the manual printed in copies.
    "plain-word-finds-the-docs-term": (
        {
            **FILLER_TOOLS,
            "kiln/controller.md": (
                "# Kiln controller\n\n## Replicas\n\nThree replicas run side by side, so a firing goes on "
                "when one of them stops.\n\n## Manual\n\nPrint two copies of the kiln controller manual and "
                "run them past the office.\n"),
        },
        "how many copies of the kiln controller run?",
        ("kiln/controller.md", "Replicas"),
    ),
    # A plural acronym in a file name is one word, as the query side reads it (PIDs, not PI + Ds):
    # "kiln PIDs tuning" names all of kiln-PIDs.md, which beats kiln.md's denser Tuning section.
    "plural-acronym-in-file-name": (
        {
            **{f"notes/n{i}.md": f"# Note {i}\n\n## Clay\n\nClay for bench {i} is wedged by hand.\n" for i in range(6)},
            "kiln/kiln.md": "# Kiln\n\n## Tuning\n\nBefore the first firing, tune the kiln PIDs.\n",
            "kiln/kiln-PIDs.md": (
                "# Zone controllers\n\n## Tuning\n\nTune each controller: raise the gain until the zone "
                "overshoots, then halve it.\n"),
        },
        "kiln PIDs tuning",
        ("kiln/kiln-PIDs.md", "Tuning"),
    ),
    # A kebab flag of four common words matches only as written: it is as rare as that token
    # (one section), not as the commonest of its words, so its one long section beats a dozen
    # short "Feature flags" sections that hold the question's other two words.
    "identifier-of-common-words": (
        {
            **{f"kilns/k{i}.md": (
                f"# Kiln {i}\n\n## Firing\n\nFire kiln {i} slowly; watch the shelf; a drip on the guard "
                f"rail is fine in safe mode.\n\n## Feature flags\n\nFlags of kiln {i}: `kiln{i}-fast-cool` and "
                "`door-lock`; a feature flag is set per kiln, and each flag is listed here.\n") for i in range(12)},
            "glaze/drip.md": (
                "# Drip guard\n\n## Rollback\n\nIf a release of the shelf tray firmware raises the shelf "
                "temperature, roll it back: stop the kiln, load the last good release, and check the tray "
                "sensor.\n\nIf `shelf-drip-guard-mode` was switched on in this release, switch it off first. "
                "Do not roll back past a firmware that rewrote the sensor table. "
                + " ".join(f"Step {j}: note the cone and the hour, then wait for the pyrometer to settle."
                           for j in range(12)) + "\n"),
        },
        "shelf-drip-guard-mode feature flag",
        ("glaze/drip.md", "Rollback"),
    ),
    # The key-term cap is by weight, not count: nine equally rare words, and the one section
    # holding the ninth (by position, the one a cap of eight drops) and the first beats the
    # short sections that hold the first alone, twice.
    "cap-by-weight-keeps-a-ninth-word": (
        {
            **{f"notes/n{i}.md": f"# Note {i}\n\n## Clay\n\nClay for bench {i} is wrapped in plastic.\n"
               for i in range(12)},
            **{f"misc/m{i}.md": f"# Misc {i}\n\n## Item {i}\n\nThe {w} is kept dry; the {w} is counted monthly.\n"
               for i, w in enumerate(["bisque", "grog", "sgraffito", "burnish", "wadding", "saggar", "terra", "celadon"])},
            **{f"misc/o{i}.md": f"# Other {i}\n\n## Entry {i}\n\nA {w} label goes on each box.\n"
               for i, w in enumerate(["grog", "sgraffito", "burnish", "wadding", "saggar", "terra", "celadon", "raku"])},
            "kiln/raku.md": (
                "# Outdoor kiln\n\n## Raku firing\n\nSet the bisque pieces in the hot kiln, then pull them "
                "out glowing.\n"),
        },
        "bisque grog sgraffito burnish wadding saggar terra celadon raku",
        ("kiln/raku.md", "Raku firing"),
    ),
    # An English function word the docs seldom write ("because", in one section) weighs nothing:
    # with the idf of a rare word it took the section that holds it past the one that holds
    # every word of the question that says what went wrong.
    "function-word-weighs-nothing": (
        {
            "glaze/faults.md": (
                "# Glaze faults\n\n## Crawling\n\nA crawling glaze pulls back from the pot and leaves "
                "bare clay: the bisque was dusty or greasy when it was dipped. Wipe each pot with a damp "
                "sponge before dipping.\n\n## Pinholes\n\nSmall pits in the glaze: fire slower through "
                "the last hundred degrees.\n"),
            "glaze/mixing.md": (
                "# Mixing\n\n## Sieving\n\nSieve every glaze twice, because lumps leave a rough glaze on "
                "the pot.\n"),
            **{f"notes/n{i}.md": f"# Note {i}\n\n## Pots\n\nA pot for bench {i} is bisque fired, then glazed.\n"
               for i in range(4)},
        },
        "my glaze leaves bare patches because of dust on the pot",
        ("glaze/faults.md", "Crawling"),
    ),
    # The question's words spread over one page: its sections fill the top ten, so the one that
    # answers beats a log entry elsewhere that happens to hold a few more of the words.
    "page-of-the-question": (
        {
            "kiln/faults.md": (
                "# Kiln faults\n\n## Slow climb\n\nThe kiln climbs slowly when the elements are worn.\n\n"
                "## Panel codes\n\nThe panel beeps once for each code it shows.\n\n"
                "## Checking the thermocouple\n\nA thermocouple that reads cold makes the kiln climb slowly and "
                "the panel beep: test it with a meter before the next firing.\n\n"
                "## Replacing the thermocouple\n\nSwap the probe when its reading is wrong, then run a test "
                "firing.\n"),
            "notes/log.md": (
                "# Log\n\n## Tuesday\n\nThe panel beeped twice during the glaze firing and the kiln climbed "
                "slowly, so we let it cool and wrote the reading down.\n"),
            **{f"notes/n{i}.md": f"# Note {i}\n\n## Clay\n\nClay for bench {i} is wedged by hand.\n" for i in range(4)},
        },
        "kiln climbs slowly and the panel beeps, is the reading wrong?",
        ("kiln/faults.md", "Checking the thermocouple"),
    ),
    # ... but not past a section whose heading the query names in full: six sections of
    # shelf-wash.md hold "shelf wash recipe", and the page's weight would take one of them past
    # "Shelf wash recipe" (it fails with the hprec rule of `page` taken out).
    "page-not-past-a-named-heading": (
        {
            "kiln/shelf-wash.md": (
                "# Shelf wash\n\n## Mixing\n\nMix the shelf wash recipe in a bucket: kaolin and alumina, half "
                "and half.\n\n## Painting\n\nPaint the shelf wash recipe on thin, in two coats.\n\n"
                "## Scraping\n\nScrape old shelf wash off before a new coat of the recipe.\n\n"
                "## Drips\n\nA drip of glaze on shelf wash pops off; the recipe is soft.\n\n"
                "## Storing\n\nKeep the shelf wash recipe wet in a lidded tub.\n\n"
                "## Brushes\n\nA wide brush lays the shelf wash recipe flat.\n"),
            "kiln/care.md": (
                "# Care\n\n## Shelf wash recipe\n\nKaolin and alumina in equal parts by weight, with water to a "
                "thin cream; sieve it once, stir it before each use and keep the bucket closed between firings, "
                "so that the water does not dry off and leave a crust on the rim of the bucket.\n"),
            **{f"notes/n{i}.md": f"# Note {i}\n\n## Clay\n\nClay for bench {i} is wedged by hand.\n" for i in range(4)},
        },
        "shelf wash recipe",
        ("kiln/care.md", "Shelf wash recipe"),
    ),
    # A long section the query names in full, file name and heading ("<system> <task>"), beats
    # thirty short ones on its page that repeat the query's words: bm25 divides by length, so
    # "Settings" (a table of forty settings) is in neither bm25 pool; `named` makes it a
    # candidate, and as it holds every word its bm25 counts as the best (it was not a candidate
    # before the step, and 26th with the candidate channel alone).
    "named-long-section": (
        {
            "studio/glaze-mixer.md": (
                "# Glaze mixer\n\nThe studio glaze mixer stirs a bucket of glaze.\n\n## Settings\n\n"
                "The glaze mixer settings, with their defaults:\n\n| Setting | What it sets | Default |\n"
                "|---|---|---|\n"
                + "".join(f"| `paddle{i}` | Paddle {i} pitch, in degrees, for a slip of {i * 5} percent "
                          f"water | `{i * 3}` |\n" for i in range(40))
                + "".join(f"\n## Batch {i}\n\nFor batch {i}, set the glaze mixer settings to speed {i}.\n"
                          for i in range(30))),
            **{f"notes/n{i}.md": f"# Note {i}\n\n## Clay\n\nClay for bench {i} is wedged by hand; the mixer "
               "is off.\n" for i in range(4)},
        },
        "glaze mixer settings",
        ("studio/glaze-mixer.md", "Settings"),
    ),
    # ... but only a section whose name also holds the query's words: "Controller Settings" is
    # named by "kiln controller vent settings" and holds every word, yet "vent" is in neither its
    # file name nor its heading; counted as the best bm25 it took first place from "Vent
    # Configuration Settings" (it fails without the guard in feature's `named`).
    "named-section-holds-the-query-in-its-name": (
        {
            "studio/kiln-controller.md": (
                "# Kiln controller\n\nThe kiln controller runs each firing.\n\n## Controller Settings\n\n"
                "Every kiln controller setting, the zone timer settings and the vent settings among them:\n\n"
                "| Setting | What it sets | Default |\n|---|---|---|\n"
                + "".join(f"| `shelf{i}` | Shelf {i} height for the zone timer and the vent, in centimetres "
                          f"| `{i * 2}` |\n" for i in range(40))
                + "\n## Zone Timer Settings\n\nThe zone timer holds each zone of the kiln at its peak for the "
                "minutes set here; a zone timer of zero skips the hold. The controller starts the timer when "
                "the zone reaches its cone.\n\n## Vent Configuration Settings\n\nThe vent opens at the "
                "temperature set here and closes once the kiln has cooled; the controller keeps the vent shut "
                "during a reduction.\n\n## Wiring\n\nWire the controller to the panel with shielded cable.\n\n"
                "## Log\n\nKiln controller: vent settings saved. Kiln controller: zone timer settings saved.\n"),
            **{f"notes/n{i}.md": f"# Note {i}\n\n## Clay\n\nClay for bench {i} is wedged by hand.\n" for i in range(4)},
        },
        "kiln controller vent settings",
        ("studio/kiln-controller.md", "Vent Configuration Settings"),
    ),
    # A phrasal verb finds the single verb the docs write (mdfts_phrasal): "turn off" finds
    # "Disable", which beats a section that holds "turn" on its own.
    "phrasal-verb": (
        {
            "kiln/vent.md": (
                "# Vent\n\n## Disabling the vent\n\nDisable the kiln vent at the wall panel before a "
                "reduction firing, and enable it again once the kiln has cooled.\n\n## Vent position\n\n"
                "Turn the kiln vent a quarter to the left for a slow cool, and back to the right for a "
                "fast one.\n"),
            **{f"notes/n{i}.md": f"# Note {i}\n\n## Clay\n\nClay for bench {i} is wedged by hand.\n" for i in range(4)},
        },
        "how do I turn off the kiln vent?",
        ("kiln/vent.md", "Disabling the vent"),
    ),
    # A lead-in states the problem its children act on ("Power loss: when the kiln loses
    # power, the ware is stuck inside ..."): it holds the question's words, but "how do I ..."
    # asks for what to do, its first child (`answer`).
    "lead-in-hands-to-its-first-child": (
        {
            "kiln/faults.md": (
                "# Kiln faults\n\n## Power loss\n\nWhen the kiln loses power mid firing, the ware is "
                "stuck inside while the controller waits to be reset.\n\n### Reset the controller\n\n"
                "Hold the stop key for five seconds, then press start: the firing resumes where it "
                "stopped.\n\n### Unload by hand\n\nWait below 100 degrees, open the lid and lift the "
                "shelves out one by one.\n\n## Cracked shelf\n\nGrind the edge and turn the shelf over.\n"),
            **{f"notes/n{i}.md": f"# Note {i}\n\n## Clay\n\nClay for bench {i} is wedged by hand.\n" for i in range(4)},
        },
        "ware stuck inside after the kiln lost power, how do I get the firing going again?",
        ("kiln/faults.md", "Reset the controller"),
    ),
    # A runbook's Meaning (or Impact, Diagnosis) restates the problem a question describes;
    # one that asks what to do ("what should I do", "how do I ...") asks for its Mitigation,
    # which takes the better score (`answer`), as a Solution does from its Symptoms.
    "asks-what-to-do-gets-mitigation": (
        {
            "alerts/KilnDoorOpen.md": (
                "# KilnDoorOpen\n\n## Meaning\n\nThe kiln door has been left open during a firing for "
                "more than ten minutes: heat escapes through the open door and the firing stalls below "
                "its cone.\n\n## Impact\n\nA stalled firing under-fires the ware on every shelf.\n\n"
                "## Mitigation\n\nClose and latch it, then test the latch switch with the panel's "
                "door test.\n"),
            "alerts/KilnVentStuck.md": (
                "# KilnVentStuck\n\n## Meaning\n\nThe vent motor reports no movement.\n\n"
                "## Mitigation\n\nFree the vent by hand.\n"),
        },
        "the kiln door was left open and the firing stalls, what should I do?",
        ("alerts/KilnDoorOpen.md", "Mitigation"),
    ),
    # A lead-in (a short paragraph over children) whose own words the query quotes whole is
    # the section asked for: the quote names it, as its whole heading would.
    "lead-in-quoted-whole": (
        {
            "alerts/KilnSlowCooling.md": (
                "# KilnSlowCooling\n\n## Meaning\n\nThe kiln cools slower than its schedule.\n\n"
                "## Mitigation\n\nCooling is slow when the vent sticks or a damper warps.\n\n"
                "### Replace the plate\n\nThe damper warps when the vent sticks: the damper warps, the vent "
                "sticks more. Replace the damper plate.\n\n### Oil the hinge\n\nA stuck vent holds heat in "
                "the kiln. Free the vent and oil its hinge.\n"),
            "alerts/KilnVentStuck.md": "# KilnVentStuck\n\n## Meaning\n\nThe vent motor reports no movement.\n",
        },
        "vent sticks or a damper warps",
        ("alerts/KilnSlowCooling.md", "Mitigation"),
    ),
    # A flag is held as written only by a token: a page named like its words (kiln-cool-down.md,
    # the command `kiln cool-down`) does not hold `--cool-down`; the page whose example uses it does.
    "flag-is-no-page-name": (
        {
            "pages/kiln-cool-down.md": (
                "# kiln cool-down\n\n> Cool the kiln down after a firing.\n\n- Cool the kiln down slowly:\n\n"
                "`kiln cool-down --slow`\n\n- Cool the kiln down at once:\n\n`kiln cool-down --now`\n"),
            "pages/kiln-fire.md": (
                "# kiln fire\n\n> Fire a load of ware.\n\n- Fire a load, then cool down on its own:\n\n"
                "`kiln fire --cool-down`\n\n- Fire a glaze load:\n\n`kiln fire --glaze`\n"),
            "pages/kiln-vent.md": "# kiln vent\n\n> Open or shut the vent.\n\n- Open the vent:\n\n`kiln vent --open`\n",
        },
        "--cool-down",
        ("pages/kiln-fire.md", "kiln fire"),
    ),
    # A question that asks how to keep a problem from happening ("in the first place", "prevent",
    # "avoid", "in future") asks for the runbook's Prevention, not the Mitigation that ends it.
    "asks-how-to-prevent-gets-prevention": (
        {
            "alerts/KilnDoorOpen.md": (
                "# KilnDoorOpen\n\n## Meaning\n\nThe kiln door has been left open during a firing for "
                "more than ten minutes: heat escapes through the open door and the firing stalls below "
                "its cone.\n\n## Mitigation\n\nClose and latch it, then test the latch switch with the "
                "panel's door test.\n\n## Prevention\n\nFit a spring to the door so that it swings shut, "
                "and add the door check to the loading list.\n"),
            "alerts/KilnVentStuck.md": (
                "# KilnVentStuck\n\n## Meaning\n\nThe vent motor reports no movement.\n\n"
                "## Mitigation\n\nFree the vent by hand.\n"),
        },
        "how can I stop the kiln door being left open in the first place?",
        ("alerts/KilnDoorOpen.md", "Prevention"),
    ),
    # A question that asks how to check or investigate ("how do I check whether ...") asks for
    # the runbook's Diagnosis, which takes the score of the Meaning that restates the problem
    # (`answer`), as a Mitigation does for a question that asks what to do.
    "asks-how-to-check-gets-diagnosis": (
        {
            "alerts/KilnElementFailed.md": (
                "# KilnElementFailed\n\n## Meaning\n\nOne heating element of the kiln has burnt out: "
                "the kiln heats unevenly and the top shelf stays below its cone.\n\n"
                "## Diagnosis\n\n```\npanel status --zones\n```\n\n"
                "## Mitigation\n\nSwap the element for a spare of the same rating.\n"),
            "alerts/KilnVentStuck.md": (
                "# KilnVentStuck\n\n## Meaning\n\nThe vent motor reports no movement.\n\n"
                "## Diagnosis\n\nRead the vent log.\n\n## Mitigation\n\nFree the vent by hand.\n"),
        },
        "how do I check whether a heating element of the kiln has burnt out?",
        ("alerts/KilnElementFailed.md", "Diagnosis"),
    ),
    # A question that names a role ("what happens" → Impact) asks for that section of the page,
    # which takes the score of its sibling that holds more of the question's words (`rq`, `ans`).
    "asks-what-happens-gets-the-impact": (
        {
            "alerts/KilnVentShut.md": (
                "# KilnVentShut\n\n## Meaning\n\nThe kiln vent reports shut while a firing runs.\n\n"
                "## Impact\n\nFumes stay in the chamber; glazes blister.\n\n## Diagnosis\n\nDuring a "
                "glaze firing, check whether the vent stays shut when the vent motor runs: a vent that "
                "stays shut during a glaze firing has a seized damper.\n\n"
                "## Mitigation\n\nFree the vent by hand.\n"),
            "alerts/KilnDoorOpen.md": (
                "# KilnDoorOpen\n\n## Meaning\n\nThe door switch reads open.\n\n"
                "## Impact\n\nThe firing stops.\n"),
        },
        "what happens to the kiln when the vent stays shut during a glaze firing?",
        ("alerts/KilnVentShut.md", "Impact"),
    ),
    # "what should I do when ..." asks what to do as a closing "what should I do?" does, and a
    # heading that holds a fix word ("Potential resolution steps", "How to fix the problem") is
    # a Solution as one that is only that word.
    "what-to-do-when-gets-the-resolution-steps": (
        {
            "alerts/glaze-queue-stale.md": (
                "# Glaze queue stale\n\n## Description\n\nThis alert fires when glaze batches have waited "
                "in the mixing queue for more than an hour.\n\n## Impact\n\nWare waits unglazed on the "
                "racks.\n\n## Potential resolution steps\n\nOpen the mixer panel, drain the oldest "
                "bucket and restart the stirrer.\n"),
            "alerts/kiln-vent-stuck.md": (
                "# Kiln vent stuck\n\n## Description\n\nThe vent motor reports no movement.\n\n"
                "## Resolution\n\nFree the vent by hand.\n"),
        },
        "what should I do when glaze batches have waited in the mixing queue for more than an hour?",
        ("alerts/glaze-queue-stale.md", "Potential resolution steps"),
    ),
    # On one-section tool pages, the word after "with", "using" or "via" names the tool to use:
    # the page it names wins over a page named by the task's verb ("glaze up ... using dip").
    "with-tool-names-the-page": (
        {
            "pages/glaze.md": tool_page("glaze", "Glaze up and colour bisque ware in the spray booth.",
                                        "Glaze up the mugs on a shelf", "glaze up --shelf {{2}}"),
            "pages/dip.md": tool_page("dip", "Dip ware in a bucket of slip or glaze.",
                                      "Dip a batch of bowls in the green bucket", "dip --bucket green {{bowls}}"),
            **FILLER_TOOLS,
        },
        "glaze up and colour a batch of mugs using dip",
        ("pages/dip.md", "dip"),
    ),
    # The words after "with" spell the page's whole name: "with kilnctl am" names kilnctl-am.md
    # (am a stop word), not kilnctl-apply.md, whose two words the query writes too, one of them
    # as its verb.
    "with-words-spell-the-page": (
        {
            "pages/kilnctl-am.md": tool_page("kilnctl am", "Apply a firing schedule from a mailed schedule file.",
                                             "Apply the schedule in a mailed file", "kilnctl am {{path/to/file}}"),
            "pages/kilnctl-apply.md": tool_page("kilnctl apply", "Apply a glaze coat or a firing schedule to a kiln.",
                                                "Apply a firing schedule to kiln 2", "kilnctl apply --kiln 2 {{schedule}}"),
            **FILLER_TOOLS,
        },
        "how do I apply a firing schedule with kilnctl am?",
        ("pages/kilnctl-am.md", "kilnctl am"),
    ),
    # A key and its value written as one string in code (a label selector) is an exact token:
    # the section whose command holds it wins over one whose prose holds its two words.
    "key-value-is-an-exact-token": (
        {
            "kiln/logs.md": (
                "# Kiln logs\n\n## Reading the north kiln's log\n\nThe kiln north of the door logs each "
                "firing; the north kiln log lists the kiln, north or south, and the cone.\n\n"
                "## Controller logs by label\n\nEach controller pod carries its kiln label:\n\n"
                "```\nkubectl logs -l kiln=north -c controller\n```\n"),
            **{f"notes/n{i}.md": f"# Note {i}\n\n## Clay\n\nClay for bench {i} is wedged by hand.\n" for i in range(4)},
        },
        "kiln=north",
        ("kiln/logs.md", "Controller logs by label"),
    ),
    # A word with a version number (firelink/2, as HTTP/2 or TLS1.2) names a protocol, a common
    # word of the field, not one thing: the page whose code block writes it is not the page
    # about it (each of its sections took the identifier's full credit), and the FAQ that
    # writes it apart ("firelink 2") holds it too.
    "version-word-is-no-identifier": (
        {
            "kiln/network.md": (
                "# Kiln network\n\n## Controller link\n\nThe controller talks to the kiln panel over the "
                "link, firelink/2 where the panel allows it:\n\n```\nlink mode firelink/2\n```\n\n"
                "## Panel address\n\nSet the panel address before the first firing; the hub keeps it.\n\n"
                "## Cables\n\nUse shielded cable from the controller to the panel, and keep it away from "
                "the elements.\n"),
            "kiln/faq.md": (
                "# Kiln FAQ\n\n## Why does the controller drop its link?\n\nA shared hub may not speak "
                "firelink 2: the link falls back and drops under load. Plug the controller straight into "
                "the panel.\n\n## Cone chart\n\nRead the cone chart on the kiln door.\n"),
            **{f"notes/n{i}.md": f"# Note {i}\n\n## Clay\n\nClay for bench {i} is wrapped in plastic.\n" for i in range(4)},
        },
        "controller keeps dropping its link behind a shared hub without firelink/2",
        ("kiln/faq.md", "Why does the controller drop its link?"),
    ),
    # A preposition NLTK's stop list lacks (without, within, inside, per) says how or where, not
    # what: weighed as a word, it picked the short section that happens to say it twice.
    "prepositions-are-stop-words": (
        {
            "studio/drying.md": (
                "# Drying\n\n## Cracked rims\n\nRims that dry faster than the foot crack. Keep greenware "
                "under loose plastic for the first two days and turn each pot upside down once the rim is "
                "leather hard.\n\n## Drying racks\n\nRacks stand by the north wall, away from the kiln.\n"),
            "studio/kiln.md": (
                "# Kiln\n\n## Unloading\n\nUnload within the hour, without opening the door before it "
                "reads 100 degrees.\n\n## Loading\n\nLoad the tallest pots at the back, on the shelf "
                "nearest the elements.\n"),
            "studio/glaze.md": (
                "# Glaze\n\n## Dipping\n\nDip each pot once, within three seconds, without touching the "
                "foot.\n\n## Mixing\n\nSieve every glaze twice before a firing.\n"),
            **{f"notes/n{i}.md": f"# Note {i}\n\n## Clay\n\nClay for bench {i} is wrapped in plastic.\n" for i in range(4)},
        },
        "rims split within hours without being covered",
        ("studio/drying.md", "Cracked rims"),
    ),
    # A link reference's label is markup: "pugmill cleaning" in `[old rota][pugmill cleaning]`
    # and its definition is no phrase of the Pugmill motor section, which took the phrase credit
    # from the section the query names (system in the file name, task in the heading).
    "link-label-is-no-phrase": (
        {
            "studio/pugmill.md": (
                "# Pugmill\n\n## Cleaning\n\nScrape the barrel and the auger every Friday, then run a "
                "handful of soft clay through to push the last of the old batch out. Wear gloves: the "
                "auger's edge is sharp. Put the scrapings in the reclaim bucket, never in the sink.\n\n"
                "## Pugmill motor\n\nThe pugmill motor is rated for eight hours a day; let the pugmill "
                "cool for an hour after a long run. Before 2020 the motor was checked at each cleaning, "
                "see the [old rota][pugmill cleaning].\n\n[pugmill cleaning]: https://example.org/rota\n"),
            "studio/kiln.md": (
                "# Kiln\n\n## Loading\n\nLoad the tallest pots at the back, on the shelf nearest the "
                "elements.\n\n## Cleaning\n\nVacuum the kiln floor after every firing.\n"),
        },
        "pugmill cleaning",
        ("studio/pugmill.md", "Cleaning"),
    ),
}


def build_case(tmp_path: Path, files: dict[str, str]) -> Path:
    docs = tmp_path / "docs"
    for rel, text in files.items():
        (docs / rel).parent.mkdir(parents=True, exist_ok=True)
        (docs / rel).write_text(text, encoding="utf-8")
    out = tmp_path / "case.db"
    mdfts.build_index([docs], out)
    return out


def signal_by_heading(db: Path, q: str, signal: str) -> dict[str, float]:
    """One signal's value (0-1) for each of the five best hits, by heading, from --explain."""
    values = {}
    for h in mdfts.search(db, q, limit=5, explain=True):
        assert h.explain is not None
        values[h.heading] = h.explain["signals"][signal]["value"]
    return values


@pytest.mark.parametrize("case", list(CASES))
def test_mechanism_first_hit(tmp_path: Path, case: str) -> None:
    files, q, first = CASES[case]
    db = build_case(tmp_path, files)
    hits = mdfts.search(db, q, limit=3)
    assert [(h.path, h.heading if first[1] is not None else None) for h in hits][:1] == [first]


def test_a_plain_word_finds_the_docs_term_but_not_the_other_way(tmp_path: Path) -> None:
    """mdfts_plain is one way: "cap" also searches limit, but a question that says "limit" does
    not find a section that only says cap (a rare word of another meaning would win on its idf)."""
    db = build_case(tmp_path, {
        **FILLER_TOOLS,
        "kiln/vents.md": "# Vents\n\n## Vent caps\n\nEach vent cap screws on by hand after the firing.\n",
        "kiln/zones.md": "# Zones\n\n## Zone temperature limit\n\nThe controller holds each zone under its limit.\n",
    })
    assert {h.heading for h in mdfts.search(db, "cap", limit=5)} == {"Vent caps", "Zone temperature limit"}
    assert [h.heading for h in mdfts.search(db, "limit", limit=5)] == ["Zone temperature limit"]


def test_a_links_own_text_is_a_phrase_but_its_reference_label_is_not(tmp_path: Path) -> None:
    db = build_case(tmp_path, {
        "studio/pugmill.md": (
            "# Pugmill\n\n## Seen\n\nThe [pugmill cleaning](https://example.org/rota) rota is on the "
            "door.\n\n## Label\n\nThe rota is on the door: [the rota][pugmill cleaning].\n\n"
            "## Definition\n\nThe rota is on the door.\n\n[Pugmill Cleaning]: https://example.org/rota\n"),
    })
    phrase = signal_by_heading(db, "pugmill cleaning", "phrase")
    assert phrase == {"Seen": 1.0, "Label": 0.0, "Definition": 0.0, "Pugmill": 0.0}


@pytest.mark.parametrize(
    "query", ["zone two thermocouple reads low", "why does the zone two thermocouple read low"],
    ids=["quotes-it", "asks-why"])
def test_investigation_asked_for_is_not_passed_to_the_solution(tmp_path: Path, query: str) -> None:
    """A question that quotes the Investigation (a log line pasted from it) or asks why asks for
    that section itself: the Solution beside it takes no `answer` credit from it."""
    db = build_case(tmp_path, INVESTIGATION_PAGE)
    assert [h.heading for h in mdfts.search(db, query, limit=1)] == ["Investigation"]


def test_a_role_heading_names_its_children_not_a_page_title_its_page(tmp_path: Path) -> None:
    """`role` reads the section's own heading and its parent's, when the parent is no page title:
    the Steps under Mitigation are a fix; the sections of a page titled "Fix log" are not."""
    files, q, _ = CASES["role-of-the-parent-heading"]
    db = build_case(tmp_path, {**files, "notes/fix-log.md": (
        "# Fix log\n\n## Kiln shelf\n\nThe cracked kiln shelf from bench two went back in the kiln.\n")})
    with mdfts.open_index(db) as ix:
        role = {h.heading: h.explain["signals"]["role"]["value"] for h in ix.search(q, limit=10, explain=True)
                if h.explain is not None}
    assert (role["Steps"], role["Mitigation"], role["Diagnosis"], role["Kiln shelf"]) == (1, 1, 0, 0)


def test_a_fault_finding_verb_asks_for_a_troubleshooting_heading(tmp_path: Path) -> None:
    """debug, diagnose, investigate and troubleshoot ask for a Troubleshooting section (by stem:
    "how do I troubleshoot it?" too); check and verify, which ask no fault, do not."""
    db = build_case(tmp_path, {"guides/kilns.md": (
        "# Kilns\n\n## Adding a kiln\n\nTo add a kiln, wire it to the controller and name its zones. A kiln "
        "you added shows in the list at once.\n\n## The controller cannot see a kiln, how do I troubleshoot "
        "it?\n\nUnplug the zone cable, wait ten seconds and plug it back.\n")})
    asked = "The controller cannot see a kiln, how do I troubleshoot it?"

    def roles(verb: str) -> tuple[float, float]:
        with mdfts.open_index(db) as ix:
            role = {h.heading: h.explain["signals"]["role"]["value"]
                    for h in ix.search(f"how do I {verb} a kiln I added to the controller?", limit=5, explain=True)
                    if h.explain is not None}
        return role[asked], role["Adding a kiln"]

    assert [roles(v) for v in ("debug", "diagnose", "investigate", "troubleshoot")] == [(1, 0)] * 4
    assert [roles(v) for v in ("check", "verify")] == [(0, 0)] * 2


def test_absent_identifier_is_not_passed_off_as_a_hit(tmp_path: Path) -> None:
    files, _, _ = CASES["camelcase-siblings"]
    db = build_case(tmp_path, files)
    hits = mdfts.search(db, "LanternQueueOverflow mitigation", limit=5)
    assert hits and all(h.exact is False for h in hits)
    named = mdfts.search(db, "LanternQueueStalled mitigation", limit=1)
    assert named[0].exact is True
    plain = mdfts.search(db, "queue mitigation", limit=1)  # no identifier: nothing to flag
    assert plain[0].exact is True


def test_a_version_word_is_no_identifier_but_a_code_is(tmp_path: Path) -> None:
    files, _, _ = CASES["version-word-is-no-identifier"]
    db = build_case(tmp_path, {**files, "kiln/codes.md": (
        "# Codes\n\n## K2041\n\nThe panel shows K2041 when the door is open.\n\n## KLN-0412\n\nThe panel "
        "shows KLN-0412 when the vent is shut.\n\n## KLN4412\n\nThe panel shows KLN4412 when a zone is cold."
        "\n\n## KLN412\n\nThe panel shows KLN412 when the fan stalls.\n")})
    versioned = mdfts.search(db, "hub without firelink/2", limit=3)
    assert versioned and all(h.exact is True for h in versioned)  # nothing to flag: no identifier
    # one letter, a leading zero, four digits, letters run into digits: codes
    for code in ("K2041", "KLN-0412", "KLN4412", "KLN412"):
        coded = mdfts.search(db, f"panel {code}", limit=3)
        assert coded[0].heading == code and [h.exact for h in coded][1:] == [False] * (len(coded) - 1)


def test_an_abbreviation_is_no_identifier_but_a_dotted_name_is(tmp_path: Path) -> None:
    """"e.g." and "i.e." are dotted like a name but abbreviate words (mdfts.tokens does not keep
    them): a question that writes one names no identifier, so no hit is flagged; a dotted name
    with a part of two letters or more (kiln.zone) still is one."""
    db = build_case(tmp_path, {"kiln/zones.md": "# Zones\n\n## Cold zones\n\nSet `kiln.zone` when a zone "
                                                "is cold, for example after a long firing.\n"})
    for q in ("cold zones, e.g. after a firing", "cold zones i.e. slow ones"):
        hits = mdfts.search(db, q, limit=3)
        assert hits and all(h.exact is True for h in hits), q
    assert [h.exact for h in mdfts.search(db, "kiln.zone cold", limit=1)] == [True]
    assert [h.exact for h in mdfts.search(db, "kiln.vent cold", limit=1)] == [False]


def test_explain_comes_from_the_same_sql(tmp_path: Path) -> None:
    files, q, _ = CASES["fix-asks-for-mitigation"]
    db = build_case(tmp_path, files)
    with mdfts.open_index(db) as ix:
        plain = ix.search(q, limit=3)
        explained = ix.search(q, limit=3, explain=True)
    assert [(h.id, h.score) for h in plain] == [(h.id, h.score) for h in explained]
    for h in explained:
        why = h.explain
        assert why is not None and why["score"] == h.score
        points = sum(s["points"] for s in why["signals"].values())
        assert points == pytest.approx(h.score, abs=1e-3)  # the parts add up to the score
        assert sum(s["share"] for s in why["signals"].values()) == pytest.approx(1.0, abs=1e-3)
        assert {t["term"]: t["match"] for t in why["terms"]}.keys() == {"fix", "kiln", "overheat"}
    top = explained[0].explain
    assert top is not None and top["signals"]["role"]["value"] == 1  # Mitigation answers "fix"
    assert {t["term"]: t["match"] for t in top["terms"]} == {"fix": "none", "kiln": "exact", "overheat": "exact"}


def test_explain_marks_stems(tmp_path: Path) -> None:
    db = build_case(tmp_path, {"a.md": "# Firing\n\nThe kiln was fired twice.\n"})
    (hit,) = mdfts.search(db, "firings", limit=1, explain=True)
    assert hit.explain is not None
    assert hit.explain["terms"] == [{"term": "firings", "idf": hit.explain["terms"][0]["idf"],
                                     "identifier": False, "match": "stem"}]


def test_a_possessive_matches_its_word(tmp_path: Path) -> None:
    """"the kiln's vent" asks for the kiln: FTS5 reads kiln's as the phrase "kiln s", which the
    docs never write, so the term is its word without the 's (a quote or a contraction is not)."""
    db = build_case(tmp_path, {
        "kiln/vent.md": "# Vent\n\n## Open the vent\n\nOpen the kiln vent before a slow cool.\n",
        "bench/vent.md": "# Bench\n\n## Open the vent\n\nOpen the bench vent before wedging.\n"})
    (hit,) = mdfts.search(db, "how do I open my kiln\u2019s vent?", limit=1, explain=True)
    assert hit.path == "kiln/vent.md" and hit.explain is not None
    assert {t["term"]: t["match"] for t in hit.explain["terms"]} == {"open": "exact", "kiln": "exact", "vent": "exact"}
    (quoted,) = mdfts.search(db, "'kiln' vent", limit=1)
    assert quoted.path == "kiln/vent.md"


def test_a_lead_in_keeps_what_does_not_ask_how(tmp_path: Path) -> None:
    """A question that does not ask how ("what happens ...") is answered by the lead-in itself."""
    files, _, _ = CASES["lead-in-hands-to-its-first-child"]
    db = build_case(tmp_path, files)
    (hit,) = mdfts.search(db, "what happens to the ware when the kiln loses power?", limit=1, explain=True)
    assert hit.heading == "Power loss" and hit.explain is not None
    (child,) = mdfts.search(db, "ware stuck after the kiln lost power, how do I get it going again?", limit=1,
                            explain=True)
    assert child.heading == "Reset the controller" and child.explain is not None
    assert child.explain["signals"]["answer"]["value"] > 0


@pytest.mark.parametrize("query, heading", [
    ("the kiln door was left open and the firing stalls, what does it mean?", "Meaning"),
    ("how long was the kiln door left open before the firing stalls", "Meaning"),
    ("how few degrees must the kiln lose with its door left open before the firing stalls", "Meaning"),
    ("how bad is it when the kiln door was left open and the firing stalls", "Impact"),
    ("the kiln door was left open and the firing stalls", "Meaning"),
    ("how do I get a firing going again after the kiln door was left open and it stalls", "Mitigation"),
    ("the kiln door keeps being left open and the firing stalls, what should I do instead?", "Mitigation"),
    ("the kiln door was left open and the firing stalls, what do I do first", "Mitigation"),
    ("what should I do when KilnDoorOpen fires?", "Mitigation"),
    ("the kiln door was left open and the firing stalls, what are the fixes?", "Mitigation"),
    ("the kiln door was left open and the firing stalls, what resolves it?", "Mitigation"),
    ("what is the KilnDoorOpen alert telling me about the firing?", "Meaning"),
    ("what does the Kiln in KilnDoorOpen stand for?", "Meaning"),
    ("what do I lose when the kiln door is left open and the firing stalls?", "Impact"),
    ("the ware on every shelf is under-fired, what triggers it?", "Meaning"),
], ids=["asks-mean", "asks-how-long", "asks-how-few", "asks-how-bad", "describes-only", "asks-how",
        "do-instead", "do-first", "alert-name-asks-what-to-do", "the-fixes", "what-resolves", "telling-me",
        "stand-for", "i-lose", "what-triggers"])
def test_meaning_hands_to_mitigation_only_when_asked_what_to_do(tmp_path: Path, query: str, heading: str) -> None:
    """Meaning keeps a question that asks what it means, asks a quantity or a degree ("how long",
    "how few": how and a word of measure), or only describes, and "how bad is it" asks for the
    Impact; none of them asks what to do. "how do I ...", and a
    "do" that closes the question ("what should I do instead?", "what do I do first"), ask for
    the Mitigation, also when the question names only the alert ("what should I do when
    KilnDoorOpen fires?"), and so does a fix cue in another form than the verb's ("what are the
    fixes?", "what resolves it?"). What the alert is telling me, or what its name stands for,
    asks for the Meaning, as does what triggers it; what I lose, for the Impact."""
    files, _, _ = CASES["asks-what-to-do-gets-mitigation"]
    db = build_case(tmp_path, files)
    assert [h.heading for h in mdfts.search(db, query, limit=1)] == [heading]


def test_a_question_of_prevention_asks_for_the_prevention(tmp_path: Path) -> None:
    """"in the first place", "in future", avoid and prevent ask how to keep the problem from
    happening: the Prevention, which then takes the Meaning's score as a Mitigation does for a
    question of what to do; "what should I do" still asks for the Mitigation."""
    db = build_case(tmp_path, CASES["asks-how-to-prevent-gets-prevention"][0])
    asked = {
        "how can I stop the kiln door being left open in the first place?": "Prevention",
        "the kiln door keeps being left open, how do I avoid it in future?": "Prevention",
        "how do I prevent the kiln door being left open during a firing?": "Prevention",
        "the kiln door was left open and the firing stalls, what should I do?": "Mitigation",
    }
    assert {q: mdfts.search(db, q, limit=1)[0].heading for q in asked} == asked


@pytest.mark.parametrize("query, heading", [
    ("how do I check whether a heating element of the kiln has burnt out?", "Diagnosis"),
    ("kiln heating element burnt out, how do I replace it and check the others later?", "Mitigation"),
    ("how do I check and fix a heating element of the kiln that has burnt out?", "Mitigation"),
    ("how can I tell whether a heating element of the kiln has burnt out?", "Diagnosis"),
    ("how do I find out which heating element of the kiln has burnt out?", "Diagnosis"),
    ("how do I work out if a heating element of the kiln has burnt out?", "Diagnosis"),
    ("how do I track down which heating element of the kiln has burnt out?", "Diagnosis"),
    ("a heating element of the kiln has burnt out, how do I work out a swap for it?", "Mitigation"),
    ("how do I check why a heating element of the kiln has burnt out?", "Diagnosis"),
    ("how do I work out why a heating element of the kiln keeps burning out?", "Diagnosis"),
    ("how can I see which heating element of the kiln has burnt out?", "Diagnosis"),
    ("how do I find which heating element of the kiln has burnt out?", "Diagnosis"),
    ("a heating element of the kiln has burnt out, how do I find a new one?", "Mitigation"),
    ("how do I confirm that a heating element of the kiln has burnt out?", "Diagnosis"),
    ("how do I narrow down which heating element of the kiln has burnt out?", "Diagnosis"),
    ("a heating element of the kiln has burnt out, where do I look?", "Diagnosis"),
    ("a heating element of the kiln has burnt out, where can I see the zones?", "Diagnosis"),
], ids=["asks-how-to-check", "check-comes-later", "asks-fix-too", "tell-whether", "find-out-which",
        "work-out-if", "track-down-which", "work-out-a-thing", "check-why", "work-out-why",
        "see-which", "find-which", "find-a-thing", "confirm", "narrow-down-which", "where-look",
        "where-see"])
def test_diagnosis_takes_the_meaning_only_when_asked_how_to_check(tmp_path: Path, query: str, heading: str) -> None:
    """"how do I check ..." (or confirm) asks for the Diagnosis, as do "tell", "see", "find",
    "find out", "work out", "figure out", "track down" and "narrow down" before an indirect question (which, if, whether,
    why ...), and "where do I look" or "where can I see":
    they ask what is the case; a "why" they open is what the check looks into, not a question
    for the Meaning. A check cue far from "how", a fix cue beside it, or "work out" or "find"
    with an object of its own ("work out a swap", "find a new one") leaves the question asking
    what to do."""
    files, _, _ = CASES["asks-how-to-check-gets-diagnosis"]
    db = build_case(tmp_path, files)
    assert [h.heading for h in mdfts.search(db, query, limit=1)] == [heading]


def test_a_check_question_takes_the_score_of_the_fix_that_holds_its_words(tmp_path: Path) -> None:
    """A runbook's Mitigation names the things its Diagnosis looks at, so it can hold more of a
    question's words than the Meaning: a question that asks how to check still asks for the
    Diagnosis, which takes the better of the two scores; one that asks what to do keeps the
    Mitigation."""
    db = build_case(tmp_path, {
        "alerts/KilnShelfCracked.md": (
            "# KilnShelfCracked\n\n## Meaning\n\nA kiln shelf cracked during a firing.\n\n## Diagnosis\n\n"
            "Lift each shelf out and tap it: a cracked one rings dull.\n\n## Mitigation\n\nReplace the "
            "cracked shelf with a spare, and dust the spare with kiln wash before the next glaze firing.\n"),
        "alerts/KilnVentStuck.md": (
            "# KilnVentStuck\n\n## Meaning\n\nThe vent motor reports no movement.\n\n## Diagnosis\n\n"
            "Read the vent log.\n\n## Mitigation\n\nFree the vent by hand.\n"),
    })
    asked = {
        "how can I tell which shelf cracked before the next glaze firing?": "Diagnosis",
        "a shelf cracked before the next glaze firing, how do I replace it?": "Mitigation",
    }
    assert {q: mdfts.search(db, q, limit=1)[0].heading for q in asked} == asked


@pytest.mark.parametrize("query, heading", [
    ("glaze batches have waited in the mixing queue for more than an hour, what should I do?",
     "Potential resolution steps"),
    ("what should I do when the vent motor reports no movement?", "Resolution"),
    ("what does it mean when the vent motor reports no movement?", "Description"),
], ids=["closing-do-contained-word", "do-when-whole-word", "asks-mean"])
def test_a_heading_holding_a_fix_word_answers_what_to_do(tmp_path: Path, query: str, heading: str) -> None:
    """Each half alone: a heading that only holds a fix word, and "what should I do when"."""
    files, _, _ = CASES["what-to-do-when-gets-the-resolution-steps"]
    db = build_case(tmp_path, files)
    assert [h.heading for h in mdfts.search(db, query, limit=1)] == [heading]


def test_a_camelcase_name_of_three_words_finds_it_written_apart(tmp_path: Path) -> None:
    """A CamelCase name of three words or more that the docs also write apart ("Kiln Door
    Open", in an FAQ heading) is also that phrase when bm25 picks candidates, though sections
    hold the name as an exact token: forty pages that log `KilnDoorOpen` with the question's
    other words kept the FAQ out of the candidates, not only out of first place."""
    files = {
        **{f"notes/b{i}.md": (f"# Bench {i}\n\n## Door log\n\nThe panel of bench {i} shows `KilnDoorOpen` though "
                              f"the door is shut: bench {i} logs it.\n") for i in range(40)},
        "guides/faq.md": (
            "# FAQ\n\n## Why does the panel say Kiln Door Open when the door is shut?\n\nThe latch sensor "
            "drifts after many firings; recalibrate it from the service menu.\n\n## How do I clean the shelves?\n\n"
            "Scrape glaze drips off with a chisel.\n"),
    }
    db = build_case(tmp_path, files)
    hits = mdfts.search(db, "why does the panel show KilnDoorOpen when the door is shut?", limit=10)
    assert "Why does the panel say Kiln Door Open when the door is shut?" in [h.heading for h in hits]


def test_a_role_asked_for_is_the_one_that_takes_the_score(tmp_path: Path) -> None:
    """Asked what happens, the Impact takes its sibling's score and the Mitigation (a fix-word
    heading, which does for "what should I do") does not; asked why, nothing is handed on."""
    files, q, _ = CASES["asks-what-happens-gets-the-impact"]
    db = build_case(tmp_path, files)
    hits = mdfts.search(db, q, limit=3)
    assert [h.heading for h in hits][:2] == ["Impact", "Diagnosis"]
    why = mdfts.search(db, "why does the vent stay shut during a glaze firing?", limit=1)
    assert why[0].heading == "Diagnosis"


@pytest.mark.parametrize("query", [
    "what are the consequences of leaving the kiln door open during a firing?",
    "kiln door left open during a firing, should I worry?",
    "is the ware affected when the kiln door is left open during a firing?",
    "is it safe to leave the kiln door open during a firing, what could break?",
    "kiln door left open during a firing, should I be worried?",
    "which ware is impacted when the kiln door is left open during a firing?",
    "does leaving the kiln door open during a firing put the ware at risk?",
    "is it harmful to leave the kiln door open during a firing?",
    "kiln door left open during a firing, what is the fallout?",
])
def test_asking_what_it_affects_gets_the_impact(tmp_path: Path, query: str) -> None:
    """Consequences, worry, affect, risk, harm, fallout and what could break ask for the Impact
    (`role`), as "what happens" does, in any of their forms (worried, impacted), and it comes first."""
    files, _, _ = CASES["asks-what-to-do-gets-mitigation"]
    db = build_case(tmp_path, files)
    role = signal_by_heading(db, query, "role")
    assert role["Impact"] == 1.0 and role["Meaning"] == 0.0
    assert [h.heading for h in mdfts.search(db, query, limit=1)] == ["Impact"]


@pytest.mark.parametrize("query", [
    "what stops working when the kiln door has been left open for ten minutes?",
    "the kiln door has been left open for ten minutes, does the kiln keep working?",
])
def test_asking_what_stops_working_gets_the_impact_beside_the_meaning(tmp_path: Path, query: str) -> None:
    """"stops working", "keep working" and "still work" (two-word cues) ask what a problem does:
    the page's Impact, which holds none of the query's words but "kiln", is brought in beside the
    Meaning that holds them, and takes its score; "working" alone is no cue."""
    files, _, _ = CASES["asks-what-to-do-gets-mitigation"]
    db = build_case(tmp_path, files)
    assert [h.heading for h in mdfts.search(db, query, limit=1)] == ["Impact"]
    assert signal_by_heading(db, "the kiln door has been left open while working for ten minutes", "role")["Meaning"] == 0.0
    assert [h.heading for h in mdfts.search(db, "the kiln door has been left open while working for ten minutes",
                                            limit=1)] == ["Meaning"]


def test_a_tool_page_wins_by_name_only_when_the_query_says_to_use_it(tmp_path: Path) -> None:
    """Without "using dip" the task's own page keeps the query: the tool word is what names the page."""
    files, _, _ = CASES["with-tool-names-the-page"]
    db = build_case(tmp_path, files)
    assert [h.path for h in mdfts.search(db, "glaze up and colour a batch of mugs", limit=1)] == ["pages/glaze.md"]
    assert [h.path for h in mdfts.search(db, "glaze up and colour a batch of mugs using dip", limit=1)] == ["pages/dip.md"]


def test_a_key_and_its_value_is_an_identifier_the_hit_must_hold(tmp_path: Path) -> None:
    """kiln=north, held as a token, is an identifier of the query (its credit, and the honest
    hit's `exact` flag), as a kebab name of three parts is; a plain word pair is not."""
    files, q, _ = CASES["key-value-is-an-exact-token"]
    db = build_case(tmp_path, files)
    hit = mdfts.search(db, q, limit=1, explain=True)[0]
    assert hit.explain is not None and hit.explain["identifiers"] == 1 and hit.exact is True
    assert hit.explain["signals"]["ident"]["value"] == 1.0
    plain = mdfts.search(db, "kiln north", limit=1, explain=True)[0]
    assert plain.explain is not None and plain.explain["identifiers"] == 0


def test_hardware_words_find_their_synonyms(tmp_path: Path) -> None:
    """RAM finds memory and processor finds CPU: the docs write one, a question the other."""
    files = {
        "kiln/controller.md": ("# Controller\n\n## Raising the memory and CPU of the controller\n\n"
                               "Set the controller's memory and CPU requests in its settings file.\n\n"
                               "## Panel\n\nThe panel shows each zone's heat.\n"),
        "kiln/kiln.md": "# Kiln\n\n## Give the kiln more shelves\n\nAdd shelves for more ware per firing.\n",
        **{f"notes/n{i}.md": f"# Note {i}\n\n## Clay\n\nClay for bench {i} is wedged by hand.\n" for i in range(4)},
    }
    db = build_case(tmp_path, files)
    hits = mdfts.search(db, "give the controller more processor cores and RAM", limit=1)
    assert [h.heading for h in hits] == ["Raising the memory and CPU of the controller"]


def test_a_phrasal_verb_finds_its_single_verb_only_as_a_pair(tmp_path: Path) -> None:
    """"turn off" finds Disable by both its words; "turn" or "off" alone, or the two apart, do not."""
    files, _, _ = CASES["phrasal-verb"]
    db = build_case(tmp_path, files)

    def matches(q: str) -> dict[str, str]:
        (hit,) = [h for h in mdfts.search(db, q, limit=10, explain=True) if h.heading == "Disabling the vent"]
        assert hit.explain is not None
        return {t["term"]: t["match"] for t in hit.explain["terms"]}

    assert matches("turning off kiln vent") == {"turning": "stem", "off": "stem", "kiln": "exact", "vent": "exact"}
    assert matches("turn kiln vent off") == {"turn": "none", "off": "none", "kiln": "exact", "vent": "exact"}
    assert matches("kiln vent turn") == {"turn": "none", "kiln": "exact", "vent": "exact"}


def test_an_irregular_form_of_a_phrasal_verb_finds_its_single_verb(tmp_path: Path) -> None:
    """"took out" is "take out" (remove), as "taking out" is: the irregular past forms count."""
    files = {
        "kiln/shelf.md": ("# Shelf\n\n## Removing a shelf\n\nRemove the shelf once the kiln has cooled.\n\n"
                          "## Shelf wash\n\nWash the shelf with a thin coat.\n"),
        **{f"notes/n{i}.md": f"# Note {i}\n\n## Clay\n\nClay for bench {i} is wedged by hand.\n" for i in range(4)},
    }
    db = build_case(tmp_path, files)
    for q, verb in (("the shelf I took out", "took"), ("the shelf I am taking out", "taking")):
        (hit,) = [h for h in mdfts.search(db, q, limit=10, explain=True) if h.heading == "Removing a shelf"]
        assert hit.explain is not None
        matches = {t["term"]: t["match"] for t in hit.explain["terms"]}
        assert matches == {verb: "stem", "out": "stem", "shelf": "exact"}, q


def test_what_both_words_of_a_pair_find_counts_once_in_bm25(tmp_path: Path) -> None:
    """"turn off" finds Disable by both its words, but bm25 counts it once: a section holding
    only "disable" weighs as one holding only "turn", not twice as much (a rare single verb
    would outweigh the query's own words)."""
    files = {
        "kiln/panel.md": ("# Panel\n\n## Panel switch\n\nDisable it at the wall panel.\n\n"
                          "## Panel lever\n\nTurn it at the wall lever.\n"),
        "kiln/vent.md": "# Vent\n\n## Vent\n\nThe vent sits above the kiln.\n",
        **{f"notes/n{i}.md": f"# Note {i}\n\n## Clay\n\nClay for bench {i} is wedged by hand.\n" for i in range(4)},
    }
    bm = signal_by_heading(build_case(tmp_path, files), "turn off the vent", "bm25")
    assert bm["Panel switch"] > 0
    assert bm["Panel switch"] == pytest.approx(bm["Panel lever"], rel=0.05)


def query_idfs(tmp_path: Path, files: dict[str, str], query: str) -> dict[str, float]:
    """Each query term's idf as search.sql weighs it (its explain), over a build of `files`."""
    (hit,) = mdfts.search(build_case(tmp_path, files), query, limit=1, explain=True)
    assert hit.explain is not None
    return {t["term"]: t["idf"] for t in hit.explain["terms"]}


def test_a_contraction_of_a_stop_word_weighs_nothing(tmp_path: Path) -> None:
    """"what's", "I'm" and "don’t" (typographic apostrophe) are function words like "what" and
    "don't": no key term, though the docs seldom write them (a rare word's idf, else)."""
    files = {
        "kiln/news.md": "# Kiln log\n\n## What's new\n\nWhat's new: I'm told the relay is fixed; don't open it.\n",
        **{f"notes/n{i}.md": f"# Note {i}\n\n## Relay\n\nThe relay of kiln {i} clicks.\n" for i in range(4)},
    }
    idf = query_idfs(tmp_path, files, "what's wrong, I'm sure the relay don’t click")
    assert sorted(idf) == ["click", "relay", "sure", "wrong"]


def test_a_filler_word_weighs_nothing(tmp_path: Path) -> None:
    """"actually", "really", "maybe", "might", "must" are the filler and modal words of a spoken
    question: the docs seldom write them, so as terms they weighed as the rarest words of the
    query and picked the one note that happens to say them."""
    files = {
        "kiln/relay.md": "# Relay\n\n## Replace the relay\n\nSwap the zone relay for a spare of the same rating.\n",
        "kiln/log.md": "# Kiln log\n\n## Tuesday\n\nThe relay actually clicked; maybe it really might be fine.\n",
        **{f"notes/n{i}.md": f"# Note {i}\n\n## Relay\n\nThe relay of kiln {i} clicks.\n" for i in range(4)},
    }
    q = "how must I actually replace the relay, maybe it really might be the relay"
    assert sorted(query_idfs(tmp_path / "idf", files, q)) == ["relay", "replace"]
    (hit,) = mdfts.search(build_case(tmp_path, files), q, limit=1)
    assert hit.heading == "Replace the relay"


COMPOUND_APART = {
    "kiln/care.md": "# Kiln care\n\n## Empty the fire box\n\nShovel the ash out of the fire box once it is cold.\n",
    "kiln/bins.md": "# Bins\n\n## Empty the ash bin\n\nTip the ash bin into the skip each week.\n",
    "stock/bricks.md": "# Stock\n\n## Bricks\n\nA box of fire bricks came; the fire clay box is empty.\n",
}


@pytest.mark.parametrize("query", ["empty the firebox", "how do I empty the fireboxes?"])
def test_a_compound_finds_its_words_written_apart(tmp_path: Path, query: str) -> None:
    """A compound the docs never write as one word ("firebox", "filesystem") is also the phrase
    of the two words they write instead ("fire box"), as "fire box" finds firebox."""
    (hit,) = mdfts.search(build_case(tmp_path, COMPOUND_APART), query, limit=1, explain=True)
    assert (hit.path, hit.heading) == ("kiln/care.md", "Empty the fire box")
    assert hit.explain is not None
    assert {t["term"]: t["match"] for t in hit.explain["terms"]}[query.split()[-1].rstrip("?")] == "stem"


def test_a_compound_the_docs_write_stays_whole(tmp_path: Path) -> None:
    """Where the docs write the compound as one word, its two words apart do not stand in for it:
    "clean up" would dilute what "cleanup" finds."""
    files = {
        "kiln/a.md": "# Kiln\n\n## Cleanup\n\nThe cleanup step runs after a firing.\n",
        "kiln/b.md": "# Yard\n\n## Cleanup\n\nThe cleanup of the yard is weekly.\n",
        "kiln/c.md": "# Shed\n\n## Tidy\n\nClean up the shed first.\n",
        "kiln/d.md": "# Shelves\n\n## Care\n\nClean the shelves up with a brush.\n",
    }
    hits = mdfts.search(build_case(tmp_path, files), "cleanup", limit=5)
    assert {h.path for h in hits} == {"kiln/a.md", "kiln/b.md"}


def test_a_phrasal_compound_the_docs_write_still_finds_the_verb(tmp_path: Path) -> None:
    """A compound that ends in a particle (a phrasal verb written as one word: cooldown, rollback,
    setup) finds the section that writes the verb ("Cooling down a glaze kiln") even where the
    docs also write the compound: its split counts in the candidates' own evidence, while the
    compound alone still picks what bm25 scores (see the test above)."""
    files = {
        "kiln/a.md": "# Kiln\n\n## Cooldown\n\nThe cooldown takes a day; a kiln is slow.\n",
        "kiln/b.md": "# Shed kiln\n\n## Cooldown log\n\nLog each cooldown of the shed kiln.\n",
        "yard/notes.md": "# Yard\n\n## Notes\n\nPut the cool shelves down by the door.\n",
        "kiln/glaze.md": ("# Glaze firing\n\n## Cooling down a glaze kiln\n\nLeave the glaze kiln shut "
                          "until it reads under 100 C.\n\n## Loading\n\nLoad the glaze kiln with care.\n"),
    }
    hits = mdfts.search(build_case(tmp_path, files), "glaze kiln cooldown", limit=3)
    assert (hits[0].path, hits[0].heading) == ("kiln/glaze.md", "Cooling down a glaze kiln")


def test_a_short_plural_gets_its_stems_weight(tmp_path: Path) -> None:
    """Porter drops the s of a three-letter word (ops → op): its df is the stem's, so a word in
    most sections is not weighed as one in none (the rarest term of the query)."""
    files = {f"team{i}.md": f"# Team {i}\n\nThe ops rota of team {i}; ops notes go in the log.\n" for i in range(5)}
    files["wash.md"] = "# Kiln wash\n\nA glaze drip lifts off a washed shelf.\n\n## Drips\n\nGrind a drip flat.\n"
    idf = query_idfs(tmp_path, files, "ops drip")
    assert idf["ops"] < idf["drip"]


def test_a_words_df_is_its_own_stems(tmp_path: Path) -> None:
    """The stem search (the longest prefix of the word in term_df) found no stem for a word whose
    stem keeps its final y (dry: porter turns y into i only after a vowel), and for a word found in
    one section, which term_df does not list, it ran on to a shorter word's stem (potter -> pot):
    a common word weighed as the rarest, a rare one as a common one."""
    files = {f"shelf{i}.md": f"# Shelf {i}\n\nLet the pots dry on shelf {i} overnight.\n" for i in range(5)}
    files["wash.md"] = "# Kiln wash\n\nThe potter lifts a glaze drip off the washed shelf.\n"
    idf = query_idfs(tmp_path, files, "pots dry potter")
    assert idf["dry"] == idf["pots"] < idf["potter"]


def test_a_words_stem_need_not_be_its_prefix(tmp_path: Path) -> None:
    """Porter's stem is not always a prefix of the word: it puts back an e (glazing -> glaze),
    makes a y before -s an i (keys -> kei), drops a final e to two letters (one -> on); and a
    word can be another word's stem (statuses -> status, while status -> statu). Each query word
    weighs as its own stem, by the df FTS5 counts for it, not by a shorter stem or a neighbour's."""
    files = {f"bench{i}.md": (f"# Bench {i}\n\nOne glaze keys the status of bench {i}; "
                              f"glazing it takes one day, and the keys hang by its door.\n") for i in range(6)}
    files["log.md"] = "# Log\n\nRecord statuses here, and the statuses of the kiln.\n\n## Statuses\n\nAll statuses.\n"
    db = build_case(tmp_path, files)
    (hit,) = mdfts.search(db, "one keys glazing status", limit=1, explain=True)
    assert hit.explain is not None
    idf = {t["term"]: t["idf"] for t in hit.explain["terms"]}
    with sqlite3.connect(db) as conn:
        stem = dict(conn.execute("select term, idf from term_df where term in ('on', 'kei', 'glaze', 'statu')"))
    assert idf == {"one": stem["on"], "keys": stem["kei"], "glazing": stem["glaze"], "status": stem["statu"]}


def test_cli_explain_text_and_json(tmp_path: Path) -> None:
    files, _, _ = CASES["camelcase-siblings"]
    db = build_case(tmp_path, files)
    text = CliRunner().invoke(cli, ["search", str(db), "LanternQueueOverflow mitigation", "--explain", "-k", "1"])
    assert text.exit_code == 0, text.output
    first, snippet, why, terms = text.stdout.splitlines()[:4]
    assert first.endswith("(no exact match)")
    assert why.startswith("    why: ") and "%" in why
    assert terms == "    terms: LanternQueueOverflow=none* mitigation=exact   (* identifier)"
    out = CliRunner().invoke(cli, ["search", str(db), "LanternQueueOverflow mitigation", "--explain", "--json"])
    rows = json.loads(out.stdout)
    assert rows and all(r["exact"] is False and "signals" in r["explain"] for r in rows)


def test_snippet_is_cut_from_a_bounded_window(tmp_path: Path) -> None:
    """A word repeated thousands of times in one huge section (issue #16: FTS5's snippet() took
    23-37 s on 30k repeats in 350 KB). The snippet comes from the first 20,000 characters only:
    a term whose first occurrence lies beyond them is not searched for there."""
    words = [f"w{i:05d}" for i in range(12000)]
    for i in range(0, 12000, 2):
        words[i] = "needle"
    words[11999] = "haystackend"
    db = build_case(tmp_path, {"sn/one.md": "# One\n\n" + " ".join(words) + "\n"})
    (hit,) = mdfts.search(db, "needle", limit=1)
    assert "[needle]" in hit.snippet and len(hit.snippet) <= 200
    (far,) = mdfts.search(db, "haystackend", limit=1)  # beyond the window: the section's start
    assert far.snippet.startswith("needle w00001") and "[" not in far.snippet and len(far.snippet) <= 120


def test_a_big_section_is_scored_without_fts5_reading_its_row(tmp_path: Path) -> None:
    """A section of over 100,000 characters (issue #15: a 20 MB one cost a search 0.9 to 2.2 s and
    ~600 MB): each highlight() of a candidate makes FTS5 read its whole row through
    sections_indexed, computing its text, once a key term. A big section's evidence comes from
    column filters instead, and its snippet and phrase test from its first 40,000 characters, so
    no search reads its row through FTS5, and its hit is the one the words in it make."""
    filler = " ".join(f"glaze{i % 97} pots" for i in range(20000))
    files = {"pots/firing.md": "# Firing\n\n## Kiln schedule\n\nThe kiln schedule for cone six, **slow** at first.\n\n"
                               + filler + "\n",
             "pots/other.md": "# Other\n\nNothing about it.\n"}
    db = build_case(tmp_path, files)
    conn = connect(db)
    reads: list[str] = []
    conn.set_trace_callback(reads.append)
    query = get_query(conn, "search")
    rows = run_query(conn, query, {"q": "kiln schedule"}) + run_query(conn, query, {"q": "kiln schedule", "explain": 1})
    conn.close()
    assert not [r for r in reads if r.startswith("-- SELECT") and "sections_indexed" in r]
    assert [(r["path"], r["heading"], r["rank"]) for r in rows] == [("pots/firing.md", "Kiln schedule", 1)] * 2
    assert rows[0]["snippet"].startswith("The [kiln] schedule for cone six, slow at first. glaze0 pots glaze1")
    assert rows[0]["body"] == files["pots/firing.md"][len("# Firing\n\n"):].rstrip("\n")
    why = json.loads(rows[1]["explain"])
    assert why["signals"]["hprec"]["value"] == 1 and why["signals"]["phrase"]["value"] == 1
    assert [t["match"] for t in why["terms"]] == ["exact", "exact"]


def test_snippet_is_prose_below_the_heading(tmp_path: Path) -> None:
    """The hit names its heading already: the snippet starts below it, with table pipes and rules
    blanked; a section that is only a heading shows the heading's words, without its markers."""
    db = build_case(tmp_path, {"glaze/kilns.md": "# Kilns\n\n## Firing schedule\n\n| Cone | Hours |\n"
                                                 "|---|---|\n| 6 | kilns need 9 |\n\n## Kiln wash\n"})
    by_heading = {h.heading: h.snippet for h in mdfts.search(db, "kilns firing kiln wash", limit=5)}
    assert by_heading["Firing schedule"] == "Cone Hours 6 [kilns] need 9"
    assert by_heading["Kiln wash"] == "[Kiln] wash"


def test_snippet_marks_one_word_not_the_next_line(tmp_path: Path) -> None:
    """A key word that ends its line is marked alone: the mark stops at the line break, not at the
    next space of the following line (which gave `[kilns\\n\\nkilns]` and `[kilns\\n\\n|]`)."""
    db = build_case(tmp_path, {"glaze/kilns.md": "# Firing kilns\n\nkilns heat slowly.\n",
                               "glaze/table.md": "# Tables\n\n## Sizes\n\nkilns\n\n| Name | Size |\n|---|---|\n| a | b |\n"})
    marked = [re.findall(r"\[([^\]]*)\]", h.snippet) for h in mdfts.search(db, "kilns", limit=5)]
    assert marked == [["kilns"], ["kilns"]]


def test_snippet_reads_a_link_as_its_text(tmp_path: Path) -> None:
    """A link, a reference link and an image show as their text: the address neither fills the
    snippet nor joins the mark (a mark ran to the next space: `[pugmill](https://ex.amp]le/...`)."""
    db = build_case(tmp_path, {"clay/pugmill.md": (
        "# Pugmill\n\n## Cleaning\n\nSee the [pugmill guide](https://example.com/very/long/path/to/a/page) "
        "and the [old rota][rota] before you start. ![pugmill photo](img/pugmill-front.png) "
        "Wash the barrel daily.\n\n[rota]: https://example.com/rota\n")})
    (hit,) = mdfts.search(db, "pugmill cleaning barrel", limit=1)
    assert hit.heading == "Cleaning"
    assert hit.snippet.startswith("See the [pugmill] guide and the old rota before you start. pugmill photo Wash")
    assert "](" not in hit.snippet and "https" not in hit.snippet and "img/" not in hit.snippet


def test_snippet_of_a_word_only_in_an_address_marks_nothing(tmp_path: Path) -> None:
    """A key word found only inside a link's address: the snippet shows the prose there, unmarked,
    not the address cut in two by the mark."""
    db = build_case(tmp_path, {"clay/wedging.md": (
        "# Wedging\n\nRead [the guide](https://example.com/spiralwedge/intro) first, then knead the clay.\n")})
    (hit,) = mdfts.search(db, "spiralwedge", limit=1)
    assert "[" not in hit.snippet and "Read the guide first, then knead the clay." in hit.snippet


def test_snippet_of_a_word_in_an_address_after_long_links_shows_its_link(tmp_path: Path) -> None:
    """The addresses taken out before the word shorten the window: the snippet is placed at the
    link whose address holds the word, not at the word's place in the markdown (which showed the
    window's last words, `…to AWS`, or nothing but `…`)."""
    far = "https://console.example.com/very/long/path/" + "x" * 150
    db = build_case(tmp_path, {"clay/backups.md": (
        "# Backups\n\n## Stores\n\n"
        f"- [**Shelf store**]({far}/a) keeps the bisque ware for a month\n"
        f"- [**Crate store**]({far}/b) keeps the glaze ware for a year\n"
        "- [**Nightly dumps**](https://ci.example.com/dumps) write the kiln logs to "
        "[the bucket](https://store.example.com/buckets/kilnlogbucket?region=north) "
        "in plain formats so that we are never locked into one vendor\n")})
    (hit,) = mdfts.search(db, "kilnlogbucket", limit=1)
    assert "[" not in hit.snippet
    assert "write the kiln logs to the bucket in plain formats" in hit.snippet


def test_snippet_marks_a_word_where_it_starts_a_word(tmp_path: Path) -> None:
    """The mark goes where the key word starts a word, not inside a longer name that holds it
    (`glaze[TemperatureRef]`), when the window has both."""
    db = build_case(tmp_path, {"kiln/settings.md": (
        "# Settings\n\n## Firing\n\n- glazeTemperatureRef: the name of the secret that holds the peak "
        "temperature of the firing.\n")})
    (hit,) = mdfts.search(db, "firing temperature", limit=1)
    assert re.findall(r"\[([^\]]*)\]", hit.snippet) == ["temperature"]


def test_snippet_marks_no_stem_inside_another_word(tmp_path: Path) -> None:
    """A key word is looked for by its stem's prefix (`ove` for "over"): inside another word
    ("above") it is no hit to mark, and a later word that is one comes first; a CamelCase part
    is a word's start (`glaze[TemperatureRef]`) when nothing better is there."""
    db = build_case(tmp_path, {"kiln/loading.md": ("# Loading\n\n## Shelves\n\nAs shown above, stack the "
                                                   "shelves over the posts.\n\n## Settings\n\n"
                                                   "- glazeTemperatureRef: the secret's name.\n")})
    (shelves,) = [h for h in mdfts.search(db, "over shelves", limit=5) if h.heading == "Shelves"]
    assert re.findall(r"\[([^\]]*)\]", shelves.snippet) == ["shelves"]
    (settings,) = [h for h in mdfts.search(db, "settings temperature", limit=5) if h.heading == "Settings"]
    assert "glaze[TemperatureRef]:" in settings.snippet


def test_snippet_marks_an_identifier_whole(tmp_path: Path) -> None:
    """An identifier the query names is marked as written, where it stands, not by one of its
    parts (`push [with] --shove-with-care` marked the stop word of the flag's parts)."""
    db = build_case(tmp_path, {"git/pushing.md": ("# Pushing\n\n## Shared branches\n\nIf you must, push with "
                                                  "--shove-with-care, never with plain --shove.\n")})
    (hit,) = mdfts.search(db, "--shove-with-care", limit=1)
    assert re.findall(r"\[([^\]]*)\]", hit.snippet) == ["--shove-with-care"]
    (named,) = mdfts.search(db, "plain --shove", limit=1)
    assert re.findall(r"\[([^\]]*)\]", named.snippet) == ["--shove"]


def test_snippet_marks_a_long_word_to_its_end(tmp_path: Path) -> None:
    """A key word that starts a long dotted key is marked to the key's end, not cut after 40
    characters (`[kilncontroller.glaze.server.tls.ca.c]ert.path`); a word with no end in sight (a
    blob longer than the snippet shows) is marked only as far as the search matched it."""
    key = "kilncontroller.glaze.server.tls.ca.cert.path"
    db = build_case(tmp_path, {"kiln/keys.md": (f"# Keys\n\n## Client keys\n\n* {key} - the CA file\n\n"
                                                "## Blobs\n\nThe kilnblob" + "q" * 300 + " is the seal.\n")})
    by_heading = {h.heading: h.snippet for h in mdfts.search(db, "kilncontroller keys", limit=5)}
    assert re.findall(r"\[([^\]]*)\]", by_heading["Client keys"]) == [key]
    (blobs,) = mdfts.search(db, "kilnblob seal", limit=1)
    (mark,) = re.findall(r"\[([^\]]*)\]", blobs.snippet)
    assert len(mark) >= 3 and "kilnblob".startswith(mark)


def test_a_commented_out_word_is_not_searched_or_shown(tmp_path: Path) -> None:
    """Words in an HTML comment are not what the page says: no hit for them, no snippet of them,
    no exact token (the author's note `<!-- TODO ... -->` or a paragraph commented out)."""
    db = build_case(tmp_path, {"kiln/firing.md": ("# Firing\n\n## Bisque\n\nFire the bisque slowly.\n"
                                                  "<!-- TODO: explain the glostwarp fault, GLOST_WARP_LIMIT -->\n\n"
                                                  "## Glaze\n\nThe glaze firing is the hot one.\n")})
    assert mdfts.search(db, "glostwarp", limit=5) == []
    assert mdfts.search(db, "GLOST_WARP_LIMIT", limit=5) == []
    (bisque,) = mdfts.search(db, "bisque", limit=1)
    assert "TODO" not in bisque.snippet and "<!--" not in bisque.body
    assert bisque.body.count("\n") == bisque.end_line - bisque.start_line


def test_snippet_keeps_a_dash_that_starts_the_text(tmp_path: Path) -> None:
    """Below an ATX heading the text starts at its first line as written (`-h, --help`): only a
    setext heading's underline is left out with the heading. (A word after dashes starts a word.)"""
    db = build_case(tmp_path, {"cli/fire.md": ("# fire\n\n## Options\n\n```\n-h, --help   help for fire\n```\n\n"
                                               "Glost\n-----\n\nThe glost firing comes second.\n")})
    by_heading = {h.heading: h.snippet for h in mdfts.search(db, "fire options help glost", limit=5)}
    assert by_heading["Options"] == "-h, --[help] help for fire"
    assert by_heading["Glost"].startswith("The [glost] firing")


def test_snippet_drops_block_quote_markers(tmp_path: Path) -> None:
    """A block quote reads as its text: the `>` that starts each of its lines is a mark a reader
    does not see (a page that opens with a quoted summary, a quoted note), two deep at most. A `>`
    inside a line stays: it is text (`a > b`)."""
    db = build_case(tmp_path, {"clay/slip.md": ("# Slip\n\n> Liquid clay for casting.\n> More: the slip guide.\n>\n"
                                                ">> A nested note on slip.\n\nPour when slip > 20 C.\n")})
    (hit,) = mdfts.search(db, "casting slip", limit=1)
    assert hit.snippet.startswith("Liquid clay for [casting]. More: the slip guide.")
    assert hit.snippet.count(">") == 1 and "guide. A nested note" in hit.snippet and "slip > 20" in hit.snippet


def test_a_word_in_every_section_of_a_large_index_still_scores(tmp_path: Path) -> None:
    """A word every section holds weighs next to nothing, but not nothing: its idf, to four places,
    rounded to 0 past ~10,000 sections, and a query of such words had no weight to share between
    its terms - every score and signal NULL, the order by id."""
    n = 12_000
    body = "".join(f"## Lamp {i}\n\nLamp {i}.\n\n" for i in range(n))
    db = build_case(tmp_path, {"lamps.md": f"# Lamp list\n\nLamp.\n\n{body}"})
    with sqlite3.connect(db) as conn:
        assert conn.execute("select idf from term_df where term = 'lamp'").fetchone()[0] > 0
    hits = mdfts.search(db, "lamp", limit=3, explain=True)
    assert len(hits) == 3 and all(h.score is not None and h.score > 0 for h in hits)
    assert all(s["value"] is not None for h in hits for s in (h.explain or {})["signals"].values())


def test_the_row_budget_is_a_real_cap(tmp_path: Path) -> None:
    """A word in more sections than the budget (2,000 rows): bm25 scores only
    the first budget rows it matches, so the best section past them is not found by that word
    alone - the proof that the work is capped - while a second, rarer word still finds it."""
    n = 2100
    body = "".join(f"## Item {i}\n\nThe lamp is on.\n\n" for i in range(n))
    db = build_case(tmp_path, {"cap/many.md": f"# Many\n\n{body}## Lamp\n\nLamp lamp lamp, wick.\n"})
    assert [h.heading for h in mdfts.search(db, "wick", limit=1)] == ["Lamp"]
    hits = mdfts.search(db, "lamp", limit=10)
    assert len(hits) == 10 and "Lamp" not in [h.heading for h in hits]
    assert [h.heading for h in mdfts.search(db, "lamp wick", limit=1)] == ["Lamp"]


def test_near_is_looked_up_on_the_candidates_own_row(tmp_path: Path) -> None:
    """`near`'s FTS5 lookups end on the row asked for (each NEAR is ORed with a test that no
    row holding both words passes, see `close`): a section holding both words apart earns no
    near, though the next section holds them side by side and the one after holds one only."""
    db = build_case(tmp_path, {"kiln/notes.md": (
        "# Kiln notes\n\n## Loading\n\nThe glaze goes on first; stack every shelf, then fire the kiln.\n\n"
        "## Firing\n\nA glaze kiln runs hot.\n\n## Cooling\n\nThe kiln cools overnight.\n")})
    near = signal_by_heading(db, "glaze kiln", "near")
    assert (near["Loading"], near["Firing"]) == (0, 1)


def test_a_common_phrase_stands_in_the_and_as_its_rarest_word(tmp_path: Path) -> None:
    """bm25 counts every row of each phrase of the AND (fts's second pass) before it scores one, and a
    phrase's rows cost ten times a word's: a phrase of plain words whose rarest word is in more
    than ten budgets of rows (20,000) is in the AND as that word; a rarer phrase stays whole."""
    body = "".join(f"## Item {i}\n\nThe lamp-wick is trimmed.\n\n" for i in range(20_010))
    db = build_case(tmp_path, {"lamps/many.md": f"# Many\n\n{body}## Shelf\n\nThe kiln-shelf lamp-wick.\n"})
    with sqlite3.connect(db) as conn:
        sql = conn.execute("select sql from mdfts_queries where name = 'search'").fetchone()[0]
        steps = sql[:sql.rindex("\nselect\n")]  # every step, then the AND instead of the rows
        (and_,) = conn.execute(steps + "\nselect all_ from m", {"q": "kiln-shelf lamp-wick", "limit": 10,
                                                                 "explain": None, "prefix": None}).fetchone()
    assert and_ == '("kiln-shelf") AND ("wick")'  # (lamp is also in the folder's name)


def test_role_is_the_heading_not_the_text(tmp_path: Path) -> None:
    """`role` counts a role word (Mitigation, Workaround, ...) in the heading only: a section that
    names one in its text, after a section whose heading holds one, earns no role."""
    db = build_case(tmp_path, {"alerts/kiln.md": (
        "# Kiln\n\n## Mitigation\n\nOpen the kiln vent.\n\n"
        "## Relay\n\nThe kiln relay: a workaround is to open the vent by hand.\n")})
    role = signal_by_heading(db, "fix kiln", "role")
    assert (role["Mitigation"], role["Relay"]) == (1, 0)


def test_a_file_name_only_a_synonym_names_is_no_name(tmp_path: Path) -> None:
    """A synonym finds a section's words, not its page's name: "schedule" finds cron, but
    cron.md, which merely mentions `crontab`, is not the page "crontab schedule" names."""
    files = {
        "pages/cron.md": "# cron\n\n> A system scheduler for jobs.\n> Its entries are edited with `crontab`.\n\n"
                         "- See the entries:\n\n`tldr crontab`\n",
        "pages/crontab.md": "# crontab\n\n> Schedule cron jobs to run on a time interval for the current user.\n\n"
                            "- Edit the jobs of the current user:\n\n`crontab -e`\n\n"
                            "- List the jobs of the current user:\n\n`crontab -l`\n\n"
                            "- Remove every job of the current user:\n\n`crontab -r`\n\n"
                            "- Replace the jobs with the contents of a file:\n\n`crontab path/to/file`\n\n"
                            "- Edit the jobs of another user:\n\n`sudo crontab -e -u user`\n\n"
                            "- Run a job every day at 10:00, in the editor:\n\n`0 10 * * * command`\n",
        "pages/at.md": "# at\n\n> Run a command once at a later time.\n\n- Run it in five minutes:\n\n`at now + 5 minutes`\n",
    }
    db = build_case(tmp_path, files)
    assert mdfts.search(db, "crontab schedule", limit=3)[0].path == "pages/crontab.md"
    # the synonym still finds the page by its words
    assert "pages/cron.md" in {h.path for h in mdfts.search(db, "schedule", limit=3)}


def test_a_page_title_asked_for_by_its_name_alone_is_the_answer(tmp_path: Path) -> None:
    """A title-only h1 over its children loses to them (`empty`), unless the query is its whole
    heading and nothing more: then the page is what was asked for."""
    body = "# KilnDoorLeftOpen\n\n## Meaning\n\nThe KilnDoorLeftOpen alert fires when the door sensor reads open.\n\n" \
           "## Impact\n\nHeat escapes; a firing of KilnDoorLeftOpen runs long.\n\n" \
           "## Mitigation\n\nClose the door, then clear KilnDoorLeftOpen.\n"
    files = {"alerts/KilnDoorLeftOpen.md": body,
             "alerts/KilnTooHot.md": body.replace("KilnDoorLeftOpen", "KilnTooHot").replace("door sensor reads open", "heat is high")}
    db = build_case(tmp_path, files)
    top = mdfts.search(db, "KilnDoorLeftOpen", limit=3)[0]
    assert (top.path, top.heading) == ("alerts/KilnDoorLeftOpen.md", "KilnDoorLeftOpen")
    # the compound title spelled out word by word is the same name
    top = mdfts.search(db, "kiln door left open", limit=3)[0]
    assert (top.path, top.heading) == ("alerts/KilnDoorLeftOpen.md", "KilnDoorLeftOpen")
    # a query that asks for more than the title still gets the child
    assert mdfts.search(db, "KilnDoorLeftOpen mitigation", limit=3)[0].heading == "Mitigation"
    assert mdfts.search(db, "kiln door left open mitigation", limit=3)[0].heading == "Mitigation"


def test_a_one_word_page_title_asked_for_alone_is_the_answer(tmp_path: Path) -> None:
    """A title of one plain word is a name, as an identifier is: the query that is that word
    alone asks for the page ("Watchdog"), where one of several plain words ("kiln vents") asks
    what its children say."""
    body = "# Pyrometer\n\n## Meaning\n\nThe pyrometer reads the kiln's heat through the spyhole.\n\n" \
           "## Calibration\n\nCheck the pyrometer against a witness cone every tenth firing.\n"
    files = {**FILLER_TOOLS, "kiln/pyrometer.md": body,
             "kiln/vents.md": "# Kiln vents\n\n## Opening\n\nOpen the kiln vents below 600 degrees.\n"}
    db = build_case(tmp_path, files)
    top = mdfts.search(db, "pyrometer", limit=3)[0]
    assert (top.path, top.heading) == ("kiln/pyrometer.md", "Pyrometer")
    assert mdfts.search(db, "pyrometer calibration", limit=3)[0].heading == "Calibration"
    assert mdfts.search(db, "kiln vents", limit=3)[0].heading == "Opening"


def test_hprec_counts_every_part_of_a_compound_heading_the_query_names(tmp_path: Path) -> None:
    """A query that writes each part of a compound heading as its own word names all of it
    (`hprec` 1), however many parts it has, as one that writes it whole does; some of its parts
    name none of a CamelCase word."""
    files = {
        "alerts/KilnShelfCrackedHot.md": ("# Kiln notes\n\n## KilnShelfCrackedHot\n\nA shelf cracked while the "
                                          "kiln was hot; the firing stops.\n"),
        "alerts/KilnShelfDusty.md": "# Shelf notes\n\n## KilnShelfDusty\n\nWipe the shelf before loading.\n",
        **{f"notes/n{i}.md": f"# Note {i}\n\n## Clay\n\nCheck the clay for bench {i}.\n" for i in range(4)},
    }
    db = build_case(tmp_path, files)

    def hprec(q: str) -> float:
        (hit,) = [h for h in mdfts.search(db, q, limit=5, explain=True) if h.heading == "KilnShelfCrackedHot"]
        assert hit.explain is not None
        return float(hit.explain["signals"]["hprec"]["value"])

    assert hprec("KilnShelfCrackedHot") == pytest.approx(1.0)
    assert hprec("kiln shelf cracked hot") == pytest.approx(1.0)
    # a CamelCase word is a name: half its parts name none of it, as "git" names none of GitLab
    # (else every alert that shares a part with the one the query means half matches)
    assert hprec("cracked hot") == pytest.approx(0.0)
    assert hprec("kiln shelf cracked") == pytest.approx(0.0)


def test_a_camelcase_heading_word_the_query_writes_whole_counts_once(tmp_path: Path) -> None:
    """A query that writes a heading's CamelCase word names that one word: KilnShelf marks the
    word and, by its phrase "Kiln Shelf", the parts after the heading too, which counted it twice
    (two thirds of "Reset the KilnShelf timer"). Its parts alone still name half of it."""
    files = {
        "kiln/shelf.md": "# Shelf\n\n## Reset the KilnShelf timer\n\nThe KilnShelf timer resets at dawn.\n",
        **FILLER_TOOLS,
    }
    db = build_case(tmp_path, files)

    def hprec(q: str) -> float:
        return signal_by_heading(db, q, "hprec")["Reset the KilnShelf timer"]

    assert hprec("KilnShelf") == pytest.approx(1 / 3, abs=1e-3)
    assert hprec("KilnShelf timer") == pytest.approx(2 / 3, abs=1e-3)
    assert hprec("kiln shelf timer") == pytest.approx(2 / 3, abs=1e-3)


def test_a_page_the_query_names_by_its_file_name_is_a_candidate(tmp_path: Path) -> None:
    """"glaze-mixer graphs and paging thresholds": thirty Escalation sections that page and
    show a dashboard (graphs' synonym) fill bm25's pools, and thirty more mention glaze-mixer;
    the page named glaze-mixer.md is still looked up by its file name, and its best section by
    bm25 (the one that holds the dashboard) is a candidate."""
    files = {
        "deploy/glaze-mixer.md": (
            "# Glaze mixer deployment\n\n## Rollback procedure\n\nRedeploy the previous image tag and wait "
            "for the first batch.\n\n## Monitoring and alerts\n\nThe dashboard shows batch weight per minute, "
            "and an alert fires on five per cent drift.\n"),
        **{f"runbooks/r{i}.md": (
            f"# Runbook {i}\n\n## Dependencies\n\nLine {i} reads its recipes from glaze-mixer.\n\n"
            f"## Escalation\n\nIf batches stall on line {i}, check the dashboard; paging goes to the glaze "
            "on-call, and paging again after an hour.\n") for i in range(30)},
    }
    db = build_case(tmp_path, files)
    hits = mdfts.search(db, "glaze-mixer graphs and paging thresholds", limit=50)
    assert ("deploy/glaze-mixer.md", "Monitoring and alerts") in [(h.path, h.heading) for h in hits]


def test_a_short_file_name_the_query_writes_apart_names_little(tmp_path: Path) -> None:
    """"the kiln ... my controller" strews the words of kiln-controller.md over a question about
    a probe: a short file name is written whole, so the page earns a quarter of its `file` share
    and the options list that holds every word no longer beats the section that answers. Written
    after with, the same words name the tool, and its page wins."""
    files = {
        "kiln/kiln-controller.md": (
            "# kiln-controller\n\n## Options\n\n"
            "- `--trust-probe`: trust the probe reading without a check\n"
            "- `--probe-offset`: degrees to add to a replacement probe reading\n"
            "- `--port`: the serial port of the controller\n"
            "- `--log`: where the firing log goes\n"),
        "kiln/probes.md": (
            "# Probes\n\n## Fitting a replacement probe\n\nA new probe reads a few degrees off: fire a "
            "cone pack, compare the bent cones with the reading and set the offset before the kiln will "
            "trust it.\n"),
        **FILLER_TOOLS,
    }
    db = build_case(tmp_path, files)
    q = "how do I make the kiln trust a replacement probe on my controller"
    assert [h.heading for h in mdfts.search(db, q, limit=2)] == ["Fitting a replacement probe", "Options"]
    assert signal_by_heading(db, q, "file")["Options"] < 0.15
    q = "trust a replacement probe with kiln controller"
    assert mdfts.search(db, q, limit=1)[0].path == "kiln/kiln-controller.md"


def test_a_phrasal_verb_names_one_heading_word_not_two(tmp_path: Path) -> None:
    """"clean up" finds "Purge" by both its words (mdfts_phrasal), but they name one word of
    "Purge the ash pit": a third of the heading (`hprec`), not two thirds."""
    files = {
        "kiln/ash.md": "# Ash\n\n## Purge the ash pit\n\nShovel the ash out once the kiln is cold.\n",
        "kiln/shelf.md": "# Shelves\n\n## Shelf wash\n\nBrush the shelves with wash before a firing.\n",
        **FILLER_TOOLS,
    }
    db = build_case(tmp_path, files)
    (hit,) = [h for h in mdfts.search(db, "how do I clean up the shelves", limit=5, explain=True)
              if h.heading == "Purge the ash pit"]
    assert hit.explain is not None
    assert hit.explain["signals"]["hprec"]["value"] == pytest.approx(1 / 3, abs=1e-3)


def test_the_longest_tool_name_after_with_names_the_page(tmp_path: Path) -> None:
    """"with kiln vent" names kiln-vent.md, the subcommand's page, not kiln.md, which "kiln"
    alone spells: the words after with, using or via name one tool, the longest page name they
    spell in full."""
    files = {
        "pages/kiln.md": tool_page("kiln", "Drive the kiln controller: fire, cool and vent the kiln chamber.",
                                   "Show the chamber temperature", "kiln temp"),
        "pages/kiln-vent.md": tool_page("kiln vent", "Open the vent flaps during a firing.",
                                        "Open the flaps halfway", "kiln vent --open 50"),
        **FILLER_TOOLS,
    }
    db = build_case(tmp_path, files)
    q = "let the fumes out of the chamber halfway through, with kiln vent"
    assert [h.path for h in mdfts.search(db, q, limit=2)] == ["pages/kiln-vent.md", "pages/kiln.md"]
    # the one-word name still wins when that is all the query spells
    assert mdfts.search(db, "show how hot the chamber is, with kiln", limit=1)[0].path == "pages/kiln.md"


def test_a_tool_named_by_a_stop_word_is_named_after_with(tmp_path: Path) -> None:
    """A stop word is no key term, unless it follows with, using or via and is a page's whole
    file name: "... with more" names more.md, as "... using lesspipe" would name lesspipe.md."""
    files = {
        "pages/more.md": tool_page("more", "Show a text file one screen at a time.", "Open a file",
                                   "more path/to/file"),
        "pages/pager.md": tool_page("pager", "Page through a long firing log, one screen after another.",
                                    "Page through a firing log", "pager path/to/firing.log"),
        **FILLER_TOOLS,
    }
    db = build_case(tmp_path, files)
    assert [h.path for h in mdfts.search(db, "page through a long firing log with more", limit=1)] == ["pages/more.md"]
    # without "with" the stop word names nothing: the page that holds the task's words wins
    assert [h.path for h in mdfts.search(db, "page through a long firing log and more", limit=1)] == ["pages/pager.md"]


def test_a_kebab_term_names_as_many_file_name_words_as_its_parts(tmp_path: Path) -> None:
    """`file` counts the file name's words a term names: "fan-relay" names two of FanRelayDown's
    three, as "fan relay" written apart does, not one; else FanDown.md (half named by "fan") out-
    credits the page the term names."""
    page = ("# {name}\n\n## Meaning\n\n{meaning}\n\n## Diagnosis\n\nCheck the state of the fan-relay "
            "units on the vent rack:\n\n```\nventctl units -l app=fan-relay\n```\n")
    files = {
        "alerts/FanRelayDown.md": page.format(name="FanRelayDown",
                                              meaning="No fan-relay unit has reported for ten minutes."),
        "alerts/FanDown.md": page.format(name="FanDown",
                                         meaning="The vent fan stopped; its fan-relay units report it."),
        **{f"notes/n{i}.md": f"# Note {i}\n\n## Clay\n\nCheck the clay for bench {i}.\n" for i in range(4)},
    }
    db = build_case(tmp_path, files)

    def file_credit(q: str) -> float:
        (hit,) = [h for h in mdfts.search(db, q, limit=5, explain=True)
                  if (h.path, h.heading) == ("alerts/FanRelayDown.md", "Diagnosis")]
        assert hit.explain is not None
        return float(hit.explain["signals"]["file"]["value"])

    # (the two differ by the idf share only: the kebab term weighs as its rarer word)
    assert file_credit("fan-relay units") >= 0.75 * file_credit("fan relay units") > 0
    top = mdfts.search(db, "fan-relay units diagnosis", limit=2)
    assert [h.path for h in top] == ["alerts/FanRelayDown.md", "alerts/FanDown.md"]


def test_a_heading_named_in_full_under_a_parent_the_query_names_is_its_section(tmp_path: Path) -> None:
    """`trail`: one page, a Configuration under each tool; "lamp configuration" names the one
    under Lamp, though the short Configuration under Bellows says "lamp's configuration" too. A
    child whose heading the query does not name in full earns nothing for its parent's words."""
    files = {
        "guides/kiln-tools.md": (
            "# Kiln tools\n\n## Lamp\n\nThe lamp lights the kiln room.\n\n### Configuration\n\n"
            "Set the lamp's colour, brightness and timer in lamp.yml, one entry per room; the "
            "timer takes minutes, the brightness a share of the full output, and the colour a "
            "name from the chart on the kiln room door.\n\n"
            "## Bellows\n\nThe bellows feed the kiln air.\n\n### Configuration\n\n"
            "Set bellows: true beside the lamp's configuration.\n\n"
            "### Cleaning\n\nBrush the bellows after each firing.\n"),
        **{f"notes/n{i}.md": f"# Note {i}\n\n## Clay\n\nClay for bench {i} is wrapped in plastic.\n" for i in range(4)},
    }
    db = build_case(tmp_path, files)

    def trail_credit(q: str, heading: str) -> float:
        hit = next(h for h in mdfts.search(db, q, limit=5, explain=True) if h.heading == heading)
        assert hit.explain is not None
        return float(hit.explain["signals"]["trail"]["value"])

    top = mdfts.search(db, "lamp configuration", limit=2)
    assert [h.trail[1] for h in top] == ["Lamp", "Bellows"]
    assert trail_credit("bellows cleaning", "Cleaning") > 0
    assert trail_credit("bellows brush", "Cleaning") == 0  # "Cleaning" not named: no credit


# A runbook whose Diagnosis holds more of a question's words than its Mitigation does.
FIX_VERB_PAGE = {
    "alerts/KilnShelfOvercommit.md": (
        "# KilnShelfOvercommit\n\n## Meaning\n\nThe kiln is overbooked: its plans ask for more than it holds.\n\n"
        "## Diagnosis\n\nList the firing plans and the shelf space each one books.\n\n"
        "## Mitigation\n\nMove a firing plan to the second kiln, or book shelf space in the town kiln "
        "for the plans that do not fit.\n"),
    **{f"notes/n{i}.md": f"# Note {i}\n\n## Clay\n\nClay for bench {i} is wrapped in plastic.\n" for i in range(4)},
}


@pytest.mark.parametrize("verb", ["deal with", "repair", "remedy"])
def test_a_fix_verb_asks_for_the_mitigation(tmp_path: Path, verb: str) -> None:
    """"how do I deal with it" (repair, remedy) asks what to do, as "fix" does: the Mitigation
    answers, though the Diagnosis holds more of the question's words."""
    db = build_case(tmp_path, FIX_VERB_PAGE)
    q = f"firing plans book more shelf space than the kiln has, how do I {verb} that"
    assert [h.heading for h in mdfts.search(db, q, limit=1)] == ["Mitigation"]


def test_near_reorders_the_eight_best(tmp_path: Path) -> None:
    """`near` is looked up for the eight best by the other signals: a section that holds the
    query's words together, eighth behind seven short notes that hold them apart, comes first."""
    files = {f"notes/n{i}.md": f"# Note {i}\n\n## Bench {i}\n\nThe clay on bench {i} is dry. A bucket stands by "
                               "the door, and its lid is in the shed.\n" for i in range(7)}
    files["guides/glaze.md"] = (
        "# Glaze\n\n## Storage\n\nKeep each glaze in a sealed tub on the north shelf, away from the sun; stir "
        "it before use and write the date on a strip of tape. A clay bucket's lid that has cracked lets the "
        "water out, so the glaze thickens; order a new lid from the supplier and move the tub to the shade.\n")
    db = build_case(tmp_path, files)
    assert [h.path for h in mdfts.search(db, "clay bucket lid", limit=1)] == ["guides/glaze.md"]


def test_a_word_that_shares_its_stem_with_a_folder_every_file_sits_in_still_counts(tmp_path: Path) -> None:
    """porter makes "contention" content, and every path of this tree starts content/: weighed by
    the df of its paths, the word counted nothing and matched every section (term_df.tdf). The
    folder's own word still finds the folder: "content" keeps its path."""
    files = {
        "content/kilns/controller.md": (
            "# Controller\n\n## Zone relays\n\nThe controller switches each zone relay in turn; a relay "
            "that sticks leaves its zone cold.\n\n## Controller panel\n\nThe controller panel shows the "
            "controller's schedule.\n"),
        "content/kilns/wiring.md": (
            "# Wiring\n\n## Shared bus\n\nTwo kilns on one bus cause contention: each controller waits "
            "for the other, and the firings run late.\n"),
        **{f"content/notes/n{i}.md": f"# Note {i}\n\n## Clay\n\nClay for bench {i} is wrapped in plastic.\n"
           for i in range(4)},
    }
    db = build_case(tmp_path, files)
    hits = mdfts.search(db, "controller contention", limit=3, explain=True)
    assert (hits[0].path, hits[0].heading) == ("content/kilns/wiring.md", "Shared bus")
    assert hits[0].explain is not None
    how = {t["term"]: t["match"] for t in hits[0].explain["terms"]}
    assert how["contention"] == "exact"
    others = {h.heading: h.explain for h in hits[1:]}
    assert all(e is not None and {t["term"]: t["match"] for t in e["terms"]}["contention"] == "none"
               for e in others.values())
    # (the folder's own word, as the paths write it, still matches them: mdfts_pathwords)
    named = mdfts.search(db, "controller content", limit=3, explain=True)
    assert named and all(h.explain is not None and {t["term"]: t["match"] for t in h.explain["terms"]}["content"] != "none"
                         for h in named)


def test_a_path_prefix_searches_within_its_documents(tmp_path: Path) -> None:
    """:prefix scopes the search itself: a folder whose one section mentions the word once is
    found under its prefix although forty sections elsewhere rank above it (filtering the best
    rows found nothing there), and only documents whose path starts with the prefix come back,
    whatever sorts between them (a-b/ and a.md sort between a/ and its sub-folders' neighbours)."""
    files = {f"kilns/k{i:02d}.md": f"# Kiln {i}\n\nThe kiln {i} fires the kiln load.\n" for i in range(40)}
    files["glaze/notes.md"] = "# Glaze notes\n\n" + "Mix the glaze slowly. " * 40 + "Fire it in the kiln.\n"
    files.update({"a.md": "# A\n\nkiln a\n", "a-b/x.md": "# AB\n\nkiln ab\n", "a/x.md": "# AX\n\nkiln ax\n",
                  "a/b/y.md": "# ABY\n\nkiln aby\n", "ab/x.md": "# ABX\n\nkiln abx\n"})
    db = build_case(tmp_path, files)
    assert "glaze/notes.md" not in {h.path for h in mdfts.search(db, "kiln", limit=40)}
    assert [h.path for h in mdfts.search(db, "kiln", limit=5, path_prefix="glaze/")] == ["glaze/notes.md"]
    assert sorted(h.path for h in mdfts.search(db, "kiln", limit=10, path_prefix="a/")) == ["a/b/y.md", "a/x.md"]
    assert sorted(h.path for h in mdfts.search(db, "kiln", limit=10, path_prefix="a")) == [
        "a-b/x.md", "a.md", "a/b/y.md", "a/x.md", "ab/x.md"]
    assert mdfts.search(db, "kiln", limit=10, path_prefix="zz/") == []
    with sqlite3.connect(db) as conn:  # the SQL alone, as the shell runs it: '' and NULL scope nothing
        sql = conn.execute("select sql from mdfts_queries where name = 'search'").fetchone()[0]
        every = [r[1] for r in conn.execute(sql, {"q": "kiln", "limit": 10, "explain": None, "prefix": None})]
        assert every == [r[1] for r in conn.execute(sql, {"q": "kiln", "limit": 10, "explain": None, "prefix": ""})]
        assert len(every) == 10


def test_cli_path_prefix_says_when_no_document_is_under_it(tmp_path: Path) -> None:
    db = build_case(tmp_path, {"glaze/notes.md": "# Glaze notes\n\nFire it in the kiln.\n"})
    found = CliRunner().invoke(cli, ["search", str(db), "kiln", "--path-prefix", "glaze/"])
    assert found.exit_code == 0 and "glaze/notes.md" in found.stdout
    missed = CliRunner().invoke(cli, ["search", str(db), "kiln", "--path-prefix", "glazes/"])
    assert (missed.exit_code, missed.stdout, missed.stderr) == (0, "", "no document's path starts with 'glazes/'\n")
    nul = CliRunner().invoke(cli, ["search", str(db), "kiln", "--path-prefix", "glaze/notes.md\0"])  # GLOB stops at NUL
    assert (nul.exit_code, nul.stdout, nul.stderr) == (0, "", "no document's path starts with 'glaze/notes.md\\x00'\n")


def _search_paths(db: Path, q: str, prefix: str | None) -> list[str]:
    """The paths search.sql returns for `q` under `prefix`, run as the shell runs it (no filter after)."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        sql = conn.execute("select sql from mdfts_queries where name = 'search'").fetchone()[0]
        return sorted(r[2] for r in conn.execute(sql, {"q": q, "limit": 20, "explain": None, "prefix": prefix}))


def test_a_path_prefix_whose_first_or_last_document_is_empty_keeps_its_range(tmp_path: Path) -> None:
    """An empty file is a document with no sections: first under a prefix it widened the range to
    the first section of the index (rows from other folders came back), last it emptied it."""
    db = build_case(tmp_path, {"a/x.md": "# A\n\nkiln in a\n", "b/a.md": "", "b/b.md": "# B\n\nkiln in b\n",
                               "c/x.md": "# C\n\nkiln in c\n", "c/y.md": "# C2\n\nkiln in c2\n", "c/z.md": "\n"})
    assert _search_paths(db, "kiln", "b/") == ["b/b.md"]
    assert _search_paths(db, "kiln", "c/") == ["c/x.md", "c/y.md"]
    assert _search_paths(db, "kiln", "b/a") == []
    assert [h.path for h in mdfts.search(db, "kiln", limit=10, path_prefix="c/")] != []


def test_a_path_prefix_takes_paths_that_go_on_with_the_last_code_point(tmp_path: Path) -> None:
    """The prefix's upper bound was the prefix and U+10FFFF, so a path that went on with U+10FFFF
    (a character a file name may hold) sorted past it and was left out."""
    db = build_case(tmp_path, {"a.md": "# Y\n\nkiln y\n", "a\U0010ffff.md": "# X\n\nkiln x\n",
                               "a\U0010ffff\U0010ffff.md": "# Z\n\nkiln z\n", "b.md": "# B\n\nkiln b\n"})
    assert _search_paths(db, "kiln", "a") == ["a.md", "a\U0010ffff.md", "a\U0010ffff\U0010ffff.md"]
    assert _search_paths(db, "kiln", "a\U0010ffff") == ["a\U0010ffff.md", "a\U0010ffff\U0010ffff.md"]
    assert _search_paths(db, "kiln", "\U0010ffff") == []


def test_snippet_reads_an_autolink_and_an_admonition_as_a_reader_sees_them(tmp_path: Path) -> None:
    """An autolink shows its address, not the brackets around it (`<https://...>`); a `<` that
    opens none stays. An admonition's, a tab's or a container's marker at a line's start goes, its
    type and title stay."""
    db = build_case(tmp_path, {"clay/pugmill.md": (
        "# Pugmill\n\n## Cleaning\n\n!!! warning \"Unplug it\"\n    Wash the barrel daily, see "
        "<https://example.com/pugmill> or <mailto:clay@example.com>; 3 < 4 and <b>bold</b>.\n\n"
        "## Storing\n\n:::tip\nCover the pugmill barrel.\n:::\n\n=== \"Summer\"\n    Keep the barrel wet.\n")})
    hits = {h.heading: h.snippet for h in mdfts.search(db, "pugmill barrel", limit=2)}
    assert hits == {
        "Cleaning": 'warning "Unplug it" Wash the [barrel] daily, see https://example.com/pugmill or '
                    "mailto:clay@example.com; 3 < 4 and <b>bold</b>.",
        "Storing": 'tip Cover the [pugmill] barrel. "Summer" Keep the barrel wet.',
    }


def test_a_heading_counts_as_far_as_its_section_holds_the_question(tmp_path: Path) -> None:
    """`hprec` counts times min(1, 0.5 + cover) (or file, when more): "Glaze", which one word of
    the question names, over a line that holds nothing else of it, earns half; the section that
    holds the rest of the question comes first. A heading over a section that holds half the
    question or more keeps all of it."""
    files = {
        "guides/pottery.md": (
            "# Pottery\n\n## Glaze\n\nGlaze recipes live in the binder by the sink.\n\n"
            "## Dipping\n\nA coat crawls when dust on the bisque keeps it from sticking: wipe each pot "
            "with a damp sponge before dipping it, and let it dry.\n\n"
            "## Kilns\n\nThe small kiln takes test tiles.\n"),
        **{f"notes/n{i}.md": f"# Note {i}\n\n## Clay\n\nClay for bench {i} is wrapped in plastic.\n" for i in range(4)},
    }
    db = build_case(tmp_path, files)
    hits = mdfts.search(db, "glaze crawls off the bisque pot, how do I stop it", limit=2, explain=True)
    assert [h.heading for h in hits] == ["Dipping", "Glaze"]
    glaze = hits[1].explain
    assert glaze is not None
    cover = glaze["signals"]["cover"]["value"]
    assert cover < 0.5
    assert glaze["signals"]["file"]["value"] == 0
    assert glaze["signals"]["hprec"]["value"] == pytest.approx(0.5 + cover, abs=1e-3)
    assert signal_by_heading(db, "where do the glaze recipes live", "hprec")["Glaze"] == pytest.approx(1.0)


# A glossary that defines an acronym once, a runbook that writes only the acronym and one that
# writes only the long form, and a decoy that holds the task's words but neither form.
ACRONYM_PAGES = {
    **FILLER_TOOLS,
    "glossary.md": (
        "# Glossary\n\n## Kiln terms\n\nThe Pyrometric Cone Sensor (PCS) reads the kiln's heat work; "
        "a Glaze Drip Tray (GDT) sits under every shelf.\n"),
    "kiln/sensor.md": "# Sensor\n\n## Recalibrate the PCS\n\nHold the PCS in the jig after every tenth firing.\n",
    "kiln/racks.md": (
        "# Racks\n\n## Recalibrate the cone rack sensor\n\nRecalibrate the rack's weight sensor when a "
        "cone rack reads heavy.\n"),
    "kiln/trays.md": (
        "# Trays\n\n## Clear the glaze drip trays\n\nAfter each firing, lift out the glaze drip trays "
        "and scrape them.\n"),
    "kiln/bins.md": "# Bins\n\n## Empty the glaze bins\n\nEmpty the bins after each firing.\n",
    "studio/moulds.md": (
        "# Moulds\n\n## Casting\n\nPour slip into a Slip-Casting Mould (SCM) and wait.\n\n"
        "## Drying the SCMs\n\nStand each SCM upside down on the rack for two days.\n"),
    "studio/rack.md": "# Rack\n\n## Drying rack\n\nThe rack stands by the door; bowls dry there for a day.\n",
}


@pytest.mark.parametrize(("query", "heading"), [
    ("recalibrate the pyrometric cone sensor", "Recalibrate the PCS"),
    ("how do I recalibrate pyrometric cone sensors?", "Recalibrate the PCS"),
    ("how do I empty and scrape the GDTs?", "Clear the glaze drip trays"),
    ("how long do slip casting moulds dry on the rack?", "Drying the SCMs"),
], ids=["long-form-finds-acronym", "plural-long-form", "acronym-finds-long-form", "hyphens-or-spaces"])
def test_an_acronym_the_docs_define_finds_its_other_form(tmp_path: Path, query: str, heading: str) -> None:
    """The docs define PCS and GDT (mdfts_acronyms): a question that writes one form finds the
    section that writes the other, before the glossary that defines both and the decoy that
    holds the task's words."""
    db = build_case(tmp_path, ACRONYM_PAGES)
    with sqlite3.connect(db) as conn:
        defined = sorted(conn.execute("select distinct short, long from mdfts_acronyms"))
    assert defined == [("GDT", "glaze drip tray"), ("PCS", "pyrometric cone sensor"), ("SCM", "slip-casting mould")]
    assert [h.heading for h in mdfts.search(db, query, limit=3)][:1] == [heading]


def test_an_acronym_finds_its_long_form_only_as_the_docs_write_it(tmp_path: Path) -> None:
    """"gdt" in lower case may be another word than the docs' GDT: it searches nothing more."""
    db = build_case(tmp_path, ACRONYM_PAGES)
    assert {h.heading for h in mdfts.search(db, "GDTs", limit=5)} == {"Kiln terms", "Clear the glaze drip trays"}
    assert {h.heading for h in mdfts.search(db, "gdts", limit=5)} == {"Kiln terms"}
