#!/usr/bin/env bash
# Quick edit-compile-run loop for a few test files, without building the whole kccl_tests:
#   scripts/dev_test.sh tests/ipcq/queue_test.cpp [more.cpp ...] [-- catch2 args]
# Builds build/dev/<first file's stem> with the project's include paths (-O1 -g1, ccache when
# present) and runs it. Set DEV_FLAGS to add flags (e.g. DEV_FLAGS=-fsanitize=thread).
set -euo pipefail
cd "$(dirname "$0")/.."
srcs=()
while [[ $# -gt 0 && "$1" != "--" ]]; do srcs+=("$1"); shift; done
[[ "${1:-}" == "--" ]] && shift
if [[ ${#srcs[@]} -eq 0 ]]; then echo "usage: scripts/dev_test.sh test.cpp [...] [-- catch2 args]" >&2; exit 2; fi
mkdir -p build/dev
out="build/dev/$(basename "${srcs[0]}" .cpp)"
cc=(g++)
command -v ccache >/dev/null && cc=(ccache g++)
objs=()
for s in tests/main.cpp "${srcs[@]}"; do
  o="build/dev/$(echo "$s" | tr '/' '_').o"
  "${cc[@]}" -std=c++20 -O1 -g1 -Wall -Wextra ${DEV_FLAGS:-} -Iinclude -Iemulation/include -I. -Itests -Itesting/include -c "$s" -o "$o"
  objs+=("$o")
done
g++ ${DEV_FLAGS:-} "${objs[@]}" -o "$out" -lpthread -latomic
exec "$out" "$@"
