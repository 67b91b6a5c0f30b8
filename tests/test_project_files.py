"""params.yaml shows every param, and each stage's deps hold every module the stage runs."""

from __future__ import annotations

import ast
import pkgutil
from pathlib import Path

import yaml
from pydantic import BaseModel

from goldenset.core import paths
from goldenset.corpus.querysets import QUERY_SETS
from goldenset.params import Params, parse_params
from tests.conftest import ROOT, for_type_checkers

SOURCE = ROOT / "src"


def missing_fields(model: type[BaseModel], shown: dict, where: str = "") -> list[str]:
    """Dotted names of the model's fields (recursively) that `shown` does not spell out."""
    missing = []
    for name, field in model.model_fields.items():
        dotted = f"{where}{name}"
        if name not in shown:
            missing.append(dotted)
            continue
        nested = field.annotation
        if isinstance(nested, type) and issubclass(nested, BaseModel):
            missing += missing_fields(nested, shown[name] or {}, dotted + ".")
    return missing


def test_params_yaml_spells_out_every_param():
    shown = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    parse_params(shown)  # and it is valid
    assert missing_fields(Params, shown) == []


def test_missing_fields_sees_a_nested_param():
    shown = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    del shown["retrievers"]["bm25"]["k1"]
    del shown["generate"]["local"]["n_ctx"]
    assert missing_fields(Params, shown) == ["generate.local.n_ctx", "retrievers.bm25.k1"]


def module_file(name: str) -> Path | None:
    """The file of a goldenset module or package, None for any other module."""
    if name != "goldenset" and not name.startswith("goldenset."):
        return None
    path = SOURCE.joinpath(*name.split("."))
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


def registry_builtins(tree: ast.AST) -> list[str]:
    """The modules a `Registry(kind, point, [modules])` call imports when first read (every
    module of a package named there), and its extension point."""
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Registry":
            for module in ast.literal_eval(node.args[2]):
                path = module_file(module)
                names.append(module)
                if path is not None and path.name == "__init__.py":
                    names += [
                        f"{module}.{found.name}" for found in pkgutil.iter_modules([path.parent])
                    ]
    return names


def extension_points(files: set[Path]) -> set[str]:
    """The extension points whose registries the files define."""
    points = set()
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Registry":
                points.add(ast.literal_eval(node.args[1]))
    return points


def imported_files(script: Path) -> set[Path]:
    """goldenset files a script imports, transitively, wherever the import statement sits (but
    under ``if TYPE_CHECKING:``), and those a registry it reads imports when first read."""
    seen: set[Path] = set()
    pending = [script]
    while pending:
        tree = ast.parse(pending.pop().read_text(encoding="utf-8"))
        skipped = for_type_checkers(tree)
        for node in [*ast.walk(tree), None]:
            names = []
            if node is None:
                names = registry_builtins(tree)
            elif id(node) in skipped:
                continue
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                # `from goldenset.x import y` may import the module goldenset.x.y
                names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            for name in names:
                parts = name.split(".")
                # a package's __init__ runs before any module inside it
                for depth in range(1, len(parts) + 1):
                    path = module_file(".".join(parts[:depth]))
                    if path is not None and path.exists() and path not in seen:
                        seen.add(path)
                        pending.append(path)
    return seen


def test_every_stage_depends_on_every_module_it_runs():
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text(encoding="utf-8"))["stages"]
    assert stages
    for name, stage in stages.items():
        deps = [ROOT / dep for dep in stage["deps"] if "${" not in dep]
        script = SOURCE / "goldenset" / "stages" / f"{name}.py"
        assert script in deps, name
        needed = imported_files(script)
        assert SOURCE / "goldenset" / "core" / "stage.py" in needed, name
        # package __init__ files hold a docstring and the version, nothing a stage runs
        uncovered = [
            str(path.relative_to(ROOT))
            for path in needed
            if path.name != "__init__.py"
            if not any(path == dep or dep in path.parents for dep in deps)
        ]
        assert sorted(uncovered) == [], name
        # the plugins of each extension point it reads, and of no other
        plugins = {dep for dep in stage["deps"] if dep.startswith(f"{paths.PLUGINS.as_posix()}/")}
        wanted = {f"{paths.PLUGINS.as_posix()}/{point}.json" for point in extension_points(needed)}
        assert plugins == wanted, name


def test_imported_files_follows_imports_inside_functions(tmp_path):
    script = tmp_path / "stage.py"
    script.write_text("def main():\n    from goldenset.scoring.reports import worst_misses\n")
    found = {str(path.relative_to(SOURCE)) for path in imported_files(script)}
    # reports imports the qrels and the ranked lists, which import errors
    assert {
        "goldenset/scoring/reports.py",
        "goldenset/evaluation/qrels.py",
        "goldenset/core/errors.py",
    } <= found


def test_imported_files_follows_a_registry_to_the_modules_it_imports_when_read():
    stages = SOURCE / "goldenset" / "stages"
    score = imported_files(stages / "score.py")
    # nothing imports the ranking measures or a retriever module by name: their registries do
    assert SOURCE / "goldenset" / "evaluation" / "ranking_measures.py" in score
    assert SOURCE / "goldenset" / "retrieval" / "retrievers" / "fusion.py" in score
    assert extension_points(score) == {"retrievers", "metrics", "query_sets"}
    assert extension_points(imported_files(stages / "generate.py")) == {"providers"}


def test_imported_files_leaves_out_imports_for_type_checkers(tmp_path):
    script = tmp_path / "stage.py"
    script.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from goldenset.core.topk import TopK\n"
        "from goldenset.core.errors import GoldensetError\n"
    )
    found = {str(path.relative_to(SOURCE)) for path in imported_files(script)}
    assert "goldenset/core/errors.py" in found
    assert "goldenset/core/topk.py" not in found


def test_no_generate_dep_changes_when_only_chunking_code_changes():
    # an edit to how chunks are cut must not change the passages, and with them the cache keys
    # of answers already paid for: generate runs the sentence splitter, not the chunker
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text(encoding="utf-8"))["stages"]
    deps = {ROOT / dep for dep in stages["generate"]["deps"] if "${" not in dep}
    chunking = SOURCE / "goldenset" / "chunking" / "strategies.py"
    assert chunking in imported_files(SOURCE / "goldenset" / "stages" / "chunk.py")
    assert chunking not in imported_files(SOURCE / "goldenset" / "stages" / "generate.py")
    assert not any(chunking == dep or dep in chunking.parents for dep in deps)


PIPELINE_FOLDERS = ("data", "metrics", "reports", "plots")


def pipeline_files(stages: dict) -> set[str]:
    """Every data, metrics, reports and plots path dvc.yaml's stages read or write, as written."""
    found = set()
    for stage in stages.values():
        for kind in ("deps", "outs", "metrics", "plots"):
            for entry in stage.get(kind, []):
                path = next(iter(entry)) if isinstance(entry, dict) else entry
                if path.split("/")[0] in PIPELINE_FOLDERS:
                    found.add(path)
    return found


def named_paths() -> dict[str, str]:
    """goldenset.core.paths: constant name -> the path it names; and each declared query set's
    files, which its entry may name itself (a set's files need no name in paths)."""
    named = {
        name: value.as_posix()
        for name, value in vars(paths).items()
        if isinstance(value, Path) and name not in OUTSIDE_THE_PIPELINE
    }
    for entry in QUERY_SETS.values():
        named.update({f"{entry.name}:{file.as_posix()}": file.as_posix() for file in entry.files})
    return named


# written by `goldenset calibrate`, on purpose in no stage: the audit quotes it without depending on
# it, so writing it re-runs nothing
OUTSIDE_THE_PIPELINE = {"CALIBRATION_METRICS"}


def unnamed_files(stages: dict, named: dict[str, str]) -> tuple[list[str], list[str]]:
    """(dvc.yaml files no goldenset.core.paths name spells, names dvc.yaml never mentions). A file
    inside a named folder (data/embeddings/synthetic.npy) is named by that folder."""
    files = pipeline_files(stages)
    folders = set(named.values())
    unnamed = sorted(
        file for file in files if not ({file, *map(str, Path(file).parents)} & folders)
    )
    # a file inside a folder dvc.yaml lists (data/query_sets/sets.json) is used through it
    unused = sorted(
        name
        for name, path in named.items()
        if not ({path, *map(str, Path(path).parents)} & set(files))
    )
    return unnamed, unused


def stages_and_plots() -> dict:
    """dvc.yaml's stages, its top-level plots (calibrate's) as one more entry."""
    pipeline = yaml.safe_load((ROOT / "dvc.yaml").read_text(encoding="utf-8"))
    return {**pipeline["stages"], "top-level plots": {"plots": pipeline.get("plots", [])}}


def test_dvc_yaml_files_are_the_names_in_goldenset_paths():
    # stages, revisions and calibrate read the pipeline's files by these names: one that drifts
    # from dvc.yaml would read a file DVC never tracks
    assert unnamed_files(stages_and_plots(), named_paths()) == ([], [])


def test_unnamed_files_sees_a_drifted_path():
    stages = stages_and_plots()
    stages["score"]["metrics"][0] = {"metrics/score.json": {"cache": False}}
    assert unnamed_files(stages, named_paths()) == (["metrics/score.json"], ["SCORES"])


def stages_depending_on(path: Path) -> set[str]:
    """The stages of dvc.yaml with a dep that is `path` or a folder holding it."""
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text(encoding="utf-8"))["stages"]
    return {
        name
        for name, stage in stages.items()
        if any(path == ROOT / dep or ROOT / dep in path.parents for dep in stage["deps"])
    }


def test_a_new_retriever_or_provider_re_runs_only_the_stages_that_use_it():
    # each stage validates its own params sections: a file added beside the retrievers (or the
    # question writers, or a new params section of them) is a dep of the stage that runs it only
    retrievers = SOURCE / "goldenset" / "retrieval" / "retrievers"
    assert stages_depending_on(retrievers / "new_retriever.py") == {"score"}
    assert stages_depending_on(SOURCE / "goldenset" / "retrieval" / "params.py") == {"score"}
    providers = SOURCE / "goldenset" / "generation" / "providers"
    assert stages_depending_on(providers / "new_writer.py") == {"generate"}
    for stage in ("ingest", "chunk", "generate", "apply", "embed", "audit"):
        script = SOURCE / "goldenset" / "stages" / f"{stage}.py"
        assert not any(retrievers in path.parents for path in imported_files(script)), stage
