"""``report.html`` in a real headless browser: Debian's chromium, driven by selenium through
Debian's chromedriver (nothing downloaded). The page loads with no console error, its main
elements are visible, a changed cell of the matrix leads to its examples, and a hostile tool name
stays text. The screenshot is kept in ``test-artifacts/`` (``GUARD_TEST_ARTIFACTS`` moves it)."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from guard.policy import Policy
from guard.replay import replay, write_outputs

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is part of the dev extra")
from selenium.webdriver.common.by import By  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(os.environ.get("GUARD_TEST_ARTIFACTS", REPO / "test-artifacts"))


def _binary(name: str) -> str:
    found = shutil.which(name)
    if found is None:  # a missing browser fails, never skips: a skip would hide a CI that forgot it
        pytest.fail(f"{name} is not installed: apt-get install chromium chromium-driver (.ci/run does)", pytrace=False)
    return found


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    options = webdriver.ChromeOptions()
    options.binary_location = _binary("chromium")
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,1600"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = webdriver.ChromeService(executable_path=_binary("chromedriver"))
    driver = webdriver.Chrome(options=options, service=service)
    try:
        yield driver
    finally:
        driver.quit()


def test_the_replay_report_loads_cleanly_and_links_the_matrix_to_examples(browser, bench_log: Path, tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    lines = bench_log.read_text(encoding="utf-8").splitlines()
    # a hostile tool name in one logged call: it must stay text on the page
    hostile = next(json.loads(line) for line in lines if '"decision"' in line[:20] and '"unknown_tool"' in line)
    hostile["call"]["name"] = "<img src=x onerror=alert(1)>"
    hostile["decision_id"] = "0"  # the smallest key: among the examples shown
    log.write_text("\n".join([*lines, json.dumps(hostile)]) + "\n", encoding="utf-8")
    run = replay([log], Policy.model_validate({"actions": {"unknown_tool": "ask_human"}}))
    write_outputs(run, tmp_path / "out")
    page = tmp_path / "out" / "report.html"
    assert "http://" not in page.read_text().replace("http://www.w3.org/2000/svg", "")  # nothing to fetch

    browser.get(page.as_uri())
    for element in ("headline", "confusion", "per-category", "changes-by-category", "per-tool", "examples"):
        assert browser.find_element(By.ID, element).is_displayed(), element
    assert browser.find_elements(By.TAG_NAME, "img") == []  # the tool name was not markup
    link = browser.find_element(By.CSS_SELECTOR, "#confusion td.changed a")
    assert link.text == str(run.report["confusion"]["retry"]["ask_human"])
    link.click()
    section = browser.find_element(By.ID, "ex-retry-to-ask-human")
    assert section.is_displayed() and browser.current_url.endswith("#ex-retry-to-ask-human")
    summary = section.find_element(By.TAG_NAME, "summary")
    assert "<img src=x onerror=alert(1)>" in section.text
    summary.click()
    assert section.find_element(By.TAG_NAME, "pre").is_displayed()
    errors = [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
    assert errors == []
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    assert browser.save_screenshot(str(ARTIFACTS / "replay-report.png"))


def test_the_benchmark_report_loads_cleanly_with_its_tables_and_curves(browser, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from guard_bench.cli import SAMPLES
    from guard_bench.cli import app as bench_app
    from guard_bench.report import suites_of

    out = tmp_path / "bench"
    result = CliRunner().invoke(bench_app, ["run", "acebench", "--data-dir", str(SAMPLES), "--split", "all", "--out", str(out)])
    assert result.exit_code == 0, result.output
    page = out / "report.html"
    suites = suites_of(json.loads((out / "results.json").read_text()))
    assert list(suites) == ["acebench"]
    browser.get(page.as_uri())
    assert browser.find_element(By.ID, "headline").is_displayed()
    headline = browser.find_element(By.ID, "headline").text
    for name, suite in suites.items():
        section = browser.find_element(By.ID, "suite-" + "".join(c if c.isalnum() else "-" for c in name))
        assert section.is_displayed() and name in headline
        assert section.find_element(By.CSS_SELECTOR, "table.categories").is_displayed()
        assert section.find_element(By.CSS_SELECTOR, "table.confusion").is_displayed()
        for metric in suite["paper_metrics"]:
            assert metric in headline
    curves = browser.find_elements(By.CSS_SELECTOR, "svg.plot")
    assert curves and all(c.is_displayed() for c in curves)
    assert browser.find_elements(By.CSS_SELECTOR, "svg.plot polyline")
    errors = [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
    assert errors == []
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    assert browser.save_screenshot(str(ARTIFACTS / "bench-report.png"))
