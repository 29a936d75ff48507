#!/usr/bin/env bash
# scripts/consumer_test.sh — build and run a downstream project that uses kccl.
#
#   scripts/consumer_test.sh find_package     [--work DIR]
#   scripts/consumer_test.sh add_subdirectory [--work DIR]
#
# find_package:     configures this source tree with tests/examples/benchmarks OFF and
#                   KCCL_INSTALL=ON, installs it into DIR/prefix, checks the installed layout,
#                   compiles every ```cpp block of README.md, docs/host-api.md and docs/tutorial.md
#                   against the installed headers (scripts/doc_snippets.py; -fsyntax-only),
#                   then configures tests/consumer/find_package with CMAKE_PREFIX_PATH=DIR/prefix,
#                   builds it and runs it; then copies the installed examples
#                   (share/doc/kccl/examples: examples/*/ with examples/package/CMakeLists.txt on
#                   top, the tutorial of docs/tutorial.md among them), builds them the same way at
#                   -O0 and runs their tests (ctest).
# add_subdirectory: configures tests/consumer/add_subdirectory with KCCL_SOURCE_DIR=<this tree>,
#                   builds it and runs it.
# DIR (default: a temporary directory, removed afterwards) is wiped first. Uses ${CMAKE:-cmake};
# the compiler is CMake's usual choice (honours CXX), the generator honours CMAKE_GENERATOR.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CMAKE=${CMAKE:-cmake}

MODE=${1:-}
shift || true
WORK=""
while [ $# -gt 0 ]; do
    case "$1" in
        --work) WORK=${2:?--work needs a directory}; shift 2 ;;
        --work=*) WORK=${1#--work=}; shift ;;
        *) echo "consumer_test: unknown argument '$1'" >&2; exit 2 ;;
    esac
done
case "$MODE" in
    find_package | add_subdirectory) ;;
    -h | --help | "") sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; [ -n "$MODE" ]; exit ;;
    *) echo "consumer_test: unknown mode '$MODE' (find_package or add_subdirectory)" >&2; exit 2 ;;
esac

if [ -z "$WORK" ]; then
    WORK=$(mktemp -d "${TMPDIR:-/tmp}/kccl-consumer.XXXXXX")
    trap 'rm -rf "$WORK"' EXIT
else
    rm -rf "$WORK"
    mkdir -p "$WORK"
    WORK=$(cd "$WORK" && pwd)
fi

step() { echo "consumer_test[$MODE]: $*"; }
fail() { echo "consumer_test[$MODE]: FAIL: $*" >&2; exit 1; }
run() { echo "+ $*"; "$@"; }

# Build type only matters for the consumer program; keep it quick.
COMMON=(-DCMAKE_BUILD_TYPE=Release)

case "$MODE" in
    find_package)
        step "install kccl from $ROOT into $WORK/prefix"
        run "$CMAKE" -S "$ROOT" -B "$WORK/kccl-build" "${COMMON[@]}" \
            -DKCCL_BUILD_TESTS=OFF -DKCCL_BUILD_EXAMPLES=OFF -DKCCL_BUILD_BENCHMARKS=OFF \
            -DKCCL_INSTALL=ON -DCMAKE_INSTALL_PREFIX="$WORK/prefix" >"$WORK/kccl-configure.log" ||
            { cat "$WORK/kccl-configure.log"; fail "configuring kccl for install"; }
        run "$CMAKE" --build "$WORK/kccl-build" >/dev/null || fail "building kccl"
        run "$CMAKE" --install "$WORK/kccl-build" >"$WORK/kccl-install.log" ||
            { cat "$WORK/kccl-install.log"; fail "installing kccl"; }
        for f in include/kccl/hal/contract.hpp include/kccl/hal/config.hpp include/kccl/hal/tt_metal.hpp \
                 share/cmake/kccl/kcclConfig.cmake share/cmake/kccl/kcclConfigVersion.cmake \
                 share/cmake/kccl/kcclTargets.cmake; do
            [ -f "$WORK/prefix/$f" ] || fail "installed tree lacks $f"
        done
        if [ -d "$ROOT/emulation/include" ]; then
            while IFS= read -r h; do
                [ -f "$WORK/prefix/include/kccl/${h#"$ROOT"/emulation/include/}" ] ||
                    fail "installed tree lacks emulation header ${h#"$ROOT"/}"
            done < <(find "$ROOT/emulation/include" -type f \( -name '*.hpp' -o -name '*.h' \))
        fi
        step "installed $(find "$WORK/prefix" -type f | wc -l) files"
        step "every \`\`\`cpp block of README.md, docs/host-api.md and docs/tutorial.md against the installed headers"
        command -v python3 >/dev/null || fail "python3 is needed for scripts/doc_snippets.py (scripts/deps.sh test installs it)"
        run python3 "$ROOT/scripts/doc_snippets.py" --include "$WORK/prefix/include/kccl" --out "$WORK/doc-snippets" -j 2 ||
            fail "a code block of the docs does not compile against the installed package (above)"
        step "configure, build and run tests/consumer/find_package"
        run "$CMAKE" -S "$ROOT/tests/consumer/find_package" -B "$WORK/consumer-build" "${COMMON[@]}" \
            -DCMAKE_PREFIX_PATH="$WORK/prefix" -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON ||
            fail "configuring the find_package consumer"
        ;;
    add_subdirectory)
        step "configure, build and run tests/consumer/add_subdirectory with kccl from $ROOT"
        run "$CMAKE" -S "$ROOT/tests/consumer/add_subdirectory" -B "$WORK/consumer-build" "${COMMON[@]}" \
            -DKCCL_SOURCE_DIR="$ROOT" || fail "configuring the add_subdirectory consumer"
        ;;
esac

if [ "$MODE" = find_package ]; then
    found=$(sed -n 's/^kccl_DIR:PATH=//p' "$WORK/consumer-build/CMakeCache.txt")
    [ "$found" = "$WORK/prefix/share/cmake/kccl" ] ||
        fail "find_package(kccl) found '$found', not the package just installed in $WORK/prefix"
fi
run "$CMAKE" --build "$WORK/consumer-build" || fail "building the consumer"
run "$WORK/consumer-build/kccl_consumer" || fail "the consumer program failed"
if [ "$MODE" = find_package ]; then
    # The installed examples (share/doc/kccl/examples: ring_ping, pipeline, the kernel-only
    # examples instantiated on the emulation, and the tutorial's project of docs/tutorial.md) as a
    # user builds them: a copy of the folder against the package just installed. Built at -O0 with
    # no debug info (CMAKE_BUILD_TYPE empty: the quickest compile); the runs are short.
    EXAMPLES="$WORK/prefix/share/doc/kccl/examples"
    [ -f "$EXAMPLES/CMakeLists.txt" ] || fail "installed tree lacks share/doc/kccl/examples/CMakeLists.txt"
    for d in "$ROOT"/examples/*/; do
        d=$(basename "$d")
        [ "$d" = package ] || [ -d "$EXAMPLES/$d" ] || fail "installed tree lacks the example $d (share/doc/kccl/examples/$d)"
    done
    step "copy, configure, build and test the installed examples against the installed package"
    cp -R "$EXAMPLES" "$WORK/examples-src"
    run "$CMAKE" -S "$WORK/examples-src" -B "$WORK/examples-build" -DCMAKE_BUILD_TYPE= \
        -DCMAKE_PREFIX_PATH="$WORK/prefix" -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON ||
        fail "configuring the installed examples"
    run "$CMAKE" --build "$WORK/examples-build" -j2 || fail "building the installed examples"
    CTEST=${CTEST:-$(dirname "$(command -v "$CMAKE")")/ctest}
    (cd "$WORK/examples-build" && run "$CTEST" --output-on-failure --no-tests=error) || fail "the installed examples' tests failed"
fi
step "PASS"
