"""DVC's plot page rendered as a person opens it: headless Chromium running the vega scripts the
page loads, fetched once from the npm registry instead of the page's CDN (tests stay offline).

Chromium and npm are system packages (`apt-get install -y chromium npm`; .ci/run installs
them); npm fetches the browser build of each vega package into ~/.cache/goldenset/vega, at the
version dvc-render's page names, so the test draws with the very code a browser would load.
"""

from __future__ import annotations

import json
import posixpath
import re
import shutil
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import IO

import pytest
from dvc_render import VegaRenderer

VEGA_CACHE = Path.home() / ".cache" / "goldenset" / "vega"
BROWSERS = ["chromium", "chromium-browser", "google-chrome"]

# The page dvc-render writes, its CDN scripts swapped for local files; vega draws SVG (the
# default is a canvas, which has no text to inspect) and the page says when every plot is drawn.
PAGE = """<!DOCTYPE html>
<html>
<head>
<title>DVC Plot</title>
SCRIPTS
<script>
  const embedPlot = window.vegaEmbed;
  const drawn = [];
  window.vegaEmbed = (element, spec, options) => {
    const done = embedPlot(element, spec, { ...options, renderer: "svg", actions: false });
    drawn.push(done);
    return done;
  };
  window.addEventListener("load", () => {
    Promise.all(drawn).then(
      () => document.body.setAttribute("data-drawn", String(drawn.length)),
      (error) => document.body.setAttribute("data-error", String(error)),
    );
  });
</script>
</head>
<body>
{plot_divs}
</body>
</html>
"""


def chromium() -> str:
    """The headless browser's command; the test fails, naming the fix, when there is none."""
    for name in BROWSERS:
        if found := shutil.which(name):
            return found
    pytest.fail(
        f"no headless browser ({', '.join(BROWSERS)}) to render the plots: "
        "apt-get install -y chromium (.ci/run installs it)"
    )


def vega_scripts() -> list[Path]:
    """The scripts of dvc-render's plot page, from the npm registry, cached after the first run."""
    found = re.findall(r"cdn\.jsdelivr\.net/npm/([\w.-]+)@([\w.-]+)", VegaRenderer.SCRIPTS)
    assert found, f"dvc-render's page no longer loads vega from jsdelivr:\n{VegaRenderer.SCRIPTS}"
    return [_browser_build(name, version) for name, version in found]


def _browser_build(name: str, version: str) -> Path:
    script = VEGA_CACHE / f"{name}@{version}.js"
    if not script.exists():
        _fetch(name, version, script)
    return script


def _fetch(name: str, version: str, script: Path) -> None:
    """The package's browser build, the file jsdelivr serves for a bare package URL."""
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail(
            f"npm is needed to fetch {name}@{version} for the plots: apt-get install -y npm"
        )
    VEGA_CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=VEGA_CACHE) as scratch:
        packed = subprocess.run(
            [npm, "pack", "--silent", f"{name}@{version}", "--pack-destination", scratch],
            capture_output=True,
            text=True,
            timeout=300,
        )
        if packed.returncode != 0:
            pytest.fail(f"npm pack {name}@{version} failed: {packed.stderr.strip()}")
        with tarfile.open(Path(scratch) / packed.stdout.strip().splitlines()[-1]) as archive:
            manifest = json.load(_member(archive, "package.json"))
            build = _member(archive, manifest.get("jsdelivr") or manifest["unpkg"]).read()
        partial = Path(scratch) / script.name
        partial.write_bytes(build)
        partial.replace(script)  # whole or not at all: later runs trust what is there


def _member(archive: tarfile.TarFile, path: str) -> IO[bytes]:
    member = archive.extractfile(posixpath.normpath(posixpath.join("package", path)))
    assert member is not None, f"{path} is not a file in the package"
    return member


def page_template(folder: Path) -> Path:
    """An HTML template for `dvc plots show --html-template` that loads the local scripts."""
    tags = "\n".join(f'<script src="{script.as_uri()}"></script>' for script in vega_scripts())
    path = folder / "page.html"
    path.write_text(PAGE.replace("SCRIPTS", tags), encoding="utf-8")
    return path


@dataclass
class Node:
    tag: str
    attrs: dict[str, str]
    children: list[Node] = field(default_factory=list)
    text: str = ""

    @property
    def classes(self) -> list[str]:
        return self.attrs.get("class", "").split()

    def walk(self) -> list[Node]:
        """This node and every node below it, in document order."""
        return [self, *(node for child in self.children for node in child.walk())]

    def find(self, css_class: str) -> list[Node]:
        return [node for node in self.walk()[1:] if css_class in node.classes]

    def texts(self, role: str) -> list[str]:
        """The words of every text mark of that role below this node (e.g. role-axis-title)."""
        return [text.all_text() for text in self.find(role) if text.tag == "g"]

    def all_text(self) -> str:
        return "".join(node.text for node in self.walk())


class _Tree(HTMLParser):
    VOID = {"meta", "link", "br", "img", "input", "hr"}

    def __init__(self) -> None:
        super().__init__()
        self.root = Node("root", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {name: value or "" for name, value in attrs})
        self.stack[-1].children.append(node)
        if tag not in self.VOID:
            self.stack.append(node)

    def handle_endtag(self, tag: str) -> None:
        while len(self.stack) > 1 and self.stack.pop().tag != tag:
            pass

    def handle_data(self, data: str) -> None:
        if self.stack[-1].tag == "text":
            self.stack[-1].text += data


@dataclass
class Plot:
    """One drawn plot: its panels, their labels, axis titles and legends."""

    svg: Node

    @property
    def panel_labels(self) -> list[str]:
        headers = self.svg.find("role-column-header")
        return [text for header in headers for text in header.texts("role-title-text")]

    @property
    def panels(self) -> list[Node]:
        """One node per facet cell: vega draws a group mark as one node, an item per cell."""
        return [
            item for cells in self.svg.find("cell") for item in cells.children if item.tag == "g"
        ]

    @property
    def axis_titles(self) -> set[str]:
        return set(self.svg.texts("role-axis-title"))

    def legend(self, title: str) -> list[str]:
        for legend in self.svg.find("role-legend"):
            if legend.texts("role-legend-title") == [title]:
                return legend.texts("role-legend-label")
        return []

    @property
    def words(self) -> str:
        return self.svg.all_text()


def draw(html: Path, browser: str) -> list[Plot]:
    """The plots of a page written by dvc, as the browser draws them."""
    with tempfile.TemporaryDirectory() as profile:
        dumped = subprocess.run(
            [
                browser,
                "--headless",
                "--no-sandbox",  # tests may run as root
                "--disable-gpu",
                f"--user-data-dir={profile}",
                "--enable-logging=stderr",  # the page's console errors, for the messages below
                "--virtual-time-budget=20000",  # run the page's scripts to the end
                "--dump-dom",
                html.as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
    console = "\n".join(line for line in dumped.stderr.splitlines() if "CONSOLE" in line)
    assert dumped.returncode == 0, dumped.stderr
    tree = _Tree()
    tree.feed(dumped.stdout)
    nodes = tree.root.walk()
    body = next(node.attrs for node in nodes if node.tag == "body")
    assert "data-error" not in body, f"{body['data-error']}\n{console}"
    svgs = [node for node in nodes if node.tag == "svg" and "marks" in node.classes]
    drawn = body.get("data-drawn")
    assert drawn == str(len(svgs)), f"{drawn} plots embedded, {len(svgs)} drawn\n{console}"
    return [Plot(svg) for svg in svgs]
