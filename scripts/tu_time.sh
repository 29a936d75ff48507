#!/usr/bin/env bash
# scripts/tu_time.sh — a compiler launcher that records what each translation unit costs.
#
#   cmake --preset default -DCMAKE_CXX_COMPILER_LAUNCHER="$PWD/scripts/tu_time.sh"
#   TU_TIME_LOG=/tmp/tu.log cmake --build --preset default -j2
#   sort -k2 -rn /tmp/tu.log | head                       # the costliest files by user CPU
#   awk '{s += $2 + $3} END {print s}' /tmp/tu.log        # summed CPU seconds of the build
#
# Appends one line per compile to $TU_TIME_LOG (default /tmp/tu_time.log):
#   <wall s> <user s> <sys s> <max RSS KB> <object file>
# CPU time (user + sys) is the figure to compare on a shared machine: wall time grows with the load.
# An explicit launcher replaces ccache (cmake/ccache.cmake), so every file is compiled cold.
[ -x /usr/bin/time ] || { echo "tu_time.sh: needs GNU time as /usr/bin/time (apt-get install time)" >&2; exit 2; }
out=?
prev=
for a in "$@"; do
    [ "$prev" = -o ] && out=$a
    prev=$a
done
exec /usr/bin/time -a -o "${TU_TIME_LOG:-/tmp/tu_time.log}" -f "%e %U %S %M $out" "$@"
