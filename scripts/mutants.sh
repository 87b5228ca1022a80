#!/usr/bin/env bash
# Mutation testing of the decision core: cargo-mutants over the files where a wrong line would let
# the supervisor write without authority (record.rs, machine.rs, invariants.rs, campaign.rs),
# judged by the machines crate's own tests. Too slow for .ci/run (about 600 mutants at ~30 s each
# on 2 cores); run it after changing the machine and update docs/mutants.md from
# $ARGUS_MUTANTS_OUT/<file>/mutants.out/{caught,missed,timeout,unviable}.txt.
#
#   scripts/mutants.sh                               # the four files, smallest first
#   scripts/mutants.sh machines/src/record.rs        # only the files given
#   ARGUS_MUTANTS_ITERATE=1 scripts/mutants.sh F     # again, skipping what the last run caught
#   ARGUS_MUTANTS_JOBS=2 scripts/mutants.sh          # two mutants at once (each in its own
#                                                    # target dir: slower first builds)
#   ARGUS_MUTANTS_RE='REGEX' scripts/mutants.sh F    # only the mutants whose names match
#   ARGUS_MUTANTS_SINCE=REV scripts/mutants.sh F     # only the mutants on lines changed since REV
#
# Output goes to $ARGUS_MUTANTS_OUT (default /var/tmp/argus-mutants), builds to
# $ARGUS_MUTANTS_TARGET (default /var/tmp/argus-mutants-target): both outside the clone, and
# apart from the developer's CARGO_TARGET_DIR so mutated builds never overwrite it.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v cargo-mutants >/dev/null; then
    cargo install --locked cargo-mutants
fi
out=${ARGUS_MUTANTS_OUT:-/var/tmp/argus-mutants}
jobs=${ARGUS_MUTANTS_JOBS:-1}
# One shared target dir only for one job at a time: two jobs building different mutants into the
# same directory test each other's binaries (a run made that way reported results that were not
# its own). With more jobs cargo-mutants gives every copy of the tree its own target dir.
if [ "$jobs" = 1 ]; then
    export CARGO_TARGET_DIR=${ARGUS_MUTANTS_TARGET:-/var/tmp/argus-mutants-target}
else
    unset CARGO_TARGET_DIR
fi
files=("$@")
if [ ${#files[@]} -eq 0 ]; then
    files=(machines/src/record.rs machines/src/machine.rs machines/src/invariants.rs machines/src/campaign.rs)
fi
for f in "${files[@]}"; do
    dir="$out/$(basename "$f" .rs)"
    mkdir -p "$dir"
    echo "== $f -> $dir"
    # Exit 2 (survivors) and 3 (timeouts) are results to read, not failures of the run.
    rc=0
    extra=()
    if [ -n "${ARGUS_MUTANTS_ITERATE:-}" ]; then extra+=(--iterate); fi
    if [ -n "${ARGUS_MUTANTS_RE:-}" ]; then extra+=(--re "$ARGUS_MUTANTS_RE"); fi
    if [ -n "${ARGUS_MUTANTS_SINCE:-}" ]; then
        git diff "$ARGUS_MUTANTS_SINCE" -- "$f" > "$dir.diff"
        extra+=(--in-diff "$dir.diff")
    fi
    cargo mutants -p argus-machines --profile mutants --no-shuffle -j "$jobs" \
        "${extra[@]}" -f "$f" -o "$dir" || rc=$?
    case $rc in 0 | 2 | 3) ;; *) exit "$rc" ;; esac
done
