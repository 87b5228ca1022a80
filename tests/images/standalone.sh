#!/usr/bin/env bash
# The standalone image run as a user would (the README's walk, in containers), judged from outside
# the container: the simulated remote's audit, the API, the files in the volume, /proc.
#   1. `demo` completes with no stale-epoch write and no resent submit.
#   2. `sim`, `qualify`, `serve` from the image over a volume; an operator's claim and submit through
#      the image's CLI: one task at the remote, the answer, accepted; every process UID 1000, every
#      file in the volume owned by 1000.
#   3. Over a volume an older build wrote: upgraded in place, the older copies kept; over one a newer
#      build marked: refused (exit 6), nothing changed, nothing sent.
#   4. The image's HEALTHCHECK passes while ready, and fails once the remote is down.
# Needs ARGUS_IMAGE (scripts/images.sh builds it) and root (podman).
set -euo pipefail
IMAGE="${ARGUS_IMAGE:?ARGUS_IMAGE names the image to check}"
source "$(dirname "$0")/lib.sh"
WORK="$(mktemp -d /var/tmp/argus-image-check.XXXXXX)"
NAME="argus-image-check-$$"
cleanup() {
  rm_containers "$NAME-sim" "$NAME-serve" "$NAME-older"
  rm -rf "$WORK"
}
trap cleanup EXIT

echo "-- demo"
out="$("${PODMAN[@]}" "${RUN[@]}" --rm "$IMAGE" demo 2>&1)" || fail "demo exited non-zero: $out"
grep -q "Mission complete" <<<"$out" || fail "demo: no mission complete: $out"
grep -Eq "stale-epoch writes: +0$" <<<"$out" || fail "demo: stale-epoch writes: $out"
grep -Eq "resent submits: +0$" <<<"$out" || fail "demo: resent submits: $out"

echo "-- sim, qualify, serve, an operator, over a volume"
SIM_PORT="$(free_port)"; API_PORT="$(free_port)"
SIM_TOKEN="sim-$RANDOM$RANDOM"; API_TOKEN="api-$RANDOM$RANDOM"
SIM="http://127.0.0.1:$SIM_PORT/"; API="http://127.0.0.1:$API_PORT"
mkdir -p "$WORK/state" && chown 1000:1000 "$WORK/state"
VOL=(-v "$WORK/state:/a0/usr/argus-supervisor")
"${PODMAN[@]}" "${RUN[@]}" -d --name "$NAME-sim" "$IMAGE" sim --listen "127.0.0.1:$SIM_PORT" \
  --scenario happy --token "$SIM_TOKEN" >/dev/null
wait_until 30 curl -fsS "${SIM}.well-known/agent-card.json" || fail "the sim's card never answered"
audit() { curl -fsS -H "Authorization: Bearer $SIM_TOKEN" "${SIM}_sim/audit"; }
qualified="$("${PODMAN[@]}" "${RUN[@]}" --rm "${VOL[@]}" -e OPENTRAINING_A2A_URL="$SIM" \
  -e OPENTRAINING_A2A_TOKEN="$SIM_TOKEN" "$IMAGE" qualify --allow-insecure-loopback \
  --write-campaign qualification-test --message "harmless: say hello" 2>&1)" \
  || fail "qualify: $qualified"
grep -q "Verdict: QUALIFIED" <<<"$qualified" || fail "qualify: $qualified"
"${PODMAN[@]}" "${RUN[@]}" -d --name "$NAME-serve" "${VOL[@]}" -e OPENTRAINING_A2A_URL="$SIM" \
  -e OPENTRAINING_A2A_TOKEN="$SIM_TOKEN" -e ARGUS_SUPERVISOR_API_TOKEN="$API_TOKEN" \
  -e ARGUS_SUPERVISOR_LISTEN="127.0.0.1:$API_PORT" -e ARGUS_SUPERVISOR_HEARTBEAT_SECONDS=1 \
  "$IMAGE" serve --allow-insecure-loopback >/dev/null
health() { curl -sS -H "Authorization: Bearer $API_TOKEN" "$API/api/plugins/argus-supervisor/health"; }
ready() { [ "$(health | jq -r .status)" = ok ]; }
wait_until 60 ready || fail "serve never ready: $(health)"
# The operator, through the image's own CLI, in the running container.
cli() {
  "${PODMAN[@]}" exec -e ARGUS_SUPERVISOR_URL="$API" "$NAME-serve" argus-supervisor campaigns "$@"
}
cli observe c1 --objective "train the model" | grep -q "observe: done" || fail "observe"
cli claim c1 | grep -q "claim: done" || fail "claim"
cli submit c1 --message "run attempt 1" | grep -q "submit: done" || fail "submit"
state() { cli show c1 --json 2>/dev/null | jq -r .state; }
finished() { [ "$(state)" = remote_terminal_local_pending ]; }
wait_until 90 finished || fail "the attempt never completed: $(cli show c1 2>&1)"
cli accept c1 --reason "evaluation passed" | grep -q "accept: done" || fail "accept"
# What the remote received: one task for the campaign (the qualification's own aside).
sends="$(audit | jq '[.entries[] | select(.method == "message/send" and .campaign_id == "c1")] | length')"
[ "$sends" = 1 ] || fail "the remote got $sends message/send for c1: $(audit)"

echo "-- UID 1000: every process of the container, every file it wrote"
pid="$(pid_of "$NAME-serve")"
all_uid_1000 "$pid"
[ "$WALKED" -ge 1 ] || fail "no process found under the container's pid $pid"
owned_by_1000 "$WORK/state"
[ -f "$WORK/state/campaigns/c1.json" ] || fail "no campaign document in the volume"
echo "   $WALKED process(es) and $(find "$WORK/state" | wc -l) path(s) in the volume, all UID 1000"

echo "-- stopped (SIGTERM to PID 1) and started again over the same volume"
all_sends() { audit | jq '[.entries[] | select(.method == "message/send")] | length'; }
before="$(all_sends)"
"${PODMAN[@]}" stop -t 20 "$NAME-serve" >/dev/null
code="$("${PODMAN[@]}" inspect --format '{{.State.ExitCode}}' "$NAME-serve")"
[ "$code" = 0 ] || fail "serve did not stop cleanly on SIGTERM: exit code $code"
"${PODMAN[@]}" start "$NAME-serve" >/dev/null
wait_until 60 ready || fail "serve never ready again: $(health)"
[ "$(state)" = closed.accepted ] || fail "after the restart, c1 is $(state)"
[ "$(all_sends)" = "$before" ] || fail "a message/send after the restart: $(audit)"

echo "-- the image over an older build's volume: upgraded in place; over a newer build's: refused, untouched"
# As a user replacing an image over the same volume: the volume first holds what an older build
# wrote (store schema 1, tests/fixtures/store-v1: a campaign in controlling.running with Argus's
# binding); this image upgrades it at start, keeping the older copies until confirm-upgrade, and
# sends nothing. Then the volume's mark says a newer build wrote it (as after rolling back to this
# image): serve refuses to start (exit 6), naming both versions, and changes no file.
OLD_ROOT="$WORK/older"
mkdir -p "$OLD_ROOT/campaigns" "$OLD_ROOT/argus"
cp tests/fixtures/store-v1/campaigns/c1.json "$OLD_ROOT/campaigns/c1.json"
cp tests/fixtures/store-v1/argus/c1.json "$OLD_ROOT/argus/c1.json"
chown -R 1000:1000 "$OLD_ROOT"
OLD_VOL=(-v "$OLD_ROOT:/a0/usr/argus-supervisor")
OLD_PORT="$(free_port)"; OLD_API="http://127.0.0.1:$OLD_PORT"
before="$(all_sends)"
"${PODMAN[@]}" "${RUN[@]}" -d --name "$NAME-older" "${OLD_VOL[@]}" -e OPENTRAINING_A2A_URL="$SIM" \
  -e OPENTRAINING_A2A_TOKEN="$SIM_TOKEN" -e ARGUS_SUPERVISOR_API_TOKEN="$API_TOKEN" \
  -e ARGUS_SUPERVISOR_LISTEN="127.0.0.1:$OLD_PORT" "$IMAGE" serve --allow-insecure-loopback >/dev/null
old_view() {
  curl -fsS -H "Authorization: Bearer $API_TOKEN" "$OLD_API/api/plugins/argus-supervisor/campaigns/c1"
}
upgraded() { [ "$(old_view | jq -r .objective)" = train ]; }
wait_until 60 upgraded || fail "the older build's campaign never came back: $("${PODMAN[@]}" logs --tail 20 "$NAME-older" 2>&1)"
[ "$(jq .schema_version "$OLD_ROOT/store-version.json")" = 2 ] || fail "the volume's mark: $(cat "$OLD_ROOT/store-version.json")"
[ "$(jq .schema_version "$OLD_ROOT/campaigns/c1.json")" = 2 ] || fail "c1 was not upgraded"
kept="$(find "$OLD_ROOT/upgrade-backup" -mindepth 1 -maxdepth 1 -name 'schema-1-at-*')"
[ "$(wc -l <<<"$kept")" = 1 ] && cmp -s "$kept/campaigns/c1.json" tests/fixtures/store-v1/campaigns/c1.json \
  || fail "the older build's copy was not kept as written: $kept"
[ -z "$(ls -A "$OLD_ROOT/quarantine")" ] || fail "the upgrade set files aside: $(ls "$OLD_ROOT/quarantine")"
owned_by_1000 "$OLD_ROOT"
"${PODMAN[@]}" stop -t 20 "$NAME-older" >/dev/null
[ "$(all_sends)" = "$before" ] || fail "the upgrade sent to the remote: $(audit)"
printf '{"schema_version": 3, "written_by": "argus-supervisor 0.3.0 (commit f0f0f0f0f0f0)"}' > "$OLD_ROOT/store-version.json"
chown 1000:1000 "$OLD_ROOT/store-version.json"
snapshot() { (cd "$OLD_ROOT" && find . -printf '%p %s %T@ %m\n' | sort && find . -type f -exec sha256sum {} + | sort); }
untouched="$(snapshot)"
code=0
said="$(timeout 60 "${PODMAN[@]}" "${RUN[@]}" --rm "${OLD_VOL[@]}" -e OPENTRAINING_A2A_URL="$SIM" \
  -e OPENTRAINING_A2A_TOKEN="$SIM_TOKEN" -e ARGUS_SUPERVISOR_API_TOKEN="$API_TOKEN" \
  -e ARGUS_SUPERVISOR_LISTEN="127.0.0.1:$OLD_PORT" "$IMAGE" serve --allow-insecure-loopback 2>&1)" || code=$?
[ "$code" = 6 ] || fail "serve over a newer build's volume: exit code $code: $said"
grep -q "store-version.json is store schema 3 (by argus-supervisor 0.3.0 (commit f0f0f0f0f0f0))" <<<"$said" \
  && grep -q "Nothing was touched" <<<"$said" || fail "the refusal did not say why: $said"
[ "$(snapshot)" = "$untouched" ] || fail "the refused start changed the volume"
[ "$(all_sends)" = "$before" ] || fail "the refused start sent to the remote: $(audit)"
echo "   upgraded from store schema 1 with its copy kept; a newer build's volume refused (exit 6), untouched"

echo "-- HEALTHCHECK: passes while ready, fails once the remote is down"
"${PODMAN[@]}" healthcheck run "$NAME-serve" >/dev/null || fail "HEALTHCHECK failed while ready: $(health)"
"${PODMAN[@]}" kill "$NAME-sim" >/dev/null
unready() { [ "$(health | jq -r .status)" != ok ]; }
wait_until 60 unready || fail "health never said the remote is down: $(health)"
if "${PODMAN[@]}" healthcheck run "$NAME-serve" >/dev/null 2>&1; then
  fail "HEALTHCHECK passed with the remote down: $(health)"
fi
echo "-- the standalone image: all checks passed"
