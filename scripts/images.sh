#!/usr/bin/env bash
# Builds the standalone image (the Dockerfile) with buildah and runs it with podman, as a user
# would, judging it from outside the container (tests/images/standalone.sh). Run by .ci/run.
#
# No registry of images is reachable here, so the build runs on bases made locally from the same
# distribution: `debian:bookworm-slim` from Debian's packages by mmdebstrap, and the release binary
# built on this (bookworm) machine handed in by BINARY_FROM=prebuilt instead of the rust build
# stage. Each base is a build argument whose default is the production image: a production build
# is `docker build -t argus-supervisor .`, unchanged.
#
# Prints the image's size and the build and run times (docs/operations.md keeps the figures).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/var/tmp/argus-supervisor-target}"
CACHE="${ARGUS_IMAGE_CACHE:-/var/tmp/argus-supervisor-images}"
IMAGE="${ARGUS_IMAGE:-localhost/argus-supervisor:ci}"
BASE=localhost/debian:bookworm-slim

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
echo "   built in $((SECONDS - start)) s; size $(podman image inspect --format '{{.Size}}' "$IMAGE" | numfmt --to=iec-i --suffix=B)"

start=$SECONDS
ARGUS_IMAGE="$IMAGE" bash tests/images/standalone.sh
echo "   checked in $((SECONDS - start)) s"
