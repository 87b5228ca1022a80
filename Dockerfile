# argus-supervisor: multi-stage build on the pinned toolchain, slim Debian runtime, non-root.
#
# Argus and Foreman run in virtualenvs of their own (/opt/venv-argus, /opt/venv-foreman), never in
# another runtime's environment. Foreman is always installed, pinned (vendor/foreman: the wheel and
# its lock; the lock's pins also install on this image's Python 3.11), with the supervisor's gate;
# Argus only when asked for:
#   docker build --build-arg ARGUS_PIP_SPEC='<a pip requirement for argus-skill>' .
# No secret is baked in: tokens come from the environment at run time.
#
# The bases are build arguments whose defaults are the production images, so a production build
# is the plain `docker build .`. scripts/images.sh builds on bases made locally (no registry of
# images is reachable there) and hands in the binary it built: BINARY_FROM=prebuilt, with the
# binary at .image/argus-supervisor in the context. The stage not chosen is never built (BuildKit
# and buildah skip unused stages).
ARG RUST_IMAGE=rust:1.95.0-slim-bookworm
ARG DEBIAN_IMAGE=debian:bookworm-slim
ARG BINARY_FROM=build

FROM ${RUST_IMAGE} AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked && strip target/release/argus-supervisor

FROM scratch AS prebuilt
COPY .image/argus-supervisor /src/target/release/argus-supervisor

FROM ${BINARY_FROM} AS binary

FROM ${DEBIAN_IMAGE}
ARG ARGUS_PIP_SPEC=""
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates curl python3 python3-venv \
 && rm -rf /var/lib/apt/lists/*
RUN if [ -n "$ARGUS_PIP_SPEC" ]; then python3 -m venv /opt/venv-argus && /opt/venv-argus/bin/pip install --no-cache-dir "$ARGUS_PIP_SPEC"; fi
COPY vendor/foreman/foreman_core-0.5.1-py3-none-any.whl vendor/foreman/requirements-py312.lock scripts/install-foreman.sh /tmp/foreman/
COPY adapters/foreman_gate.py /opt/venv-foreman-gate/foreman_gate.py
RUN sh /tmp/foreman/install-foreman.sh /opt/venv-foreman python3 /tmp/foreman /opt/venv-foreman-gate/foreman_gate.py \
 && rm -rf /tmp/foreman
RUN useradd --uid 1000 --create-home --shell /usr/sbin/nologin argus \
 && mkdir -p /a0/usr/argus-supervisor \
 && chown -R 1000:1000 /a0/usr/argus-supervisor
COPY --from=binary /src/target/release/argus-supervisor /usr/local/bin/argus-supervisor
USER 1000:1000
# Argus is named only when it was installed (a path to nothing would be an Argus "unavailable"
# forever): run with -e ARGUS_SUPERVISOR_ARGUS_BIN=/opt/venv-argus/bin/argus-plugin-server on an image
# built with ARGUS_PIP_SPEC. Foreman is consulted with -e ARGUS_SUPERVISOR_FOREMAN_ENABLED=1 and its
# decision model named through ARGUS_SUPERVISOR_FOREMAN_ENV.
ENV ARGUS_SUPERVISOR_HOME=/a0/usr/argus-supervisor \
    ARGUS_SUPERVISOR_FOREMAN_BIN=/opt/venv-foreman/bin/argus-foreman-gate \
    ARGUS_SUPERVISOR_LISTEN=0.0.0.0:8787 \
    ARGUS_SUPERVISOR_ARGUS_HOME=/a0/usr/argus-supervisor/argus-home
VOLUME ["/a0/usr/argus-supervisor"]
EXPOSE 8787
# Readiness (503 with its reasons when not ready: curl -f fails), on the port serve really listens
# on (ARGUS_SUPERVISOR_LISTEN, overridable at run time).
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s \
  CMD sh -c 'curl -fsS "http://127.0.0.1:${ARGUS_SUPERVISOR_LISTEN##*:}/api/plugins/argus-supervisor/health" || exit 1'
ENTRYPOINT ["argus-supervisor"]
CMD ["serve"]
