#!/usr/bin/env bash
# scripts/compile_fail.sh — must-not-compile checks for the collectives' compile-time rules.
#
#   scripts/compile_fail.sh [DIR]     (default tests/collectives/compile_fail)
#
# Each DIR/*.cpp starts with `// expect: <text>`. An empty <text> marks a control that must
# compile (proves the harness's flags and include paths work); otherwise the file must FAIL to
# compile and the compiler's output must contain <text> (the static_assert's sentence), so a file
# that fails for another reason (a typo, a missing include) does not count as a pass.
# Compiler: ${CXX:-c++}, -std=c++17 -fsyntax-only -fno-exceptions -fno-rtti -I include.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
dir=${1:-tests/collectives/compile_fail}
read -ra cxx <<<"${CXX:-c++}"
fail=0; n=0
for f in "$dir"/*.cpp; do
    n=$((n + 1))
    expect=$(sed -n '1s|^// expect: \{0,1\}||p' "$f")
    out=$("${cxx[@]}" -std=c++17 -fsyntax-only -fno-exceptions -fno-rtti -Wall -Wextra -I include "$f" 2>&1)
    rc=$?
    if [ -z "$expect" ]; then
        if [ $rc -eq 0 ]; then echo "PASS (compiles)   $f"; else echo "FAIL (control did not compile) $f"; echo "$out" | head -20; fail=1; fi
    elif [ $rc -eq 0 ]; then
        echo "FAIL (compiled, must not) $f"; fail=1
    elif grep -qF -- "$expect" <<<"$out"; then
        echo "PASS (rejected)   $f"
    else
        echo "FAIL (rejected without \"$expect\") $f"; echo "$out" | grep -m5 error; fail=1
    fi
done
[ $n -gt 0 ] || { echo "no cases in $dir"; exit 1; }
exit $fail
