# What both image checks (standalone.sh, openoperator.sh) share: how podman runs here, waiting,
# and judging a container's processes and files from outside. Sourced, not run.

# runc, and cgroupfs: crun and systemd's cgroups are refused on this kind of machine; rlimits within
# the current hard limits (no CAP_SYS_RESOURCE here).
PODMAN=(podman --runtime runc --cgroup-manager cgroupfs)
# --health-interval disable: no systemd to time it here; the checks run an image's HEALTHCHECK by
# hand (podman still says, on stderr, that it found no systemd: filtered out below).
RUN=(run --network host --ulimit nofile=1024:20000 --ulimit nproc=4096:4096 --health-interval disable)
exec 2> >(grep --line-buffered -v "unable to get systemd connection" >&2)

fail() { echo "FAIL: $*" >&2; exit 1; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# wait_until SECONDS COMMAND…: retries COMMAND until it succeeds; fails after SECONDS.
wait_until() {
  local end=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do
    [ "$SECONDS" -lt "$end" ] || return 1
    sleep 0.3
  done
}
# rm_containers NAME…: one at a time (podman 4.3, given a name already gone among others, removes
# none of them), with their anonymous volumes.
rm_containers() {
  for c in "$@"; do "${PODMAN[@]}" rm -f -v -t 0 "$c" >/dev/null 2>&1 || true; done
}
# The container's main process on this machine.
pid_of() { "${PODMAN[@]}" inspect --format '{{.State.Pid}}' "$1"; }
# descendants PID: PID and every process below it.
descendants() {
  local p="$1"; echo "$p"
  for child in $(cat /proc/"$p"/task/*/children 2>/dev/null); do descendants "$child"; done
}
# uids PID: its real, effective, saved and filesystem UIDs run together (1000100010001000 for 1000).
uids() { awk '/^Uid:/ {print $2 $3 $4 $5}' /proc/"$1"/status 2>/dev/null || true; }
# all_uid_1000 PID: fails on any process below PID not wholly UID 1000; WALKED says how many it saw.
all_uid_1000() {
  WALKED=0
  for p in $(descendants "$1"); do
    WALKED=$((WALKED + 1))
    local uid; uid="$(uids "$p")"
    [ -z "$uid" ] || [ "$uid" = 1000100010001000 ] || fail "process $p ($(tr '\0' ' ' </proc/"$p"/cmdline)) runs as $uid"
  done
}
# owned_by_1000 DIR: fails on any path under DIR that UID 1000 does not own.
owned_by_1000() {
  local foreign; foreign="$(find "$1" ! -uid 1000 -print)"
  [ -z "$foreign" ] || fail "files not owned by 1000 in $1: $foreign"
}
# only_written_in_a0 CONTAINER [EXTRA]: fails when `podman diff` shows a path outside /a0/usr (a
# volume, not in the diff), /a0/tmp and /a0/logs. The runtime's own mount points (/etc's files,
# /a0/usr) change their directories; EXTRA (a regex) allows a check's own mounts.
only_written_in_a0() {
  local allowed='^C /a0$|^C /etc$|^[ACD] /a0/(tmp|logs)(/|$)'
  [ -z "${2:-}" ] || allowed="$allowed|$2"
  local outside; outside="$("${PODMAN[@]}" diff "$1" | grep -Ev "$allowed" || true)"
  [ -z "$outside" ] || fail "written outside /a0/usr, /a0/tmp and /a0/logs: $outside"
}
