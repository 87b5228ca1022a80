# argus-supervisor: multi-stage build on the pinned toolchain, slim Debian runtime, non-root.
#
# Build-time hooks install the isolated Argus and Foreman runtimes into their own virtualenvs
# (/opt/venv-argus, /opt/venv-foreman), never into another runtime's environment:
#   docker build --build-arg ARGUS_PIP_SPEC='argus==X.Y' --build-arg FOREMAN_PIP_SPEC='foreman-supervisor==X.Y' .
# No secret is baked in: tokens come from the environment at run time.

FROM rust:1.95.0-slim-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked && strip target/release/argus-supervisor

FROM debian:bookworm-slim
ARG ARGUS_PIP_SPEC=""
ARG FOREMAN_PIP_SPEC=""
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates curl python3 python3-venv \
 && rm -rf /var/lib/apt/lists/*
# Isolated runtimes, only when asked for; each in its own venv.
RUN if [ -n "$ARGUS_PIP_SPEC" ]; then python3 -m venv /opt/venv-argus && /opt/venv-argus/bin/pip install --no-cache-dir "$ARGUS_PIP_SPEC"; fi \
 && if [ -n "$FOREMAN_PIP_SPEC" ]; then python3 -m venv /opt/venv-foreman && /opt/venv-foreman/bin/pip install --no-cache-dir "$FOREMAN_PIP_SPEC"; fi
RUN useradd --uid 1000 --create-home --shell /usr/sbin/nologin argus \
 && mkdir -p /a0/usr/argus-supervisor \
 && chown -R 1000:1000 /a0/usr/argus-supervisor
COPY --from=build /src/target/release/argus-supervisor /usr/local/bin/argus-supervisor
USER 1000:1000
# Argus and Foreman are named only when they were installed (a path to nothing would be an Argus
# "unavailable" forever): run with -e ARGUS_SUPERVISOR_ARGUS_BIN=/opt/venv-argus/bin/argus-plugin-server
# (and ARGUS_SUPERVISOR_FOREMAN_ENABLED=1, ARGUS_SUPERVISOR_FOREMAN_BIN=/opt/venv-foreman/bin/foreman)
# on an image built with ARGUS_PIP_SPEC (FOREMAN_PIP_SPEC).
ENV ARGUS_SUPERVISOR_HOME=/a0/usr/argus-supervisor \
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
