"""The review page as headless Chromium draws it, both views, for the tutorial:
python docs/screenshots/review_page.py URL   (a running `goldenset review`'s address, with its
token: `goldenset review --list` prints it, then the project, which is left out)"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

HERE = Path(__file__).parents[1] / "images"  # shown on the tutorial page


def main(url: str) -> None:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=shutil.which("chromium"), args=["--no-sandbox"]
        )
        page = browser.new_page(viewport={"width": 1280, "height": 760})
        page.goto(url)
        page.wait_for_selector("body[data-shown]")
        page.screenshot(path=HERE / "review-page.png")
        page.click("#tab-misses")
        page.wait_for_selector("#sides:not([hidden]) .passage")
        page.screenshot(path=HERE / "review-misses.png")
        browser.close()


if __name__ == "__main__":
    main(sys.argv[1].split()[0])
