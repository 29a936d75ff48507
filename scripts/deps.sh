#!/usr/bin/env bash
# scripts/deps.sh [demo|test] — installs, via apt, what kccl needs and is missing.
#   demo: a C++20 compiler and CMake (enough to build and run the examples)
#   test: + Catch2, Google Benchmark, the rv32 cross toolchain of the shim gate, ccache
# Installs nothing when everything is present (so it needs no root then).
set -euo pipefail

mode=${1:-test}
pkgs=(cmake g++ make)
if [[ $mode == test ]]; then
  pkgs+=(catch2 libbenchmark-dev gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf
         libstdc++-arm-none-eabi-dev ccache python3)
fi

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
(( ${#missing[@]} == 0 )) && exit 0

echo "kccl: installing missing packages: ${missing[*]}"
sudo=()
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "kccl: need root or sudo to apt-get install ${missing[*]}" >&2; exit 1; }
  sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -q
"${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
