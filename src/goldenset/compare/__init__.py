"""`goldenset compare`: two git revisions' per-question results read from the repository and the
DVC cache (revisions), paired tests with Holm's correction and the gate's verdict (gate)."""
