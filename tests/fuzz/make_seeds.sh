#!/bin/sh
# The fuzzers' seed corpus, made from the tree: every script of tests/lang,
# tests/complexity, examples and bench (but the modules in imports
# directories) for the source fuzzers; for the bytecode fuzzer, those compiled with simc
# --no-prelude (small files: mutations land on the script's code, not the
# prelude's), plus two compiled with the prelude, and the bytecode
# findings (make_findings.sh); for the schedule fuzzer, the schedule files
# of tests/explore and those simvm (beside SIMC) writes for a few failing
# programs, one of them with every kind of choice pinned.
# usage: make_seeds.sh SIMC OUT_DIR   (makes OUT_DIR/source, bytecode and schedule)
set -u
simc=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
out=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$out/source" "$out/bytecode" "$out/schedule"
mkdir -p "$out/source" "$out/bytecode" "$out/schedule"
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
cp "$root"/tests/explore/*.schedule "$out/schedule/"
simvm=$(dirname "$simc")/simvm
if [ -x "$simvm" ]; then
  for script in examples/lost_update.sim examples/overdraft.sim tests/explore/uncaught.sim; do
    name=$(basename "$script" .sim)
    "$simvm" --explore 100 --jitter 10% -q --schedule-out "$out/schedule/jitter_$name.schedule" "$root/$script" >/dev/null 2>&1
  done
fi
echo "seeds: $(ls "$out/source" | wc -l) scripts, $(ls "$out/bytecode" | wc -l) bytecode files, $(ls "$out/schedule" | wc -l) schedule files"
