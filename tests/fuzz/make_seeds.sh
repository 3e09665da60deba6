#!/bin/sh
# The fuzzers' seed corpus, made from the tree: every script of tests/lang,
# tests/complexity, examples and bench (but the modules in imports
# directories) for the source fuzzers; for the bytecode fuzzer, those compiled with simc
# --no-prelude (small files: mutations land on the script's code, not the
# prelude's), plus two compiled with the prelude, and the bytecode
# findings (make_findings.sh).
# usage: make_seeds.sh SIMC OUT_DIR   (makes OUT_DIR/source and OUT_DIR/bytecode)
set -u
simc=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
out=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$out/source" "$out/bytecode"
mkdir -p "$out/source" "$out/bytecode"
out=$(cd "$out" && pwd)
find "$root/tests/lang" "$root/tests/complexity" "$root/examples" "$root/bench" -name imports -prune -o -name '*.sim' -print | LC_ALL=C sort |
while IFS= read -r script; do
  name=$(echo "${script#"$root"/}" | tr '/' '_')
  cp "$script" "$out/source/$name"
  (cd "$(dirname "$script")" && "$simc" --no-prelude -o "$out/bytecode/${name%.sim}.simc" "$(basename "$script")" 2>/dev/null) ||
    rm -f "$out/bytecode/${name%.sim}.simc"
done
for script in examples/race.sim tests/lang/stm/tqueue.sim; do
  name=$(echo "$script" | tr '/' '_')
  "$simc" -o "$out/bytecode/prelude_${name%.sim}.simc" "$root/$script" || exit 1
done
sh "$root/tests/fuzz/make_findings.sh" "$simc" "$out/bytecode" || exit 1
echo "seeds: $(ls "$out/source" | wc -l) scripts, $(ls "$out/bytecode" | wc -l) bytecode files"
