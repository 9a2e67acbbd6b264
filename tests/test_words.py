"""mdfts.words: a file name's words and the CamelCase parts of heading words."""

from __future__ import annotations

import pytest

from mdfts.words import camel_parts, file_words, heading_parts


@pytest.mark.parametrize(
    ("word", "parts"),
    [
        ("LanternQueueStalled", ["Lantern", "Queue", "Stalled"]),
        ("HTTPServer", ["HTTP", "Server"]),
        ("kilnZone2Ramp", ["kiln", "Zone2", "Ramp"]),
        ("PIDs", ["PIDs"]),
        ("ZoneSensorPIDs", ["Zone", "Sensor", "PIDs"]),
        ("QoS", ["QoS"]),
        ("gRPC", ["gRPC"]),
        ("kiln", ["kiln"]),
    ],
    ids=["pascal", "acronym-then-word", "digits", "plural-acronym", "ends-in-plural-acronym",
         "small-letter-acronym", "lower-then-acronym", "plain"],
)
def test_camel_parts(word: str, parts: list[str]) -> None:
    assert camel_parts(word) == parts


def test_heading_and_file_name_split_alike() -> None:
    assert heading_parts("QoS for ZonePIDs on GlazeRoom") == "zone-pids glaze-room"
    assert file_words("kiln/kiln-PIDs.md") == "kiln pids"
    assert file_words("kiln/ZonePIDs.md") == "zone pids / zonepids"
