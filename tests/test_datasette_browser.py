"""The Datasette pages in a real headless Chromium, at a desktop (1280x800) and a phone (390x844)
size, against `mdfts serve` on 127.0.0.1: search first, cards, walking sections, inert content.

Screenshots of every page at both sizes go to build/screenshots/ (git-ignored; MDFTS_SCREENSHOTS
moves them): look at them before calling a page change done.
"""

from __future__ import annotations

import os
import re
import shutil
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("datasette", reason="Datasette is not installed: pip install -e '.[datasette]'")
webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (test extra)")

from dsserve import mdfts_serve  # noqa: E402
from selenium.common.exceptions import NoAlertPresentException  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support import expected_conditions  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

from mdfts.build import build_index  # noqa: E402

from gitrepo import commit_all, git  # noqa: E402

FIXTURES = Path(__file__).parent / "fixtures"
REPO = Path(__file__).resolve().parent.parent
SHOTS = Path(os.environ.get("MDFTS_SCREENSHOTS", REPO / "build" / "screenshots"))
SOURCE_URL = "https://example.com/ops/blob/{commit}/{path}#L{start_line}-L{end_line}"
DB = "ops-docs"
LONG = "long-docs"
HANDBOOK = "platform/services/payments-gateway/operations/handbook.md"
SIZES = [(1280, 800), (390, 844)]


def _chromium() -> tuple[str, str] | None:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    return (browser, driver) if browser and driver else None


pytestmark = [
    pytest.mark.browser,
    pytest.mark.integration,
    pytest.mark.skipif(_chromium() is None, reason="chromium and chromedriver are not installed "
                       "(apt-get install chromium chromium-driver; .ci/run does)"),
]


def _index(tmp: Path, docs: str, name: str) -> Path:
    copy = tmp / "docs"
    shutil.copytree(FIXTURES / docs, copy)  # outside any git checkout: links say HEAD
    out = tmp / f"{name}.db"
    build_index([copy], out, source_url=SOURCE_URL)
    return out


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with mdfts_serve(_index(tmp_path_factory.mktemp("ops"), "datasette", DB)) as (base, _):
        yield base


@pytest.fixture(scope="module")
def long_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Long paths, deep trails, a wide table, code, many hits; built in a git checkout, so the
    index records a commit (a 40-character word on the database page)."""
    tmp = tmp_path_factory.mktemp("long")
    git(tmp, "init", "-q", "-b", "main")
    db = _index(tmp, "datasette_long", LONG)
    commit_all(tmp, "Add the docs")
    build_index([tmp / "docs"], db, source_url=SOURCE_URL)
    with mdfts_serve(db) as (base, _):
        yield base


@pytest.fixture(scope="module")
def tokens_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A settings reference: one section of 60 exact tokens."""
    docs = tmp_path_factory.mktemp("settings") / "docs"
    docs.mkdir()
    (docs / "settings.md").write_text("# Settings\n\n" + "".join(f"- `SETTING_{i:03}`\n" for i in range(60)))
    build_index([docs], docs.parent / "settings.db", source_url=SOURCE_URL)
    with mdfts_serve(docs.parent / "settings.db") as (base, _):
        yield base


@pytest.fixture(scope="module")
def hostile_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with mdfts_serve(_index(tmp_path_factory.mktemp("hostile"), "datasette_hostile", "hostile")) as (base, _):
        yield base


class Browser:
    """A headless Chromium at one window size that records console errors and screenshots."""

    def __init__(self, size: tuple[int, int], profile: Path) -> None:
        browser, driver_path = _chromium()  # type: ignore[misc]
        options = webdriver.ChromeOptions()
        options.binary_location = browser
        for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--disable-background-networking", "--disable-component-update", "--disable-sync",
                     "--no-first-run", "--hide-scrollbars", f"--window-size={size[0]},{size[1]}",
                     f"--user-data-dir={profile}"):
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        # An alert must stay open so the test sees it, not be dismissed silently.
        options.set_capability("unhandledPromptBehavior", "ignore")
        self.size = size
        self.driver = webdriver.Chrome(service=Service(driver_path), options=options)
        self.driver.set_page_load_timeout(30)
        # The exact viewport (a window has browser chrome, and Chrome's is at least 500 wide);
        # the phone size as a phone (touch, the page's viewport meta honoured).
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": size[0], "height": size[1], "deviceScaleFactor": 1, "mobile": size[0] < 600})

    def get(self, url: str) -> None:
        self.driver.get(url)

    def js(self, script: str, *args: Any) -> Any:
        return self.driver.execute_script(script, *args)

    def viewport(self) -> tuple[int, int]:
        w, h = self.js("return [window.innerWidth, window.innerHeight]")
        assert (w, h) == self.size
        return int(w), int(h)

    def shot(self, name: str) -> Path:
        SHOTS.mkdir(parents=True, exist_ok=True)
        path = SHOTS / f"{name}-{self.size[0]}x{self.size[1]}.png"
        self.driver.save_screenshot(str(path))
        return path

    def console_errors(self) -> list[str]:
        return [e["message"] for e in self.driver.get_log("browser") if e["level"] == "SEVERE"]

    def alert(self) -> str | None:
        try:
            return str(self.driver.switch_to.alert.text)
        except NoAlertPresentException:
            return None

    def find(self, css: str) -> Any:
        return self.driver.find_element(By.CSS_SELECTOR, css)

    def find_all(self, css: str) -> list[Any]:
        return list(self.driver.find_elements(By.CSS_SELECTOR, css))

    def wait_for(self, css: str) -> Any:
        return WebDriverWait(self.driver, 20).until(
            expected_conditions.presence_of_element_located((By.CSS_SELECTOR, css)))

    def wait_gone(self, element: Any) -> None:
        """Until `element` (of the page before a submit) is no longer in the page: the next one
        has replaced it, and what the old page showed cannot be read as the new one's."""
        WebDriverWait(self.driver, 20).until(expected_conditions.staleness_of(element))


@pytest.fixture(scope="module", params=SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def browser(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    b = Browser(request.param, tmp_path_factory.mktemp("profile"))
    try:
        yield b
    finally:
        b.driver.quit()


def _no_console_errors(b: Browser, missing_image: str | None = None) -> None:
    errors = b.console_errors()
    if missing_image:  # a relative image in the docs is not served: a 404, nothing else
        errors = [e for e in errors if not re.fullmatch(rf"\S+/{missing_image} - Failed to load resource: "
                                                        r"the server responded with a status of 404 \(Not Found\)", e)]
    assert errors == []


def test_database_page_opens_on_the_query_box(server: str, browser: Browser) -> None:
    browser.get(f"{server}/{DB}")
    box = browser.find("#mdfts-q")
    top, bottom = browser.js("const r = arguments[0].getBoundingClientRect(); return [r.top, r.bottom]", box)
    browser.shot("database")
    assert box.is_displayed() and 0 <= top and bottom <= browser.viewport()[1]  # above the fold
    assert browser.js("return document.activeElement.id") == "mdfts-q"
    titles = [a.text for a in browser.find_all(".mdfts-queries a")]
    assert titles[0] == "Search the docs"
    _no_console_errors(browser)


def test_typing_a_query_shows_the_right_section_first(server: str, browser: Browser) -> None:
    browser.get(f"{server}/{DB}")
    box = browser.find("#mdfts-q")
    box.send_keys("how do I roll back payments", Keys.ENTER)
    first = browser.wait_for(".mdfts-card")
    assert browser.driver.current_url.startswith(f"{server}/{DB}/search?q=how+do+I+roll+back+payments")
    assert first.find_element(By.CSS_SELECTOR, ".mdfts-card-title a").text == "Rollback procedure"
    assert first.find_element(By.CSS_SELECTOR, ".mdfts-trail").text == "Payments runbook"
    source = first.find_element(By.CSS_SELECTOR, ".mdfts-meta a.mdfts-source")
    assert source.text == "runbooks/payments.md:5-13"
    assert source.get_attribute("href") == "https://example.com/ops/blob/HEAD/runbooks/payments.md#L5-L13"
    marks = [m.text for m in first.find_elements(By.CSS_SELECTOR, ".mdfts-snippet mark")]
    assert "payments" in marks and "back" in marks
    snippet = first.find_element(By.CSS_SELECTOR, ".mdfts-snippet").text
    assert "[" not in snippet and "`" not in snippet
    # The rendered section is folded to a few lines; "show all" unfolds it.
    clamp = first.find_element(By.CSS_SELECTOR, ".mdfts-clamp")
    folded = clamp.size["height"]
    full = browser.js("return arguments[0].scrollHeight", clamp)
    browser.shot("search")
    first.find_element(By.CSS_SELECTOR, ".mdfts-more-label").click()
    assert folded < full and clamp.size["height"] == full
    assert first.find_element(By.CSS_SELECTOR, ".mdfts-body ol li strong").text == "payment"
    # The source's line break inside a paragraph is a space, not a new line, on the page.
    paragraph = first.find_element(By.CSS_SELECTOR, ".mdfts-body p")
    assert browser.js("return getComputedStyle(arguments[0]).whiteSpace", paragraph) == "normal"
    assert "\n" not in paragraph.text and "Check that PAYMENTS_DB_URL" in paragraph.text
    browser.shot("search-show-all")
    # A section that fits in the fold offers no "show all".
    cards = browser.find_all(".mdfts-card")
    short = next(c for c in cards if c.find_element(By.CSS_SELECTOR, ".mdfts-card-title a").text
                 == "Payments runbook")
    assert not short.find_element(By.CSS_SELECTOR, ".mdfts-more-label").is_displayed()
    assert short.find_element(By.LINK_TEXT, "open the section").is_displayed()
    _no_console_errors(browser)


def test_section_page_is_a_wide_card_that_walks_the_document(server: str, browser: Browser) -> None:
    browser.get(f"{server}/{DB}/search?q=rollback+procedure")
    browser.wait_for(".mdfts-card-title a").click()
    body = browser.wait_for(".mdfts-section .mdfts-body")
    assert body.find_element(By.CSS_SELECTOR, "h1").text == "Rollback procedure"  # (an h2 in the file)
    assert [h.text for h in browser.find_all("h1")] == ["Rollback procedure"]
    assert body.size["width"] >= 0.6 * browser.viewport()[0]
    crumbs = browser.find(".mdfts-crumbs").text
    assert crumbs.endswith("runbooks/payments.md › Payments runbook › Rollback procedure")
    tokens = {a.text: a.get_attribute("href") for a in browser.find_all(".mdfts-tokens a")}
    assert tokens["PAYMENTS_DB_URL"] == f"{server}/{DB}/token?token=PAYMENTS_DB_URL"
    assert browser.find(".mdfts-section .mdfts-source").get_attribute("href").endswith("payments.md#L5-L13")
    browser.shot("section")
    section_url = browser.driver.current_url
    browser.find(".mdfts-walk a.mdfts-parent").click()
    assert browser.wait_for(".mdfts-section .mdfts-body h1").text == "Payments runbook"
    browser.get(section_url)
    browser.wait_for(".mdfts-walk a.mdfts-next").click()
    assert browser.wait_for(".mdfts-section .mdfts-body h1").text == "Scaling the workers"
    browser.find(".mdfts-walk a.mdfts-prev").click()
    assert browser.wait_for(".mdfts-section .mdfts-body h1").text == "Rollback procedure"
    browser.get(f"{server}/{DB}/sections/{section_url.rsplit('/', 1)[1]}")
    browser.find(".mdfts-links a").click()  # the neighbours query
    assert [h.text for h in browser.find_all(".mdfts-card-title a")] == [
        "Rollback procedure", "Payments runbook", "Payments runbook", "Scaling the workers"]
    _no_console_errors(browser)


def test_table_page_folds_descriptions_and_shows_each_facet_once(server: str, browser: Browser) -> None:
    browser.get(f"{server}/{DB}/sections?_search=rollback&_facet=path")
    facets = [f.get_attribute("data-column") for f in browser.find_all(".facet-info")]
    assert facets and len(facets) == len(set(facets)), facets
    details = browser.find("details.mdfts-columns")
    assert details.get_attribute("open") is None
    assert not browser.find("dl.column-descriptions").is_displayed()
    assert [th.get_attribute("textContent") for th in browser.find_all(".mdfts-sections thead th")] == [
        "heading", "path", "body"]
    heading = browser.find(".mdfts-sections td.col-heading a")
    assert heading.text in ("E1027", "Rollback procedure")
    browser.shot("sections-table")
    browser.get(f"{server}/{DB}/tokens")
    headers = [th.get_attribute("textContent") for th in browser.find_all("table.rows-and-columns thead th")]
    assert "Link" not in headers and "token" in headers
    token = browser.find("td.col-token a")
    assert token.get_attribute("href").startswith(f"{server}/{DB}/token?token=")
    browser.shot("tokens-table")
    _no_console_errors(browser)


def _pwned(b: Browser) -> list[str]:
    """What ran or could run: an open alert, the payloads' global, event attributes, code links."""
    alert = b.alert()
    found = [f"alert: {alert}"] if alert is not None else []
    if alert is None:
        pwned = b.js("return window.__pwned || null")
        found += [f"ran: {pwned}"] if pwned else []
        found += b.js("""
            const out = [];
            for (const el of document.querySelectorAll('*')) {
              for (const a of el.attributes) {
                if (a.name.startsWith('on')) out.push(el.tagName + ' ' + a.name);
                if (/^\\s*(javascript|data|vbscript):/i.test(a.value) && /^(href|src|action|formaction|xlink:href)$/.test(a.name))
                  out.push(el.tagName + ' ' + a.name + '=' + a.value);
              }
            }
            for (const s of document.scripts) if (s.text.includes('__pwned')) out.push('script: ' + s.text);
            return out;""")
    return found


def test_hostile_markdown_stays_inert(hostile_server: str, browser: Browser) -> None:
    pages = [f"{hostile_server}/hostile", f"{hostile_server}/hostile/search?q=hostile+links+table+raw",
             f"{hostile_server}/hostile/sections", f"{hostile_server}/hostile/documents",
             f"{hostile_server}/hostile/tokens"]
    pages += [f"{hostile_server}/hostile/sections/{n}" for n in (1, 2, 3)]
    seen = []
    for url in pages:
        browser.get(url)
        # Hover and click over everything a payload could hang on.
        for el in browser.find_all(".mdfts-body *, .mdfts-card *, td *")[:200]:
            browser.js("arguments[0].dispatchEvent(new MouseEvent('mouseover', {bubbles: true}))", el)
        assert _pwned(browser) == [], url
        seen.append(browser.driver.title)
    browser.get(pages[1])
    browser.shot("hostile-search")
    text = browser.find(".mdfts-cards").text
    assert "<script>window.__pwned='script'" in text  # shown as text, not run
    browser.get(pages[-3])
    browser.shot("hostile-section")
    assert "Hostile" in " ".join(seen)
    _no_console_errors(browser, missing_image="x")


def test_search_box_handles_empty_and_odd_queries(server: str, browser: Browser) -> None:
    for q in ["", '"', "NEAR(", "<script>alert(1)</script>"]:
        browser.get(f"{server}/{DB}/search?" + urllib.parse.urlencode({"q": q}))
        assert browser.find("#mdfts-q").get_attribute("value") == q
        assert browser.alert() is None
    _no_console_errors(browser)


# Words that a line cannot hold are broken, any others are not: the text of every word inside
# `selector` (a text node split at spaces) is one box on the page.
BROKEN_WORDS = """
const out = [];
for (const root of document.querySelectorAll(arguments[0])) {
  const walk = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let node = walk.nextNode(); node; node = walk.nextNode()) {
    for (const m of node.textContent.matchAll(/\\S+/g)) {
      const range = document.createRange();
      range.setStart(node, m.index);
      range.setEnd(node, m.index + m[0].length);
      if (range.getClientRects().length > 1) out.push(m[0]);
    }
  }
}
return out;
"""


def _section_id(b: Browser, base: str, db: str, path: str, anchor: str) -> str:
    b.get(f"{base}/{db}/section.json?" + urllib.parse.urlencode({"path": path, "anchor": anchor, "_shape": "array"}))
    return str(b.js("return JSON.parse(document.body.innerText)[0].id"))


def test_a_table_in_a_section_keeps_its_words_whole(long_server: str, browser: Browser) -> None:
    # A table too wide for the page scrolls inside its box; its short words (default, since,
    # v1.0) are not broken letter by letter to make it fit.
    section = _section_id(browser, long_server, LONG, HANDBOOK, "settings")
    browser.get(f"{long_server}/{LONG}/sections/{section}")
    table = browser.find(".mdfts-section .mdfts-body table")
    browser.js("arguments[0].scrollIntoView()", table)
    browser.shot("section-table")
    assert browser.js(BROKEN_WORDS, ".mdfts-section .mdfts-body table") == []
    assert browser.js("return document.documentElement.scrollWidth") <= browser.viewport()[0]
    _no_console_errors(browser)


def test_no_page_scrolls_sideways(long_server: str, browser: Browser) -> None:
    # Long paths, a commit hash, the schema's long lines: each wraps or scrolls in its own
    # box, never the whole page (on a phone the page would then load zoomed out).
    section = _section_id(browser, long_server, LONG, HANDBOOK, "reading-the-lag-dashboard")
    pages = ["", "/search?q=kafka+consumer+lag", f"/sections/{section}", "/token?token=PAYMENTS_DB_URL",
             "/outline?" + urllib.parse.urlencode({"path": HANDBOOK}), f"/neighbors?id={section}",
             "/sections", "/documents", "/tokens", "/sections/99999", "/search?q=x&limit=abc"]
    wide = {}
    for page in pages:
        browser.get(f"{long_server}/{LONG}{page}")
        width = browser.js("return document.documentElement.scrollWidth")
        if width > browser.size[0]:
            wide[page] = width
    assert wide == {}


def test_table_pages_draw_the_markdown_as_the_section_page_does(long_server: str, browser: Browser) -> None:
    # Datasette's table styles are for its own cells: an <em> there is a grey 0.8em label, and
    # on a phone every td becomes a labelled block and every thead is moved off the screen.
    # In a rendered section, emphasis stays emphasis and a table stays a table.
    browser.get(f"{long_server}/{LONG}/sections?heading=Settings")
    body = browser.find(".rows-and-columns .mdfts-body")
    em, para = body.find_element(By.CSS_SELECTOR, "p em"), body.find_element(By.CSS_SELECTOR, "p")
    look = "const s = getComputedStyle(arguments[0]); return [s.color, s.fontSize]"
    assert em.text == "right now" and browser.js(look, em) == browser.js(look, para)
    browser.js("arguments[0].closest('.mdfts-clamp').style.maxHeight = 'none'; arguments[0].scrollIntoView()", body)
    browser.shot("sections-table-markdown")
    th = body.find_element(By.CSS_SELECTOR, "table th")
    cells = body.find_elements(By.CSS_SELECTOR, "table td")
    assert browser.js("return getComputedStyle(arguments[0]).display", th) == "table-cell"
    assert th.is_displayed() and th.location["x"] >= 0 and th.text == "setting"
    labels = [browser.js("return getComputedStyle(arguments[0], '::before').content", td) for td in cells]
    assert set(labels) <= {"none", "normal"}, labels
    assert {browser.js("return getComputedStyle(arguments[0]).display", td) for td in cells} == {"table-cell"}


@pytest.mark.parametrize(("anchor", "tag"), [("draining-a-partition", "h4"), ("checking-the-lag", "h5"),
                                             ("reading-the-lag-dashboard", "h6")])
def test_a_deep_heading_does_not_look_like_a_link(long_server: str, browser: Browser, anchor: str, tag: str) -> None:
    # Datasette underlines h4-h6 (its own pages use them as labels); in a section, underlined
    # text beside real links reads as one. (On the section's own page its heading is the h1.)
    browser.get(f"{long_server}/{LONG}/sections?anchor={anchor}")
    heading = browser.find(f".rows-and-columns .mdfts-body {tag}")
    assert browser.js("return getComputedStyle(arguments[0]).textDecorationLine", heading) == "none"
    browser.get(f"{long_server}/{LONG}/sections/{_section_id(browser, long_server, LONG, HANDBOOK, anchor)}")
    assert [h.tag_name for h in browser.find_all(".mdfts-section .mdfts-body :is(h1, h2, h3, h4, h5, h6)")] == ["h1"]


FIRST_WORDS = """
const article = document.querySelector('.mdfts-section');
const walker = document.createTreeWalker(article, NodeFilter.SHOW_TEXT,
  {acceptNode: n => n.textContent.trim() ? NodeFilter.FILTER_ACCEPT : NodeFilter.FILTER_SKIP});
const first = walker.nextNode();
return [first.parentElement.closest('h1, h2, h3, h4, h5, h6, p, nav, div').tagName, first.textContent.trim()];
"""


def test_a_section_page_reads_its_h1_first(server: str, browser: Browser) -> None:
    # The source and level line sat above the h1: in reading order (a screen reader, the
    # keyboard) a page began "runbooks/payments.md:5-13 · level 2" before naming the section.
    browser.console_errors()  # (forget the 4xx pages earlier tests opened on purpose)
    browser.get(f"{server}/{DB}/sections.json?_shape=array&_col=heading&_col=level&_size=max")
    rows = browser.js("return JSON.parse(document.body.innerText)")
    assert {r["level"] for r in rows} == {1, 2}  # (lead text's h1, the page's own: test_datasette.py)
    for row in rows:
        browser.get(f"{server}/{DB}/sections/{row['id']}")
        h1 = browser.find(".mdfts-section h1")
        meta = browser.find(".mdfts-section .mdfts-meta")
        assert browser.js(FIRST_WORDS) == ["H1", h1.text], row
        assert h1.location["y"] + h1.size["height"] <= meta.location["y"], row  # and above it on the screen
        assert [e.text for e in browser.find_all("h1")] == [h1.text]
    browser.shot("section-h1-first")
    _no_console_errors(browser)


def test_database_page_links_every_table_a_reader_can_open(server: str, browser: Browser) -> None:
    # `tokens` (a view since schema 4) has its own page, with links to the token query: the
    # database page is where one finds it. Views the plugin hides stay hidden.
    browser.get(f"{server}/{DB}")
    listed = {a.text: a.get_attribute("href") for a in browser.find_all(".mdfts-tables a")}
    assert listed.get("tokens") == f"{server}/{DB}/tokens"
    assert listed.get("sections_full") == f"{server}/{DB}/sections_full"
    assert "sections_indexed" not in listed and "token_rows" not in listed
    browser.find(".mdfts-tables a[href$='/tokens']").click()
    assert browser.wait_for("td.col-token a").get_attribute("href").startswith(f"{server}/{DB}/token?token=")


def test_the_outline_is_a_table_of_contents_that_opens_each_section(long_server: str, browser: Browser) -> None:
    # The file crumb of a section page opens the outline: it must lead on, each heading a link
    # to its section, nested under the heading it belongs to (a phone shows it as a list too,
    # not one card of seven fields per heading).
    browser.console_errors()  # (forget the 4xx pages earlier tests opened on purpose)
    browser.get(f"{long_server}/{LONG}/outline?" + urllib.parse.urlencode({"path": HANDBOOK}))
    links = browser.find_all(".mdfts-outline a")
    assert [a.text for a in links] == [
        "Payments gateway operations handbook", "Settings", "Handling an incident", "Stopping the consumers",
        "Draining a partition", "Checking the lag", "Reading the lag dashboard"]
    deepest = browser.find_all(".mdfts-outline li li li li li li > a")
    assert [a.text for a in deepest] == ["Reading the lag dashboard"]
    assert browser.js("return arguments[0].getBoundingClientRect().bottom", links[-1]) <= browser.size[1]
    browser.shot("outline")
    href = links[1].get_attribute("href")
    links[1].click()
    assert browser.driver.current_url == href and re.fullmatch(rf"{long_server}/{LONG}/sections/\d+", href)
    assert browser.wait_for(".mdfts-section .mdfts-body h1").text == "Settings"  # (an h2 in the file)
    _no_console_errors(browser)


@pytest.mark.parametrize(("page", "status", "said"), [
    ("/sections/99999", 404, "No section 99999 in this index"),
    ("/nope", 404, "Table not found"),
    ("/sections?_sort=nope", 400, "Invalid _sort: Cannot sort table by nope"),
], ids=["old-section-link", "no-table", "bad-sort"])
def test_an_error_page_leads_back_to_the_search(long_server: str, browser: Browser, page: str, status: int,
                                                said: str) -> None:
    # A section link from an older build (ids change on every build) or a mistyped URL: the
    # page says what went wrong and offers the search and the database, not a dead end.
    try:
        urllib.request.urlopen(f"{long_server}/{LONG}{page}", timeout=30)
    except urllib.error.HTTPError as err:
        assert err.code == status
    else:
        pytest.fail("no error")
    browser.get(f"{long_server}/{LONG}{page}")
    assert said in browser.find(".mdfts-error").text
    crumbs = [a.get_attribute("href") for a in browser.find_all("header a")]
    assert f"{long_server}/{LONG}" in crumbs
    box = browser.find("#mdfts-q")
    assert box.is_displayed()
    browser.shot("error-" + page.strip("/").split("?")[0].replace("/", "-"))
    box.send_keys("kafka consumer lag", Keys.ENTER)
    assert browser.wait_for(".mdfts-card-title a").text.startswith("Kafka note")


def test_a_bad_limit_is_said_once_and_not_carried_to_the_next_search(long_server: str, browser: Browser) -> None:
    # The query fails (SQLite: datatype mismatch); the page must not also claim that nothing
    # matched, and the next search from its box must not fail the same way.
    browser.get(f"{long_server}/{LONG}/search?q=kafka&limit=abc")
    assert browser.find(".message-error").text == "datatype mismatch"
    assert browser.find_all(".zero-results") == []
    box = browser.find("#mdfts-q")
    box.clear()
    box.send_keys("kafka consumer lag", Keys.ENTER)
    assert browser.wait_for(".mdfts-card-title a").text.startswith("Kafka note")
    assert browser.find_all(".message-error") == []
    browser.get(f"{long_server}/{LONG}/search?q=kafka&limit=3")
    before = browser.find("html")  # (this page has cards too: wait_for would find them)
    browser.find("#mdfts-q").send_keys(" lag", Keys.ENTER)
    browser.wait_gone(before)
    browser.wait_for(".mdfts-card")
    assert "limit=3" in browser.driver.current_url and len(browser.find_all(".mdfts-card")) == 3


def test_a_full_page_of_results_offers_more(long_server: str, browser: Browser) -> None:
    # 15 sections match (14 notes and the lead text); the search shows 10 (its default limit)
    # and says there may be more.
    browser.get(f"{long_server}/{LONG}/search?" + urllib.parse.urlencode({"q": "kafka consumer lag",
                                                                         "prefix": "notes"}))
    assert len(browser.find_all(".mdfts-card")) == 10
    more = browser.find("a.mdfts-more-results")
    assert more.is_displayed()
    more.click()
    browser.wait_for(".mdfts-card")
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(browser.driver.current_url).query)
    assert query == {"q": ["kafka consumer lag"], "prefix": ["notes"], "limit": ["20"]}
    assert len(browser.find_all(".mdfts-card")) == 15
    assert browser.find_all("a.mdfts-more-results") == []  # all there is
    assert browser.find("#mdfts-q").get_attribute("value") == "kafka consumer lag"


def test_each_query_field_sits_beside_its_label(long_server: str, browser: Browser) -> None:
    # On a phone the fields wrap: a label must wrap with its field, not stay at the end of
    # the line above, beside another field.
    browser.get(f"{long_server}/{LONG}/section?" + urllib.parse.urlencode({"path": HANDBOOK, "anchor": "settings"}))
    browser.shot("section-query")
    for label in browser.find_all(".mdfts-params label"):
        field = browser.find(f"#{label.get_attribute('for')}")
        gap = browser.js("""const l = arguments[0].getBoundingClientRect(), f = arguments[1].getBoundingClientRect();
                            return [l.top < f.bottom && f.top < l.bottom, f.left - l.right]""", label, field)
        assert gap[0] and 0 <= gap[1] < 40, (label.text, gap)


def test_the_keyboard_skips_a_show_all_that_is_not_shown(server: str, browser: Browser) -> None:
    # A section that fits its fold hides "show all": its checkbox must not stay in the tab
    # order, where the focus would vanish onto nothing visible.
    browser.get(f"{server}/{DB}/search?q=how+do+I+roll+back+payments")
    short = next(c for c in browser.find_all(".mdfts-card")
                 if c.find_element(By.CSS_SELECTOR, ".mdfts-card-title a").text == "Payments runbook")
    source = short.find_element(By.CSS_SELECTOR, ".mdfts-meta a")
    browser.js("arguments[0].focus()", source)
    source.send_keys(Keys.TAB)
    focused = browser.driver.switch_to.active_element
    assert focused.text == "open the section" and focused.is_displayed()


# Text whose colour on its background is below WCAG AA (4.5:1; 3:1 from 24px, or 18.66px bold).
LOW_CONTRAST = r"""
const rgba = c => { const m = c.match(/[\d.]+/g).map(Number); return m.length > 3 ? m : [...m, 1]; };
const lum = c => c.slice(0, 3).map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; })
  .reduce((sum, v, i) => sum + v * [0.2126, 0.7152, 0.0722][i], 0);
const background = el => { for (; el; el = el.parentElement) { const c = rgba(getComputedStyle(el).backgroundColor);
  if (c[3] > 0.5) return c; } return [255, 255, 255, 1]; };
const out = [];
for (const el of document.querySelectorAll('.content *')) {
  const text = [...el.childNodes].filter(n => n.nodeType === 3 && n.textContent.trim()).map(n => n.textContent).join('');
  if (!text.trim() || !el.getClientRects().length) continue;
  const s = getComputedStyle(el);
  if (s.visibility === 'hidden') continue;
  const [a, b] = [lum(rgba(s.color)), lum(background(el))];
  const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05), px = parseFloat(s.fontSize);
  const large = px >= 24 || (px >= 18.66 && +s.fontWeight >= 700);
  if (ratio < (large ? 3 : 4.5)) out.push(`${el.tagName}.${el.className} ${text.trim().slice(0, 20)}: ${ratio.toFixed(2)}`);
}
return [...new Set(out)];
"""


def test_text_on_the_pages_is_readable(server: str, browser: Browser) -> None:
    pages = ["", "/search?q=how+do+I+roll+back+payments", "/token?token=E1027", "/neighbors?id=2",
             "/outline?path=runbooks%2Fpayments.md", "/sections", "/tokens", "/sections/2"]
    low = {}
    for page in pages:
        browser.get(f"{server}/{DB}{page}")
        if found := browser.js(LOW_CONTRAST):
            low[page] = found
    assert low == {}


def test_each_exact_token_reads_as_one_piece(long_server: str, browser: Browser) -> None:
    # A token is what one copies (deployment/payments-gateway-worker-consumer): broken at its
    # hyphens across two lines it reads as two tokens. One that fits a line stays on one.
    section = _section_id(browser, long_server, LONG, HANDBOOK, "reading-the-lag-dashboard")
    browser.get(f"{long_server}/{LONG}/sections/{section}")
    codes = browser.find_all(".mdfts-tokens code")
    assert len(codes) >= 4
    browser.js("arguments[0].scrollIntoView()", codes[0])
    browser.shot("section-tokens")
    split = [c.text for c in codes if browser.js("return arguments[0].getClientRects().length", c) != 1]
    assert split == []


def test_a_facet_count_is_never_split(long_server: str, browser: Browser) -> None:
    # Datasette breaks facet lines anywhere (word-break: break-all): "notifications.md 11"
    # came out as "notifications.md 1", then "1" on the next line, read as a count of 1.
    browser.get(f"{long_server}/{LONG}/sections")
    browser.shot("sections-facets")
    counts = [w for w in browser.js(BROKEN_WORDS, ".facet-info li") if re.fullmatch(r"[\d,]+", w)]
    assert counts == []


def test_the_sections_table_shows_its_rows_before_long_facet_lists(long_server: str, browser: Browser) -> None:
    # Five facets of 30 values each put the first row four screens down (seven on a phone):
    # each lists its 10 commonest values, and "…" opens the rest.
    browser.get(f"{long_server}/{LONG}/sections")
    facet = browser.find(".facet-info[data-column='env_vars']")
    values = facet.find_elements(By.CSS_SELECTOR, "li:not(.facet-truncated)")
    assert len(values) == 10
    facet.find_element(By.CSS_SELECTOR, "li.facet-truncated a").click()
    facet = browser.wait_for(".facet-info[data-column='env_vars']")
    assert len(facet.find_elements(By.CSS_SELECTOR, "li:not(.facet-truncated)")) == 12


def test_a_table_in_a_section_has_a_header_row_that_reads_as_one(long_server: str, browser: Browser) -> None:
    # Datasette's reset draws a th like a td: "setting default meaning since" then looked
    # like the first row of values.
    browser.get(f"{long_server}/{LONG}/sections/{_section_id(browser, long_server, LONG, HANDBOOK, 'settings')}")
    header = browser.find(".mdfts-section .mdfts-body th")
    assert header.text == "setting"
    assert int(browser.js("return getComputedStyle(arguments[0]).fontWeight", header)) >= 600


def test_a_facet_filter_can_be_removed_by_name(long_server: str, browser: Browser) -> None:
    # The ✖ that removes a facet or a chosen value was read out as "heavy multiplication x".
    browser.get(f"{long_server}/{LONG}/sections?_facet=heading&path=notes.md")
    crosses = browser.find_all(".facet-info a.cross")
    assert crosses
    names = [c.get_attribute("aria-label") or "" for c in crosses]
    assert all(n.startswith("Remove ") for n in names), names
    assert "Remove the heading facet" in names and "Remove the filter path: notes.md" in names


def test_the_search_box_shows_its_whole_placeholder(server: str, browser: Browser) -> None:
    # At 390 px the box beside its button had 244 px for a 310 px placeholder: "words, an error
    # code, an ENV_VAF".
    for page in (f"{server}/{DB}", f"{server}/{DB}/search?q="):
        browser.get(page)
        room, text = browser.js("""
            const box = arguments[0], s = getComputedStyle(box);
            const ctx = document.createElement('canvas').getContext('2d');
            ctx.font = s.font;
            return [box.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight),
                    ctx.measureText(box.placeholder).width];""", browser.find("#mdfts-q"))
        assert 0 < text <= room, page
    browser.shot("search-placeholder")


def test_the_tokens_table_is_short_on_a_phone(long_server: str, browser: Browser) -> None:
    # On a phone Datasette draws each row as a block of labelled lines, one a column: a token took
    # 330 px (five lines), 100 of them a page.
    browser.console_errors()  # (forget the 4xx pages earlier tests opened on purpose)
    browser.get(f"{long_server}/{LONG}/tokens")
    rows = browser.find_all(".rows-and-columns tbody tr")
    assert len(rows) == 20 and browser.find_all("a[href*='_next=']")  # a page of 20, and the next page
    first = rows[0]
    token = first.find_element(By.CSS_SELECTOR, "td.col-token")
    assert token.find_element(By.CSS_SELECTOR, "a code").text  # (a link to the token query)
    browser.shot("tokens-table")
    if browser.size[0] < 600:
        assert max(r.size["height"] for r in rows) <= 120, [r.size["height"] for r in rows]  # three lines
        assert not first.find_element(By.CSS_SELECTOR, "td.col-norm").is_displayed()  # the token again, lower case
        said = first.find_element(By.CSS_SELECTOR, "td.col-kind").text
        assert browser.js("return getComputedStyle(arguments[0], '::before').content",
                          first.find_element(By.CSS_SELECTOR, "td.col-kind")) == '"kind: "' and said
    else:  # a table, as it was
        assert browser.js("return getComputedStyle(arguments[0]).display", token) == "table-cell"
        assert [th.text for th in browser.find_all(".rows-and-columns thead th")][:3] == ["norm", "section_id", "token"]
    _no_console_errors(browser)


def test_a_sections_many_tokens_fold_behind_a_summary_the_keyboard_opens(tokens_server: str,
                                                                          browser: Browser) -> None:
    # All 500 chips were drawn open: screens of them before the page's links on a phone.
    browser.console_errors()  # (forget the 4xx pages earlier tests opened on purpose)
    browser.get(f"{tokens_server}/settings/sections/1")
    chips = browser.find_all(".mdfts-tokens a")
    assert [c.get_attribute("textContent") for c in chips] == [f"SETTING_{i:03}" for i in range(60)]
    assert [c.is_displayed() for c in chips] == [True] * 40 + [False] * 20
    summary = browser.find(".mdfts-more-tokens > summary")
    assert summary.text == "Show all 60 exact tokens"
    browser.js("arguments[0].scrollIntoView({block: 'center'})", summary)
    browser.shot("section-tokens-folded")
    chips[39].send_keys(Keys.TAB)  # from the last chip shown, the next stop is the summary
    assert browser.js("return document.activeElement.tagName") == "SUMMARY"
    assert browser.js("return getComputedStyle(document.activeElement).outlineStyle") != "none"
    browser.driver.switch_to.active_element.send_keys(Keys.ENTER)
    assert [c.is_displayed() for c in chips] == [True] * 60
    browser.js("arguments[0].scrollIntoView()", chips[59])
    browser.shot("section-tokens-all")
    _no_console_errors(browser)
