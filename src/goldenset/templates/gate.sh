#!/usr/bin/env bash
# The pull-request gate, written by `goldenset init --ci github`: the CI workflow runs it, and so
# can you, in a clean checkout. It runs the pipeline of this folder at BASE and at the checked-out
# commit, then `goldenset compare` of the two (compare.gate and compare.budgets of params.yaml).
# Outputs come from the DVC remote where it has them (credentials from the environment, e.g. CI
# secrets); without a remote every stage runs from scratch.
#
#   gate.sh BASE [REPORT.md]      e.g. gate.sh origin/main goldenset-report.md
#
# Exit status: 0 no significant regression beyond the budgets, 1 a regression, 2 refused.
set -euo pipefail

base=${1:?usage: gate.sh BASE [REPORT.md]}
report=$(realpath -m "${2:-goldenset-report.md}")
here=$(cd "$(dirname "$0")" && pwd)
top=$(git -C "$here" rev-parse --show-toplevel)
pipeline=$(realpath --relative-to="$top" "$here")
cd "$top"

if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
    echo "gate: uncommitted changes; commit or stash them first" >&2
    exit 2
fi
head=$(git rev-parse HEAD)
back=$(git symbolic-ref -q --short HEAD || echo "$head")
trap 'git checkout -q "$back"' EXIT

if [ -n "$(dvc remote list)" ]; then
    remote=yes
    echo "gate: outputs come from the DVC remote where it has them"
else
    remote=
    echo "gate: no DVC remote: every stage runs from scratch (\`dvc remote add -d\` shares them)"
fi

run_pipeline() {  # the pipeline at the checked-out commit: its outputs from the cache or the
    # remote where they are there, the rest run
    if [ -n "$remote" ]; then
        dvc pull --allow-missing "$pipeline/dvc.yaml" || echo "gate: the remote lacks some outputs"
    else
        dvc checkout "$pipeline/dvc.yaml" >/dev/null 2>&1 || true
    fi
    dvc repro "$pipeline/dvc.yaml"
}

if ! git cat-file -e "$base:$pipeline/dvc.yaml" 2>/dev/null; then
    run_pipeline
    echo "No goldenset pipeline in \`$pipeline\` at \`$base\`: nothing to compare with yet." \
        | tee "$report"
    exit 0
fi

git checkout -q --detach "$base"
run_pipeline
# what the base gave here, as a local commit that compare reads through DVC
git add -A "$pipeline"
git -c user.name=goldenset-gate -c user.email=gate@localhost \
    commit -q --no-verify --allow-empty -m "gate: $base as run here"
baseline=$(git rev-parse HEAD)
git checkout -q --detach "$head"
run_pipeline

cd "$pipeline"
{
    echo "<!-- goldenset gate -->"
    echo "Retrieval gate of \`$pipeline\`: A is \`$base\` ($(git rev-parse --short "$base")), B is"
    echo "this pull request ($(git rev-parse --short "$head")), both run by \`dvc repro\`."
    echo
} >"$report"
status=0
goldenset compare "$baseline" workspace --format markdown >>"$report" || status=$?
cat "$report"
exit "$status"
