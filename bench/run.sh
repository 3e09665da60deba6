#!/bin/bash
# The benchmark harness (make bench). Every program runs many times, each
# run a fresh simulation inside one simvm process (--repeat), after one
# warm-up run; the per-run instruction and event counts must be the same in
# every run and equal a single profiled run's (nothing is cached between runs).
# Both bind strategies are
# timed side by side: -O0 (io-sim's, heap continuations) and the default
# (one-shot continuations on the thread stack). Compute programs are also
# timed against their Lua 5.4 twins when lua5.4 is installed (the harness
# installs it with apt-get when it runs as root). Results: bench/RESULTS.md.
# usage: bench/run.sh SIMVM [RESULTS.md]
set -u
simvm=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
root=$(cd "$(dirname "$0")/.." && pwd)
out=${2:-$root/bench/RESULTS.md}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if ! command -v lua5.4 >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing lua5.4 for the compute twins ..."
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq lua5.4 >/dev/null 2>&1 || true
fi

# bench NAME RUNS SIMVM-ARGS... : prints "median min max instructions events" (us)
# of the runs after the warm-up, or fails if the counts differ between runs.
bench() {
  local runs=$1
  shift
  if ! (cd "$root/bench" && "$simvm" --repeat $((runs + 1)) "$@" >/dev/null 2>"$tmp/err"); then
    echo "FAILED: simvm $*" >&2
    sed 's/^/  /' "$tmp/err" | tail -5 >&2
    return 1
  fi
  grep '^run ' "$tmp/err" | tail -n +2 >"$tmp/runs"
  if [ "$(awk '{ print $5, $7 }' "$tmp/runs" | sort -u | wc -l)" != 1 ]; then
    echo COUNTS-DIFFER
    return 0
  fi
  local n median min max
  awk '{ print $3 }' "$tmp/runs" | sort -g >"$tmp/times"
  n=$(wc -l <"$tmp/times")
  median=$(sed -n "$(((n + 1) / 2))p" "$tmp/times")
  min=$(head -1 "$tmp/times")
  max=$(tail -1 "$tmp/times")
  printf '%.2f %.2f %.2f %s\n' "$median" "$min" "$max" "$(head -1 "$tmp/runs" | awk '{ print $5, $7 }')"
}

# io-sim 1.6 per run, "as it is" (../shared/reference/iosim-seed-bench.md)
declare -A iosim=(
  [threadDelay]="0.605" [registerDelay]="1.8" [timeout_fail]="2.5" [timeout_succeed]="0.947"
  [timeout_race]="1.2" ["async 50 silent"]="254" ["forkIO 50 silent"]="69"
  ["bottleneck silent"]="559000" ["async 50 say"]="253" ["forkIO 50 say"]="69"
  ["bottleneck say"]="629000" ["async 250"]="2100" ["forkIO 250"]="533"
)

rows=()
row() { # NAME RUNS ARGS...
  local name=$1 runs=$2
  shift 2
  local fast slow
  fast=$(bench "$runs" "$@") || return 1
  slow=$(bench "$runs" -O0 "$@") || return 1
  if [ "$fast" = COUNTS-DIFFER ] || [ "$slow" = COUNTS-DIFFER ]; then
    echo "FAILED: $name: instruction or event counts differ between runs" >&2
    return 1
  fi
  read -r fm fmin fmax fins fev <<<"$fast"
  # nothing is cached between runs: a single profiled run counts the same
  (cd "$root/bench" && "$simvm" --profile-json "$tmp/profile.json" "$@" >/dev/null 2>&1)
  local single
  single=$(sed -n 's/^  "instructions": \([0-9]*\),$/\1/p' "$tmp/profile.json")
  if [ "$single" != "$fins" ]; then
    echo "FAILED: $name: $fins instructions per repeated run, but $single in a single profiled run" >&2
    return 1
  fi
  read -r sm smin smax sins sev <<<"$slow"
  local ratio
  ratio=$(awk -v a="$sm" -v b="$fm" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
  local ref=${iosim[$name]:-}
  local vs="-"
  [ -n "$ref" ] && vs=$(awk -v r="$ref" -v b="$fm" 'BEGIN { printf "%.1f", (b > 0 ? r / b : 0) }')
  rows+=("| $name | $fm ($fmin–$fmax) | $fins | $fev | $sm ($smin–$smax) | $sins | $ratio | ${ref:--} | $vs |")
  echo "  $name: default $fm us, -O0 $sm us"
}

echo "seed benchmarks (io-sim's suite):"
row threadDelay 2000 seed/threadDelay.sim
row registerDelay 2000 seed/registerDelay.sim
row timeout_fail 2000 seed/timeout_fail.sim
row timeout_succeed 2000 seed/timeout_succeed.sim
row timeout_race 2000 seed/timeout_race.sim
row "async 50 silent" 300 -q seed/async.sim 50
row "forkIO 50 silent" 300 -q seed/forkIO.sim 50
row "bottleneck silent" 5 -q seed/bottleneck.sim
row "async 50 say" 300 seed/async.sim 50
row "forkIO 50 say" 300 seed/forkIO.sim 50
row "bottleneck say" 5 seed/bottleneck.sim
row "async 250" 100 -q seed/async.sim 250
row "forkIO 250" 100 -q seed/forkIO.sim 250

echo "compute programs:"
crow=()
for prog in fib loop closures lists; do
  fast=$(bench 10 -q compute/$prog.sim) || exit 1
  slow=$(bench 10 -q -O0 compute/$prog.sim) || exit 1
  read -r fm fmin fmax fins _ <<<"$fast"
  read -r sm _ _ _ _ <<<"$slow"
  lua="-"
  lratio="-"
  if command -v lua5.4 >/dev/null 2>&1; then
    expected=$(sed -n 's/^-- expect: //p' "$root/bench/compute/$prog.sim")
    got=$(lua5.4 "$root/bench/compute/$prog.lua")
    [ "$got" = "$expected" ] || { echo "FAILED: the Lua twin of $prog printed $got, not $expected" >&2; exit 1; }
    # Lua: the median of 5 runs, each a process (start-up included, ~1 ms)
    lua=$(for _ in 1 2 3 4 5; do
            s=$(date +%s%N); lua5.4 "$root/bench/compute/$prog.lua" >/dev/null; e=$(date +%s%N)
            echo $(((e - s) / 1000))
          done | sort -n | sed -n 3p)
    lratio=$(awk -v a="$fm" -v b="$lua" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
  fi
  crow+=("| $prog | $fm ($fmin–$fmax) | $fins | $sm | $lua | $lratio |")
  echo "  $prog: default $fm us, -O0 $sm us, lua $lua us"
done

{
  echo "# Benchmark results"
  echo
  echo "Written by \`make bench\` (bench/run.sh) on $(date -u +%Y-%m-%d): $(nproc) cores,"
  echo "$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //'), $(cc --version | head -1)."
  echo "Every figure is the time of one complete simulation (a fresh heap, fresh threads),"
  echo "in microseconds: the median over many runs in one process after a warm-up run,"
  echo "with the fastest and slowest in brackets. Instruction and event counts are per run"
  echo "and identical in every run. Wall times vary between machines and runs; compare"
  echo "ratios measured in one run."
  echo
  echo "## io-sim's benchmark suite (bench/seed)"
  echo
  echo "| benchmark | default µs | instructions | events | -O0 µs | -O0 instructions | -O0 / default | io-sim µs | io-sim / default |"
  echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
  printf '%s\n' "${rows[@]}"
  echo
  echo "-O0 is io-sim's bind strategy (every bind allocates a heap continuation); the"
  echo "default keeps one-shot continuations on the thread stack. io-sim's figures are"
  echo "io-sim 1.6 \"as it is\" from ../shared/reference/iosim-seed-bench.md (another run"
  echo "on the same kind of machine), so that column is indicative only."
  echo
  echo "## Compute programs (bench/compute)"
  echo
  echo "| program | default µs | instructions | -O0 µs | Lua 5.4 µs | default / Lua |"
  echo "| --- | --- | --- | --- | --- | --- |"
  printf '%s\n' "${crow[@]}"
  echo
  echo "The Lua twins run as separate processes (start-up included, about a millisecond);"
  echo "\"-\" where lua5.4 is not installed."
} >"$out"
echo "wrote $out"
