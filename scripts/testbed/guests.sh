# shellcheck shell=bash
# What the one- and two-guest beds share (sourced by scripts/rdma-testbed and
# scripts/testbed/two-host-bed). A guest's qemu runs under timeout(1), which puts the two in a
# process group of their own, and carries wzrun=RUN (the run directory, unique per run) on its
# kernel command line.
#   show_guest_log PID LOG [PREFIX]  -> LOG's lines from the start, firmware and blank lines left
#       out, each after PREFIX (plain text, no sed metacharacters), on stdout until process PID
#       (the guest's timeout) has exited
#   stop_background RUN              -> SIGTERM to each background job of the calling script (a
#       guest's process group, a log viewer) and to every process carrying RUN's marker, repeated
#       every 0.1 s while a job is left, for at most 5 s
#
# No pipeline in a script that sets traps may have an element that can outlive the guest,
# foreground or background: bash 5.2 runs a pending trap between the processes of a pipeline it
# is starting, and the trap's first command then waits for the processes started so far. So a
# viewer is one background command (`show_guest_log ... &`) whose pipeline runs in its own
# subshell, where the script's traps are not set.
show_guest_log() {
  local pid=$1 log=$2 prefix=${3:-}
  tail -n +1 -f --pid="$pid" "$log" | sed -u 's/\r//g' |
    grep --line-buffered -v -e '^\s*$' -e SeaBIOS -e 'Booting from' -e '^iPXE' -e 'WZTB: root ready' \
      -e 'reboot: Power down' | sed -u "s/^/$prefix/"
}

# A trap can run just after a guest was forked: before the script has read its pid from $!, and
# before the child has become timeout(1). Until then the child is in no process group of its own,
# carries no marker and holds the signal off, so one SIGTERM can miss it. `jobs -p` knows its pid
# from the fork on, and the signal is repeated until it is gone; timeout(1) passes it on to qemu.
stop_background() {
  local marker pids alive p i
  marker="wzrun=$(printf '%s' "$1" | sed 's/[][\.*^$+?(){}|]/\\&/g')( |\$)"  # the path, taken literally
  for ((i = 0; i < 50; i++)); do
    pids=$(jobs -p) alive=""
    for p in $pids; do ! kill -0 "$p" 2>/dev/null || alive+=" $p"; done
    [[ -n $alive ]] || return 0
    for p in $alive; do kill -TERM -- "-$p" 2>/dev/null || kill -TERM "$p" 2>/dev/null || true; done
    pkill -TERM -f -- "$marker" 2>/dev/null || (($? == 1)) || echo "rdma-testbed: pkill failed; a guest may be left" >&2
    sleep 0.1
  done
  echo "rdma-testbed: background processes$alive still running after 5 s" >&2
}
