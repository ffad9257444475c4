"""The Judge Card and the comparison in a real browser: hostile text runs no script (in the
evidence's excerpts and raw answers too, folded or opened); the pages render, fold and print.

Drives headless Chromium through chromedriver (Debian packages ``chromium`` and
``chromium-driver``). Script execution is detected through side effects that the hostile
payloads would cause if they ran: ``window.__pwned`` set, the document title changed, an alert
open, a Content-Security-Policy violation logged. A control case (a raw script injected into a
page without the policy) shows that the detector sees a script that does run.

``JUDGEPROBE_DEMO_CARD`` may point at a ``card.html`` (from ``judgeprobe demo``) to check that
card's sections instead of one built from a synthetic run store.
"""

from __future__ import annotations

import base64
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from audited import audited_store, hostile_store, with_evidence
from judgeprobe.compare import compare_runs, write_comparison
from judgeprobe.report import build_card, render_html, write_card

pytestmark = pytest.mark.browser

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")

CHROMIUM = os.environ.get("JUDGEPROBE_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = (
    os.environ.get("JUDGEPROBE_CHROMEDRIVER")
    or shutil.which("chromedriver")
    or "/usr/bin/chromedriver"
)
if not (Path(CHROMIUM).is_file() and Path(CHROMEDRIVER).is_file()):
    pytest.skip(
        "headless Chromium is not installed (apt-get install chromium chromium-driver)",
        allow_module_level=True,
    )

HOSTILE = [
    "<script>window.__pwned=1;document.title='pwned'</script>",
    '<img src=x onerror="window.__pwned=2;alert(2)">',
    '<svg onload="window.__pwned=3"></svg>',
    '"><script>window.__pwned=4</script>',
    "'><img src=x onerror=window.__pwned=5>",
    "</textarea></title></style></pre><script>window.__pwned=6</script>",
    '<a href="javascript:window.__pwned=7" id="pwn-link">click me</a>',
    "[click me](javascript:window.__pwned=8)",
    "![pixel](https://example.invalid/pixel.png)",
    '<iframe src="javascript:top.__pwned=9"></iframe>',
    '<meta http-equiv="refresh" content="0;url=javascript:window.__pwned=10">',
    "<style>body{display:none}</style>",
    "<body onload=window.__pwned=11>",
    '<object data="javascript:window.__pwned=12"></object>',
    "{{ 7 * 7 }}",
    "W" * 20000,
    "\u202eevil bidi override",
]
ESCAPED_AS_TEXT = [HOSTILE[0], HOSTILE[1], HOSTILE[6], HOSTILE[7], "{{ 7 * 7 }}"]
ACTIVE_ELEMENTS = "script, iframe, object, embed, svg, base, form, link, meta[http-equiv=refresh]"


@pytest.fixture(scope="module")
def driver() -> Iterator[Any]:
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    profile = tempfile.mkdtemp(prefix="judgeprobe-chromium-")
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        "--window-size=1280,1000",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    browser = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        yield browser
    finally:
        browser.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def hostile_html(tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("hostile")
    card = with_evidence(build_card(hostile_store(root, HOSTILE)), HOSTILE)
    return render_html(card)


def load(driver: Any, path: Path) -> list[dict[str, Any]]:
    """Open ``path`` and return the browser log it produced."""
    driver.get_log("browser")  # drop what earlier pages logged
    driver.get(path.as_uri())
    driver.execute_script("return document.readyState")
    return list(driver.get_log("browser"))


def pwned(driver: Any) -> bool:
    from selenium.common.exceptions import NoAlertPresentException

    try:
        driver.switch_to.alert.dismiss()
        return True
    except NoAlertPresentException:
        pass
    return not driver.execute_script("return window.__pwned === undefined")


def without_csp(html: str) -> str:
    tag = re.search(r'<meta http-equiv="Content-Security-Policy"[^>]*>\n', html)
    assert tag is not None
    return html.replace(tag.group(0), "")


def assert_inert(driver: Any, log: list[dict[str, Any]]) -> None:
    assert not pwned(driver)
    assert driver.title.startswith("Judge Card: ")
    assert driver.find_elements("css selector", ACTIVE_ELEMENTS) == []
    messages = [entry["message"] for entry in log]
    assert not [m for m in messages if "pwned" in m or "Refused to" in m], messages
    body = driver.find_element("tag name", "body").text
    for text in ESCAPED_AS_TEXT:
        assert text in body, text
    summary = driver.find_element("id", "summary")
    assert summary.is_displayed()
    width = driver.execute_script(
        "return [document.documentElement.scrollWidth, window.innerWidth]"
    )
    assert width[0] <= width[1] + 2, "a long line widened the page"


def test_hostile_card_runs_no_script_and_still_renders(
    driver: Any, hostile_html: str, tmp_path: Path
) -> None:
    page = tmp_path / "card.html"
    page.write_text(hostile_html, encoding="utf-8")
    assert_inert(driver, load(driver, page))
    link_free = driver.find_elements("id", "pwn-link")
    assert link_free == []
    images = driver.execute_script(
        "return Array.from(document.images).map(i => [i.naturalWidth, i.src.split(',')[0]])"
    )
    assert images and all(w > 0 for w, _ in images), images
    kinds = {src for _, src in images}
    assert kinds == {"data:image/png;base64", "data:image/svg+xml;base64"}, kinds


def test_opening_every_fold_of_a_hostile_card_runs_no_script_and_shows_the_evidence(
    driver: Any, hostile_html: str, tmp_path: Path
) -> None:
    page = tmp_path / "card.html"
    page.write_text(hostile_html, encoding="utf-8")
    log = load(driver, page)
    folds = driver.find_elements("css selector", "details")
    kinds = {fold.get_attribute("class") for fold in folds}
    assert kinds == {"slices", "evidence", "tables"}, kinds
    assert not [fold for fold in folds if fold.get_attribute("open") is not None]
    evidence = driver.find_element("css selector", "details.evidence")
    raw = evidence.find_element("css selector", ".raw")
    assert not raw.is_displayed()  # folded
    for fold in folds:  # outer folds first: an evidence fold of a slice sits inside its fold
        summary = fold.find_element("css selector", "summary")
        driver.execute_script("arguments[0].scrollIntoView()", summary)
        summary.click()
        assert fold.get_attribute("open") is not None
    assert raw.is_displayed() and raw.text
    items = evidence.find_element("css selector", "table.evidence-items").text
    for text in (HOSTILE[0], HOSTILE[1]):  # excerpts and raw answers, as text
        assert text in driver.find_element("tag name", "body").text, text
    assert "item-0" in items
    log += driver.get_log("browser")
    assert_inert(driver, log)


def test_escaping_alone_stops_hostile_text_without_the_security_policy(
    driver: Any, hostile_html: str, tmp_path: Path
) -> None:
    page = tmp_path / "card-no-csp.html"
    page.write_text(without_csp(hostile_html), encoding="utf-8")
    assert_inert(driver, load(driver, page))


def test_security_policy_alone_stops_a_script_that_got_into_the_page(
    driver: Any, hostile_html: str, tmp_path: Path
) -> None:
    injected = "<script>window.__pwned=99</script></body>"
    with_policy = tmp_path / "injected.html"
    with_policy.write_text(hostile_html.replace("</body>", injected), encoding="utf-8")
    log = load(driver, with_policy)
    assert not pwned(driver)
    assert any("Content Security Policy" in entry["message"] for entry in log)
    control = tmp_path / "injected-no-csp.html"
    control.write_text(without_csp(hostile_html).replace("</body>", injected), encoding="utf-8")
    load(driver, control)
    assert pwned(driver), "the detector must see a script that does run"


def hostile_repair(untrusted: list[str]) -> dict[str, Any]:
    """A stored repair summary whose every text is hostile, links included."""
    side = {"estimate": 0.5, "low": 0.4, "high": 0.6, "n": 40, "status": "fail"}
    row = {
        "finding": untrusted[0],
        "labels": {"slice": untrusted[1]},
        "gated": True,
        "before": side,
        "after": {**side, "estimate": 0.0, "status": "pass"},
        "difference": {"estimate": -0.5, "ci": {"low": -0.6, "high": -0.4}, "n": 40},
        "method": "paired",
        "adjusted_pvalue": 0.001,
        "word": "better",
    }
    repair = {
        "repair": untrusted[3],
        "target_probe": untrusted[4],
        "cost_multiplier": 2.0,
        "verdict": {"overall": "pass", "sentence": untrusted[5]},
        "links": {"card": untrusted[6], "comparison": "repair-compare"},
        "target_findings": [row],
    }
    return {"headline": untrusted[7], "repairs": [repair]}


def test_a_hostile_repair_section_shows_its_table_and_runs_no_script(
    driver: Any, tmp_path: Path
) -> None:
    from judgeprobe.report.repair import repair_section

    card = build_card(hostile_store(tmp_path, HOSTILE))
    card["repair"] = repair_section(hostile_repair(HOSTILE))
    for name, html in (("card.html", render_html(card)), ("card-no-csp.html", None)):
        page = tmp_path / name
        page.write_text(html or without_csp(render_html(card)), encoding="utf-8")
        assert_inert(driver, load(driver, page))
        section = driver.find_element("id", "repair")
        assert section.is_displayed()
        assert section.find_element("css selector", "h2").text == "Repair"
        rows = section.find_elements("css selector", "table.repair-findings tbody tr")
        assert len(rows) == 1 and rows[0].is_displayed()
        assert "better" in rows[0].text and "paired" in rows[0].text
        assert HOSTILE[5] in section.text and HOSTILE[7] in section.text  # as text
        links = [a.get_attribute("href") for a in section.find_elements("tag name", "a")]
        assert links == [(tmp_path / "repair-compare" / "compare.html").as_uri()], links


@pytest.fixture(scope="module")
def demo_card(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """The demo card and the probe names it must show (empty: any probe section will do)."""
    given = os.environ.get("JUDGEPROBE_DEMO_CARD")
    if given:
        return Path(given), []
    root = tmp_path_factory.mktemp("demo")
    store = audited_store(root)
    written = write_card(store, root / "card")
    names = [probe["name"] for probe in build_card(store)["probes"]]
    return written["html"], names


def test_demo_card_shows_its_sections_and_a_non_blank_screenshot(
    driver: Any, demo_card: tuple[Path, list[str]], tmp_path: Path
) -> None:
    path, names = demo_card
    assert_no_errors = load(driver, path)
    assert not [e for e in assert_no_errors if e["level"] == "SEVERE"], assert_no_errors
    headings = [h.text for h in driver.find_elements("css selector", "h2")]
    assert headings[:3] == ["At a glance", "Summary", "What was tested"]
    overview = driver.find_element("css selector", "#glance figure.overview img")
    assert overview.is_displayed() and overview.size["width"] > 600
    assert driver.execute_script("return arguments[0].naturalHeight", overview) > 100
    verdict = driver.find_element("id", "verdict").text
    said = r"(PASS|WARN|FAIL|INCONCLUSIVE) \1: of \d+ findings? with a threshold, "
    assert re.match(said, verdict), verdict
    top = driver.find_elements("css selector", "#top-findings li")
    assert 1 <= len(top) <= 3 or driver.find_element("id", "top-findings").tag_name == "p"
    for link in driver.find_elements("css selector", "#top-findings a"):
        target = link.get_attribute("href").split("#")[1]
        assert driver.find_elements("id", target), target
    slices = driver.find_elements("css selector", "details.slices")
    if slices:  # folded until clicked, then their rows show
        row = slices[0].find_element("css selector", "tbody tr")
        assert not row.is_displayed()
        summary = slices[0].find_element("css selector", "summary")
        driver.execute_script("arguments[0].scrollIntoView()", summary)
        summary.click()
        assert row.is_displayed()
        summary.click()
    probes = driver.find_elements("css selector", "section.probe")
    assert probes, "the card has no probe section"
    probe_headings = [h for h in headings if h.startswith("Probe: ")]
    assert len(probe_headings) == len(probes)
    for name in names:
        assert any(h.startswith(f"Probe: {name} ") for h in probe_headings), name
    assert driver.find_element("id", "overall").text in (
        "PASS",
        "WARN",
        "FAIL",
        "INCONCLUSIVE",
        "n/a",
    )
    height = driver.execute_script("return document.documentElement.scrollHeight")
    assert_screenshot(driver, tmp_path / "card.png", int(height))


def assert_screenshot(driver: Any, shot: Path, height: int) -> None:
    """A full-page screenshot of the open page is of a sane size, neither blank nor uniform."""
    from matplotlib import image

    driver.set_window_size(1280, min(height, 8000))
    try:
        assert driver.save_screenshot(str(shot))
    finally:
        driver.set_window_size(1280, 1000)
    pixels = image.imread(str(shot))[..., :3]
    assert pixels.shape[1] >= 1000 and pixels.shape[0] >= 400, pixels.shape
    colours = {tuple(p) for p in pixels[::7, ::7].reshape(-1, 3).round(2).tolist()}
    assert len(colours) > 50, "the screenshot is nearly uniform"
    assert (pixels < 0.9).any(axis=-1).mean() > 0.02, "the screenshot is nearly blank"


def test_card_prints_with_one_probe_per_page_and_nothing_cut_off(
    driver: Any, demo_card: tuple[Path, list[str]]
) -> None:
    from selenium.webdriver.common.print_page_options import PrintOptions

    path, _ = demo_card
    load(driver, path)
    pdf = base64.b64decode(driver.print_page(PrintOptions()))
    assert pdf.startswith(b"%PDF") and re.search(rb"/Type\s*/Page[^s]", pdf)
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
    try:
        styles = driver.execute_script(
            """
            const style = (selector) => getComputedStyle(document.querySelector(selector));
            return [style("section.probe").breakBefore, style("pre").maxHeight,
                    style("pre").overflow, style("nav").display];
            """
        )
        folded = driver.execute_script(  # a folded part prints open
            """
            const rows = document.querySelectorAll("details:not([open]) tbody tr");
            return [rows.length, Array.from(rows).filter(r => r.offsetHeight > 0).length];
            """
        )
    finally:
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})
    assert styles == ["page", "none", "visible", "none"]
    assert folded[0] > 0 and folded[1] == folded[0], folded


@pytest.fixture(scope="module")
def comparison(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The comparison page of two runs, with hostile text in what it shows of them."""
    root = tmp_path_factory.mktemp("compare")
    runs = [audited_store(root / name) for name in ("old", "new")]
    document = compare_runs(runs, n_resamples=200)
    document["runs"][1]["judge"]["model"] = HOSTILE[0]
    document["runs"][1]["source"] = HOSTILE[1]
    document["checks"]["notes"] = [HOSTILE[3], HOSTILE[6]]
    return write_comparison(document, root / "out")["html"]


def test_comparison_shows_its_sections_runs_no_script_and_prints(
    driver: Any, comparison: Path, tmp_path: Path
) -> None:
    from selenium.webdriver.common.print_page_options import PrintOptions

    log = load(driver, comparison)
    assert not pwned(driver) and driver.title == "Judge comparison"
    assert driver.find_elements("css selector", ACTIVE_ELEMENTS) == []
    messages = [entry["message"] for entry in log]
    assert not [m for m in messages if "pwned" in m or "Refused to" in m], messages
    headings = [h.text for h in driver.find_elements("css selector", "h2")]
    assert headings[0] == "Runs" and len(headings) == 2 and " against " in headings[1]
    body = driver.find_element("tag name", "body").text
    assert HOSTILE[0] in body and HOSTILE[6] in body
    height = driver.execute_script("return document.documentElement.scrollHeight")
    assert_screenshot(driver, tmp_path / "compare.png", int(height))
    pdf = base64.b64decode(driver.print_page(PrintOptions()))
    assert pdf.startswith(b"%PDF") and re.search(rb"/Type\s*/Page[^s]", pdf)
