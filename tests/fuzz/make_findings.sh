#!/bin/sh
# The fuzzers' findings in bytecode form, made from their sources in
# tests/fuzz/findings, so that no .simc is checked in: a change to the
# opcode or builtin tables (the format version) needs no file remade by
# hand. Each NAME.sim is compiled with simc --no-prelude into
# OUT_DIR/NAME.simc; then each of its lines
#   -- patch: s/BYTES/BYTES/
# (a perl substitution on the file's bytes) breaks the field the finding
# was about. A patch that matches nothing is an error: the format moved
# under it, and the finding would test nothing.
# usage: make_findings.sh SIMC OUT_DIR
set -eu
simc=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
mkdir -p "$2"
out=$(cd "$2" && pwd)
cd "$(dirname "$0")/findings"
for script in *.sim; do
  file=$out/${script%.sim}.simc
  "$simc" --no-prelude -o "$file" "$script"
  sed -n 's/^-- patch: //p' "$script" | while IFS= read -r patch; do
    cp "$file" "$file.before"
    perl -0777 -pi -e "$patch" "$file"
    if cmp -s "$file" "$file.before"; then
      echo "make_findings.sh: the patch of $script matched nothing in its bytecode: $patch" >&2
      exit 1
    fi
    rm -f "$file.before"
  done
done
