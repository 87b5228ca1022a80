#!/bin/sh
# Foreman (foreman-core 0.5.1, vendor/foreman/) into a venv of its own: the pinned wheel checked
# against its digest, its Python 3.12 lock, then the wheel without dependencies. Both images and
# scripts/test.sh run this one script, so what the tests run on is what is deployed.
#
#   install-foreman.sh VENV PYTHON DIR [GATE]
#     DIR holds foreman_core-0.5.1-py3-none-any.whl and requirements-py312.lock;
#     GATE, when given, is adapters/foreman_gate.py's installed path: VENV/bin/argus-foreman-gate
#     then runs it on the venv's Python (what ARGUS_SUPERVISOR_FOREMAN_BIN names).
set -eu
venv=$1 python=$2 dir=$3 gate=${4:-}
wheel="$dir/foreman_core-0.5.1-py3-none-any.whl"
echo "528ca0e3ae3fb6f46a76154c15f1798ee497e162b0bbbefb74d8bbc4e8935ec2  $wheel" | sha256sum -c --quiet
"$python" -m venv "$venv"
"$venv/bin/pip" install --quiet --no-cache-dir --disable-pip-version-check -r "$dir/requirements-py312.lock"
"$venv/bin/pip" install --quiet --no-cache-dir --disable-pip-version-check --no-deps "$wheel"
"$venv/bin/pip" check --disable-pip-version-check >/dev/null
if [ -n "$gate" ]; then
  printf '#!/bin/sh\nexec %s/bin/python %s "$@"\n' "$venv" "$gate" > "$venv/bin/argus-foreman-gate"
  chmod 755 "$venv/bin/argus-foreman-gate"
fi
