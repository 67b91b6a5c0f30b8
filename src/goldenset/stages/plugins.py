"""plugins: the goldenset plugins installed, per extension point -> data/plugins/<point>.json
(distribution -> version).

DVC runs this stage at every `dvc repro` (always_changed): it cannot see what is installed. A
file changes only when a plugin of its extension point is installed, upgraded or removed, and
the stages that read that extension point depend on it, so they alone re-run.
"""

from __future__ import annotations

from goldenset.core.files import write_json
from goldenset.core.params import StageParams
from goldenset.core.paths import PLUGINS
from goldenset.core.registry import EXTENSION_POINTS, plugin_versions
from goldenset.core.stage import run_stage


def main(params: StageParams) -> None:
    for point in EXTENSION_POINTS:
        write_json(PLUGINS / f"{point}.json", plugin_versions(point))


if __name__ == "__main__":
    run_stage(main, StageParams)
