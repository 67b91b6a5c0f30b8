"""`python -m goldenset`: the same command as the `goldenset` console script."""

from goldenset.cli import main

raise SystemExit(main())
