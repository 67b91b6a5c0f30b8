"""One source of defaults: the params models' defaults are the values of the shipped params.yaml,
and `goldenset init` writes them too. A default changed in one place and not the other fails here,
naming the dotted keys that differ."""

from __future__ import annotations

import json

import yaml

from goldenset.calibrate.params import CalibrateParams
from goldenset.compare.params import CompareParams
from goldenset.init import render_params
from goldenset.params import Params, parse_params
from tests.conftest import ROOT

DEFAULTED = ["ingest", "chunk", "generate", "embed", "score", "audit", "retrievers"]
# the sample project's own data, not defaults: `goldenset init` writes null for the first, and a
# grid's groups name that grid's models
# the sample's own: its users' queries, its groups and the variants its lexical group names
SAMPLE_ONLY = {"generate.example_queries", "calibrate.groups", "calibrate.variants"}


def differences(default: object, shown: object, where: str, ignore: set[str]) -> list[str]:
    """Dotted keys at which two dumped params differ, with both values; `ignore`d keys left out."""
    if where in ignore:
        return []
    if isinstance(default, dict) and isinstance(shown, dict):
        found = []
        for key in dict.fromkeys([*default, *shown]):
            pair = (default.get(key, "<missing>"), shown.get(key, "<missing>"))
            found += differences(*pair, f"{where}.{key}", ignore)
        return found
    return [] if default == shown else [f"{where}: default {default!r}, params.yaml {shown!r}"]


def shipped() -> dict:
    return yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))


def drift(defaults: Params, written: Params, ignore: set[str]) -> list[str]:
    found = []
    for section in DEFAULTED:
        dumped = (getattr(model, section).model_dump(mode="json") for model in (defaults, written))
        found += differences(*dumped, section, ignore)
    return found


def test_the_models_defaults_are_the_shipped_params_yaml():
    assert drift(Params(), parse_params(shipped()), SAMPLE_ONLY) == []


def test_calibrate_and_compare_default_what_they_do_not_require_as_params_yaml_does():
    raw = shipped()
    found = []
    for model, section in [(CalibrateParams, "calibrate"), (CompareParams, "compare")]:
        validated = model.model_validate(raw[section])
        required = {
            name: raw[section][name] for name, f in model.model_fields.items() if f.is_required()
        }
        defaults = model.model_validate(required).model_dump(mode="json")
        found += differences(defaults, validated.model_dump(mode="json"), section, SAMPLE_ONLY)
    assert found == []


def test_init_writes_the_defaults_but_the_documents_folder():
    written = parse_params(json.loads(json.dumps(render_params("docs", None, True))))
    assert written.ingest.path == "docs"
    assert drift(Params(), written, {"ingest.path"}) == []


def test_a_drift_is_named_by_its_dotted_key():
    raw = shipped()
    raw["generate"]["max_tokens"] = 400
    raw["retrievers"]["bm25"]["k1"] = 1.2
    assert drift(Params(), parse_params(raw), SAMPLE_ONLY) == [
        "generate.max_tokens: default 48, params.yaml 400",
        "retrievers.bm25.k1: default 1.5, params.yaml 1.2",
    ]
