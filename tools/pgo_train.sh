#!/bin/bash
# The training runs of the release build (make release): TRAIN/simvm, built
# with -fprofile-generate, runs what users run most: io-sim's benchmark
# programs, the compute programs and the examples, silent, printing, traced,
# profiled and explored. Each object's counts (TRAIN/obj/**/*.gcda) then go
# to the same place under RELEASE/obj, where gcc -fprofile-use reads them; a
# release object whose counts changed is removed, so make compiles it again.
# The VM is deterministic, so the counts are the same on every training
# with address randomisation off (setarch -R: some tables hash addresses).
# The command line's are not (--repeat's batches follow the clock), and it
# is not hot: it is compiled without counts.
# usage: tools/pgo_train.sh TRAIN RELEASE
set -euo pipefail
train=$1
release=$2
root=$(cd "$(dirname "$0")/.." && pwd)
simvm=$(cd "$train" && pwd)/simvm
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

find "$train/obj" -name '*.gcda' -delete

# run ARGS...: one training run from bench/ (what it prints is not wanted;
# an example that fails on purpose is still a run to learn from)
fixed=()
if setarch -R true 2>/dev/null; then fixed=(setarch -R); fi
run() { (cd "$root/bench" && "${fixed[@]}" "$simvm" "$@" >/dev/null 2>&1) || true; }

for p in threadDelay registerDelay timeout_fail timeout_succeed timeout_race; do
  run --repeat 20000 "seed/$p.sim"
done
for n in 10 50 250; do
  run --repeat 200 -q seed/async.sim "$n"
  run --repeat 200 -q seed/forkIO.sim "$n"
done
run --repeat 50 seed/async.sim 50
run --repeat 50 seed/forkIO.sim 50
run -q seed/bottleneck.sim
run seed/bottleneck.sim
for p in "$root"/bench/compute/*.sim; do run -q "$p"; done
run -O0 --repeat 20 -q seed/async.sim 50
for p in "$root"/examples/*.sim; do
  run "$p"
  run --trace "$p"
  run --profile "$p"
  run --explore 2000 -q "$p"
done

# the generated sources too: their #line directives name the files they
# were generated as, and gcc refuses counts whose source locations moved
mkdir -p "$release/gen"
for f in "$train"/gen/*.[ch]; do
  cmp -s "$f" "$release/gen/$(basename "$f")" || cp -p "$f" "$release/gen/"
done

count=0
while IFS= read -r gcda; do
  relative=${gcda#"$train"/}
  target=$release/$relative
  mkdir -p "$(dirname "$target")"
  if ! cmp -s "$gcda" "$target"; then
    cp "$gcda" "$target"
    rm -f "${target%.gcda}.o"
  fi
  count=$((count + 1))
done < <(find "$train/obj" -name '*.gcda' ! -path '*/obj/cli/*' | sort)
[ "$count" -gt 0 ] || { echo "pgo_train.sh: the training runs wrote no counts" >&2; exit 1; }
echo "  TRAIN   $count objects' counts for $release"
