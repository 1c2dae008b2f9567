# shellcheck shell=bash
# What the one- and two-guest beds share (sourced by scripts/rdma-testbed and
# scripts/testbed/two-host-bed). A guest's qemu runs under timeout(1), which makes a process group
# of the two, and carries wzrun=RUN (the run directory, unique per run) on its kernel command line.
#   show_guest_log PID LOG [PREFIX]  -> LOG's lines from the start, firmware and blank lines left
#       out, each after PREFIX, on stderr until process PID (the guest's timeout) has exited
#   stop_run_guests RUN              -> SIGTERM to every guest of run RUN, found by the marker
#
# Start show_guest_log as one background command (`show_guest_log ... &`), never as a background
# pipeline in the script itself: bash 5.2 runs a pending trap between the processes of a pipeline
# it is starting, and a command in that trap then waits for the half-started pipeline, whose tail
# only ends with the guest, so a signal in that window would hang the script. The pipeline runs in
# the background command's own subshell, where the script's traps are not set.
show_guest_log() {
  local pid=$1 log=$2 prefix=${3:-}
  tail -n +1 -f --pid="$pid" "$log" | sed -u 's/\r//g' |
    grep --line-buffered -v -e '^\s*$' -e SeaBIOS -e 'Booting from' -e '^iPXE' -e 'WZTB: root ready' \
      -e 'reboot: Power down' | sed -u "s/^/$prefix/"
}

# A trap can run between `timeout qemu ... &` and the command that reads its pid from $!, so
# stopping the guests whose pids the script holds is not enough: this finds them by their marker.
# timeout passes the signal on to qemu.
stop_run_guests() {
  pkill -TERM -f -- "wzrun=$1( |\$)" 2>/dev/null || true
}
