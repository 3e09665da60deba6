#!/bin/bash
# Give the bytecode findings in corpus/bytecode this simvm's format version.
# The version is a hash of the opcode and builtin tables (api/bytecode.h),
# so any change to them leaves every saved .simc stopping at the version
# check, testing nothing; make test fails then (tests/run_cli.sh) and this
# rewrites the u32 at offset 8 of each file with the version simc writes.
# (A change to the builtins' names or arities needs the files made again
# from the sources tests/fuzz/README.md gives.)
# usage: tests/fuzz/refresh_findings.sh SIMC
set -eu
simc=$1
dir=$(cd "$(dirname "$0")" && pwd)/corpus/bytecode
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo 'main = return ()' >"$tmp/empty.sim"
"$simc" --no-prelude -o "$tmp/empty.simc" "$tmp/empty.sim"
for f in "$dir"/*.simc; do
  dd if="$tmp/empty.simc" of="$f" bs=1 skip=8 seek=8 count=4 conv=notrunc status=none
  echo "refreshed ${f#"$dir"/}"
done
