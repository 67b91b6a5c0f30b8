"""The documentation site's machinery: figures, the version and the repository URL read from the
repository's files into the pages (docs/figures.py, through docs/hooks.py); the API page's
docstrings made Markdown (docs/reference.py); a build environment without torch
(docs/requirements.txt); the changelog; and every page that uses a glossary term links the
glossary."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import replace
from html.parser import HTMLParser
from importlib import metadata
from pathlib import Path

import pytest

import goldenset
from docs.figures import (
    FigureError,
    Project,
    fill,
    install_ref,
    parse_figure,
    parsed_file,
    project,
)
from docs.reference import docstring_markdown, field_comment
from tests.conftest import ROOT
from tests.test_docs_reference import HEAVY, build, copy_site_sources, needs_site_tools

DOCS = ROOT / "docs"
FACTS = Project("1.2.3", "https://github.com/owner/name")
SCORES = {"synthetic": {"dense": {"ndcg@10": 0.79756, "n_queries": 127.0}}, "runs": [3, 4]}


def read_from(tmp_path: Path):
    (tmp_path / "broken.json").write_text("{not json")
    (tmp_path / "metrics").mkdir()
    (tmp_path / "metrics" / "scores.json").write_text(json.dumps(SCORES))
    (tmp_path / "labels.yaml").write_text("judge:\n  auc.pass: 0.79\n")
    return lambda path: parsed_file(tmp_path, path)


# figures, the version and the repository URL ---------------------------------------------


def test_a_figure_is_read_from_the_file_by_dotted_or_listed_keys_and_formatted(tmp_path):
    read = read_from(tmp_path)
    page = (
        'nDCG@10 {{ figure("metrics/scores.json", "synthetic.dense.ndcg@10", ".3f") }} on '
        "{{figure('metrics/scores.json', ['synthetic', 'dense', 'n_queries'], '.0f')}} questions, "
        '{{ figure("labels.yaml", ["judge", "auc.pass"], ".0%") }} AUC, '
        '{{ figure("metrics/scores.json", "runs.1") }} runs'
    )
    assert fill(page, "index.md", FACTS, read) == (
        "nDCG@10 0.798 on 127 questions, 79% AUC, 4 runs"
    )


def test_the_version_and_repository_url_fill_install_lines_but_no_other_braces(tmp_path):
    page = (
        'pip install "goldenset-rag[local] @ git+{{ repo_url }}@v{{version}}"\n'
        "ref: ${{ github.sha }} and {{ unknown }}\n"
    )
    assert fill(page, "index.md", FACTS, read_from(tmp_path)) == (
        'pip install "goldenset-rag[local] @ git+https://github.com/owner/name@v1.2.3"\n'
        "ref: ${{ github.sha }} and {{ unknown }}\n"
    )


@pytest.mark.parametrize(
    ("reference", "said"),
    [
        ('figure("metrics/nope.json", "a")', "no file metrics/nope.json"),
        (
            'figure("metrics/scores.json", "synthetic.bm25.ndcg@10")',
            "no key 'bm25' under synthetic (its keys: dense)",
        ),
        ('figure("metrics/scores.json", "runs.7")', "no item '7' under runs (a list of 2)"),
        ('figure("metrics/scores.json", "synthetic.dense")', "a mapping or a list, not a figure"),
        ('figure("metrics/scores.json", "synthetic.dense.ndcg@10", "d")', "format 'd'"),
        ('figure("../secrets.json", "a")', "not a path inside the repository"),
        ('figure("dvc.lock", "a")', "read from .json, .yaml or .yml files"),
        ('figure("metrics/scores.json")', 'write figure("<file>"'),
        ("figure(metrics/scores.json, a)", "not Python literals"),
        ('figure("broken.json", "a")', "broken.json cannot be parsed (Expecting property name"),
    ],
)
def test_a_reference_that_fails_names_the_page_and_itself(tmp_path, reference, said):
    page = f"Intro.\n\nThe score: {{{{ {reference} }}}}.\n"
    with pytest.raises(FigureError) as raised:
        fill(page, "tutorials/first.md", FACTS, read_from(tmp_path))
    message = str(raised.value)
    assert message.startswith(f"tutorials/first.md: {{{{ {reference} }}}}: "), message
    assert said in message
    assert "\n" not in message


def test_a_reference_wrapped_over_lines_is_filled_and_an_unfinished_one_fails(tmp_path):
    read = read_from(tmp_path)
    wrapped = 'nDCG@10 is {{ figure("metrics/scores.json",\n  "synthetic.dense.ndcg@10", ".2f") }}.'
    assert fill(wrapped, "index.md", FACTS, read) == "nDCG@10 is 0.80."
    with pytest.raises(FigureError, match=r"^index.md: \{\{ figure\(\"metrics.*an unfinished"):
        fill('It is {{ figure("metrics/scores.json", "runs.0" }}.', "index.md", FACTS, read)


def test_keys_parse_as_written():
    assert parse_figure('"m.json", "a.b@10"').keys == ("a", "b@10")
    listed = parse_figure("'m.json', ['a.b', 0], '.2f'")
    assert listed == parse_figure('"m.json", ("a.b", 0), ".2f"')
    assert listed.keys == ("a.b", 0)
    with pytest.raises(FigureError, match="an empty key"):
        parse_figure('"m.json", "a..b"')


def test_the_version_and_repository_come_from_pyproject():
    facts = project((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert facts.version == goldenset.__version__
    assert facts.repo_url == "https://github.com/goldenset-rag/goldenset"
    assert facts.repo_name == "goldenset-rag/goldenset"
    with pytest.raises(FigureError, match=r"no \[project.urls\] Repository"):
        project('[project]\nname = "x"\nversion = "1.0"\n')


def test_every_figure_on_the_pages_reads_a_committed_value():
    facts = project((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    for page in sorted(DOCS.rglob("*.md")):
        name = page.relative_to(DOCS).as_posix()
        filled = fill(page.read_text(encoding="utf-8"), name, facts, lambda p: parsed_file(ROOT, p))
        assert "{{ figure" not in filled and "{{ version" not in filled, name


# the API page's docstrings ---------------------------------------------------------------


def test_docstrings_render_as_they_read():
    written = (
        "Representation:\n- ``ranked``: int64\n  padded.\n- ``qrels``: sparse\n\n"
        "Writes <name>.parquet, keeps `<name>.parquet` and ``x < y`` as code; 2 < 3."
    )
    assert docstring_markdown(written) == (
        "Representation:\n\n- ``ranked``: int64\n  padded.\n- ``qrels``: sparse\n\n"
        "Writes &lt;name>.parquet, keeps `<name>.parquet` and ``x < y`` as code; 2 < 3."
    )


def test_a_field_is_documented_by_its_comments():
    source = [
        "class Entry:",
        '    """An entry."""',
        "",
        "    params: type  # its section of params.yaml",
        "    # where it ranks: lower first",
        "    # (equal orders keep the order of registration)",
        "    order: int = 100",
        "    name: str = '# not a comment'  # noqa: E501",
        "    prices: dict = field(  # by model",
        "        default_factory=dict",
        "    )",
    ]
    assert field_comment(source, 4) == "its section of params.yaml"
    assert field_comment(source, 7) == (
        "where it ranks: lower first (equal orders keep the order of registration)"
    )
    assert field_comment(source, 8) == ""
    assert field_comment(source, 9, 11) == "by model"


# building without torch ------------------------------------------------------------------


def requirement_names(lines: list[str]) -> list[str]:
    """The distribution names of requirement lines (comments and blank lines skipped)."""
    names = [re.match(r"[A-Za-z0-9._-]+", line.strip()) for line in lines]
    return [found[0].lower().replace("_", "-") for found in names if found]


def test_the_docs_extra_pins_the_site_tools_as_the_requirements_do():
    import tomllib

    extra = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]["docs"]
    required = (DOCS / "requirements.txt").read_text(encoding="utf-8").splitlines()
    pinned = {line.strip() for line in required if "==" in line}
    assert set(extra) == pinned
    assert not {"torch", "sentence-transformers", "faiss-cpu"} & set(requirement_names(required))


def with_dependencies(names: list[str]) -> set[str]:
    """Installed distributions: these and everything they require (without extras)."""
    found: set[str] = set()
    waiting = list(names)
    while waiting:
        name = waiting.pop()
        if name in found:
            continue
        found.add(name)
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        waiting += requirement_names([r for r in requires if "extra ==" not in r])
    return found


# Builds the reference pages as the site's hook does, with the heavy packages unimportable, and
# prints the packages that goldenset's modules (and the docs' own) imported
IMPORTS_OF_THE_PAGES = f"""
import builtins, sys
for name in {HEAVY!r}:
    sys.modules[name] = None
sys.path[:0] = ["docs", "src"]
ours, imported, real = ("goldenset", "reference", "figures"), set(), builtins.__import__

def noting(name, globals=None, locals=None, fromlist=(), level=0):
    module = real(name, globals, locals, fromlist, level)
    if level == 0 and (globals or {{}}).get("__name__", "").split(".")[0] in ours:
        imported.add(name.split(".")[0])
    return module

builtins.__import__ = noting
from pathlib import Path
from reference import pages
pages(Path("."))
print(" ".join(sorted(imported)))
"""


def test_the_reference_pages_import_only_what_the_requirements_install():
    """Every package goldenset's modules import while the reference pages are built is a
    requirement of the site or one of theirs, and none is torch."""
    ran = subprocess.run(
        [sys.executable, "-c", IMPORTS_OF_THE_PAGES],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ran.returncode == 0, ran.stderr
    modules = set(ran.stdout.split()) - set(sys.stdlib_module_names) - {"goldenset", "reference"}
    of_module = metadata.packages_distributions()
    assert all(module in of_module for module in modules), modules
    loaded = {dist.lower().replace("_", "-") for m in modules for dist in of_module[m]}
    required = (DOCS / "requirements.txt").read_text(encoding="utf-8").splitlines()
    installed = with_dependencies(requirement_names(required))
    assert {"pydantic", "pandas", "numpy"} <= loaded
    assert loaded <= installed, sorted(loaded - installed)


# the changelog ---------------------------------------------------------------------------


def test_the_changelog_keeps_a_changelog_and_names_this_version():
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    releases = re.findall(r"^## (.+)$", text, re.MULTILINE)
    assert releases and releases[0] == f"{goldenset.__version__} — unreleased"
    sections = set(re.findall(r"^### (.+)$", text, re.MULTILINE))
    kinds = {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}
    assert sections and sections <= kinds
    assert '--8<-- "CHANGELOG.md"' in (DOCS / "changelog.md").read_text(encoding="utf-8")


# the glossary ----------------------------------------------------------------------------

CODE = re.compile(r"^```.*?^```|`[^`\n]*`|<!--.*?-->|\]\([^)]*\)", re.MULTILINE | re.DOTALL)
# an inline link to the glossary, or a reference-style link's definition
GLOSSARY_LINK = re.compile(
    r"\]\((?:\.\./)*glossary\.md(?:#[^)]*)?\)|^\[[^\]]+\]:\s*(?:\.\./)*glossary\.md", re.MULTILINE
)


def glossary_terms(glossary: str) -> list[str]:
    """The terms a glossary defines (its definition-list terms and section headings), each way
    it spells them: "Store, located passage" is two, "The gate" is "gate"."""
    defined = re.findall(r"^\*\*(.+?)\*\*\s*\n:", glossary, re.MULTILINE)
    defined += re.findall(r"^#{2,6} (.+)$", glossary, re.MULTILINE)
    terms = [part.strip() for term in defined for part in re.split(r" / |, ", term)]
    return [re.sub(r"^the ", "", term, flags=re.IGNORECASE).lower() for term in terms]


def terms_used(page: str, terms: list[str]) -> list[str]:
    """The terms a page's prose uses (code, comments and link targets are not prose)."""
    prose = CODE.sub(" ", page)
    spelled = {term: re.escape(term).replace(r"\ ", r"\s+") for term in terms}
    return [
        term
        for term, pattern in spelled.items()
        if re.search(rf"\b{pattern}(?:s|es)?\b", prose, re.IGNORECASE)
    ]


def pages_without_glossary_link() -> dict[str, list[str]]:
    terms = glossary_terms((DOCS / "glossary.md").read_text(encoding="utf-8"))
    missing = {}
    for page in sorted(DOCS.rglob("*.md")):
        name = page.relative_to(DOCS).as_posix()
        if name in ("glossary.md", "changelog.md"):  # the changelog is CHANGELOG.md, included
            continue
        text = page.read_text(encoding="utf-8")
        used = terms_used(text, terms)
        if used and not GLOSSARY_LINK.search(text):
            missing[name] = used
    return missing


def test_the_glossary_terms_and_their_use_are_found():
    terms = glossary_terms((DOCS / "glossary.md").read_text(encoding="utf-8"))
    for term in ("golden set", "query set", "judged by spans", "judged by documents", "store"):
        assert term in terms
    assert "located passage" in terms and "gate" in terms and "audit's judge" in terms
    page = "A golden set and two\nquery sets; `echo` in code, [x](views.md) a link target.\n"
    assert terms_used(page, terms) == ["golden set", "query set"]
    assert GLOSSARY_LINK.search("See the [glossary](glossary.md#echo).")
    assert GLOSSARY_LINK.search("See the [glossary](../glossary.md).")
    assert not GLOSSARY_LINK.search("See [benchmarks](benchmarks.md).")


def test_every_page_that_uses_a_glossary_term_links_the_glossary():
    assert pages_without_glossary_link() == {}


# the built site --------------------------------------------------------------------------


@pytest.mark.slow
def test_a_figure_its_file_lacks_fails_the_build_naming_page_and_reference(tmp_path):
    needs_site_tools()
    copy_site_sources(tmp_path)
    page = tmp_path / "docs" / "comparing.md"
    reference = '{{ figure("metrics/scores.json", "synthetic.nope.ndcg@10", ".3f") }}'
    page.write_text(page.read_text(encoding="utf-8") + f"\nIt scores {reference}.\n")
    built = build(tmp_path, tmp_path / "site")
    assert built.returncode != 0
    assert f"comparing.md: {reference}: no key 'nope' under synthetic" in built.stderr


@pytest.mark.slow
def test_a_console_blocks_copy_button_copies_its_commands_alone(tmp_path, browser):
    """In Chromium, on the built site: a console block's button copies the commands without
    their "$ " prompts and output (a continued command whole); another block copies as is."""
    import functools
    import http.server
    import threading

    needs_site_tools()
    copy_site_sources(tmp_path)
    page = tmp_path / "docs" / "tutorials" / "review.md"
    page.write_text(
        "# Copy\n\n```console\n$ echo one \\\n    two\none two\n$ ls\nfile\n```\n\n"
        "```yaml\na: 1\n```\n"
    )
    built = build(tmp_path, tmp_path / "site")
    assert built.returncode == 0, built.stderr
    serve = functools.partial(
        http.server.SimpleHTTPRequestHandler, directory=str(tmp_path / "site")
    )
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), serve)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    copied = []
    context = browser.new_context(permissions=["clipboard-read", "clipboard-write"])
    try:
        shown = context.new_page()
        shown.goto(f"http://127.0.0.1:{server.server_address[1]}/tutorials/review/")
        buttons = shown.locator('[data-md-type="copy"], .md-clipboard')
        buttons.first.wait_for(state="attached")
        for number in range(buttons.count()):
            buttons.nth(number).click(force=True)
            shown.wait_for_timeout(200)
            copied.append(shown.evaluate("navigator.clipboard.readText()"))
    finally:
        context.close()
        server.shutdown()
    assert copied == ["echo one \\\n    two\nls\n", "a: 1"]


def test_the_site_drops_the_varying_mark_in_console_blocks_only():
    from docs.hooks import without_varying_marks

    page = (
        "Write `~~N` for a varying number.\n\n```console\n$ serve\nat 127.0.0.1:~~40259, "
        "expect ~29 requests\n```\n\n```text\nkept ~~12\n```\n"
    )
    assert without_varying_marks(page) == page.replace("127.0.0.1:~~40259", "127.0.0.1:40259")


def test_install_lines_name_the_release_tag_once_it_exists_else_the_commit(tmp_path):
    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=tmp_path, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    assert install_ref(tmp_path, "1.2.3") == "v1.2.3"  # not a git checkout: the tag's name
    git("init", "-q")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x")
    commit = git("rev-parse", "HEAD")
    assert install_ref(tmp_path, "1.2.3") == commit  # no tag yet: a commit that exists
    git("tag", "v1.2.3")
    assert install_ref(tmp_path, "1.2.3") == "v1.2.3"
    page = 'pip install "goldenset-rag @ git+{{ repo_url }}@{{ install_ref }}"'
    facts = Project("1.2.3", "https://github.com/owner/name", commit)
    assert fill(page, "p.md", facts, parsed_file) == (
        f'pip install "goldenset-rag @ git+https://github.com/owner/name@{commit}"'
    )


# the site as rendered --------------------------------------------------------------------

# the elements a page's content may hold: HTML's own and the inline SVG of icons; any other tag
# in the built page is Markdown text taken for HTML (`<word>` in prose), which a browser drops
HTML_NAMES = (
    "a abbr article aside b blockquote br button caption code col colgroup dd del details div "
    "dl dt em figcaption figure footer h1 h2 h3 h4 h5 h6 header hr i iframe img input ins kbd "
    "label li mark nav ol p path pre script section small span strong sub summary sup svg "
    "table tbody td th thead tr u ul video"
)
ELEMENTS = set(HTML_NAMES.split())
VARYING_MARK = re.compile(r"~~(?=\$?-?\d)")


VOID = {"br", "col", "hr", "img", "input", "path"}  # elements with no end tag (in an icon's SVG)


class ConsoleBlocks(HTMLParser):
    """The text of each console block of a built page's content (a code block whose text starts
    with the `$ ` prompt: the highlighter names no language), and the names of its tags."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks: list[str] = []
        self.tags: set[str] = set()
        self._depth = 0  # inside the content's <article>
        self._block: int | None = None  # the depth of the code block's <div class="highlight">
        self._title = False  # inside a titled block's file name

    @property
    def console(self) -> list[str]:
        return [block.rstrip("\n") for block in self.blocks if block.startswith("$ ")]

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag != "article" and not self._depth:
            return
        self.tags.add(tag)
        classes = (dict(attrs).get("class") or "").split()
        self._depth += tag not in VOID
        if tag == "div" and "highlight" in classes:
            self._block = self._depth
            self.blocks.append("")
        self._title = self._title or "filename" in classes

    def handle_endtag(self, tag: str) -> None:
        if not self._depth or tag in VOID:
            return
        if tag == "div" and self._block == self._depth:
            self._block = None
        self._title = self._title and tag != "span"
        self._depth -= 1

    def handle_data(self, data: str) -> None:
        if self._block is not None and not self._title:
            self.blocks[-1] += data


def console_sources(markdown: str) -> list[str]:
    """Each console block of a page's Markdown, as the reader should see it: the test's mark of
    a varying value dropped."""
    blocks, body, indent = [], None, ""
    for line in markdown.splitlines():
        fence = re.match(r"^(\s*)```(\S*)", line)
        if body is None and fence and fence[2].startswith("console"):
            body, indent = [], fence[1]
        elif body is not None and line.strip() == "```":
            # Markdown writes a tab as spaces to the next of its 4-column stops
            blocks.append("\n".join(VARYING_MARK.sub("", text).expandtabs(4) for text in body))
            body = None
        elif body is not None:
            body.append(line.removeprefix(indent))
    return blocks


def rendering_problems(page: str, written: list[str], rendered: ConsoleBlocks) -> list[str]:
    """One line a problem: a console block the site shows otherwise than the page writes it (a
    mark left in, a line lost), a tag that is no HTML (a `<word>` in prose)."""
    problems = [
        f"docs/{page}.md: console block {number} shows {shown!r} on the site, not {wrote!r}"
        for number, (wrote, shown) in enumerate(
            zip(written, rendered.console, strict=False), start=1
        )
        if wrote != shown
    ][:1]
    if len(written) != len(rendered.console):
        problems.append(
            f"docs/{page}.md: {len(written)} console blocks, {len(rendered.console)} on the site"
        )
    problems += [
        f"docs/{page}.md: a browser drops <{tag}>, taken for an HTML tag: put it in backticks"
        for tag in sorted(rendered.tags - ELEMENTS)
    ]
    return problems


@pytest.mark.slow
def test_every_console_block_renders_as_its_page_writes_it_and_no_text_is_taken_for_html(
    tmp_path,
):
    """The built site, read as a browser does: each console block's text is the page's, values
    that vary shown without the docs test's mark; no `<word>` of prose becomes a tag."""
    from docs.hooks import SNIPPET

    needs_site_tools()
    copy_site_sources(tmp_path)
    page = tmp_path / "docs" / "tutorials" / "review.md"  # planted: a block, and a `<word>`
    planted = "```console\n$ serve\nat 127.0.0.1:~~40259, ~29 <word> requests\n```\n\nAsk <word>.\n"
    page.write_text(page.read_text(encoding="utf-8") + "\n" + planted)
    built = build(tmp_path, tmp_path / "site")
    assert built.returncode == 0, built.stderr
    facts = project((ROOT / "pyproject.toml").read_text())
    facts = replace(facts, install_ref=install_ref(tmp_path, facts.version))  # as the build did
    problems = []
    for source in sorted((tmp_path / "docs").rglob("*.md")):
        name = source.relative_to(tmp_path / "docs").with_suffix("")
        html = tmp_path / "site" / name / "index.html"
        if name.name == "index":
            html = tmp_path / "site" / name.parent / "index.html"
        if not html.is_file():
            continue  # a snippet, not a page
        markdown = SNIPPET.sub(
            lambda found: (ROOT / found["path"]).read_text("utf-8"), source.read_text("utf-8")
        )
        markdown = fill(markdown, str(name), facts, lambda path: parsed_file(ROOT, path))
        rendered = ConsoleBlocks()
        rendered.feed(html.read_text(encoding="utf-8"))
        problems += rendering_problems(str(name), console_sources(markdown), rendered)
    planted = (
        "docs/tutorials/review.md: a browser drops <word>, taken for an HTML tag: put it in "
        "backticks"
    )
    assert problems == [planted], "\n".join(problems)
