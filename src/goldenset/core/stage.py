"""What every stage shares: validated params, and user errors as one line without a traceback."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from pathlib import Path

from goldenset.core.errors import GoldensetError
from goldenset.core.params import Model, load_stage_params

log = logging.getLogger("goldenset")


def run_stage(
    main: Callable[[Model], None], sections: type[Model], params_path: str | Path = "params.yaml"
) -> None:
    """Run a stage with the sections of params.yaml it reads, validated; a GoldensetError becomes
    one stderr line and exit 1."""
    logging.basicConfig(level=logging.WARNING, format="%(message)s", stream=sys.stderr)
    log.setLevel(logging.INFO)
    # "No modules.json found, initializing a new model" would precede our own error line
    logging.getLogger("sentence_transformers").setLevel(logging.ERROR)
    try:
        main(load_stage_params(sections, params_path))
    except GoldensetError as error:
        print(f"error: {error}", file=sys.stderr)
        raise SystemExit(1) from None
    except KeyboardInterrupt:
        print(
            "interrupted: finished work is cached; run `dvc repro` again to resume", file=sys.stderr
        )
        raise SystemExit(130) from None
