#!/bin/sh
# No global symbol of simvm's core may share a name with one the C library
# exports (make test runs it): the program's definition would replace libc's
# for every caller, sanitizer runtimes included. The VM's first yield was
# named sched_yield, and LeakSanitizer, calling libc's sched_yield(2) while
# it stopped the world, ran the VM's and crashed every unit test at exit.
#   sh tools/symbols.sh [BUILD]
set -u
cd "$(dirname "$0")/.." || exit 2
build=${1:-build}
libc=$(${CC:-cc} -print-file-name=libc.so.6)
libc=$(readlink -f "$libc" 2>/dev/null || echo "$libc")
if [ ! -f "$libc" ] || ! command -v nm >/dev/null 2>&1; then
  echo "symbols: no libc.so.6 or nm here: not checked"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
find "$build/obj" -name '*.o' ! -name '*.switch.o' -exec nm -g --defined-only {} + 2>/dev/null |
  awk 'NF == 3 { print $3 }' | LC_ALL=C sort -u >"$tmp/ours"
nm -D --defined-only "$libc" | awk '{ sub(/@.*/, "", $NF); print $NF }' | LC_ALL=C sort -u >"$tmp/libc"
LC_ALL=C comm -12 "$tmp/ours" "$tmp/libc" >"$tmp/both"
if [ -s "$tmp/both" ]; then
  echo "symbols: these names of simvm's are also the C library's (rename them):"
  sed 's/^/  /' "$tmp/both"
  exit 1
fi
echo "symbols: $(wc -l <"$tmp/ours") global names, none of them the C library's"
