#!/usr/bin/env bash
# The test command: prepares the Python peers the interoperability tests run (real A2A servers from
# PyPI, each in its own venv outside the clone), then runs the whole workspace's tests.
set -euo pipefail
cd "$(dirname "$0")/.."

export ARGUS_INTEROP_VENVS="${ARGUS_INTEROP_VENVS:-/var/tmp/argus-supervisor-venvs}"
mkdir -p "$ARGUS_INTEROP_VENVS"
for req in tests/interop/requirements/*.txt; do
  name="$(basename "$req" .txt)"
  venv="$ARGUS_INTEROP_VENVS/$name"
  stamp="$venv/.requirements"
  if [ ! -x "$venv/bin/python" ] || ! cmp -s "$req" "$stamp"; then
    echo "== preparing Python venv $name"
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$req"
    cp "$req" "$stamp"
  fi
done

cargo test --workspace "$@"
