#!/usr/bin/env bash
# Builds both images (the Dockerfile, openoperator/Dockerfile) with buildah and runs each with
# podman as a user would, judging it from outside the container (tests/images/*.sh). Run by .ci/run.
#
# No registry of images is reachable here, so the builds run on bases made locally from the same
# distribution: `debian:bookworm-slim` from Debian's packages by mmdebstrap; an OpenOperator base
# made from the vendored tree (vendor/openoperator) laid out as the real image is; and the release
# binary built on this (bookworm) machine handed in by BINARY_FROM=prebuilt instead of the rust
# build stage. Each base is a build argument whose default is the production image: a production
# build is `docker build -t argus-supervisor .`, unchanged.
#
# Prints the image's size and the build and run times (docs/operations.md keeps the figures).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/var/tmp/argus-supervisor-target}"
CACHE="${ARGUS_IMAGE_CACHE:-/var/tmp/argus-supervisor-images}"
IMAGE="${ARGUS_IMAGE:-localhost/argus-supervisor:ci}"
OO_IMAGE="${ARGUS_OPENOPERATOR_IMAGE:-localhost/openoperator-argus:ci}"
BASE=localhost/debian:bookworm-slim
OO_BASE=localhost/openoperator:3fa8481b

# buildah, podman, runc (crun refuses this kind of machine's hybrid cgroups), mmdebstrap; jq and
# curl for the checks. Debian's packages, as root.
need=()
for tool in buildah podman runc mmdebstrap jq curl; do
  command -v "$tool" >/dev/null 2>&1 || need+=("$tool")
done
if [ "${#need[@]}" -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
  else
    echo "scripts/images.sh needs ${need[*]} (Debian: apt-get install ${need[*]}), as root" >&2
    exit 1
  fi
fi
mkdir -p "$CACHE"

# The local base: Debian bookworm (minbase) from Debian's packages, carrying this machine's own
# certificate authorities and a pip.conf naming them, since its package registries are reached
# through them. Rebuilt only when those inputs change.
inputs="bookworm minbase $(cat /usr/local/share/ca-certificates/*.crt 2>/dev/null | sha256sum | cut -c1-16)"
if ! buildah inspect "$BASE" >/dev/null 2>&1 || [ "$(cat "$CACHE/base.inputs" 2>/dev/null)" != "$inputs" ]; then
  echo "== making $BASE with mmdebstrap"
  start=$SECONDS
  mmdebstrap --quiet --variant=minbase bookworm "$CACHE/bookworm.tar"
  c="$(buildah from scratch)"
  buildah add --quiet "$c" "$CACHE/bookworm.tar" / >/dev/null
  if ls /usr/local/share/ca-certificates/*.crt >/dev/null 2>&1; then
    buildah copy --quiet "$c" /usr/local/share/ca-certificates/ /usr/local/share/ca-certificates/ >/dev/null
    printf '[global]\ncert = /etc/ssl/certs/ca-certificates.crt\n' > "$CACHE/pip.conf"
    buildah copy --quiet "$c" "$CACHE/pip.conf" /etc/pip.conf >/dev/null
  fi
  buildah config --cmd /bin/bash \
    --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$c"
  buildah commit --quiet --format docker "$c" "$BASE" >/dev/null
  buildah rm "$c" >/dev/null
  printf '%s' "$inputs" > "$CACHE/base.inputs"
  echo "   made in $((SECONDS - start)) s"
fi

# The binary, built on this machine (bookworm's glibc, as the image's), handed in.
cargo build --release --locked --quiet
mkdir -p .image
cp "$CARGO_TARGET_DIR/release/argus-supervisor" .image/argus-supervisor
strip .image/argus-supervisor

echo "== buildah bud (the Dockerfile) → $IMAGE"
start=$SECONDS
# --isolation chroot: the default runtime refuses this machine's cgroups. --layers: the steps
# before the binary (Debian packages, the Foreman venv) are kept between runs.
buildah bud --quiet --format docker --isolation chroot --network host --layers \
  --build-arg DEBIAN_IMAGE="$BASE" --build-arg BINARY_FROM=prebuilt \
  -t "$IMAGE" . >/dev/null
STANDALONE_SECONDS=$((SECONDS - start))
echo "   built in $STANDALONE_SECONDS s; size $(podman image inspect --format '{{.Size}}' "$IMAGE" | numfmt --to=iec-i --suffix=B)"

start=$SECONDS
ARGUS_IMAGE="$IMAGE" bash tests/images/standalone.sh
echo "   checked in $((SECONDS - start)) s"

# The OpenOperator base, laid out as the real image is: the vendored Agent Zero tree at /a0, its
# Python 3.12 lock in /opt/venv-a0, UID 1000 owning /a0/usr, /a0/tmp and /a0/logs, port 7860,
# `run_ui.py` as the command. The tree's own Dockerfiles cannot run here: they start from
# kalilinux/kali-rolling and agent0ai/agent-zero-base (registries not reachable) and clone Agent
# Zero from GitHub at build time. Python 3.12 is this machine's (pyenv), as scripts/test.sh finds
# it; the lock leaves out the speech and embedding stacks, whose two stand-in modules
# (vendor/openoperator/stubs) are on PYTHONPATH, as in the tree-based tests.
source scripts/python312.sh
OO_PY="$(find_python312)"
[ -n "$OO_PY" ] || { echo "scripts/images.sh: the OpenOperator base needs Python 3.12 (python3.12 or pyenv)" >&2; exit 1; }
PY_HOME="$(dirname "$(dirname "$(readlink -f "$OO_PY")")")"
oo_inputs="$(cat "$CACHE/base.inputs") $(sha256sum vendor/openoperator/openoperator-3fa8481b.tar.gz \
  vendor/openoperator/requirements-py312.lock scripts/images.sh | sha256sum | cut -c1-16) $PY_HOME"
if ! buildah inspect "$OO_BASE" >/dev/null 2>&1 || [ "$(cat "$CACHE/oo-base.inputs" 2>/dev/null)" != "$oo_inputs" ]; then
  echo "== making $OO_BASE from the vendored tree"
  start=$SECONDS
  c="$(buildah from "$BASE")"
  in_base() { buildah run --isolation chroot --network host "$c" -- sh -c "$1"; }
  in_base 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    ca-certificates curl git libssl3 libffi8 libsqlite3-0 libbz2-1.0 liblzma5 libreadline8 zlib1g \
    libncursesw6 libuuid1 libexpat1 >/dev/null && rm -rf /var/lib/apt/lists/*'
  # This machine's 3.12 links its libpython by an absolute RUNPATH; the loader's cache finds it here.
  buildah copy --quiet "$c" "$PY_HOME" /opt/python3.12 >/dev/null
  in_base 'echo /opt/python3.12/lib > /etc/ld.so.conf.d/python3.12.conf && ldconfig'
  buildah copy --quiet "$c" vendor/openoperator/requirements-py312.lock /tmp/a0.lock >/dev/null
  in_base '/opt/python3.12/bin/python3.12 -m venv /opt/venv-a0 && /opt/venv-a0/bin/pip install -q \
    --no-cache-dir --disable-pip-version-check -r /tmp/a0.lock && rm /tmp/a0.lock'
  buildah add --quiet "$c" vendor/openoperator/openoperator-3fa8481b.tar.gz /a0 >/dev/null
  buildah copy --quiet "$c" vendor/openoperator/stubs /opt/a0-stubs >/dev/null
  in_base 'useradd --uid 1000 --create-home --shell /usr/sbin/nologin a0 && mkdir -p /a0/usr /a0/tmp /a0/logs \
    && chown -R 1000:1000 /a0/usr /a0/tmp /a0/logs'
  buildah config --workingdir /a0 --user 1000 --port 7860 --env PYTHONPATH=/opt/a0-stubs \
    --env PATH=/opt/venv-a0/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --cmd '["python", "run_ui.py", "--port", "7860", "--host", "0.0.0.0", "--dockerized=true"]' "$c"
  buildah commit --quiet --format docker "$c" "$OO_BASE" >/dev/null
  buildah rm "$c" >/dev/null
  printf '%s' "$oo_inputs" > "$CACHE/oo-base.inputs"
  echo "   made in $((SECONDS - start)) s"
fi

echo "== buildah bud (openoperator/Dockerfile) → $OO_IMAGE"
start=$SECONDS
buildah bud --quiet --format docker --isolation chroot --network host --layers -f openoperator/Dockerfile \
  --build-arg OPENOPERATOR_IMAGE="$OO_BASE" --build-arg BINARY_FROM=prebuilt -t "$OO_IMAGE" . >/dev/null
OO_SECONDS=$((SECONDS - start))
echo "   built in $((SECONDS - start)) s; size $(podman image inspect --format '{{.Size}}' "$OO_IMAGE" | numfmt --to=iec-i --suffix=B)" \
  "(the base $(podman image inspect --format '{{.Size}}' "$OO_BASE" | numfmt --to=iec-i --suffix=B))"

start=$SECONDS
ARGUS_OPENOPERATOR_IMAGE="$OO_IMAGE" bash tests/images/openoperator.sh
echo "   checked in $((SECONDS - start)) s"

# The build's record, for `qualify --image-build` (§25's Deployment): written only now, when both
# images are built and their container checks passed (set -e ends this script at any failure).
RESULTS="${ARGUS_IMAGE_RESULTS:-$CARGO_TARGET_DIR/argus-image-build.json}"
image() {
  podman image inspect "$1" \
    | jq -c --arg name "$1" --argjson seconds "$2" '.[0] | {name: $name, id: .Id, size_bytes: .Size, build_seconds: $seconds}'
}
jq -n --arg commit "$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)" \
  --arg at "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
  --argjson a "$(image "$IMAGE" "$STANDALONE_SECONDS")" --argjson b "$(image "$OO_IMAGE" "$OO_SECONDS")" \
  '{commit: $commit, finished_at: $at, images: [$a, $b], checks_passed: true}' > "$RESULTS.part"
mv "$RESULTS.part" "$RESULTS"
echo "== the build's record: $RESULTS"
