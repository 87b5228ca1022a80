#!/usr/bin/env bash
# The test command: prepares the Python peers the interoperability tests run (real A2A servers from
# PyPI, each in its own venv outside the clone), then runs the whole workspace's tests.
set -euo pipefail
cd "$(dirname "$0")/.."

# Graphviz renders diagrams/campaign.svg (tests/units/diagrams.rs); python3-venv builds the peers' venvs;
# curl runs the Dockerfile's HEALTHCHECK as Docker would; fish and zsh (with bash) run the completion
# scripts through their own completion (tests/processes/operable.rs).
# Installed here (Debian, as root) so this one command works on a fresh machine.
if ! command -v dot >/dev/null 2>&1 || ! command -v curl >/dev/null 2>&1 || ! command -v fish >/dev/null 2>&1 \
  || ! command -v zsh >/dev/null 2>&1 || ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq
    command -v dot >/dev/null 2>&1 || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq graphviz
    command -v curl >/dev/null 2>&1 || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq curl
    command -v fish >/dev/null 2>&1 || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fish
    command -v zsh >/dev/null 2>&1 || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq zsh
    python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv
  else
    echo "scripts/test.sh needs Graphviz (dot), curl, fish, zsh and python3-venv: install them (Debian: apt-get install graphviz curl fish zsh python3-venv)" >&2
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

# The OpenOperator plugin's tests (run last, below) run under the real OpenOperator, and the
# process tests run Agent Zero's own A2A server from the same tree and venv as the remote
# (tests/support/agent_zero.rs)
# (vendor/openoperator: Agent Zero's snapshot, its Python 3.12 lock and two stand-ins for the
# speech/embedding stacks). Agent Zero needs Python 3.12: taken
# from the PATH or pyenv; without one this fails and says so (it never skips).
source scripts/python312.sh
OO_PY="$(find_python312)"
if [ -z "$OO_PY" ]; then
  echo "scripts/test.sh: the OpenOperator plugin tests need Python 3.12 with venv and ensurepip (the lock" >&2
  echo "  vendor/openoperator/requirements-py312.lock is for 3.12): python3.12 on the PATH, or pyenv with a" >&2
  echo "  3.12 version (pyenv install 3.12); none was found" >&2
  exit 1
fi
# openoperator/tests/test_runtime.py starts OpenOperator as UID 1000, as the image runs it, so this
# interpreter's directories must let other users in (search only, as /usr/local in the image).
if [ "$(id -u)" = 0 ]; then
  d="$(dirname "$(readlink -f "$OO_PY")")"
  while [ "$d" != / ]; do chmod o+x "$d"; d="$(dirname "$d")"; done
fi
OO_VENV="$ARGUS_INTEROP_VENVS/openoperator-3fa8481b"
# The venv is remade when the test requirements or the host's lock (which they include) change.
OO_REQS="$(cat openoperator/requirements-test.txt vendor/openoperator/requirements-py312.lock)"
if [ ! -x "$OO_VENV/bin/python" ] || [ "$OO_REQS" != "$(cat "$OO_VENV/.requirements" 2>/dev/null)" ]; then
  echo "== preparing the OpenOperator venv (Python $("$OO_PY" -c 'import platform; print(platform.python_version())'))"
  rm -rf "$OO_VENV"
  "$OO_PY" -m venv "$OO_VENV"
  "$OO_VENV/bin/pip" install --quiet --disable-pip-version-check -r openoperator/requirements-test.txt
  printf '%s' "$OO_REQS" > "$OO_VENV/.requirements"
fi
# The real Foreman (foreman-core 0.5.1, vendor/foreman/) in a venv of its own, from its Python 3.12
# lock and the pinned wheel: what `adapters/foreman_gate.py` runs on (tests/processes/foreman_gate.rs).
FOREMAN_VENV="$ARGUS_INTEROP_VENVS/foreman-0.5.1"
FOREMAN_REQS="$(cat vendor/foreman/requirements-py312.lock scripts/install-foreman.sh; sha256sum vendor/foreman/foreman_core-0.5.1-py3-none-any.whl)"
if [ ! -x "$FOREMAN_VENV/bin/python" ] || [ "$FOREMAN_REQS" != "$(cat "$FOREMAN_VENV/.requirements" 2>/dev/null)" ]; then
  echo "== preparing the Foreman venv (foreman-core 0.5.1)"
  rm -rf "$FOREMAN_VENV"
  # The images' own install (scripts/install-foreman.sh); the tests make their own gate wrapper.
  sh scripts/install-foreman.sh "$FOREMAN_VENV" "$OO_PY" vendor/foreman
  printf '%s' "$FOREMAN_REQS" > "$FOREMAN_VENV/.requirements"
fi
export ARGUS_FOREMAN_VENV="$FOREMAN_VENV"
OO_TAR=vendor/openoperator/openoperator-3fa8481b.tar.gz
echo "5cc01880e1d08547fac6acff17a02df028f59c06accd89193b56dd392d946a2a  $OO_TAR" | sha256sum --check --quiet
OO_TREE="$ARGUS_INTEROP_VENVS/openoperator-3fa8481b-tree"
if [ ! -f "$OO_TREE/run_ui.py" ]; then
  rm -rf "$OO_TREE" && mkdir -p "$OO_TREE"
  tar -xzf "$OO_TAR" -C "$OO_TREE"
fi
# The run's record, for `qualify --test-results` (§25's Tests): the counts as the runners printed
# them, the commit, the exit code. Written whether the run passed or not.
RESULTS="${ARGUS_TEST_RESULTS:-${CARGO_TARGET_DIR:-target}/argus-test-results.json}"
LOGS="$(mktemp -d)"
trap 'rm -rf "$LOGS"' EXIT
record() {
  python3 scripts/test_record.py "$1" "$LOGS/cargo.log" "$LOGS/pytest.log" \
    "$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)" > "$RESULTS.part" \
    && mv "$RESULTS.part" "$RESULTS"
}

# test-hooks: the store that can be made to fail (fault-injection tests); never in release builds.
: > "$LOGS/pytest.log"
set +e
cargo test --workspace --features argus-supervisor/test-hooks "$@" 2>&1 | tee "$LOGS/cargo.log"
rc=${PIPESTATUS[0]}
set -e
if [ "$rc" != 0 ]; then record "$rc"; exit "$rc"; fi

# The plugin under the real OpenOperator, against the binary built above.
set +e
ARGUS_SUPERVISOR_BIN="${CARGO_TARGET_DIR:-target}/debug/argus-supervisor" \
ARGUS_OPENOPERATOR_TREE="$OO_TREE" ARGUS_OPENOPERATOR_STUBS="$PWD/vendor/openoperator/stubs" \
  "$OO_VENV/bin/python" -m pytest -q -p no:cacheprovider openoperator/tests 2>&1 | tee "$LOGS/pytest.log"
rc=${PIPESTATUS[0]}
set -e
record "$rc"
echo "== the run's record: $RESULTS"
exit "$rc"
