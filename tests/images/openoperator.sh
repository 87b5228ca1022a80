#!/usr/bin/env bash
# The OpenOperator image run as a user would, judged from outside the container: a named volume on
# /a0/usr (populated from the image at first use, as Docker and podman do), the simulated remote,
# the operator working through the daemon's socket with the image's own CLI.
#   1. The §20 smoke in the container fails on the heartbeat alone before any campaign, and passes
#      once a campaign ticks.
#   2. `qualify` in the container, then a campaign observed, claimed, submitted and accepted: one
#      task at the remote (its audit).
#   3. Every process of the container UID 1000; the only TCP listener 7860; nothing written outside
#      /a0/usr (the volume), /a0/tmp and /a0/logs (`podman diff`), /opt/venv-a0 included.
#   4. Stopped and started again while an attempt runs: still one task at the remote, the campaign
#      supervised again over the same volume, its feed saying so once (REATTACHED).
#   5. A whole run decided by the real Argus, with the real Foreman enabled (only their models are
#      doubles: tests/interop/servers/claude_standin.py and decision_double.py, mounted or on
#      loopback): every process sampled through the run UID 1000, the Argus daemon that
#      double-forks included; Argus's home under /a0/usr; nothing written outside /a0/usr,
#      /a0/tmp and /a0/logs, $HOME and /tmp included. Then `qualify --deployment` in the container
#      reports §25's items from the daemon's own health, and the §20 smoke passes, then fails on
#      each of its seven checks alone when that one is broken on purpose.
# Needs ARGUS_OPENOPERATOR_IMAGE (scripts/images.sh builds it) and root (podman).
set -euo pipefail
cd "$(dirname "$0")/../.."
IMAGE="${ARGUS_OPENOPERATOR_IMAGE:?ARGUS_OPENOPERATOR_IMAGE names the image to check}"
source tests/images/lib.sh
BASE_NAME="argus-oo-check-$$"
NAME="$BASE_NAME"
VOLUME="$BASE_NAME-usr"
DOUBLES="$(mktemp -d /var/tmp/argus-oo-doubles.XXXXXX)"
cleanup() {
  # By the names they were given ($NAME changes to the second container's below).
  rm_containers "$BASE_NAME" "$BASE_NAME-sim" "$BASE_NAME-argus" "$BASE_NAME-sim2"
  "${PODMAN[@]}" volume rm -f "$VOLUME" "$VOLUME-argus" >/dev/null 2>&1 || true
  [ -z "${FOREMAN_MODEL:-}" ] || kill "$FOREMAN_MODEL" 2>/dev/null || true
  rm -rf "$DOUBLES"
}
trap cleanup EXIT
# 7860 must be free: the image's only port, on the host's network.
if (exec 3<>/dev/tcp/127.0.0.1/7860) 2>/dev/null; then fail "port 7860 is taken on this machine"; fi

SIM_PORT="$(free_port)"; SIM_TOKEN="sim-$RANDOM$RANDOM"; SIM="http://127.0.0.1:$SIM_PORT/"
# long-noisy: an attempt that keeps working (a restart must land while it runs).
"${PODMAN[@]}" "${RUN[@]}" -d --name "$NAME-sim" --entrypoint argus-supervisor "$IMAGE" sim \
  --listen "127.0.0.1:$SIM_PORT" --scenario long-noisy --token "$SIM_TOKEN" >/dev/null
wait_until 30 curl -fsS "${SIM}.well-known/agent-card.json" || fail "the sim's card never answered"
audit() { curl -fsS -H "Authorization: Bearer $SIM_TOKEN" "${SIM}_sim/audit"; }
sends() { audit | jq '[.entries[] | select(.method == "message/send" and .accepted)] | length'; }

echo "-- OpenOperator started over a named volume on /a0/usr"
"${PODMAN[@]}" volume create "$VOLUME" >/dev/null
USR="$("${PODMAN[@]}" volume inspect --format '{{.Mountpoint}}' "$VOLUME")"
"${PODMAN[@]}" "${RUN[@]}" -d --name "$NAME" -v "$VOLUME:/a0/usr" \
  -e OPENTRAINING_A2A_URL="$SIM" -e OPENTRAINING_A2A_TOKEN="$SIM_TOKEN" \
  -e ARGUS_SUPERVISOR_ALLOW_INSECURE_LOOPBACK=1 -e ARGUS_SUPERVISOR_HEARTBEAT_SECONDS=1 \
  -e AUTH_LOGIN=operator -e AUTH_PASSWORD="op-$RANDOM$RANDOM" "$IMAGE" >/dev/null
# The daemon the plugin starts, through its socket, with its own token (the image's CLI).
cli() {
  "${PODMAN[@]}" exec "$NAME" sh -c 'ARGUS_SUPERVISOR_API_TOKEN="$(cat /a0/usr/argus-supervisor/api-token)" \
    exec argus-supervisor campaigns --url unix:/a0/usr/argus-supervisor/api.sock "$@"' sh "$@"
}
answering() { curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:7860/ | grep -q '^[23]'; }
wait_until 120 answering || fail "Agent Zero never answered on 7860: $("${PODMAN[@]}" logs --tail 30 "$NAME" 2>&1)"
wait_until 60 cli list || fail "the daemon never answered on its socket: $("${PODMAN[@]}" logs --tail 30 "$NAME" 2>&1)"

echo "-- the smoke: the heartbeat alone fails before any campaign"
smoke() { "${PODMAN[@]}" exec -w /a0 "$NAME" python -m usr.plugins.argus_supervisor.helpers.smoke; }
said="$(smoke 2>&1)" && fail "the smoke passed with no campaign to tick: $said"
[ "$(grep '^FAIL' <<<"$said" | awk '{print $2}' | tr -d ':')" = heartbeat ] || fail "the smoke failed on more than the heartbeat: $said"

echo "-- qualify, then a campaign to its end, and one left running"
q="$("${PODMAN[@]}" exec "$NAME" argus-supervisor qualify --home /a0/usr/argus-supervisor \
  --allow-insecure-loopback --write-campaign qualification-test --message "harmless: say hello" 2>&1)" \
  || fail "qualify: $q"
grep -q "Verdict: QUALIFIED" <<<"$q" || fail "qualify: $q"
cli observe c1 --objective "train the model" | grep -q "observe: done" || fail "observe"
cli claim c1 | grep -q "claim: done" || fail "claim: $(cli claim c1 2>&1)"
before="$(sends)"
cli submit c1 --message "run attempt 1" | grep -q "submit: done" || fail "submit"
[ "$(sends)" = $((before + 1)) ] || fail "one submit, $(( $(sends) - before )) task(s): $(audit)"
state() { cli show c1 --json 2>/dev/null | jq -r .state; }
running() { [ "$(state)" = controlling.running ]; }
wait_until 30 running || fail "c1 is $(state)"
wait_until 30 smoke || fail "the smoke failed with a campaign ticking: $(smoke 2>&1)"

echo "-- UID 1000, one port, nothing written outside /a0/usr, /a0/tmp and /a0/logs"
pid="$(pid_of "$NAME")"
all_uid_1000 "$pid"
[ "$WALKED" -ge 2 ] || fail "only $WALKED process(es) under the container's pid $pid"
# The TCP ports the container's processes listen on: their sockets against /proc/net/tcp*.
inodes="$(for p in $(descendants "$pid"); do
  find /proc/"$p"/fd -lname 'socket:*' -printf '%l\n' 2>/dev/null | tr -dc '0-9\n'
done)"
ports="$(for i in $inodes; do awk -v i="$i" '$4 == "0A" && $10 == i {split($2, a, ":"); print a[2]}' /proc/net/tcp /proc/net/tcp6; done \
  | sort -u | while read -r hex; do printf '%d ' "$((16#$hex))"; done)"
[ "$ports" = "7860 " ] || fail "listening on: $ports"
only_written_in_a0 "$NAME"
owned_by_1000 "$USR"
echo "   $WALKED process(es), listening on 7860 only; $(find "$USR" | wc -l) path(s) in /a0/usr"

echo "-- stopped and started again while the attempt runs"
reattached() { cli messages c1 --json 2>/dev/null | jq '[.messages[] | select(.kind == "REATTACHED")] | length'; }
[ "$(reattached)" = 0 ] || fail "c1's feed said REATTACHED before any restart"
tasks="$(sends)"
reads() { audit | jq '[.entries[] | select(.method == "tasks/get")] | length'; }  # c1's is the only task read
"${PODMAN[@]}" stop -t 30 "$NAME" >/dev/null
read_before="$(reads)"
"${PODMAN[@]}" start "$NAME" >/dev/null
wait_until 120 answering || fail "Agent Zero never answered again"
wait_until 60 cli list || fail "the daemon never answered again"
read_again() { [ "$(reads)" -gt "$read_before" ]; }
wait_until 30 read_again || fail "c1's task never read again after the restart: $(audit | jq -c '.entries[-5:]')"
wait_until 30 running || fail "after the restart c1 is $(state)"
[ "$(sends)" = "$tasks" ] || fail "a second task after the restart: $(audit)"
once() { [ "$(reattached)" = 1 ]; }
wait_until 30 once || fail "c1's feed says REATTACHED $(reattached) time(s) after one restart: $(cli messages c1 2>&1 | tail -5)"
pid="$(pid_of "$NAME")"
serves=0
for p in $(descendants "$pid"); do
  tr '\0' ' ' </proc/"$p"/cmdline 2>/dev/null | grep -q '^argus-supervisor serve \|/argus-supervisor serve ' && serves=$((serves + 1))
done
[ "$serves" = 1 ] || fail "$serves daemons after the restart"
echo "   c1 read again and still running on its one task, its feed saying so once; one daemon"
rm_containers "$NAME-sim" && "${PODMAN[@]}" rm -f -v -t 30 "$NAME" >/dev/null

echo "-- a run decided by the real Argus, the real Foreman consulted (their models scripted)"
# The model CLI's double, mounted read-only at /opt/doubles and first on the PATH (which the daemon
# hands Argus); it keeps its own record under /a0/tmp.
cp tests/interop/servers/claude_standin.py "$DOUBLES/"
printf '#!/bin/sh\nSTANDIN_DIR=/a0/tmp/standin exec /opt/venv-a0/bin/python /opt/doubles/claude_standin.py "$@"\n' \
  > "$DOUBLES/claude"
chmod 755 "$DOUBLES" "$DOUBLES/claude" && chmod 644 "$DOUBLES/claude_standin.py"
# Foreman's decision model's double, on this machine's loopback.
mkdir -p "$DOUBLES/foreman"
python3 tests/interop/servers/decision_double.py "$DOUBLES/foreman" > "$DOUBLES/foreman/url" &
FOREMAN_MODEL=$!
wait_until 20 grep -q http "$DOUBLES/foreman/url" || fail "Foreman's decision model double never started"
SIM_PORT="$(free_port)"; SIM="http://127.0.0.1:$SIM_PORT/"
"${PODMAN[@]}" "${RUN[@]}" -d --name "$NAME-sim2" --entrypoint argus-supervisor "$IMAGE" sim \
  --listen "127.0.0.1:$SIM_PORT" --scenario repair --token "$SIM_TOKEN" >/dev/null
wait_until 30 curl -fsS "${SIM}.well-known/agent-card.json" || fail "the second sim's card never answered"
"${PODMAN[@]}" volume create "$VOLUME-argus" >/dev/null
USR="$("${PODMAN[@]}" volume inspect --format '{{.Mountpoint}}' "$VOLUME-argus")"
NAME="$NAME-argus"
"${PODMAN[@]}" "${RUN[@]}" -d --name "$NAME" -v "$VOLUME-argus:/a0/usr" -v "$DOUBLES:/opt/doubles:ro" \
  -e PATH=/opt/doubles:/opt/venv-a0/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  -e OPENTRAINING_A2A_URL="$SIM" -e OPENTRAINING_A2A_TOKEN="$SIM_TOKEN" \
  -e ARGUS_SUPERVISOR_ALLOW_INSECURE_LOOPBACK=1 -e ARGUS_SUPERVISOR_HEARTBEAT_SECONDS=1 \
  -e ARGUS_SUPERVISOR_BACKEND=claude -e ARGUS_SUPERVISOR_ARGUS_POLL_SECONDS=1 \
  -e ARGUS_SUPERVISOR_FOREMAN_ENABLED=1 -e FOREMAN_DECISION_PROVIDER=openai \
  -e FOREMAN_OPENAI_API_KEY="model-$RANDOM$RANDOM" -e FOREMAN_OPENAI_BASE_URL="$(head -1 "$DOUBLES/foreman/url")" \
  -e FOREMAN_DECISION_TIMEOUT_SECONDS=3 -e FOREMAN_ASSESSMENT_MIN_INTERVAL_SECONDS=0 \
  -e ARGUS_SUPERVISOR_FOREMAN_ENV="FOREMAN_DECISION_PROVIDER FOREMAN_OPENAI_API_KEY FOREMAN_OPENAI_BASE_URL FOREMAN_DECISION_TIMEOUT_SECONDS FOREMAN_ASSESSMENT_MIN_INTERVAL_SECONDS" \
  -e AUTH_LOGIN=operator -e AUTH_PASSWORD="op-$RANDOM$RANDOM" "$IMAGE" >/dev/null
wait_until 120 answering || fail "Agent Zero never answered on 7860: $("${PODMAN[@]}" logs --tail 30 "$NAME" 2>&1)"
wait_until 60 cli list || fail "the daemon never answered on its socket"
"${PODMAN[@]}" exec "$NAME" argus-supervisor qualify --home /a0/usr/argus-supervisor --allow-insecure-loopback \
  --write-campaign qualification-test --message "harmless: say hello" >/dev/null 2>&1 || fail "qualify (Argus run)"
cli observe u1 --objective "make the evaluation pass" | grep -q "observe: done" || fail "observe u1"
cli claim u1 | grep -q "claim: done" || fail "claim u1"
cli submit u1 --message "attempt 1" | grep -q "submit: done" || fail "submit u1"
pid="$(pid_of "$NAME")"
seen="$DOUBLES/seen"; : > "$seen"
# Every process of the container, sampled through the run: a process that lives only while Argus
# decides is seen too (in a container, a process that double-forks is adopted by its PID 1).
sample() {
  for p in $(descendants "$pid"); do
    printf '%s %s %s\n' "$p" "$(uids "$p")" \
      "$(tr '\0' ' ' </proc/"$p"/cmdline 2>/dev/null | cut -c1-120)" >> "$seen"
  done
}
closed() { sample; [ "$(cli show u1 --json 2>/dev/null | jq -r .state)" = closed.accepted ]; }
wait_until 240 closed || fail "Argus never saw u1 through: $(cli show u1 2>&1 | head -20)"
grep -q "argus-plugin-server" "$seen" || fail "the Argus runtime was never seen running"
grep -q "argus_skill.daemon" "$seen" || fail "the Argus daemon was never seen among the container's processes"
strangers="$(awk '$2 != "" && $2 != "1000100010001000"' "$seen" | sort -u)"
[ -z "$strangers" ] || fail "processes not UID 1000: $strangers"
turns="$("${PODMAN[@]}" exec "$NAME" sh -c 'wc -l < /a0/tmp/standin/calls.jsonl' 2>/dev/null || echo 0)"
[ "$turns" -ge 1 ] || fail "Argus's model was never asked"
asked="$(wc -l < "$DOUBLES/foreman/requests.jsonl" 2>/dev/null || echo 0)"
[ "$asked" -ge 1 ] || fail "Foreman's model was never asked"
[ -d "$USR/argus-supervisor/argus-home" ] || fail "Argus's home is not under /a0/usr"
only_written_in_a0 "$NAME" '^C /opt$|^A /opt/doubles$'  # this check's own mount point
owned_by_1000 "$USR"
echo "   $(cut -d' ' -f1 "$seen" | sort -u | wc -l) process(es) seen, all UID 1000; Argus's model asked $turns time(s), Foreman's $asked"

echo "-- §25's report of this deployment, from its own health"
cli observe u2 --objective "watch the heartbeat" | grep -q "observe: done" || fail "observe u2"
ticking() { [ "$(cli show u2 --json 2>/dev/null | jq -r .state)" != null ] && smoke >/dev/null 2>&1; }
wait_until 30 ticking || fail "the smoke failed with u2 ticking: $(smoke 2>&1)"
# With the write phase, as for the whole report: a read-only run would be the card's latest
# qualification, and writes would wait for another.
report="$("${PODMAN[@]}" exec "$NAME" argus-supervisor qualify --home /a0/usr/argus-supervisor \
  --allow-insecure-loopback --write-campaign qualification-test --message "harmless: say hello" \
  --deployment unix:/a0/usr/argus-supervisor/api.sock 2>&1)" || fail "qualify --deployment: $report"
for row in \
  "| /health SHA match | yes |" \
  "| Argus installed (version, wheel pin) | argus-skill 0.1.2, wheel sha256 " \
  "| Argus executable | /opt/venv-argus/bin/argus-plugin-server |" \
  "| Argus persistent state root (its home) | /a0/usr/argus-supervisor/argus-home |" \
  "| Argus backend configuration source | claude (from environment) |" \
  "| Foreman installed | foreman-core 0.5.1, wheel sha256 " \
  "| Foreman integration mode | advisory gate: " \
  "| Heartbeat cadence | every 1 s per supervised campaign |" \
  "| State root | /a0/usr/argus-supervisor |"; do
  grep -qF -- "$row" <<<"$report" || fail "the report lacks \"$row\": $(sed -n '/## Deployment/,$p' <<<"$report")"
done
grep -Eq '^\| No-model fast path \| [0-9]+ heartbeat ticks decided by the state machine alone; Argus \(the one model\) woken [0-9]+ times' <<<"$report" \
  || fail "no no-model proof: $(grep 'No-model' <<<"$report")"

echo "-- the §20 smoke: passes, then fails once per check broken on purpose, on that check only"
# fails_only CHECK… -- COMMAND…: with COMMAND's break in place, the smoke fails on exactly CHECK….
fails_only() {
  local want="$1"; shift
  local said
  said="$("$@" 2>&1)" && fail "the smoke passed with $want broken: $said"
  [ "$(grep '^FAIL' <<<"$said" | awk '{print $2}' | tr -d ':' | xargs)" = "$want" ] \
    || fail "broken: $want; the smoke failed on: $said"
}
ex() { "${PODMAN[@]}" exec "$NAME" sh -c "$1"; }
PLUGIN=/a0/usr/plugins/argus_supervisor
smoke >/dev/null || fail "the smoke failed before anything was broken: $(smoke 2>&1)"
ex "touch $PLUGIN/.toggle-0"
fails_only "plugin_loaded profile_discoverable" smoke   # the profile comes with the plugin
ex "rm $PLUGIN/.toggle-0"
ex "mv $PLUGIN/agents/argus-supervisor/agent.yaml $PLUGIN/agents/argus-supervisor/agent.off"
fails_only profile_discoverable smoke
ex "mv $PLUGIN/agents/argus-supervisor/agent.off $PLUGIN/agents/argus-supervisor/agent.yaml"
fails_only argus_runtime "${PODMAN[@]}" exec -w /a0 -e ARGUS_SUPERVISOR_ARGUS_BIN=/no-such-runtime "$NAME" \
  python -m usr.plugins.argus_supervisor.helpers.smoke
ex 'echo "oops $(cat /a0/usr/argus-supervisor/api-token)" >> /a0/usr/argus-supervisor/daemon.log'
fails_only secret_masking smoke
# The line taken out again in place (the daemon keeps the file open).
ex 'grep -v "^oops " /a0/usr/argus-supervisor/daemon.log > /a0/tmp/log.kept; cat /a0/tmp/log.kept > /a0/usr/argus-supervisor/daemon.log; rm /a0/tmp/log.kept'
ex "chmod 666 /a0/usr/argus-supervisor/api.sock"
fails_only no_second_listener smoke
ex "chmod 600 /a0/usr/argus-supervisor/api.sock"
daemon=""
for p in $(descendants "$(pid_of "$NAME")"); do
  tr '\0' ' ' </proc/"$p"/cmdline 2>/dev/null | grep -q 'argus-supervisor serve ' && daemon="$p"
done
[ -n "$daemon" ] || fail "the daemon's process was not found"
kill -STOP "$daemon"
fails_only heartbeat smoke
kill -CONT "$daemon"
wait_until 30 smoke || fail "the smoke did not pass again once the daemon ran: $(smoke 2>&1)"
rm_containers "$BASE_NAME-sim2"
fails_only capability_probe smoke
echo "   every check passed, and each of the seven failed alone when broken"
echo "-- the OpenOperator image: all checks passed"
