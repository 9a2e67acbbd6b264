"""extract_tokens: exact tokens per kind, with their lookup form and where they were seen."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from mdfts.tokens import _CHUNK, KINDS, SOURCES, ExactToken, extract_tokens, normalize


def _found(source: str, text: str) -> list[tuple[str, str]]:
    return [(t.token, t.kind) for t in extract_tokens([(source, text)])]


# (source, text, [(token, kind), ...] in the sorted order extract_tokens returns)
CASES = [
    ("text", "Set STRIPE_WEBHOOK_SECRET before you deploy.", [("STRIPE_WEBHOOK_SECRET", "env_var")]),
    ("text", "Use git push --force-with-lease=origin/main now", [("--force-with-lease", "cli_flag")]),
    ("code", "--dry-run", [("--dry-run", "cli_flag")]),
    ("text", "We saw E1027 and ERR_LEDGER_IMBALANCE, also E_TIMEOUT.",
     [("E1027", "error_code"), ("ERR_LEDGER_IMBALANCE", "error_code"), ("E_TIMEOUT", "error_code")]),
    ("text", "rows land in customer_billing_events first", [("customer_billing_events", "identifier")]),
    ("text", "camelCase and PascalCase ids", [("PascalCase", "identifier"), ("camelCase", "identifier")]),
    # kebab-case counts in code, or in prose when it has a digit; plain hyphenated prose does not
    ("code", "payments-api", [("payments-api", "name")]),
    ("fence", "helm upgrade payments-api ./chart", [("./chart", "file_path"), ("payments-api", "name")]),
    ("text", "a well-known follow-up", []),
    ("text", "turn payments-v2 on", [("payments-v2", "name")]),
    ("text", "upgrade to v1.2.3 or 14.2 and set app.settings.debug",
     [("14.2", "version"), ("app.settings.debug", "dotted"), ("v1.2.3", "version")]),
    ("text", "e.g. this, i.e. that.", []),
    ("text", "logs in /var/log/payments/app.log, ./scripts/deploy.sh and docs/runbooks/x.md",
     [("./scripts/deploy.sh", "file_path"), ("/var/log/payments/app.log", "file_path"),
      ("docs/runbooks/x.md", "file_path")]),
    ("text", "edit config.yaml", [("config.yaml", "file_path")]),
    ("text", "and/or either/or", []),  # prose slashes are not paths
    ("text", "open https://grafana.example.com/d/abc?x=1 or payments.internal",
     [("grafana.example.com", "host"), ("https://grafana.example.com/d/abc?x=1", "url"),
      ("payments.internal", "host")]),
    ("fence", "export PAYMENTS_DB_URL=postgres://pay@db.internal:5432/pay",
     [("PAYMENTS_DB_URL", "env_var"), ("db.internal", "host"),
      ("postgres://pay@db.internal:5432/pay", "url")]),
    ("code", "kubectl rollout undo deployment/payments",
     [("deployment/payments", "file_path"), ("kubectl rollout undo deployment/payments", "code")]),
    ("heading", "E1027 spikes after a release", [("E1027", "error_code")]),
    ("text", "(PAYMENTS_DB_URL), \"STRIPE_API_KEY\".",
     [("PAYMENTS_DB_URL", "env_var"), ("STRIPE_API_KEY", "env_var")]),
    ("text", "just ordinary words here", []),
    # a protocol or product and its version after a slash is a version, not a file path, in code
    # or prose; a lower-case folder, one letter, four digits or a leading zero stay a path
    ("fence", "listen HTTP/2 or HTTP/1.1", [("HTTP/1.1", "version"), ("HTTP/2", "version")]),
    ("text", "the proxy speaks HTTP/2 only", [("HTTP/2", "version")]),
    ("fence", "cat /proc/1 release/2.14 X/2 Logs/2024 Ab/02",
     [("/proc/1", "file_path"), ("Ab/02", "file_path"), ("Logs/2024", "file_path"), ("X/2", "file_path"),
      ("release/2.14", "file_path")]),
    # a key and its value in code is one string too (a label selector, an option's value); its
    # words count on their own; not in prose, not with a placeholder, not a one-letter key
    ("fence", "kubectl logs -l alertmanager=main -c am", [("alertmanager=main", "name")]),
    ("fence", "7z a -mhe=on -Dlog.level=debug",
     [("-Dlog.level=debug", "name"), ("-mhe=on", "name"), ("Dlog.level", "dotted")]),
    ("fence", "7za a -mhe={{on}} i=0", []),
    ("text", "set alertmanager=main in prose", []),
]


@pytest.mark.parametrize(
    ("source", "text", "expected"),
    CASES,
    ids=[
        "env-var", "flag-with-value", "flag-in-code", "error-codes", "snake-case", "camel-case",
        "kebab-in-code", "kebab-in-fence", "kebab-in-prose", "kebab-with-digit-in-prose", "versions-dotted",
        "abbreviations", "file-paths", "file-name", "prose-slashes", "url-and-hosts", "dsn-after-equals",
        "code-span-verbatim", "heading", "punctuation-around", "no-tokens", "version-after-slash-in-code",
        "version-after-slash-in-prose", "paths-ending-in-a-number", "key-value-in-code",
        "option-values-in-code", "no-pair-with-placeholder-or-one-letter-key", "no-pair-in-prose",
    ],
)
def test_kinds(source: str, text: str, expected: list[tuple[str, str]]) -> None:
    assert _found(source, text) == expected


def test_code_span_is_kept_verbatim_once() -> None:
    # A span that is itself one token is not stored twice; a longer span is kept as written.
    assert _found("code", "PAYMENTS_DB_URL") == [("PAYMENTS_DB_URL", "env_var")]
    assert ("make deploy ENV=prod", "code") in _found("code", "make deploy ENV=prod")


def test_long_code_span_is_not_kept_verbatim() -> None:
    span = "x " * 40
    assert _found("code", span) == []


@pytest.mark.parametrize(
    ("pieces", "source"),
    [
        ([("text", "E1027"), ("fence", "E1027"), ("heading", "E1027"), ("code", "E1027")], "heading"),
        ([("text", "E1027"), ("code", "E1027"), ("code:definition", "E1027")], "definition"),
        ([("text", "E1027"), ("fence", "E1027"), ("code", "E1027")], "code"),
        ([("text", "E1027"), ("fence", "E1027")], "fence"),
    ],
    ids=["heading", "definition", "code", "fence"],
)
def test_strongest_source_wins(pieces: list[tuple[str, str]], source: str) -> None:
    assert extract_tokens(pieces) == [ExactToken("E1027", "error_code", source)]
    assert SOURCES == ("heading", "definition", "code", "fence", "text")


@pytest.mark.parametrize(
    ("markdown", "source"),
    [
        ("| Variable | Meaning |\n|---|---|\n| `API_KEY` | the key |\n", "definition"),
        ("| Variable | Meaning |\n|---|---|\n| x | see `API_KEY` |\n", "code"),
        ("- `API_KEY`: the key\n", "definition"),
        ("- the key, `API_KEY`\n", "code"),
        ("Set API_KEY first.\n", "text"),
    ],
    ids=["first-column", "other-column", "opens-list-item", "inside-list-item", "prose"],
)
def test_definition_source(markdown: str, source: str) -> None:
    from mdfts.sections import split_sections

    [section] = split_sections("x.md", "# X\n\n" + markdown).sections
    assert [(t.token, t.source) for t in section.tokens if t.token == "API_KEY"] == [("API_KEY", source)]


def test_every_kind_can_be_produced() -> None:
    text = ("https://x.example.com --flag /etc/x.conf ENV_VAR E1234 snake_case a-b-1 v1.2 "
            "app.settings.debug")
    kinds = {t.kind for t in extract_tokens([("code", text), ("code", "kubectl get pods")])}
    assert kinds == set(KINDS)


@pytest.mark.parametrize(
    ("token", "norm"),
    [
        ("PAYMENTS_DB_URL", "payments_db_url"),
        ("`E1027`.", "e1027"),
        ("(--Force-With-Lease),", "--force-with-lease"),
        ("Straße_X", "straße_x"),  # only ASCII is folded, like SQLite's lower()
        ('"v1.2.3"!', "v1.2.3"),
    ],
)
def test_normalize(token: str, norm: str) -> None:
    assert normalize(token) == norm
    assert ExactToken(token, "code", "code").norm == norm


def test_sections_of_a_document_get_their_tokens() -> None:
    from mdfts.sections import split_sections

    doc = split_sections("x.md", "# Deploy\n\nRun `make deploy`.\n\n```bash\nexport API_KEY=1\n```\n")
    assert [(t.token, t.kind, t.source) for t in doc.sections[0].tokens] == [
        ("API_KEY", "env_var", "fence"),
        ("API_KEY=1", "name", "fence"),
        ("make deploy", "code", "code"),
    ]


# The plain whitespace-and-bracket chunker that _CHUNK's and _PROSE_CHUNK's lookaheads refine:
# the fast chunkers may only drop chunks in which _scan() would find no token anyway.
_PLAIN_CHUNK = re.compile(r"(?<![^\s`'\"<>()\[\]{},;|*])[^\s`'\"<>()\[\]{},;|*]{2,}")


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(list("aZQé_-./:,;!?=`'\"()[] \n\t09") + [
    "Rollback", "payments", "ÉTAT", "x", "HTTP", "Read", "on-call", "v2", "03:00", "E1027", "://", "--"]),
    max_size=30).map("".join), st.sampled_from(["text", "code", "heading"]))
def test_chunkers_drop_only_chunks_without_tokens(text: str, source: str) -> None:
    import mdfts.tokens as tokens

    saved = tokens._CHUNK, tokens._PROSE_CHUNK, tokens._KNOWN
    try:
        tokens._KNOWN = ({}, {})  # each run from its own chunks, not the other's
        fast: list[tuple[str, str, str]] = []
        tokens._scan(text, source, fast)  # type: ignore[arg-type]
        tokens._KNOWN = ({}, {})
        tokens._CHUNK = tokens._PROSE_CHUNK = _PLAIN_CHUNK  # every chunk scanned
        every: list[tuple[str, str, str]] = []
        tokens._scan(text, source, every)  # type: ignore[arg-type]
    finally:
        tokens._CHUNK, tokens._PROSE_CHUNK, tokens._KNOWN = saved
    assert fast == every
    assert set(_CHUNK.findall(text)) <= set(_PLAIN_CHUNK.findall(text))


@pytest.mark.parametrize(("source", "text", "dropped"), [
    ("text", "HTTP UTC. 10 03:00 Read-only on-call e2e-tests", ["HTTP", "UTC.", "10", "03:00", "Read-only", "on-call"]),
    ("code", "HTTP 10 Read-only on-call", ["HTTP", "10", "Read-only"]),
])
def test_the_chunkers_skip_what_holds_no_token(source: str, text: str, dropped: list[str]) -> None:
    from mdfts.tokens import _PROSE_CHUNK

    kept = (_PROSE_CHUNK if source == "text" else _CHUNK).findall(text)
    assert [c for c in _PLAIN_CHUNK.findall(text) if c not in kept] == dropped


def test_known_chunks_give_what_a_first_scan_gives_and_stay_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    import mdfts.tokens as tokens

    monkeypatch.setattr(tokens, "_KNOWN", ({}, {}))
    monkeypatch.setattr(tokens, "KNOWN_CHUNKS", 4)
    text = "Set PAYMENTS_DB_URL, run --dry-run=/tmp/x.log and see https://a.example.com/x E1027 deploy/payments"
    for source in ("code", "text"):
        first = extract_tokens([(source, text)])
        assert len(tokens._KNOWN[source != "text"]) <= 4
        assert extract_tokens([(source, text)]) == extract_tokens([(source, text + " ")]) == first
    # a path in code, nothing in prose, with the chunk known from code
    assert [(t.token, t.kind) for t in extract_tokens([("code", "deploy/payments")])] == [
        ("deploy/payments", "file_path")]
    assert extract_tokens([("text", "deploy/payments")]) == []
    many = " ".join(f"X_{i}" for i in range(50))
    assert len(extract_tokens([("text", many)])) == 50
    assert 0 < len(tokens._KNOWN[False]) <= 4


@pytest.mark.parametrize("text", ["see http://- now", "a://-", "x=https://--"])
def test_a_scheme_with_nothing_after_it_is_no_url(text: str) -> None:
    # the trailing punctuation strip left "http" of "http://-", and the host split raised IndexError
    assert [t.kind for t in extract_tokens([("text", text)])] == []


def test_paragraphs_scanned_together_give_the_same_tokens() -> None:
    paragraphs = ["Set PAYMENTS_DB_URL first.", "Then run --dry-run", "see /var/log/app.log", "E1027"]
    one_by_one = {t for p in paragraphs for t in extract_tokens([("text", p)])}
    assert set(extract_tokens([("text", p) for p in paragraphs])) == one_by_one
    assert len(one_by_one) == 4


def test_kinds_and_sources_are_the_literal_types_names_in_order() -> None:
    # mdfts.artifact spells each list twice: as a Literal for the type checker (not built at
    # run time: typing is not imported on the lookup path) and as the KINDS / SOURCES tuples.
    import ast

    import mdfts.artifact

    tree = ast.parse(Path(mdfts.artifact.__file__).read_text(encoding="utf-8"))
    literals = {node.targets[0].id: tuple(ast.literal_eval(node.value.slice))  # type: ignore[attr-defined]
                for node in ast.walk(tree) if isinstance(node, ast.Assign) and isinstance(node.value, ast.Subscript)
                and isinstance(node.targets[0], ast.Name) and node.targets[0].id in ("TokenKind", "TokenSource")}
    assert literals == {"TokenKind": KINDS, "TokenSource": SOURCES}


def _classify_every_pattern(word: str, in_code: bool) -> str | None:
    """_classify_word as it was before its patterns were gated by cheap tests: every pattern tried."""
    from mdfts import tokens as t

    if t._ENV.fullmatch(word):
        return "error_code" if word.startswith(("ERR_", "E_")) else "env_var"
    if t._ERROR.fullmatch(word):
        return "error_code"
    if t._VERSION.fullmatch(word):
        return "version"
    if t._DOTTED.fullmatch(word):
        parts = word.split(".")
        last = parts[-1].lower()
        if last in t._FILE_EXT:
            return "file_path"
        if max(len(p) for p in parts) < 2:
            return None
        if last in t._HOST_END and len(parts) >= 2:
            return "host"
        return "dotted"
    if "_" in word and t._SNAKE.fullmatch(word) and any(c.isalpha() for c in word):
        return "identifier"
    if t._CAMEL.fullmatch(word):
        return "identifier"
    if t._KEBAB.fullmatch(word) and any(c.isalpha() for c in word):
        if in_code or any(c.isdigit() for c in word):
            return "name"
    return None


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.sampled_from(list("aAzZeE_-.$09vRkx²٣é") + ["ERR", "com", "md", "HTTP"]), min_size=2,
                max_size=10).map("".join), st.booleans())
def test_gated_patterns_classify_every_word_as_before(word: str, in_code: bool) -> None:
    from mdfts.tokens import _classify_word

    assert _classify_word(word, in_code) == _classify_every_pattern(word, in_code)
