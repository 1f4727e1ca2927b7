# bench/lib/ticks.sh - the benchmarks' CPU reading, sourced by their shell scripts:
#   . "$(dirname "$0")/../lib/ticks.sh"
#
#   ticks <pid>        user + system CPU of the process so far, in clock ticks (getconf CLK_TCK; 1/100 s on
#                      Linux), from fields 14 and 15 of /proc/<pid>/stat; fails when the process is gone
#   ticks_or_0 <pid>   the same, or 0 when the process is gone

ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
ticks_or_0() { ticks "$1" 2>/dev/null || echo 0; }
