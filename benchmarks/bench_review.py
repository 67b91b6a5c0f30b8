"""The review page's cost per verdict: load time and the response to a key, at 159 and at 10,000
questions, in headless Chromium against the real server (one process, one browser, in turn).

Printed per size, one JSON line: the milliseconds from navigation to the first question drawn
(`load_ms`), and over `--keys` verdicts the milliseconds from a key's keydown to the next
question drawn (`key_ms` median and max: the page draws the next question before the server has
written the verdict), the list rows in the DOM (the list is virtual: it stays near the rows in
view), the keystrokes a verdict takes; over `--fixes` fixes, the slowest from `e` to the
editor open, and from the Enter that saves a fix to the next question drawn (a fix the writer's
checks warn about is saved by a second Enter, which is the one timed); then the ratio of each
figure to its target (load under 1 s, a key, an editor and a saved fix under 100 ms) and of
10,000 to 159 questions (the baseline: the shipped set's size).

    PYTHONPATH=src python benchmarks/bench_review.py
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.browser import chromium  # noqa: E402
from tests.review.conftest import served, with_token, write_project  # noqa: E402
from tests.review.test_page import sample_documents  # noqa: E402

TARGET_LOAD_MS, TARGET_KEY_MS = 1000, 100
# Each action's end event is a mark the page sets on <body>: a drawn question sets data-shown
# (a verdict's key, or the Enter that saves a fix, ends there); a fix's editor, open with its
# sentences drawn and its text focused, sets data-fixing ("e" ends there).
KEY_TIMER = """
window.keyTimes = [];
document.addEventListener("DOMContentLoaded", () => new MutationObserver((changes) => {
  if (window.keyDown === undefined) return;
  const marks = changes.map((change) => change.attributeName);
  const ends = { e: "data-fixing" }[window.keyName] || "data-shown";
  if (!marks.includes(ends) || (ends === "data-fixing" && !document.body.dataset.fixing)) return;
  window.keyTimes.push([window.keyName, performance.now() - window.keyDown]);
  window.keyDown = undefined;
}).observe(document.body, { attributes: true, attributeFilter: ["data-shown", "data-fixing"] }));
document.addEventListener("keydown", (event) => {
  window.keyDown = performance.now();
  window.keyName = event.key;
}, true);
"""


def questions_over(documents: list[dict], n: int) -> list[dict]:
    """n questions spread over the documents, each pointing at a slice of its document."""
    rows = []
    for i in range(n):
        document = documents[i % len(documents)]
        start = (i * 37) % max(1, len(document["text"]) - 200)
        rows.append(
            {
                "qid": f"gs-{i:06d}",
                "question": f"What does sentence {i} of {document['title'][:40]} say?",
                "doc_id": document["doc_id"],
                "evidence_start": start,
                "evidence_end": start + 150,
                "evidence": document["text"][start : start + 150],
                "form": "question",
            }
        )
    return rows


def measure(browser, folder: Path, keys: int, fixes: int) -> dict:
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.add_init_script(KEY_TIMER)
    with served(folder) as url:
        page.goto(with_token(url))
        page.wait_for_selector("body[data-shown]")
        load_ms = page.evaluate("performance.now()")
        rows_in_dom = page.locator(".row").count()
        for _ in range(keys):
            shown = page.locator("body").get_attribute("data-shown")
            page.keyboard.press("p")
            page.wait_for_function(f"document.body.dataset.shown !== '{shown}'")
        for i in range(fixes):
            shown = page.locator("body").get_attribute("data-shown")
            page.keyboard.press("e")
            page.wait_for_selector("body[data-fixing]")
            page.fill("#fix-text", f"What does the passage of fix {i} say about it?")
            page.keyboard.press("Enter")  # saved, or warned: the next Enter saves it anyway
            page.wait_for_function(
                f"document.body.dataset.shown !== '{shown}' || "
                "document.getElementById('fix-warnings').textContent !== ''"
            )
            if page.locator("body").get_attribute("data-shown") == shown:
                page.keyboard.press("Enter")
                page.wait_for_function(f"document.body.dataset.shown !== '{shown}'")
        times = page.evaluate("window.keyTimes")
    page.close()
    verdicts = [ms for key, ms in times if key == "p"]
    opened = [ms for key, ms in times if key == "e"]
    saved = [ms for key, ms in times if key == "Enter"]
    return {
        "load_ms": round(load_ms, 1),
        "key_ms_median": round(statistics.median(verdicts), 1),
        "key_ms_max": round(max(verdicts), 1),
        "fix_open_ms_max": round(max(opened), 1) if opened else None,
        "fix_saved_ms_max": round(max(saved), 1) if saved else None,
        "rows_in_dom": rows_in_dom,
        "keystrokes_per_verdict": 1,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[159, 10_000])
    parser.add_argument("--keys", type=int, default=30)
    parser.add_argument("--fixes", type=int, default=10)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    documents = list(sample_documents().values())
    found = {}
    with sync_playwright() as playwright, tempfile.TemporaryDirectory() as scratch:
        browser = playwright.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
        for size in args.sizes:
            folder = write_project(
                Path(scratch) / str(size), questions_over(documents, size), documents
            )
            found[size] = measure(browser, folder, args.keys, args.fixes)
            print(json.dumps({"questions": size, **found[size]}), flush=True)
        browser.close()
    for size, figures in found.items():
        print(
            f"{size} questions: load {figures['load_ms'] / TARGET_LOAD_MS:.2f}x the 1 s target, "
            f"key median {figures['key_ms_median'] / TARGET_KEY_MS:.2f}x and max "
            f"{figures['key_ms_max'] / TARGET_KEY_MS:.2f}x the 100 ms target"
            + (
                f"; a fix's editor open at most {figures['fix_open_ms_max'] / TARGET_KEY_MS:.2f}x, "
                f"a saved fix moved on at most {figures['fix_saved_ms_max'] / TARGET_KEY_MS:.2f}x"
                if figures["fix_open_ms_max"] is not None
                else ""
            )
        )
    first, last = args.sizes[0], args.sizes[-1]
    if first != last:
        big, small = found[last], found[first]
        print(
            f"{last} against {first} questions: load {big['load_ms'] / small['load_ms']:.2f}x, "
            f"key median {big['key_ms_median'] / small['key_ms_median']:.2f}x"
        )


if __name__ == "__main__":
    main()
