#!/usr/bin/env bash
# docs/flags.md and docs/ops.md are generated; fail when the checked-in copies are stale.
set -u
RLX=$1
TBO=$2
DOCS=$3
fail=0
"$RLX" --list-flags --markdown | diff -u "$DOCS/flags.md" - >/tmp/rlx-flags.diff || { echo "docs/flags.md is stale (run make docs):"; cat /tmp/rlx-flags.diff; fail=1; }
"$TBO" --mode support | diff -u "$DOCS/ops.md" - >/tmp/rlx-ops.diff || { echo "docs/ops.md is stale (run make docs):"; head -40 /tmp/rlx-ops.diff; fail=1; }
exit $fail
