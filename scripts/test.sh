#!/usr/bin/env bash
# The test command: prepares the Python peers the interoperability tests run (real A2A servers from
# PyPI, each in its own venv outside the clone), then runs the whole workspace's tests.
set -euo pipefail
cd "$(dirname "$0")/.."

# Graphviz renders diagrams/campaign.svg (tests/units/diagrams.rs); python3-venv builds the peers' venvs;
# curl runs the Dockerfile's HEALTHCHECK as Docker would (tests/processes/operable.rs).
# Installed here (Debian, as root) so this one command works on a fresh machine.
if ! command -v dot >/dev/null 2>&1 || ! command -v curl >/dev/null 2>&1 || ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq
    command -v dot >/dev/null 2>&1 || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq graphviz
    command -v curl >/dev/null 2>&1 || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq curl
    python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv
  else
    echo "scripts/test.sh needs Graphviz (dot), curl and python3-venv: install them (Debian: apt-get install graphviz curl python3-venv)" >&2
    exit 1
  fi
fi

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

# Debian's Chromium: the real Mermaid renderer (tests/units/diagrams.rs parses every generated .mmd
# with mermaid-cli from npm, without its own browser download) and the panel's browser test
# (tests/panel.rs drives it through ChromeDriver).
if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver
  else
    echo "scripts/test.sh needs Chromium and ChromeDriver (Debian: apt-get install chromium chromium-driver)" >&2
    exit 1
  fi
fi
MERMAID="${ARGUS_MERMAID_HOME:-/var/tmp/argus-mermaid}"
if [ ! -x "$MERMAID/node_modules/.bin/mmdc" ] || ! cmp -s tests/mermaid/package.json "$MERMAID/package.json"; then
  echo "== preparing the Mermaid renderer in $MERMAID"
  rm -rf "$MERMAID"
  mkdir -p "$MERMAID"
  cp tests/mermaid/package.json "$MERMAID/package.json"
  (cd "$MERMAID" && PUPPETEER_SKIP_DOWNLOAD=1 npm install --no-audit --no-fund --loglevel=error)
fi
export ARGUS_MERMAID_CLI="$MERMAID/node_modules/.bin/mmdc"
export ARGUS_MERMAID_PUPPETEER="$PWD/tests/mermaid/puppeteer.json"

# test-hooks: the store that can be made to fail (fault-injection tests); never in release builds.
cargo test --workspace --features argus-supervisor/test-hooks "$@"

# The OpenOperator plugin (openoperator/plugins/argus_supervisor) under the Agent Zero stand-in
# (openoperator/standin: Agent Zero needs Python >= 3.12), against the binary built above.
ARGUS_SUPERVISOR_BIN="${CARGO_TARGET_DIR:-target}/debug/argus-supervisor" \
  "$ARGUS_INTEROP_VENVS/openoperator-standin/bin/python" -m pytest -q -p no:cacheprovider \
  openoperator/plugins/argus_supervisor/tests
