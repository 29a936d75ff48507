#!/usr/bin/env bash
# scripts/shim_gate.sh — compile kccl's device code for the tt-metal RISC-V cores and reject
# anything a kernel cannot have. See docs/hardware-shim.md.
#
#   scripts/shim_gate.sh [--out DIR] [-v]         run the gate
#   scripts/shim_gate.sh --self-test [--out DIR]  prove the checker rejects known-bad code
#
# The gate compiles, for rv32im/ilp32 with freestanding flags (-fno-exceptions -fno-rtti
# -fno-use-cxa-atexit -Os, picolibc, libstdc++ headers only), against the declaration-only
# tt-metal stub in tests/gate/stub/:
#   * tests/gate/gate.cpp, which includes hal/tt_metal.hpp, a generated header that #includes
#     EVERY header under include/ (globbed now, so new headers are picked up), and instantiates a
#     kernel calling every contract operation on kccl::hal::TtMetal;
#   * every examples/*/*_kernels.hpp, each in its own generated TU that calls the header's
#     optional `template <class H> void kccl_gate_instantiate(H&)` with a TtMetal.
# Each object must then be free of heap (operator new/delete, malloc & co), exception, RTTI and
# static-initialisation symbols, with empty .init_array/.fini_array/.ctors/.dtors sections; and
# gate.o must reference every tt-metal function the shim maps to (proof each member compiled).
#
# Environment:
#   KCCL_GATE_TOOLPREFIX   toolchain prefix (default riscv64-unknown-elf-)
#   KCCL_GATE_LIBSTDCXX    libstdc++ header directory (default: newest
#                          /usr/lib/arm-none-eabi/include/c++/<version>)
#   KCCL_GATE_SKIP_MISSING_TOOLCHAIN=1   exit 77 (ctest: skipped) instead of failing when the
#                          toolchain is not installed
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

MODE=gate
OUT=""
VERBOSE=0
while [ $# -gt 0 ]; do
    case "$1" in
        --out) OUT=${2:?--out needs a directory}; shift 2 ;;
        --out=*) OUT=${1#--out=}; shift ;;
        --self-test) MODE=selftest; shift ;;
        -v | --verbose) VERBOSE=1; shift ;;
        -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "shim_gate: unknown argument '$1' (try --help)" >&2; exit 2 ;;
    esac
done

if [ -z "$OUT" ]; then
    OUT=$(mktemp -d "${TMPDIR:-/tmp}/kccl-shim-gate.XXXXXX")
    trap 'rm -rf "$OUT"' EXIT
else
    rm -rf "$OUT"
    mkdir -p "$OUT"
    OUT=$(cd "$OUT" && pwd)
fi

fail() { echo "shim_gate: FAIL: $*" >&2; exit 1; }

# --- toolchain ---------------------------------------------------------------------------------
PREFIX=${KCCL_GATE_TOOLPREFIX:-riscv64-unknown-elf-}
RV_CXX=${PREFIX}g++
RV_NM=${PREFIX}nm
RV_OBJDUMP=${PREFIX}objdump
INSTALL_HINT="install it with: sudo apt-get install gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf libstdc++-arm-none-eabi-dev"

missing_toolchain() {
    echo "shim_gate: FAIL: $1" >&2
    echo "shim_gate: the gate needs a bare-metal RISC-V GCC, picolibc and freestanding libstdc++ headers;" >&2
    echo "shim_gate: $INSTALL_HINT" >&2
    if [ "${KCCL_GATE_SKIP_MISSING_TOOLCHAIN:-0}" = 1 ]; then
        echo "shim_gate: SKIPPED (KCCL_GATE_SKIP_MISSING_TOOLCHAIN=1)" >&2
        exit 77
    fi
    exit 1
}

for tool in "$RV_CXX" "$RV_NM" "$RV_OBJDUMP"; do
    command -v "$tool" >/dev/null 2>&1 || missing_toolchain "'$tool' not found"
done
specs=$("$RV_CXX" -print-file-name=picolibc.specs)
[ -f "$specs" ] || missing_toolchain "picolibc.specs not found for $RV_CXX (package picolibc-riscv64-unknown-elf)"

LIBSTDCXX=${KCCL_GATE_LIBSTDCXX:-}
if [ -z "$LIBSTDCXX" ]; then
    LIBSTDCXX=$(find /usr/lib/arm-none-eabi/include/c++ -mindepth 2 -maxdepth 2 -name type_traits \
                    -printf '%h\n' 2>/dev/null | sort -V | tail -n 1)
fi
if [ -n "${KCCL_GATE_LIBSTDCXX:-}" ] && [ ! -f "$LIBSTDCXX/type_traits" ]; then
    missing_toolchain "KCCL_GATE_LIBSTDCXX=$LIBSTDCXX has no type_traits"
fi
[ -f "${LIBSTDCXX:-/nonexistent}/type_traits" ] ||
    missing_toolchain "no freestanding libstdc++ headers (looked for /usr/lib/arm-none-eabi/include/c++/*/type_traits; package libstdc++-arm-none-eabi-dev)"
[ -f "$LIBSTDCXX/arm-none-eabi/bits/c++config.h" ] ||
    missing_toolchain "$LIBSTDCXX/arm-none-eabi/bits/c++config.h not found"

FLAGS=(-march=rv32im -mabi=ilp32 --specs=picolibc.specs -std=c++17
       -fno-exceptions -fno-rtti -fno-use-cxa-atexit -Os -ffast-math
       -nostdinc++ -isystem "$LIBSTDCXX" -isystem "$LIBSTDCXX/arm-none-eabi"
       -Werror -Wall -Wextra -I "$ROOT/include" -I "$ROOT/tests/gate/stub")

# compile SRC OBJ [extra flags...]
compile() {
    local src=$1 obj=$2
    shift 2
    if [ "$VERBOSE" = 1 ]; then echo "+ $RV_CXX ${FLAGS[*]} $* -c $src -o $obj"; fi
    "$RV_CXX" "${FLAGS[@]}" "$@" -c "$src" -o "$obj"
}

# --- the checker -------------------------------------------------------------------------------
# classify SYMBOL -> prints "category|why" for a forbidden (mangled) symbol name, nothing if fine.
classify() {
    case "$1" in
        _Znw* | _Zna*) echo "heap|operator new: device cores have no heap" ;;
        _Zdl* | _Zda*) echo "heap|operator delete: device cores have no heap" ;;
        malloc | calloc | realloc | reallocarray | free | aligned_alloc | posix_memalign | memalign | \
            valloc | pvalloc | _malloc_r | _calloc_r | _realloc_r | _free_r)
            echo "heap|C allocator: device cores have no heap" ;;
        __cxa_throw | __cxa_rethrow | __cxa_allocate_exception | __cxa_free_exception | \
            __cxa_begin_catch | __cxa_end_catch | __cxa_get_exception_ptr | \
            __cxa_current_exception_type | __cxa_call_unexpected | __cxa_call_terminate | \
            __cxa_throw_bad_array_new_length)
            echo "exceptions|exception runtime: kernels are built with -fno-exceptions and link no unwinder" ;;
        __gxx_personality*) echo "exceptions|EH personality routine: kernels link no unwinder" ;;
        _Unwind_*) echo "exceptions|unwinder: kernels link no unwinder" ;;
        _ZTI*) echo "rtti|type_info object: kernels are built with -fno-rtti" ;;
        _ZTS*) echo "rtti|type_info name: kernels are built with -fno-rtti" ;;
        __dynamic_cast | __cxa_bad_cast | __cxa_bad_typeid)
            echo "rtti|RTTI runtime: kernels are built with -fno-rtti" ;;
        __cxa_atexit | atexit | __cxa_thread_atexit | __cxa_thread_atexit_impl | at_quick_exit)
            echo "static-init|destructor registration: kernels never exit, nothing runs registered destructors" ;;
        __cxa_guard_*) echo "static-init|guarded local static: dynamic initialisation of a function-local static" ;;
        _ZGV*) echo "static-init|guard variable: a static with dynamic initialisation" ;;
        _ZTH* | _ZTW*) echo "static-init|thread_local initialisation: kernels have no TLS runtime" ;;
        _GLOBAL__sub_I*) echo "static-init|global constructor: kernel start-up does not run .init_array" ;;
        _GLOBAL__sub_D*) echo "static-init|global destructor: kernels never run .fini_array" ;;
    esac
}

# classify_section NAME SIZE(hex) -> "category|why" for a forbidden non-empty section.
classify_section() {
    [ "$((16#$2))" -eq 0 ] && return 0
    case "$1" in
        .init_array* | .preinit_array* | .ctors*)
            echo "static-init|holds global constructors; kernel start-up does not run them" ;;
        .fini_array* | .dtors*) echo "static-init|holds global destructors; kernels never run them" ;;
        .gcc_except_table*) echo "exceptions|exception-handling tables; kernels are built with -fno-exceptions" ;;
    esac
}

# scan_symbols: reads `name type` lines on stdin, prints one finding per forbidden symbol.
scan_symbols() {
    local name type rest verdict
    while read -r name type rest; do
        [ -n "$name" ] || continue
        verdict=$(classify "$name")
        [ -n "$verdict" ] || continue
        if [ "$type" = U ]; then type=undefined; else type="defined, nm type $type"; fi
        echo "${verdict%%|*}: $name ($type) — ${verdict#*|}"
    done
}

# scan_object OBJ: prints every finding for OBJ (symbols, then sections); prints nothing if clean.
scan_object() {
    local obj=$1 sec size verdict
    "$RV_NM" -P "$obj" | scan_symbols
    while read -r sec size; do
        verdict=$(classify_section "$sec" "$size")
        [ -n "$verdict" ] || continue
        echo "${verdict%%|*}: section $sec ($((16#$size)) bytes) — ${verdict#*|}"
    done < <("$RV_OBJDUMP" -h "$obj" | awk '$1 ~ /^[0-9]+$/ { print $2, $3 }')
}

# tt-metal functions (and variables) each TtMetal member forwards to; gate.o must reference all.
REQUIRED_REFS=(my_x my_y get_noc_addr noc_async_write noc_async_read noc_async_write_barrier
               noc_async_atomic_barrier noc_async_read_barrier noc_async_writes_flushed
               noc_inline_dw_write noc_semaphore_inc noc_semaphore_set noc_semaphore_wait
               noc_semaphore_wait_min eth_send_packet internal_::eth_txq_is_busy run_routing
               get_arg_val)

check_required_refs() {
    local obj=$1 undefined ref missing=0
    undefined=$("$RV_NM" -C -u "$obj" | sed -E 's/^[[:space:]]*U[[:space:]]+//')
    for ref in "${REQUIRED_REFS[@]}"; do
        if ! grep -Eq "(^|[[:space:]])${ref}([(<]|$)" <<<"$undefined"; then
            echo "shim_gate: FAIL: $(basename "$obj") does not reference '$ref': the kccl::hal::TtMetal member mapping onto it was not compiled (or no longer calls it)" >&2
            missing=1
        fi
    done
    return $missing
}

# --- gate --------------------------------------------------------------------------------------
run_gate() {
    local start headers kernels h n=0 id findings bad=0 obj expect
    start=$(date +%s%N)

    # Host-side builders (include/**/host/) allocate and throw by design: not device code.
    mapfile -t headers < <(find include -type f \( -name '*.hpp' -o -name '*.h' \) -not -path '*/host/*' | LC_ALL=C sort)
    [ ${#headers[@]} -gt 0 ] || fail "no headers under include/"
    {
        echo "// Generated by scripts/shim_gate.sh: every header under include/. Do not edit."
        echo "#pragma once"
        for h in "${headers[@]}"; do echo "#include \"${h#include/}\""; done
    } >"$OUT/kccl_gate_all_headers.hpp"

    local objects=("$OUT/gate.o")
    compile tests/gate/gate.cpp "$OUT/gate.o" -I "$OUT" ||
        fail "tests/gate/gate.cpp (with ${#headers[@]} headers from include/) does not compile for rv32 (errors above)"
    local missing_refs=0
    check_required_refs "$OUT/gate.o" || missing_refs=1
    "$RV_NM" -P "$OUT/gate.o" | grep -Eq '^kernel_main T ' || fail "gate.o does not define kernel_main"

    mapfile -t kernels < <(find examples -mindepth 2 -maxdepth 2 -type f -name '*_kernels.hpp' 2>/dev/null | LC_ALL=C sort)
    mkdir -p "$OUT/kernels"
    for h in "${kernels[@]}"; do
        n=$((n + 1))
        id=$(echo "${h#examples/}" | sed -E 's/\.hpp$//; s/[^A-Za-z0-9]+/_/g')
        expect=0
        grep -q 'kccl_gate_instantiate' "$h" && expect=1
        {
            echo "// Generated by scripts/shim_gate.sh from $h. Do not edit."
            echo "#include \"hal/tt_metal.hpp\""
            echo "#include \"$ROOT/$h\""
            echo "#define KCCL_GATE_EXPECT_ENTRY $expect"
            echo "#include \"$ROOT/tests/gate/gate_entry.hpp\""
            echo "extern \"C\" void kccl_gate_$id() {"
            echo "    kccl::hal::TtMetal hal;"
            echo "    kccl_gate::run_entry(hal);"
            echo "}"
        } >"$OUT/kernels/$id.cpp"
        compile "$OUT/kernels/$id.cpp" "$OUT/kernels/$id.o" ||
            fail "$h does not compile for rv32 against kccl::hal::TtMetal (errors above; generated TU kernels/$id.cpp, kept with --out DIR)"
        objects+=("$OUT/kernels/$id.o")
        if [ "$expect" = 1 ]; then
            echo "shim_gate: $h: kccl_gate_instantiate<TtMetal> instantiated"
        else
            echo "shim_gate: $h: compiled (no kccl_gate_instantiate entry)"
        fi
    done

    for obj in "${objects[@]}"; do
        findings=$(scan_object "$obj")
        if [ -n "$findings" ]; then
            bad=1
            while IFS= read -r line; do echo "shim_gate: FAIL: ${obj#"$OUT"/}: $line" >&2; done <<<"$findings"
        fi
    done
    [ "$bad" = 0 ] || fail "device code needs runtime support kernels do not have (see above)"
    [ "$missing_refs" = 0 ] || fail "the shim no longer maps every contract operation onto tt-metal (see above)"

    printf 'shim_gate: PASS: %d headers under include/ + %d example kernel headers compiled for rv32 (%s); no heap/exceptions/RTTI/static-init; all %d tt-metal entry points referenced (%.1fs)\n' \
        "${#headers[@]}" "$n" "$("$RV_CXX" -dumpversion), libstdc++ ${LIBSTDCXX##*/}" "${#REQUIRED_REFS[@]}" \
        "$(awk -v a="$start" -v b="$(date +%s%N)" 'BEGIN { print (b - a) / 1e9 }')"
}

# --- self-test ---------------------------------------------------------------------------------
run_selftest() {
    local errors=0 sym want got src obj findings expect

    # 1. The classifier on synthetic symbol names: every forbidden family is caught, and names
    #    that merely look similar (or that kccl legitimately emits) are not.
    local -a forbidden=(
        "_Znwj heap" "_Znaj heap" "_ZnwjSt11align_val_t heap" "_ZdlPv heap" "_ZdlPvj heap" "_ZdaPv heap"
        "malloc heap" "calloc heap" "realloc heap" "free heap" "_malloc_r heap"
        "__cxa_throw exceptions" "__cxa_allocate_exception exceptions" "__cxa_begin_catch exceptions"
        "__cxa_end_catch exceptions" "__gxx_personality_v0 exceptions" "_Unwind_Resume exceptions"
        "_ZTIi rtti" "_ZTS4Node rtti" "__dynamic_cast rtti"
        "__cxa_atexit static-init" "atexit static-init" "__cxa_guard_acquire static-init"
        "__cxa_guard_release static-init" "_ZGVZ4mainE1x static-init"
        "_GLOBAL__sub_I_gate.cpp static-init" "_GLOBAL__sub_D_tracer static-init")
    local -a allowed=(kernel_main freelist my_malloc_pool _Z15noc_async_writemymh
                      _ZN4kccl3hal7TtMetal9noc_writeEmym _ZN4kccl6detail19assert_handler_slotEv
                      _ZZN4kccl6detail19assert_handler_slotEvE7handler _ZN4kccl3hal4ZnwjE)
    for pair in "${forbidden[@]}"; do
        sym=${pair% *}
        want=${pair#* }
        got=$(classify "$sym")
        got=${got%%|*}
        if [ "$got" != "$want" ]; then
            echo "shim_gate: self-test FAIL: classify '$sym' gave '${got:-<allowed>}', expected '$want'" >&2
            errors=$((errors + 1))
        fi
    done
    for sym in "${allowed[@]}"; do
        got=$(classify "$sym")
        if [ -n "$got" ]; then
            echo "shim_gate: self-test FAIL: classify '$sym' flagged it ('${got%%|*}'), expected allowed" >&2
            errors=$((errors + 1))
        fi
    done
    for pair in ".init_array 4 static-init" ".fini_array 4 static-init" ".ctors 8 static-init" \
                ".gcc_except_table 10 exceptions" ".init_array 0 " ".text 40 " ".sbss 4 "; do
        read -r sym size want <<<"$pair"
        got=$(classify_section "$sym" "$size")
        got=${got%%|*}
        if [ "$got" != "$want" ]; then
            echo "shim_gate: self-test FAIL: section '$sym' size 0x$size gave '${got:-<allowed>}', expected '${want:-<allowed>}'" >&2
            errors=$((errors + 1))
        fi
    done
    echo "shim_gate: self-test: classifier: ${#forbidden[@]} forbidden symbols, ${#allowed[@]} allowed symbols, 7 sections checked"

    # 2. End to end: each tests/gate/bad/*.cpp compiles under the gate's flags and is rejected
    #    with (at least) the findings its `// gate-expect:` lines name.
    local n=0
    mkdir -p "$OUT/bad"
    for src in tests/gate/bad/*.cpp; do
        [ -e "$src" ] || break
        n=$((n + 1))
        obj="$OUT/bad/$(basename "${src%.cpp}").o"
        if ! compile "$src" "$obj"; then
            echo "shim_gate: self-test FAIL: $src does not compile, so its rejection would prove nothing" >&2
            errors=$((errors + 1))
            continue
        fi
        findings=$(scan_object "$obj")
        if [ -z "$findings" ]; then
            echo "shim_gate: self-test FAIL: $src was ACCEPTED by the checker; it must be rejected" >&2
            errors=$((errors + 1))
            continue
        fi
        mapfile -t expect < <(sed -nE 's@^//[[:space:]]*gate-expect:[[:space:]]*(.*[^[:space:]])[[:space:]]*$@\1@p' "$src")
        if [ ${#expect[@]} -eq 0 ]; then
            echo "shim_gate: self-test FAIL: $src has no '// gate-expect: <finding>' line" >&2
            errors=$((errors + 1))
        fi
        for want in "${expect[@]}"; do
            if ! grep -Fq -- "$want" <<<"$findings"; then
                echo "shim_gate: self-test FAIL: $src: expected a finding containing '$want'; got:" >&2
                sed 's/^/    /' <<<"$findings" >&2
                errors=$((errors + 1))
            fi
        done
        echo "shim_gate: self-test: $src rejected ($(wc -l <<<"$findings") findings, ${#expect[@]} expected ones present)"
        if [ "$VERBOSE" = 1 ]; then sed 's/^/    /' <<<"$findings"; fi
    done
    [ "$n" -gt 0 ] || { echo "shim_gate: self-test FAIL: no tests/gate/bad/*.cpp" >&2; errors=$((errors + 1)); }

    [ "$errors" = 0 ] || fail "self-test: $errors problem(s); the checker cannot be trusted"
    echo "shim_gate: self-test PASS: the checker rejects all $n known-bad translation units"
}

case "$MODE" in
    gate) run_gate ;;
    selftest) run_selftest ;;
esac
