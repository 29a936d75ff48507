#!/usr/bin/env bash
# scripts/check_headers.sh — every public header compiles on its own (self-contained, warning-free).
#
#   scripts/check_headers.sh [-j N]
#
# For each header, compiles a translation unit that includes only that header (twice, so a
# missing #pragma once / include guard also fails) with the host compiler ${CXX:-c++}:
#   include/**/*.{hpp,h}            -std=c++17 each alone, and -std=c++20 all of them in one
#                                   translation unit (the C++20 pass compiles the concept
#                                   spellings), -fno-exceptions -fno-rtti,
#                                   -I include -I tests/gate/stub/current -Wno-attributes (the
#                                   declaration-only tt-metal API in its current layout, so
#                                   hal/tt_metal.hpp resolves api/dataflow/dataflow_api.h; the stub's
#                                   tt_l1_ptr is an attribute only tt-metal's GCC knows; -DNOC_INDEX=0
#                                   -DKERNEL_BUILD as tt-metal's JIT always defines them)
#   include/**/host/*.{hpp,h}       host-side builders (may allocate and throw): -std=c++17,
#                                   -pedantic, exceptions on; not part of the rv32 shim gate
#   emulation/include/**/*.{hpp,h}  -std=c++20, -I include -I emulation/include
#   testing/include/**/*.{hpp,h}    kccl::testing (installed): -std=c++20, -I include
#                                   -I emulation/include -I testing/include (and Catch2 v2's
#                                   <catch2/catch.hpp> from the system, as its users have it)
# all with -fsyntax-only -Wall -Wextra -Werror, plus -pedantic for include/ (portable device code;
# the emulation is a GCC/Clang-on-Linux backend and may use extensions such as __int128 and
# __atomic builtins, which GCC's -pedantic rejects). Jobs run in parallel (-j, default: the
# number of CPUs). Prints PASS/FAIL per header and standard, with the diagnostics of failures;
# exits non-zero if any fails.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

COMMON=(-fsyntax-only -Wall -Wextra -Werror)

list_headers() {
    [ -d "$1" ] || return 0
    find "$1" -type f \( -name '*.hpp' -o -name '*.h' \) | LC_ALL=C sort
}

# Worker: check_headers.sh --one RESULT_DIR "INDEX SET STD HEADER"
if [ "${1:-}" = --one ]; then
    read -r idx set std header <<<"$3"
    read -ra cxx <<<"${CXX:-c++}"
    device_flags=(-std="$std" "${COMMON[@]}" -pedantic -fno-exceptions -fno-rtti -I include
                  -I tests/gate/stub/current -Wno-attributes -DNOC_INDEX=0 -DKERNEL_BUILD)
    case "$set" in
        device)
            rel=${header#include/}
            flags=("${device_flags[@]}") ;;
        device_all)
            flags=("${device_flags[@]}")
            if diag=$(list_headers include | grep -v '/host/' | sed 's|^include/\(.*\)|#include "\1"|' |
                          "${cxx[@]}" "${flags[@]}" -x c++ - 2>&1); then
                printf 'PASS  %-6s %s\n' "$std" "every device header in one translation unit" >"$2/$idx"
            else
                { printf 'FAIL  %-6s %s\n' "$std" "every device header in one translation unit"; sed 's/^/      /' <<<"$diag"; } >"$2/$idx"
            fi
            exit 0 ;;
        host)
            rel=${header#include/}
            flags=(-std="$std" "${COMMON[@]}" -pedantic -I include) ;;
        emulation)
            rel=${header#emulation/include/}
            flags=(-std="$std" "${COMMON[@]}" -I include -I emulation/include) ;;
        testing)
            rel=${header#testing/include/}
            flags=(-std="$std" "${COMMON[@]}" -I include -I emulation/include -I testing/include) ;;
        *) echo "check_headers: bad job '$3'" >&2; exit 2 ;;
    esac
    if diag=$(printf '#include "%s"\n#include "%s"\n' "$rel" "$rel" |
                  "${cxx[@]}" "${flags[@]}" -x c++ - 2>&1); then
        printf 'PASS  %-6s %s\n' "$std" "$header" >"$2/$idx"
    else
        { printf 'FAIL  %-6s %s\n' "$std" "$header"; sed 's/^/      /' <<<"$diag"; } >"$2/$idx"
    fi
    exit 0
fi

JOBS=$(nproc 2>/dev/null || echo 2)
while [ $# -gt 0 ]; do
    case "$1" in
        -j) JOBS=${2:?-j needs a number}; shift 2 ;;
        -j*) JOBS=${1#-j}; shift ;;
        -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "check_headers: unknown argument '$1' (try --help)" >&2; exit 2 ;;
    esac
done


jobs=()
n=0
mapfile -t device < <(list_headers include | grep -v '/host/' || true)
mapfile -t host < <(list_headers include | grep '/host/' || true)
mapfile -t emulation < <(list_headers emulation/include)
mapfile -t testing < <(list_headers testing/include)
for h in "${device[@]}"; do
    jobs+=("$n device c++17 $h"); n=$((n + 1))
done
# C++20: every device header in one translation unit (their C++20 spellings; each alone is
# checked at C++17 above, where self-containment and the include guard are the same question).
jobs+=("$n device_all c++20 -"); n=$((n + 1))
for h in "${host[@]}"; do
    [ -n "$h" ] || continue
    jobs+=("$n host c++17 $h"); n=$((n + 1))
done
for h in "${emulation[@]}"; do
    jobs+=("$n emulation c++20 $h"); n=$((n + 1))
done
for h in "${testing[@]}"; do
    [ -n "$h" ] || continue
    jobs+=("$n testing c++20 $h"); n=$((n + 1))
done
[ "$n" -gt 0 ] || { echo "check_headers: FAIL: no headers found under include/" >&2; exit 1; }
[ ${#emulation[@]} -gt 0 ] || echo "check_headers: note: no headers under emulation/include (skipped)"

for h in "${device[@]}" "${emulation[@]}" "${testing[@]}"; do
    case "$h" in *\ *) echo "check_headers: FAIL: header path with a space: '$h'" >&2; exit 1 ;; esac
done

RESULTS=$(mktemp -d "${TMPDIR:-/tmp}/kccl-check-headers.XXXXXX")
trap 'rm -rf "$RESULTS"' EXIT

echo "check_headers: ${#device[@]} device headers (c++17, c++20) + ${#emulation[@]} emulation headers (c++20) + ${#testing[@]} testing headers (c++20) with ${CXX:-c++}, $JOBS jobs"
printf '%s\n' "${jobs[@]}" | xargs -d '\n' -n 1 -P "$JOBS" bash "$0" --one "$RESULTS"

failed=0
for ((i = 0; i < n; i++)); do
    if [ ! -f "$RESULTS/$i" ]; then
        echo "FAIL  (no result for job: ${jobs[$i]})"
        failed=$((failed + 1))
        continue
    fi
    cat "$RESULTS/$i"
    grep -q '^FAIL' "$RESULTS/$i" && failed=$((failed + 1))
done

if [ "$failed" -gt 0 ]; then
    echo "check_headers: FAIL: $failed of $n header compilations failed"
    exit 1
fi
echo "check_headers: PASS: all $n header compilations"
