"""`goldenset compare`: two git revisions' per-question results read from the repository and the
DVC cache (revisions), paired per question with a bootstrap interval and a randomization test
per row (paired), Holm's correction and the gate's verdict (gate), the questions that regressed
most (regressed), and the report in Markdown or text (render)."""
