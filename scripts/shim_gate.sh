#!/usr/bin/env bash
# scripts/shim_gate.sh — compile kccl's device code the way tt-metal's JIT build compiles kernels,
# for every core kind and both tt-metal header layouts, and reject anything a kernel cannot have.
# See docs/hardware-shim.md.
#
#   scripts/shim_gate.sh [--out DIR] [-j N] [-v]          run the gate
#   scripts/shim_gate.sh --self-test [--out DIR]          prove the symbol checker rejects known-bad code
#   scripts/shim_gate.sh --stub-self-test [--out DIR]     prove the tt-metal stub rejects what the real
#                                                         API rejects (tests/gate/reject/) and accepts
#                                                         the real API's spellings (tests/gate/accept/)
#
# Core kinds (defines of tt-metal's JIT build, Wormhole; all with -DTENSIX_FIRMWARE -DKERNEL_BUILD
# -DARCH_WORMHOLE -DNOC_MODE=0 -DLOCAL_MEM_EN=0):
#   erisc   active Ethernet: -DCOMPILE_FOR_ERISC -DERISC -DRISC_B0_HW -DCOOPERATIVE_ERISC
#           -DNOC_INDEX=0 -DPROCESSOR_INDEX=0, -Os -fno-delete-null-pointer-checks
#   brisc   Tensix reader (RISCV_0): -DCOMPILE_FOR_BRISC -DNOC_INDEX=0 -DPROCESSOR_INDEX=0, -Os
#   ncrisc  Tensix writer (RISCV_1): -DCOMPILE_FOR_NCRISC -DNOC_INDEX=1 -DPROCESSOR_INDEX=1, -Os
# Layouts (tests/gate/stub/<layout> stands for tt_metal/hw/inc):
#   legacy  before the late-2025 move: dataflow_api.h, ethernet/{dataflow_api,tunneling}.h; ERISC
#           builds also get -I .../ethernet, as tt-metal's ERISC JIT build did then
#   current after it: api/dataflow/dataflow_api.h, internal/ethernet/{dataflow_api,tunneling}.h
# Every unit is a tt-metal kernel source file defining `void kernel_main()`. The gate compiles it
# inside a generated firmware-wrapper TU that, like tt-metal's brisck.cc / ncrisck.cc / erisck.cc,
# includes the device API (for ERISC also the Ethernet API) and then the kernel source. Units:
#   tests/gate/gate.cpp             every device header under include/ + every contract operation:
#                                   erisc, brisc, ncrisc (+ erisc and brisc with
#                                   -DKCCL_TT_METAL_NO_INCLUDE on the current layout)
#   tests/gate/kernels/edm_erisc.cpp      the EDM (Ethernet only): erisc
#   tests/gate/kernels/worker_tensix.cpp  a worker over the EDM adapters: brisc, ncrisc
#   tests/gate/kernels/fabric_router_erisc.cpp   the chip fabric's router: erisc
#   tests/gate/kernels/fabric_worker_tensix.cpp  a worker on the chip fabric (FabricLink): brisc, ncrisc
#   examples/*/*_kernels.hpp        through their kccl_gate_instantiate entry, for the kinds named
#                                   in tests/gate/examples.kinds (erisc = erisc; tensix = brisc +
#                                   ncrisc; unlisted = all three)
# each for both layouts. Flags: rv32im/ilp32, -std=c++17 -Os -ffast-math -fno-exceptions -fno-rtti
# -fno-use-cxa-atexit -fno-tree-loop-distribute-patterns (tt-metal's data-movement flag: loops are
# not turned into memcpy/memset calls), -Wall -Wextra -Werror -Wno-attributes (a plain GCC does not
# know the SFPI-GCC attribute behind tt_l1_ptr), picolibc, libstdc++ headers only.
# Each object must then
#   * have only expected undefined symbols: tt-metal's device API (inline functions in tt-metal's
#     headers, declared-only in the stub), firmware variables, or memcpy/memset/memmove/memcmp (tt-metal
#     links kernels without -nostdlib, so the toolchain's C library provides them); the Ethernet API
#     only in ERISC objects, and no noc_semaphore_wait* there (ERISC waits must run the link
#     firmware: eth_noc_semaphore_wait*). The list is written to DIR/undefined-symbols.txt and summarised;
#   * be free of heap, exception, RTTI and static-initialisation symbols and sections;
#   * define kernel_main; and gate.cpp's objects must reference every tt-metal function the shim
#     maps to on that kind (proof each member compiled and forwards where the docs say).
#
# Environment:
#   KCCL_GATE_TOOLPREFIX   toolchain prefix (default riscv64-unknown-elf-)
#   KCCL_GATE_LIBSTDCXX    libstdc++ header directory (default: newest
#                          /usr/lib/arm-none-eabi/include/c++/<version>)
#   KCCL_GATE_JOBS         parallel compilations (default 2; -j overrides)
#   KCCL_GATE_SKIP_MISSING_TOOLCHAIN=1   exit 77 (ctest: skipped) instead of failing when the
#                          toolchain is not installed
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

MODE=gate
OUT=""
VERBOSE=0
JOBS=${KCCL_GATE_JOBS:-2}
while [ $# -gt 0 ]; do
    case "$1" in
        --out) OUT=${2:?--out needs a directory}; shift 2 ;;
        --out=*) OUT=${1#--out=}; shift ;;
        --self-test) MODE=selftest; shift ;;
        --stub-self-test) MODE=stubtest; shift ;;
        -j) JOBS=${2:?-j needs a number}; shift 2 ;;
        -j*) JOBS=${1#-j}; shift ;;
        -v | --verbose) VERBOSE=1; shift ;;
        -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "shim_gate: unknown argument '$1' (try --help)" >&2; exit 2 ;;
    esac
done
case "$JOBS" in '' | *[!0-9]* | 0) echo "shim_gate: -j needs a positive number" >&2; exit 2 ;; esac

if [ -z "$OUT" ]; then
    OUT=$(mktemp -d "${TMPDIR:-/tmp}/kccl-shim-gate.XXXXXX")
    trap 'rm -rf "$OUT"' EXIT
else
    rm -rf "$OUT"
    mkdir -p "$OUT"
    OUT=$(cd "$OUT" && pwd)
fi

fail() { echo "shim_gate: FAIL: $*" >&2; exit 1; }
elapsed() { awk -v a="$1" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }'; }

# --- toolchain ---------------------------------------------------------------------------------
PREFIX=${KCCL_GATE_TOOLPREFIX:-riscv64-unknown-elf-}
RV_CXX=${PREFIX}g++
RV_NM=${PREFIX}nm
RV_OBJDUMP=${PREFIX}objdump
RV_FILT=${PREFIX}c++filt
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

for tool in "$RV_CXX" "$RV_NM" "$RV_OBJDUMP" "$RV_FILT"; do
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

# Flags every device compilation shares (the bad/ TUs of --self-test use only these).
FLAGS=(-march=rv32im -mabi=ilp32 --specs=picolibc.specs -std=c++17
       -fno-exceptions -fno-rtti -fno-use-cxa-atexit -Os -ffast-math -fno-tree-loop-distribute-patterns
       -nostdinc++ -isystem "$LIBSTDCXX" -isystem "$LIBSTDCXX/arm-none-eabi"
       -Werror -Wall -Wextra -Wno-attributes -I "$ROOT/include")

# tt-metal's JIT defines (Wormhole) per core kind.
COMMON_DEFINES=(-DTENSIX_FIRMWARE -DKERNEL_BUILD -DARCH_WORMHOLE -DNOC_MODE=0 -DLOCAL_MEM_EN=0)
kind_flags() {
    case "$1" in
        erisc) echo "-DCOMPILE_FOR_ERISC -DERISC -DRISC_B0_HW -DCOOPERATIVE_ERISC -DNOC_INDEX=0 -DPROCESSOR_INDEX=0 -fno-delete-null-pointer-checks" ;;
        brisc) echo "-DCOMPILE_FOR_BRISC -DNOC_INDEX=0 -DPROCESSOR_INDEX=0" ;;
        ncrisc) echo "-DCOMPILE_FOR_NCRISC -DNOC_INDEX=1 -DPROCESSOR_INDEX=1" ;;
        *) fail "unknown core kind '$1'" ;;
    esac
}
# The include path tt-metal's JIT build gives a kernel of this kind, with the stub standing for
# tt_metal/hw/inc.
layout_flags() {  # LAYOUT KIND
    local dir="$ROOT/tests/gate/stub/$1"
    [ -d "$dir" ] || fail "unknown layout '$1'"
    if [ "$1" = legacy ] && [ "$2" = erisc ]; then
        echo "-I $dir -I $dir/ethernet"
    else
        echo "-I $dir"
    fi
}

# compile SRC OBJ [extra flags...]: the shared flags only (no tt-metal API on the path).
compile() {
    local src=$1 obj=$2
    shift 2
    if [ "$VERBOSE" = 1 ]; then echo "+ $RV_CXX ${FLAGS[*]} $* -c $src -o $obj"; fi
    "$RV_CXX" "${FLAGS[@]}" "$@" -c "$src" -o "$obj"
}

# compile_kernel KIND LAYOUT SRC OBJ LOG [extra flags...]: as tt-metal's JIT compiles a kernel of
# KIND against the stub in LAYOUT. Diagnostics go to LOG; returns the compiler's status.
compile_kernel() {
    local kind=$1 layout=$2 src=$3 obj=$4 log=$5
    shift 5
    local -a cmd
    read -ra kf <<<"$(kind_flags "$kind")"
    read -ra lf <<<"$(layout_flags "$layout" "$kind")"
    cmd=("$RV_CXX" "${FLAGS[@]}" "${COMMON_DEFINES[@]}" "${kf[@]}" "${lf[@]}" "$@" -c "$src" -o "$obj")
    if [ "$VERBOSE" = 1 ]; then echo "+ ${cmd[*]}"; fi
    "${cmd[@]}" >"$log" 2>&1
}

# The API header(s) a firmware wrapper of KIND includes before the kernel, in LAYOUT.
wrapper_includes() {  # LAYOUT KIND
    case "$1" in
        legacy) echo '#include "dataflow_api.h"'
                [ "$2" = erisc ] && printf '%s\n' '#include "ethernet/dataflow_api.h"' '#include "ethernet/tunneling.h"' ;;
        current) echo '#include "api/dataflow/dataflow_api.h"'
                 [ "$2" = erisc ] && printf '%s\n' '#include "internal/ethernet/dataflow_api.h"' '#include "internal/ethernet/tunneling.h"' ;;
    esac
    return 0
}

# run_jobs FILE: each line "ID KIND LAYOUT SRC [extra flags...]"; compiles them JOBS at a time as
# wrapped kernels into $OUT/obj/ID.o (diagnostics ID.log, status ID.rc).
run_jobs() {
    local file=$1 running=0 id kind layout src rest
    mkdir -p "$OUT/obj" "$OUT/wrap"
    while read -r id kind layout src rest; do
        [ -n "$id" ] || continue
        {
            echo "// Generated by scripts/shim_gate.sh: what tt-metal's JIT build compiles for a $kind kernel"
            echo "// ($layout layout). Like the firmware wrappers (brisck.cc / ncrisck.cc / erisck.cc), it"
            echo "// includes the device API, then the kernel source (kernel_includes.hpp), and calls kernel_main."
            wrapper_includes "$layout" "$kind"
            echo "#include \"$src\""
            echo "void kernel_launch() { kernel_main(); }"
        } >"$OUT/wrap/$id.cpp"
        read -ra extra <<<"$rest"
        (
            if compile_kernel "$kind" "$layout" "$OUT/wrap/$id.cpp" "$OUT/obj/$id.o" "$OUT/obj/$id.log" \
                   -I "$OUT" "${extra[@]}"; then
                echo 0 >"$OUT/obj/$id.rc"
            else
                echo 1 >"$OUT/obj/$id.rc"
            fi
        ) &
        running=$((running + 1))
        if [ "$running" -ge "$JOBS" ]; then
            wait -n || true
            running=$((running - 1))
        fi
    done <"$file"
    wait || true
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

# --- undefined symbols -------------------------------------------------------------------------
# Names are compared without namespace-free decoration: `void internal_::eth_send_packet<true>(...)`
# is `internal_::eth_send_packet`.
API_ANY_CORE=(get_noc_addr noc_async_write noc_async_read noc_async_write_barrier noc_async_read_barrier
              noc_async_writes_flushed noc_async_atomic_barrier noc_inline_dw_write noc_semaphore_inc
              noc_semaphore_set noc_semaphore_wait noc_semaphore_wait_min get_semaphore get_arg_val
              get_common_arg_val invalidate_l1_cache get_noc_multicast_addr noc_async_write_multicast
              noc_async_write_multicast_loopback_src noc_semaphore_set_multicast
              noc_semaphore_set_multicast_loopback_src noc_semaphore_inc_multicast)
API_ERISC=(internal_::eth_send_packet internal_::eth_txq_is_busy run_routing eth_txq_is_busy
           eth_noc_semaphore_wait eth_noc_semaphore_wait_min eth_send_bytes eth_wait_for_bytes
           eth_wait_for_receiver_done eth_receiver_channel_done eth_bytes_are_available_on_channel)
FIRMWARE_VARS=(my_x my_y noc_index)
LIBC_FUNCS=(memcpy memset memmove memcmp)

in_list() {  # NAME LIST...
    local n=$1 x
    shift
    for x in "$@"; do [ "$x" = "$n" ] && return 0; done
    return 1
}

# why_undefined NAME KIND -> why an undefined reference to NAME is fine in a KIND object; nothing
# if it is not.
why_undefined() {
    local name=$1 kind=$2
    if [ "$kind" = erisc ] && in_list "$name" noc_semaphore_wait noc_semaphore_wait_min; then
        # A blocking wait that never gives the link firmware a turn: ERISC waits must be
        # eth_noc_semaphore_wait* (kccl::hal::TtMetal::sem_wait* are, on ERISC).
        return 0
    elif in_list "$name" "${API_ANY_CORE[@]}"; then
        echo "tt-metal device API (inline in tt-metal's headers; declared-only in the stub)"
    elif in_list "$name" "${API_ERISC[@]}"; then
        [ "$kind" = erisc ] && echo "tt-metal Ethernet API, ERISC only (inline in tt-metal's headers; declared-only in the stub)"
    elif in_list "$name" "${FIRMWARE_VARS[@]}"; then
        echo "firmware variable (defined by the core's firmware; kernels link with --just-symbols=<firmware>_weakened.elf)"
    elif in_list "$name" "${LIBC_FUNCS[@]}"; then
        echo "C library (tt-metal links kernels without -nostdlib, so the toolchain's libc provides it)"
    fi
    return 0
}

# base_names: demangled names on stdin -> base names (no return type, template arguments or
# parameters): `void internal_::eth_send_packet<true>(unsigned long, ...)` -> internal_::eth_send_packet.
base_names() { sed -E ':a; s/<[^<>]*>//g; ta; s/\(.*$//; s/.* //'; }

# undefined_names OBJ -> "base-name<TAB>demangled" per undefined symbol.
undefined_names() {
    local dem
    dem=$("$RV_NM" -u "$1" | awk '{ print $NF }' | "$RV_FILT")
    [ -n "$dem" ] || return 0
    paste <(base_names <<<"$dem") <(printf '%s\n' "$dem")
}

# tt-metal functions each TtMetal member forwards to; gate.cpp's objects must reference all of the
# list for their kind.
REQUIRED_ANY_CORE=(my_x my_y get_noc_addr noc_async_write noc_async_read noc_async_write_barrier
                   noc_async_atomic_barrier noc_async_read_barrier noc_async_writes_flushed
                   noc_inline_dw_write noc_semaphore_inc noc_semaphore_set get_arg_val invalidate_l1_cache)
REQUIRED_ERISC=(eth_noc_semaphore_wait eth_noc_semaphore_wait_min internal_::eth_send_packet
                internal_::eth_txq_is_busy run_routing)
REQUIRED_TENSIX=(noc_semaphore_wait noc_semaphore_wait_min)

# --- docs/hardware-shim.md shows the gate's kernel files verbatim ------------------------------
# A line `<!-- kccl-gate-kernel: PATH -->` must be followed by a fenced block equal to PATH.
check_doc_kernels() {
    local doc=docs/hardware-shim.md path n=0 bad=0
    [ -f "$doc" ] || { echo "shim_gate: FAIL: $doc is missing" >&2; return 1; }
    while read -r path; do
        n=$((n + 1))
        if ! diff -u "$path" <(awk -v p="$path" '
                $0 ~ "<!-- kccl-gate-kernel: " p " -->" { want = 1; next }
                want == 1 && /^```/ { want = 2; next }
                want == 2 && /^```/ { exit }
                want == 2 { print }' "$doc") >"$OUT/doc-$n.diff"; then
            echo "shim_gate: FAIL: $doc's copy of $path differs from the file (diff in $OUT/doc-$n.diff):" >&2
            sed 's/^/    /' "$OUT/doc-$n.diff" | head -n 20 >&2
            bad=1
        fi
    done < <(sed -nE 's/^<!-- kccl-gate-kernel: ([^ ]+) -->$/\1/p' "$doc")
    [ "$n" -ge 2 ] || { echo "shim_gate: FAIL: $doc must show the ERISC and the Tensix kernel (kccl-gate-kernel markers)" >&2; bad=1; }
    return $bad
}

# --- gate --------------------------------------------------------------------------------------
run_gate() {
    local start headers kernels h id kinds kind layout obj bad=0 line findings
    start=$(date +%s%N)

    # Host-side builders (include/**/host/) allocate and throw by design: not device code.
    mapfile -t headers < <(find include -type f \( -name '*.hpp' -o -name '*.h' \) -not -path '*/host/*' | LC_ALL=C sort)
    [ ${#headers[@]} -gt 0 ] || fail "no headers under include/"
    {
        echo "// Generated by scripts/shim_gate.sh: every device header under include/. Do not edit."
        echo "#pragma once"
        for h in "${headers[@]}"; do echo "#include \"${h#include/}\""; done
    } >"$OUT/kccl_gate_all_headers.hpp"

    # Example kernel headers, each wrapped into a kernel source file.
    mapfile -t kernels < <(find examples -mindepth 2 -maxdepth 2 -type f -name '*_kernels.hpp' 2>/dev/null | LC_ALL=C sort)
    mkdir -p "$OUT/kernels"
    local jobs="$OUT/jobs.txt"
    : >"$jobs"
    for layout in legacy current; do
        for kind in erisc brisc ncrisc; do
            echo "gate.$kind.$layout $kind $layout $ROOT/tests/gate/gate.cpp" >>"$jobs"
        done
        echo "edm_erisc.erisc.$layout erisc $layout $ROOT/tests/gate/kernels/edm_erisc.cpp" >>"$jobs"
        echo "fabric_router_erisc.erisc.$layout erisc $layout $ROOT/tests/gate/kernels/fabric_router_erisc.cpp" >>"$jobs"
        for kind in brisc ncrisc; do
            echo "worker_tensix.$kind.$layout $kind $layout $ROOT/tests/gate/kernels/worker_tensix.cpp" >>"$jobs"
            echo "fabric_worker_tensix.$kind.$layout $kind $layout $ROOT/tests/gate/kernels/fabric_worker_tensix.cpp" >>"$jobs"
        done
    done
    # The no-include mode: the firmware wrapper has already included the API.
    echo "gate_noinclude.erisc.current erisc current $ROOT/tests/gate/gate.cpp -DKCCL_TT_METAL_NO_INCLUDE" >>"$jobs"
    echo "gate_noinclude.brisc.current brisc current $ROOT/tests/gate/gate.cpp -DKCCL_TT_METAL_NO_INCLUDE" >>"$jobs"

    local -A example_kinds=()
    for h in "${kernels[@]}"; do
        id=$(echo "${h#examples/}" | sed -E 's/\.hpp$//; s/[^A-Za-z0-9]+/_/g')
        kinds=$(awk -v h="$h" '$1 == h { $1 = ""; print }' tests/gate/examples.kinds)
        [ -n "${kinds// /}" ] || kinds="erisc tensix"
        kinds=${kinds//tensix/brisc ncrisc}
        example_kinds[$h]=$(echo $kinds)
        local expect=0
        grep -q 'kccl_gate_instantiate' "$h" && expect=1
        {
            echo "// Generated by scripts/shim_gate.sh from $h. Do not edit."
            echo "#include \"hal/tt_metal.hpp\""
            echo "#include \"$ROOT/$h\""
            echo "#define KCCL_GATE_EXPECT_ENTRY $expect"
            echo "#include \"$ROOT/tests/gate/gate_entry.hpp\""
            echo "void kernel_main() {"
            echo "    kccl::hal::TtMetal hal;"
            echo "    kccl_gate::run_entry(hal);"
            echo "}"
        } >"$OUT/kernels/$id.cpp"
        for layout in legacy current; do
            for kind in ${example_kinds[$h]}; do
                case "$kind" in erisc | brisc | ncrisc) ;; *) fail "tests/gate/examples.kinds: unknown kind '$kind' for $h" ;; esac
                echo "$id.$kind.$layout $kind $layout $OUT/kernels/$id.cpp" >>"$jobs"
            done
        done
    done

    run_jobs "$jobs"

    # Compile results.
    local -a objects=()
    while read -r id kind layout _; do
        if [ "$(cat "$OUT/obj/$id.rc" 2>/dev/null)" != 0 ]; then
            echo "shim_gate: FAIL: $id: does not compile as a $kind kernel ($layout layout); errors (wrapper $OUT/wrap/$id.cpp, kept with --out DIR):" >&2
            sed 's/^/    /' "$OUT/obj/$id.log" | head -n 40 >&2
            bad=1
        else
            objects+=("$id")
        fi
    done <"$jobs"
    [ "$bad" = 0 ] || fail "device code does not compile for every core kind and layout (see above)"

    # Symbol checks.
    local report="$OUT/undefined-symbols.txt" base dem why
    : >"$report"
    for id in "${objects[@]}"; do
        kind=$(cut -d. -f2 <<<"$id")
        obj="$OUT/obj/$id.o"
        findings=$(scan_object "$obj")
        if [ -n "$findings" ]; then
            bad=1
            while IFS= read -r line; do echo "shim_gate: FAIL: $id: $line" >&2; done <<<"$findings"
        fi
        local defined
        defined=$("$RV_NM" -P --defined-only "$obj")
        grep -Eq '^_Z11kernel_mainv T ' <<<"$defined" || { echo "shim_gate: FAIL: $id does not define kernel_main()" >&2; bad=1; }
        while IFS=$'\t' read -r base dem; do
            [ -n "$base" ] || continue
            why=$(why_undefined "$base" "$kind")
            if [ -z "$why" ]; then
                echo "shim_gate: FAIL: $id: unexpected undefined symbol '$dem' — neither tt-metal's API for a $kind kernel, nor firmware-provided, nor a C library function tt-metal links (memcpy/memset/memmove/memcmp)$([ "$kind" = erisc ] && in_list "$base" noc_semaphore_wait noc_semaphore_wait_min && echo "; on ERISC a blocking wait must give the link firmware a turn: use eth_noc_semaphore_wait*")" >&2
                bad=1
                why="UNEXPECTED"
            fi
            printf '%s\t%s\t%s\t%s\n' "$id" "$base" "$dem" "$why" >>"$report"
        done < <(undefined_names "$obj")
        case "$id" in
            gate.* | gate_noinclude.*)
                local -a required=("${REQUIRED_ANY_CORE[@]}")
                if [ "$kind" = erisc ]; then required+=("${REQUIRED_ERISC[@]}"); else required+=("${REQUIRED_TENSIX[@]}"); fi
                local ref
                for ref in "${required[@]}"; do
                    if ! awk -F'\t' -v id="$id" -v r="$ref" '$1 == id && $2 == r { found = 1 } END { exit !found }' "$report"; then
                        echo "shim_gate: FAIL: $id does not reference '$ref': the kccl::hal::TtMetal member mapping onto it was not compiled (or no longer calls it)" >&2
                        bad=1
                    fi
                done ;;
        esac
    done
    check_doc_kernels || bad=1
    [ "$bad" = 0 ] || fail "see above"

    # Summary: every undefined symbol, by core kind, and why it is fine.
    echo "shim_gate: undefined symbols of the objects (all in $report when --out is given):"
    local group
    for group in erisc tensix; do
        echo "  $group objects:"
        awk -F'\t' -v g="$group" '{ split($1, p, "."); k = p[2]; if ((g == "erisc") != (k == "erisc")) next;
                                    if (!($2 in seen)) { seen[$2] = $4; order[++n] = $2 } }
                                  END { for (i = 1; i <= n; i++) printf "    %-36s %s\n", order[i], seen[order[i]] }' "$report"
    done
    for h in "${kernels[@]}"; do echo "shim_gate: $h: built for ${example_kinds[$h]}"; done
    printf 'shim_gate: PASS: %d objects (%d device headers, the EDM and worker kernels, %d example headers) as erisc/brisc/ncrisc kernels for the legacy and current tt-metal layouts (%s, -j %s); no heap/exceptions/RTTI/static-init; only expected undefined symbols (%ss)\n' \
        "${#objects[@]}" "${#headers[@]}" "${#kernels[@]}" "$("$RV_CXX" -dumpversion), libstdc++ ${LIBSTDCXX##*/}" "$JOBS" "$(elapsed "$start")"
}

# --- stub self-test ----------------------------------------------------------------------------
# tests/gate/reject/*.cpp must FAIL to compile with every `// gate-expect-error: TEXT` in the
# compiler's output; tests/gate/accept/*.cpp must compile. Each names its `// gate-kind:`, its
# `// gate-layouts:` and optional `// gate-flags:`.
run_stubtest() {
    local start src kind layouts layout flags id errors=0 n=0 jobs="$OUT/jobs.txt" want
    start=$(date +%s%N)
    : >"$jobs"
    for src in tests/gate/reject/*.cpp tests/gate/accept/*.cpp; do
        [ -e "$src" ] || continue
        kind=$(sed -nE 's@^//[[:space:]]*gate-kind:[[:space:]]*([a-z]+).*@\1@p' "$src" | head -n 1)
        layouts=$(sed -nE 's@^//[[:space:]]*gate-layouts:[[:space:]]*(.*)$@\1@p' "$src" | head -n 1)
        flags=$(sed -nE 's@^//[[:space:]]*gate-flags:[[:space:]]*(.*)$@\1@p' "$src" | head -n 1)
        if [ -z "$kind" ] || [ -z "$layouts" ]; then
            echo "shim_gate: stub self-test FAIL: $src needs '// gate-kind:' and '// gate-layouts:' lines" >&2
            errors=$((errors + 1))
            continue
        fi
        for layout in $layouts; do
            id="$(basename "$(dirname "$src")").$(basename "${src%.cpp}").$layout"
            echo "$id $kind $layout $ROOT/$src $flags" >>"$jobs"
        done
    done
    run_jobs "$jobs"
    while read -r id kind layout src _; do
        n=$((n + 1))
        local rc log="$OUT/obj/$id.log"
        rc=$(cat "$OUT/obj/$id.rc" 2>/dev/null || echo missing)
        case "$id" in
            accept.*)
                if [ "$rc" != 0 ]; then
                    echo "shim_gate: stub self-test FAIL: ${src#"$ROOT"/} ($kind, $layout) must compile against the stub, but:" >&2
                    sed 's/^/    /' "$log" | head -n 30 >&2
                    errors=$((errors + 1))
                else
                    echo "shim_gate: stub self-test: accepted as it must be: ${src#"$ROOT"/} ($kind, $layout)"
                fi ;;
            reject.*)
                if [ "$rc" = 0 ]; then
                    echo "shim_gate: stub self-test FAIL: ${src#"$ROOT"/} ($kind, $layout) COMPILED; the stub must reject it" >&2
                    errors=$((errors + 1))
                    continue
                fi
                local -a expect
                mapfile -t expect < <(sed -nE 's@^//[[:space:]]*gate-expect-error:[[:space:]]*(.*[^[:space:]])[[:space:]]*$@\1@p' "$src")
                if [ ${#expect[@]} -eq 0 ]; then
                    echo "shim_gate: stub self-test FAIL: ${src#"$ROOT"/} has no '// gate-expect-error:' line" >&2
                    errors=$((errors + 1))
                fi
                for want in "${expect[@]}"; do
                    local hit
                    hit=$(grep -F -m 1 -- "$want" "$log" || true)
                    if [ -z "$hit" ]; then
                        echo "shim_gate: stub self-test FAIL: ${src#"$ROOT"/} ($kind, $layout) failed, but not with '$want'; compiler said:" >&2
                        sed 's/^/    /' "$log" | head -n 30 >&2
                        errors=$((errors + 1))
                    else
                        echo "shim_gate: stub self-test: rejected as it must be: ${src#"$ROOT"/} ($kind, $layout): ${hit#"$ROOT"/}" | cut -c1-260
                    fi
                done ;;
        esac
    done <"$jobs"
    [ "$n" -gt 0 ] || { echo "shim_gate: stub self-test FAIL: no tests/gate/{reject,accept}/*.cpp" >&2; errors=$((errors + 1)); }
    [ "$errors" = 0 ] || fail "stub self-test: $errors problem(s); the stub does not have the real API's shape"
    echo "shim_gate: stub self-test PASS: $n compilations; every mismatch rejected with its expected error, every real spelling accepted ($(elapsed "$start")s)"
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

    # 1b. The undefined-symbol rules: which references each core kind may keep, by base name.
    local -a undef_cases=(
        "get_noc_addr brisc ok" "noc_semaphore_wait brisc ok" "noc_semaphore_wait erisc bad"
        "noc_semaphore_wait_min erisc bad" "eth_noc_semaphore_wait erisc ok" "eth_noc_semaphore_wait ncrisc bad"
        "internal_::eth_send_packet erisc ok" "internal_::eth_send_packet brisc bad" "run_routing ncrisc bad"
        "run_routing erisc ok" "my_x ncrisc ok" "memcpy brisc ok" "memcmp erisc ok" "malloc erisc bad"
        "eth_send_packet erisc bad" "puts brisc bad")
    local c name kind want_ok got_why
    for c in "${undef_cases[@]}"; do
        read -r name kind want_ok <<<"$c"
        got_why=$(why_undefined "$name" "$kind")
        if { [ "$want_ok" = ok ] && [ -z "$got_why" ]; } || { [ "$want_ok" = bad ] && [ -n "$got_why" ]; }; then
            echo "shim_gate: self-test FAIL: undefined '$name' in a $kind object: expected $want_ok, got '${got_why:-rejected}'" >&2
            errors=$((errors + 1))
        fi
    done
    # Base names of demangled references.
    local -a demangled=("void internal_::eth_send_packet<true>(unsigned long, unsigned long, unsigned long, unsigned long)|internal_::eth_send_packet"
                        "void noc_inline_dw_write<(InlineWriteDst)0, false, true>(unsigned long long, unsigned long, unsigned char, unsigned char, unsigned char, unsigned long)|noc_inline_dw_write"
                        "unsigned long get_arg_val<unsigned long>(int)|get_arg_val" "my_x|my_x"
                        "eth_noc_semaphore_wait(unsigned long volatile*, unsigned long, unsigned long)|eth_noc_semaphore_wait")
    for c in "${demangled[@]}"; do
        got_why=$(base_names <<<"${c%%|*}")
        if [ "$got_why" != "${c##*|}" ]; then
            echo "shim_gate: self-test FAIL: base name of '${c%%|*}' is '$got_why', expected '${c##*|}'" >&2
            errors=$((errors + 1))
        fi
    done
    echo "shim_gate: self-test: undefined-symbol rules: ${#undef_cases[@]} cases, ${#demangled[@]} demangled names"

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
    stubtest) run_stubtest ;;
esac
