# Sourced by scripts/check: installs run in the background while the CPU-bound steps run,
# each awaited where its check needs it. `background NAME COMMAND...` starts COMMAND
# niced, in a process group of its own, its output kept in a log; `awaited NAME [LIMIT]`
# waits for it (at most LIMIT seconds from then: niced, a job may have had little of the
# CPU until now) and shows that log, and a job that failed or ran out of time fails the
# check there, its log shown whole. `alongside NAME COMMAND...` is `background` at full
# priority, for a check run beside another step (niced, its own timeouts could expire
# while the other takes the CPU). Whatever is still running when the check exits
# (passed, failed or interrupted) is stopped, its whole process group.
_background_logs=$(mktemp -d "${TMPDIR:-/tmp}/streamscope-check.XXXXXX")
declare -A _background_pids=() _background_began=()
_background_stop() {
    local pid
    for pid in "${_background_pids[@]}"; do
        kill -TERM -- "-$pid" 2>/dev/null || true
    done
    for pid in "${_background_pids[@]}"; do
        wait "$pid" 2>/dev/null || true
    done
    rm -rf "$_background_logs"
}
trap _background_stop EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
background() {
    _started 10 "$@"
}
alongside() {
    _started 0 "$@"
}
_started() {
    local level=$1 name=$2
    shift 2
    set -m # its own process group, so that stopping it stops its children too
    nice -n "$level" "$@" >"$_background_logs/$name.log" 2>&1 </dev/null &
    _background_pids[$name]=$!
    _background_began[$name]=$(date +%s)
    set +m
}
awaited() {
    local name=$1 limit=${2:-} status=0 began=$SECONDS pid=${_background_pids[$1]}
    while [ -n "$limit" ] && kill -0 "$pid" 2>/dev/null; do
        if [ $((SECONDS - began)) -ge "$limit" ]; then
            kill -TERM -- "-$pid" 2>/dev/null || true
            echo "scripts/check: $name (in the background) not done $limit s after it was needed" >&2
            break
        fi
        sleep 1
    done
    wait "$pid" || status=$?
    unset "_background_pids[$name]"
    cat "$_background_logs/$name.log"
    if [ "$status" != 0 ]; then
        echo "scripts/check: $name (in the background) failed, exit $status; its output is above" >&2
        exit "$status"
    fi
    # (how long it ran: until it last wrote to its log; GNU stat, else until now)
    local ended
    ended=$(stat -c %Y "$_background_logs/$name.log" 2>/dev/null || date +%s)
    local ran=$((ended - _background_began[$name]))
    echo "($name: done in about $ran s in the background, waited $((SECONDS - began)) s for it)"
}
# `beside NAME COMMAND...` starts COMMAND at full priority with its output dropped, for
# work whose only effect is what it leaves on disk for a later step; `finished NAME` waits
# for it, whatever its exit status (that later step reports the failure). It is stopped
# with the others if the check ends first.
beside() {
    local name=$1
    shift
    set -m
    "$@" >/dev/null 2>&1 </dev/null &
    _background_pids[$name]=$!
    set +m
}
finished() {
    wait "${_background_pids[$1]}" || true
    unset "_background_pids[$1]"
}
