#!/bin/bash
# The benchmark harness (make bench): bench/RESULTS.md, every figure from
# this one run.
#
# - io-sim's benchmark suite (bench/seed): each program runs many times in one
#   simvm process (--repeat: each run a fresh simulation, short ones timed in
#   batches), per-run median with min and max, beside -O0 (io-sim's bind
#   strategy; the two mixed --actions/--continuations too, in a 2x2 table
#   of their own) and io-sim 1.6's own per-run figures, measured side by side with
#   simvm on this machine kind (../shared/reference/iosim-seed-bench.md).
#   The per-run instruction and event counts must equal a single profiled
#   run's: nothing is cached between runs. Output is really written (to a
#   file), not discarded.
# - a million idle threads: peak RSS of forkIO with 1,000,000 threads.
# - compute programs (bench/compute) against their Lua 5.4 twins, the same
#   algorithm on the same data structures, both timed in-process per run by
#   CPU time (simvm --repeat's cpu median; bench/compute/twin.lua).
# - schedule exploration: schedules per second for a two-thread program of
#   about 20 steps (bench/explore), what sleep sets save against plain
#   depth-first search on the three examples (the same outcomes found), and
#   how soon pct finds the overdraft example.
# - the A/B axes (docs/PROFILE.md "The A/B axes"): bench/ab/binds.sim under
#   each of the four combinations of --actions and --continuations: time per
#   run, the VM's binds (--profile-json), and machine instructions
#   (callgrind, installed when run as root) and ns per bind of the program.
# - each figure against bench/baseline.json, the last accepted run (make
#   bench-accept copies this run's build/bench-latest.json there): a
#   regression over 10% is flagged.
# usage: bench/run.sh SIMVM [RESULTS.md]   (BENCH_BUILD=DIR: peakrss and
#        bench-latest.json there, not beside SIMVM)
#        bench/run.sh --ab SIMVM   only the A/B table, printed (Markdown)
set -u
ab_only=false
if [ "${1:-}" = --ab ]; then ab_only=true; shift; fi
simvm=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
build=$(cd "${BENCH_BUILD:-$(dirname "$simvm")}" && pwd) # where peakrss is and bench-latest.json goes
root=$(cd "$(dirname "$0")/.." && pwd)
out=${2:-$root/bench/RESULTS.md}
baseline=$root/bench/baseline.json
latest=$build/bench-latest.json
peakrss=$build/peakrss
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if ! command -v valgrind >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing valgrind for the A/B table's machine instructions ..." >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind >/dev/null 2>&1 || true
fi
if ! $ab_only && ! command -v lua5.4 >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing lua5.4 for the compute twins ..."
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq lua5.4 >/dev/null 2>&1 || true
fi

# io-sim 1.6 (GHC 9.0.2 -O2), µs per run, from ../shared/reference/iosim-seed-bench.md
declare -A iosim=(
  [threadDelay]=0.46 [registerDelay]=1.09 [timeout_fail]=1.56 [timeout_succeed]=0.80 [timeout_race]=0.97
  ["async 10 silent"]=27.2 ["forkIO 10 silent"]=5.7
  ["async 50 silent"]=179 ["forkIO 50 silent"]=41.0 ["bottleneck silent"]=385000
  ["async 50 say"]=178 ["forkIO 50 say"]=39.9 ["bottleneck say"]=383000
  ["async 250"]=1250 ["forkIO 250"]=349
)
# the targets of issue 7: the least io-sim/simvm ratio, and a most µs per run where one is set
declare -A min_ratio=(
  [threadDelay]=3 [registerDelay]=3 [timeout_fail]=3 [timeout_succeed]=3 [timeout_race]=3
  ["async 10 silent"]=1 ["forkIO 10 silent"]=1
  ["async 50 silent"]=10 ["forkIO 50 silent"]=10 ["bottleneck silent"]=15
  ["async 50 say"]=10 ["forkIO 50 say"]=10 ["bottleneck say"]=10
  ["async 250"]=10 ["forkIO 250"]=10
)
declare -A max_us=(
  [threadDelay]=0.15 [registerDelay]=0.15 [timeout_fail]=0.15 [timeout_succeed]=0.15 [timeout_race]=0.15
  ["bottleneck silent"]=25000
)

declare -A figure # this run's default µs per row, for the baseline
failed=0

# bench RUNS SIMVM-ARGS... : "median min max cpu instructions events" (µs per
# run), from BENCH_ROUNDS processes of RUNS runs each: the median of their
# per-run medians (wall and CPU), the least min and the greatest max. One
# process is not enough here: this machine's two cores run at speeds that
# differ by up to 2x from minute to minute, and a process stays on one. (The
# io-sim reference takes the median over rounds of each process's median.)
BENCH_ROUNDS=${BENCH_ROUNDS:-3}
bench() {
  local runs=$1 round
  shift
  : >"$tmp/rounds"
  for ((round = 0; round < BENCH_ROUNDS; round++)); do
    if ! (cd "$root/bench" && "$simvm" --repeat "$runs" "$@" >"$tmp/stdout" 2>"$tmp/err"); then
      echo "FAILED: simvm --repeat $runs $*" >&2
      sed 's/^/  /' "$tmp/err" | tail -5 >&2
      return 1
    fi
    sed -n 's/^runs: [0-9]*, median \([0-9.]*\) us, min \([0-9.]*\) us, max \([0-9.]*\) us per run .*, cpu median \([0-9.]*\) us; \([0-9]*\) instructions and \([0-9]*\) events per run$/\1 \2 \3 \4 \5 \6/p' "$tmp/err" >>"$tmp/rounds"
  done
  local median cpu
  median=$(cut -d' ' -f1 "$tmp/rounds" | sort -g | sed -n "$(((BENCH_ROUNDS + 1) / 2))p")
  cpu=$(cut -d' ' -f4 "$tmp/rounds" | sort -g | sed -n "$(((BENCH_ROUNDS + 1) / 2))p")
  awk -v median="$median" -v cpu="$cpu" 'NR == 1 || $2 < min { min = $2 } $3 > max { max = $3 }
    { ins = $5; events = $6 } END { print median, min, max, cpu, ins, events }' "$tmp/rounds"
}

# fmt US: a time in the unit that reads best
fmt() { awk -v t="$1" 'BEGIN { if (t >= 10000) printf "%.1f ms", t / 1000; else if (t >= 100) printf "%.0f µs", t; else if (t >= 1) printf "%.2f µs", t; else printf "%.3f µs", t }'; }

# The A/B axes: bench/ab/binds.sim, AB_N steps, under each combination.
# A run's machine instructions are callgrind's count inside vm_run for two
# runs less one (the load and the process's start cancel out). The VM's
# binds differ between the two --actions (direct actions bind fewer
# times), so every per-bind figure divides by the program's binds: the
# VM's binds under --actions=reified, where each of the program's binds is
# one. Fills abrows (the table) and abaxes (what each axis costs).
AB_N=${AB_N:-20000}
abrows=()
abaxes=()
ab_table() {
  local combo actions conts name t binds heap ins ir
  local -A ns_of ir_of
  local program_binds
  program_binds=$( (cd "$root/bench" && "$simvm" --actions=reified --profile-json "$tmp/ab.json" -q ab/binds.sim "$AB_N" >/dev/null 2>&1) &&
                   sed -n 's/^  "binds": {"binds": \([0-9]*\),.*/\1/p' "$tmp/ab.json")
  for combo in "direct stack" "direct heap" "reified stack" "reified heap"; do
    read -r actions conts <<<"$combo"
    name="--actions=$actions --continuations=$conts"
    [ "$combo" = "direct stack" ] && name="$name (default)"
    [ "$combo" = "reified heap" ] && name="$name (-O0)"
    t=$(bench 11 -q --actions=$actions --continuations=$conts ab/binds.sim "$AB_N") || { failed=1; return; }
    read -r tm _ _ _ ins _ <<<"$t"
    (cd "$root/bench" && "$simvm" --actions=$actions --continuations=$conts --profile-json "$tmp/ab.json" -q ab/binds.sim "$AB_N" >/dev/null 2>&1)
    binds=$(sed -n 's/^  "binds": {"binds": \([0-9]*\),.*/\1/p' "$tmp/ab.json")
    heap=$(sed -n 's/^  "binds": .*"heap_continuations": \([0-9]*\)}.*/\1/p' "$tmp/ab.json")
    ir="-"
    if command -v valgrind >/dev/null 2>&1; then
      local one two
      one=$(cd "$root/bench" && valgrind --tool=callgrind --toggle-collect=vm_run --callgrind-out-file=/dev/null \
              "$simvm" --repeat 1 -q --actions=$actions --continuations=$conts ab/binds.sim "$AB_N" 2>&1 >/dev/null | sed -n 's/.*Collected : //p')
      two=$(cd "$root/bench" && valgrind --tool=callgrind --toggle-collect=vm_run --callgrind-out-file=/dev/null \
              "$simvm" --repeat 2 -q --actions=$actions --continuations=$conts ab/binds.sim "$AB_N" 2>&1 >/dev/null | sed -n 's/.*Collected : //p')
      ir=$(awk -v a="$one" -v b="$two" -v n="$program_binds" 'BEGIN { printf "%.1f", (b - a) / n }')
    fi
    local ns
    ns=$(awk -v t="$tm" -v n="$program_binds" 'BEGIN { printf "%.1f", t * 1000 / n }')
    ns_of[$combo]=$ns
    ir_of[$combo]=$ir
    figure["ab $actions $conts"]=$tm
    abrows+=("| $name | $(fmt "$tm") | $ins | $binds | $heap | $ir | $ns |")
    echo "  $name: $(fmt "$tm") per run, $binds binds ($heap on the heap), $ir machine instructions and $ns ns per bind" >&2
  done
  # what each axis costs per bind: the difference it makes with the other axis either way
  local other
  for other in stack heap; do
    abaxes+=("| reified actions, with $other continuations | $(awk -v a="${ir_of[reified $other]}" -v b="${ir_of[direct $other]}" 'BEGIN { if (a == "-") print "-"; else printf "%+.1f", a - b }') | $(awk -v a="${ns_of[reified $other]}" -v b="${ns_of[direct $other]}" 'BEGIN { printf "%+.1f", a - b }') |")
  done
  for other in direct reified; do
    abaxes+=("| heap continuations, with $other actions | $(awk -v a="${ir_of[$other heap]}" -v b="${ir_of[$other stack]}" 'BEGIN { if (a == "-") print "-"; else printf "%+.1f", a - b }') | $(awk -v a="${ns_of[$other heap]}" -v b="${ns_of[$other stack]}" 'BEGIN { printf "%+.1f", a - b }') |")
  done
  ab_binds=$program_binds
}

# The A/B section of RESULTS.md
ab_markdown() {
  echo "## The A/B axes (bench/ab/binds.sim)"
  echo
  echo "bench/ab/binds.sim with $AB_N steps ($ab_binds binds of the program: the VM's"
  echo "binds under \`--actions=reified\`, where each is one) under the four combinations"
  echo "of \`--actions\` and \`--continuations\` (docs/PROFILE.md, \"The A/B axes\"). Time:"
  echo "the median wall time per run (\`--repeat 11\`, the median of $BENCH_ROUNDS processes'); binds and heap continuations: the"
  echo "VM's (\`--profile-json\`); per bind: a run's machine instructions (callgrind, in"
  echo "vm_run) and its time, divided by the program's $ab_binds binds in every row."
  echo
  echo "| combination | time per run | VM instructions | VM binds | on the heap | machine instructions per bind | ns per bind |"
  echo "| --- | --- | --- | --- | --- | --- | --- |"
  printf '%s\n' "${abrows[@]}"
  echo
  echo "What each axis costs per bind of the program, with the other axis either way:"
  echo
  echo "| axis | machine instructions per bind | ns per bind |"
  echo "| --- | --- | --- |"
  printf '%s\n' "${abaxes[@]}"
}

if $ab_only; then
  echo "the A/B axes:" >&2
  ab_table
  ab_markdown
  exit $failed
fi

rows=()
seedab=() # the seed programs under the four --actions/--continuations
row() { # NAME RUNS ARGS...
  local name=$1 runs=$2
  shift 2
  local fast slow dheap rstack
  fast=$(bench "$runs" "$@") && slow=$(bench "$runs" -O0 "$@") &&
    dheap=$(bench "$runs" --actions=direct --continuations=heap "$@") &&
    rstack=$(bench "$runs" --actions=reified --continuations=stack "$@") || { failed=1; return; }
  read -r fm fmin fmax _ fins fev <<<"$fast"
  read -r sm _ _ _ _ _ <<<"$slow"
  seedab+=("| $name | $(fmt "$fm") | $(fmt "${dheap%% *}") | $(fmt "${rstack%% *}") | $(fmt "$sm") |")
  # nothing is cached between runs: a single profiled run counts the same
  (cd "$root/bench" && "$simvm" --profile-json "$tmp/profile.json" "$@" >/dev/null 2>&1)
  local single
  single=$(sed -n 's/^  "instructions": \([0-9]*\),$/\1/p' "$tmp/profile.json")
  if [ "$single" != "$fins" ]; then
    echo "FAILED: $name: $fins instructions per repeated run, but $single in a single profiled run" >&2
    failed=1
    return
  fi
  figure[$name]=$fm
  local ref=${iosim[$name]} vs target met
  vs=$(awk -v r="$ref" -v b="$fm" 'BEGIN { printf "%.1f", r / b }')
  target="≥ ${min_ratio[$name]}×"
  [ -n "${max_us[$name]:-}" ] && target="$target, ≤ $(fmt "${max_us[$name]}")"
  met=$(awk -v v="$vs" -v r="${min_ratio[$name]}" -v t="$fm" -v m="${max_us[$name]:-0}" \
        'BEGIN { print (v + 0 >= r + 0 && (m == 0 || t + 0 <= m + 0)) ? "yes" : "**no**" }')
  rows+=("| $name | $(fmt "$fm") ($(fmt "$fmin")–$(fmt "$fmax")) | $fins | $fev | $(fmt "$sm") | $(fmt "$ref") | $vs× | $target | $met |")
  echo "  $name: $(fmt "$fm") per run (-O0 $(fmt "$sm")), io-sim $(fmt "$ref"): $vs×, target $target: $met"
}

echo "io-sim's benchmark suite (bench/seed):"
row threadDelay 20000 seed/threadDelay.sim
row registerDelay 20000 seed/registerDelay.sim
row timeout_fail 20000 seed/timeout_fail.sim
row timeout_succeed 20000 seed/timeout_succeed.sim
row timeout_race 20000 seed/timeout_race.sim
row "async 10 silent" 2000 -q seed/async.sim 10
row "forkIO 10 silent" 2000 -q seed/forkIO.sim 10
row "async 50 silent" 500 -q seed/async.sim 50
row "forkIO 50 silent" 500 -q seed/forkIO.sim 50
row "bottleneck silent" 6 -q seed/bottleneck.sim
row "async 50 say" 500 seed/async.sim 50
row "forkIO 50 say" 500 seed/forkIO.sim 50
row "bottleneck say" 6 seed/bottleneck.sim
row "async 250" 100 -q seed/async.sim 250
row "forkIO 250" 100 -q seed/forkIO.sim 250

echo "a million idle threads:"
idle=""
if [ -x "$peakrss" ]; then
  rss() { (cd "$root/bench" && "$peakrss" "$simvm" -q seed/forkIO.sim "$1" 2>&1 >/dev/null | sed -n 's/^peak_rss_kb \([0-9]*\) .*/\1/p'); }
  small=$(rss 1000)
  big=$(rss 1000000)
  if [ -z "$small" ] || [ -z "$big" ]; then
    echo "FAILED: $peakrss measured no peak RSS of seed/forkIO.sim" >&2
    failed=1
    small=0 big=0
  fi
  per=$(awk -v a="$small" -v b="$big" 'BEGIN { printf "%.0f", (b - a) * 1024 / 999000 }')
  mb=$(awk -v b="$big" 'BEGIN { printf "%.0f", b / 1024 }')
  met=$(awk -v b="$big" -v mb="$mb" -v p="$per" 'BEGIN { print (b > 0 && mb < 600 && p <= 512) ? "yes" : "**no**" }')
  idle="| forkIO, 1,000,000 threads parked in delay | $mb MB | $per | < 600 MB, ≤ 512 B per thread | $met |"
  figure["idle threads MB"]=$mb
  echo "  peak RSS $mb MB, $per bytes per thread: $met"
fi

# lua_twin DIR PROG RUNS: the CPU µs per run of PROG's Lua 5.4 twin
# (bench/DIR/PROG.lua, through bench/compute/twin.lua), its answer checked
# against the program's expected output; fails when they differ
lua_twin() {
  local expected got
  expected=$(sed -n 's/.*-- expect: //p' "$root/bench/$1/$2.sim")
  got=$(cd "$root/bench/compute" && lua5.4 twin.lua "../$1/$2.lua" "$3" 2>"$tmp/lua")
  if [ "$got" != "$expected" ]; then
    echo "FAILED: the Lua twin of $1/$2 printed $got, not $expected" >&2
    return 1
  fi
  cat "$tmp/lua"
}

echo "compute programs against their Lua 5.4 twins:"
crow=()
for prog in fib loop closures lists; do
  fast=$(bench 11 -q compute/$prog.sim) && slow=$(bench 11 -q -O0 compute/$prog.sim) || { failed=1; continue; }
  read -r fm _ _ fcpu fins _ <<<"$fast"
  read -r sm _ _ _ _ _ <<<"$slow"
  figure[$prog]=$fcpu
  lua="-" lratio="-" met="-"
  limit=1.0
  [ "$prog" = lists ] && limit=0.7
  if command -v lua5.4 >/dev/null 2>&1; then
    lua=$(lua_twin compute "$prog" 10) || { failed=1; continue; }
    lratio=$(awk -v a="$fcpu" -v b="$lua" 'BEGIN { printf "%.2f", a / b }')
    met=$(awk -v r="$lratio" -v l="$limit" 'BEGIN { print (r + 0 <= l + 0) ? "yes" : "**no**" }')
    lua=$(fmt "$lua")
  fi
  crow+=("| $prog | $(fmt "$fcpu") | $fins | $(fmt "$sm") | $lua | $lratio | ≤ $limit | $met |")
  echo "  $prog: $(fmt "$fcpu") CPU per run (-O0 $(fmt "$sm") wall), Lua $lua: $lratio, target ≤ $limit: $met"
done

echo "the standard library (bench/library, bench/history):"
lrow=()
for prog in map sort; do
  r=$(bench 3 -q library/$prog.sim) || { failed=1; continue; }
  read -r _ _ _ lcpu lins _ <<<"$r"
  figure["library $prog"]=$lcpu
  lua="-" lratio="-" met="-"
  if command -v lua5.4 >/dev/null 2>&1; then
    lua=$(lua_twin library "$prog" 5) || { failed=1; continue; }
    lratio=$(awk -v a="$lcpu" -v b="$lua" 'BEGIN { printf "%.1f", a / b }')
    met=$(awk -v r="$lratio" 'BEGIN { print (r + 0 <= 1.5) ? "yes" : "**no**" }')
    lua=$(fmt "$lua")
  fi
  lrow+=("| $prog | $(fmt "$lcpu") | $lins | $lua | $lratio | ≤ 1.5 | $met |")
  echo "  $prog: $(fmt "$lcpu") CPU per run, Lua $lua: $lratio, target ≤ 1.5: $met"
done
echo "the language (bench/lang):"
grow=()
for prog in match; do
  r=$(bench 5 -q lang/$prog.sim) || { failed=1; continue; }
  read -r _ _ _ gcpu gins _ <<<"$r"
  figure["lang $prog"]=$gcpu
  lua="-" lratio="-" met="-"
  if command -v lua5.4 >/dev/null 2>&1; then
    lua=$(lua_twin lang "$prog" 5) || { failed=1; continue; }
    lratio=$(awk -v a="$gcpu" -v b="$lua" 'BEGIN { printf "%.2f", a / b }')
    met=$(awk -v r="$lratio" 'BEGIN { print (r + 0 <= 1.0) ? "yes" : "**no**" }')
    lua=$(fmt "$lua")
  fi
  grow+=("| $prog | $(fmt "$gcpu") | $gins | $lua | $lratio | ≤ 1.0 | $met |")
  echo "  $prog: $(fmt "$gcpu") CPU per run, Lua $lua: $lratio, target ≤ 1.0: $met"
done
r=$(bench 3 -q library/net.sim) && {
  read -r _ _ _ ncpu nins _ <<<"$r"
  figure["library net"]=$ncpu
  rate=$(awk -v t="$ncpu" 'BEGIN { printf "%.0f", 100000 / (t / 1e6) }')
  met=$(awk -v r="$rate" 'BEGIN { print (r >= 2000000) ? "yes" : "**no**" }')
  netrow="| net: 100,000 messages between 10 nodes | $(fmt "$ncpu") | $nins | $rate messages a second | ≥ 2,000,000 a second | $met |"
  echo "  net: $rate messages a second, target ≥ 2,000,000: $met"
} || failed=1
hrow=()
for kind in ok stale; do
  r=$(bench 2 -q history/register.sim $kind) || { failed=1; continue; }
  read -r _ _ _ hcpu hins _ <<<"$r"
  figure["history $kind"]=$hcpu
  met=$(awk -v t="$hcpu" 'BEGIN { print (t < 1e6) ? "yes" : "**no**" }')
  hrow+=("| checkLinearizable, 1,000 register operations of 6 clients ($kind) | $(fmt "$hcpu") | $hins | | < 1 s | $met |")
  echo "  history ($kind): $(fmt "$hcpu"), target < 1 s: $met"
done

echo "the A/B axes (bench/ab/binds.sim):"
ab_table 2>&1

echo "schedule exploration (docs/EXPLORE.md):"
# schedules per second: the best of three sweeps of 200,000 schedules of a
# two-thread program of about 20 steps, timed from outside (load and all)
erow=()
explore_rate() { # STRATEGY -> schedules per second
  local best=0 t0 t1 rate
  for _ in 1 2 3; do
    t0=$(date +%s%N)
    (cd "$root/bench" && "$simvm" --explore 200000 --strategy "$1" -q explore/two_threads.sim >"$tmp/explore" 2>&1)
    t1=$(date +%s%N)
    rate=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", 200000 / ((b - a) / 1e9) }')
    [ "$rate" -gt "$best" ] && best=$rate
  done
  echo "$best"
}
# the default schedule's steps: the first schedule of the depth-first search
steps=$(cd "$root/bench" && "$simvm" --explore 1 --strategy exhaustive --json explore/two_threads.sim |
        sed -n 's/^{"schedule": 1, .*"steps": \([0-9]*\),.*/\1/p')
for strategy in pct random; do
  rate=$(explore_rate $strategy)
  met=$(awk -v r="$rate" 'BEGIN { print (r >= 200000) ? "yes" : "**no**" }')
  figure["explore $strategy us"]=$(awk -v r="$rate" 'BEGIN { printf "%.3f", 1e6 / r }')
  erow+=("| $strategy, two threads, $steps steps (bench/explore/two_threads.sim) | $rate | ≥ 200000 | $met |")
  echo "  $strategy: $rate schedules per second: $met"
done
# pct against random at 101 threads: SCTBench's twostage_100, 5,000
# schedules each (neither finds its bug), the best of three, timed from outside
many_rate() { # STRATEGY -> schedules per second
  local best=0 t0 t1 rate
  for _ in 1 2 3; do
    t0=$(date +%s%N)
    (cd "$tmp" && "$simvm" --explore 5000 --strategy "$1" -q --no-shrink --schedule-out /dev/null \
       "$root/bench/explore/sctbench/twostage_100.sim" >/dev/null 2>&1)
    t1=$(date +%s%N)
    rate=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", 5000 / ((b - a) / 1e9) }')
    [ "$rate" -gt "$best" ] && best=$rate
  done
  echo "$best"
}
pct_many=$(many_rate pct)
random_many=$(many_rate random)
many_ratio=$(awk -v a="$pct_many" -v b="$random_many" 'BEGIN { printf "%.2f", a / b }')
met=$(awk -v r="$many_ratio" 'BEGIN { print (r >= 0.8) ? "yes" : "**no**" }')
erow+=("| pct, 101 threads (twostage_100) | $pct_many, $many_ratio× random's $random_many | ≥ 0.8× random | $met |")
echo "  pct at 101 threads: $pct_many schedules per second, random $random_many: $many_ratio: $met"
# SCTBench: what each strategy finds, and the fixed versions
bash "$root/bench/sctbench.sh" "$simvm" >"$tmp/sctbench.md"
sct_line=$(tail -1 "$tmp/sctbench.md")
echo "  $sct_line"
# pruning: exhaustive (sleep sets) against plain depth-first, the whole
# space within 2 preemptions, with the same outcomes
prow=()
for ex in overdraft lost_update dining; do
  for strategy in exhaustive dfs; do
    (cd "$tmp" && "$simvm" --explore 100000000 --strategy $strategy --preemptions 2 --no-shrink --schedule-out /dev/null \
       --json "$root/examples/$ex.sim" >"$tmp/$strategy.jsonl")
    grep -v '^{"summary"' "$tmp/$strategy.jsonl" | sed 's/^{"schedule": [0-9]*, //; s/, "steps".*//' | LC_ALL=C sort -u >"$tmp/$strategy.outcomes"
  done
  pruned=$(sed -n 's/.*"schedules": \([0-9]*\),.*/\1/p' "$tmp/exhaustive.jsonl")
  abandoned=$(sed -n 's/.*"abandoned": \([0-9]*\),.*/\1/p' "$tmp/exhaustive.jsonl")
  plain=$(sed -n 's/.*"schedules": \([0-9]*\),.*/\1/p' "$tmp/dfs.jsonl")
  same=no
  cmp -s "$tmp/exhaustive.outcomes" "$tmp/dfs.outcomes" && same=yes
  outcomes=$(wc -l <"$tmp/dfs.outcomes")
  ratio=$(awk -v a="$pruned" -v b="$plain" 'BEGIN { printf "%.3f", a / b }')
  runs=$(awk -v a="$pruned" -v c="$abandoned" -v b="$plain" 'BEGIN { printf "%.3f", (a + c) / b }')
  met=$(awk -v r="$ratio" -v s="$same" 'BEGIN { print (r <= 1 / 3 && s == "yes") ? "yes" : "**no**" }')
  prow+=("| $ex.sim | $plain | $pruned (+ $abandoned abandoned) | $ratio ($runs with them) | $outcomes, $same | ≤ 0.333, the same outcomes | $met |")
  echo "  $ex: exhaustive $pruned schedules (+ $abandoned abandoned), plain dfs $plain: $ratio, same outcomes: $same: $met"
done
# the overdraft: found among the first 100 pct schedules, shrunk to at most 2 deviations
(cd "$tmp" && "$simvm" --explore 100 --json --schedule-out /dev/null "$root/examples/overdraft.sim" >"$tmp/overdraft.jsonl")
found=$(tail -1 "$tmp/overdraft.jsonl" | jq -r '.summary.failing_classes[0].seed // empty')
shrunk=$(tail -1 "$tmp/overdraft.jsonl" | jq -r '.summary.failing_classes[0].shrunk.deviations // empty')
met=$(awk -v f="${found:-999}" -v s="${shrunk:-999}" 'BEGIN { print (f <= 100 && s <= 2) ? "yes" : "**no**" }')
orow="| overdraft.sim, pct | seed ${found:-none} | ${shrunk:-?} | within 100, ≤ 2 deviations | $met |"
echo "  overdraft: first found at seed ${found:-none}, shrunk to ${shrunk:-?} deviations: $met"

# this run's figures, and each against the baseline
{
  echo "{"
  echo "  \"date\": \"$(date -u +%Y-%m-%d)\","
  first=1
  for name in "${!figure[@]}"; do
    [ $first = 1 ] || echo ","
    first=0
    printf '  "%s": %s' "$name" "${figure[$name]}"
  done
  echo
  echo "}"
} >"$latest"
brows=()
if [ -f "$baseline" ]; then
  for name in $(printf '%s\n' "${!figure[@]}" | LC_ALL=C sort | tr ' ' '\001'); do
    name=${name//$'\001'/ }
    base=$(sed -n "s/^  \"$name\": \([0-9.]*\),\{0,1\}$/\1/p" "$baseline")
    [ -n "$base" ] || continue
    ratio=$(awk -v a="${figure[$name]}" -v b="$base" 'BEGIN { printf "%.2f", a / b }')
    flag=$(awk -v r="$ratio" 'BEGIN { print (r > 1.10) ? "**regression**" : "" }')
    brows+=("| $name | ${figure[$name]} | $base | $ratio | $flag |")
    [ -n "$flag" ] && echo "  regression: $name ${figure[$name]} against $base in the baseline ($ratio×)"
  done
fi

{
  echo "# Benchmark results"
  echo
  echo "Written by \`make bench\` (bench/run.sh) on $(date -u +%Y-%m-%d): $(nproc) cores,"
  echo "$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //'), $(cc --version | head -1)."
  case $simvm in
    */release/simvm) built=", the release build (\`make release\`: compiled by gcc with the counts of tools/pgo_train.sh's training runs)" ;;
    *) built="" ;;
  esac
  echo "The program timed is \`${simvm#"$root"/}\`$built."
  echo "Every figure below was measured in this one run. Wall times vary between"
  echo "machines and runs: compare ratios measured in one run."
  echo
  echo "## io-sim's benchmark suite (bench/seed)"
  echo
  echo "One complete simulation per run: the program loads once per process (its"
  echo "top-level values computed, then kept as an old generation no run collects),"
  echo "and each run starts fresh threads, clock, timers, run queue and young heap"
  echo "(docs/PROFILE.md, \"Load once, run many\"); run 1, which also loads, is left out. The median"
  echo "over $BENCH_ROUNDS processes of each one's median over many runs (\`--repeat\`; runs"
  echo "under 20 µs timed in batches; the cores of this machine change speed, and a"
  echo "process stays on one), fastest and slowest in brackets, beside \`-O0\` (io-sim's bind strategy: every"
  echo "action built as a value, every bind a heap continuation). io-sim's figures are"
  echo "io-sim 1.6's per-run times measured side by side with simvm on this machine kind"
  echo "(../shared/reference/iosim-seed-bench.md). Instruction and event counts are per"
  echo "run, identical in every run and equal to a single profiled run's. \"say\" rows"
  echo "write their output to a file."
  echo
  echo "| benchmark | simvm | instructions | events | simvm -O0 | io-sim | io-sim / simvm | target | met |"
  echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
  printf '%s\n' "${rows[@]}"
  if [ -n "$idle" ]; then
    echo
    echo "## Idle threads"
    echo
    echo "Peak resident memory of the whole process (tools/peakrss.c), and its growth per"
    echo "thread between 1,000 and 1,000,000 threads: everything a parked thread costs,"
    echo "the list of thread ids the program keeps included."
    echo
    echo "| program | peak RSS | bytes per thread | target | met |"
    echo "| --- | --- | --- | --- | --- |"
    echo "$idle"
  fi
  echo
  echo "## Compute programs (bench/compute)"
  echo
  echo "simvm's CPU time per run (the median over $BENCH_ROUNDS processes of \`--repeat\`'s cpu median) against the"
  echo "Lua 5.4 twin's, also in-process per run by CPU time (bench/compute/twin.lua, after"
  echo "a warm-up run). The twins run the same algorithm on the same data structures:"
  echo "the lists twin builds cons cells (two-element tables) and uses the prelude's"
  echo "range, map, filter, foldl and reverse (simvm's reverse is the builtin"
  echo "reverseOnto, a loop in C; the twin's is a Lua loop)."
  echo
  echo "| program | simvm (CPU) | instructions | simvm -O0 (wall) | Lua 5.4 (CPU) | simvm / Lua | target | met |"
  echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
  printf '%s\n' "${crow[@]}"
  echo
  echo "## The standard library (docs/LIBRARY.md)"
  echo
  echo "CPU time per run as above. map inserts 100,000 keys into the map module's AVL"
  echo "tree (written in .sim) and looks each up, against Lua 5.4's table (a hash table"
  echo "in C); sort sorts 100,000 ints with the builtin sort (a merge sort in C) against"
  echo "table.sort. Both twins build their data in the run, as the .sim programs do."
  echo
  echo "| program | simvm (CPU) | instructions | Lua 5.4 (CPU) | simvm / Lua | target | met |"
  echo "| --- | --- | --- | --- | --- | --- | --- |"
  printf '%s\n' "${lrow[@]}"
  echo
  echo "| program | simvm (CPU) | instructions | rate | target | met |"
  echo "| --- | --- | --- | --- | --- | --- |"
  echo "$netrow"
  printf '%s\n' "${hrow[@]}"
  echo
  echo "## The language (docs/LANGUAGE.md)"
  echo
  echo "CPU time per run as above. match dispatches 1,000,000 messages (records of"
  echo "five kinds, as a Raft node receives them) through a match that takes each apart,"
  echo "against Lua 5.4's if-chain on the same tables."
  echo
  echo "| program | simvm (CPU) | instructions | Lua 5.4 (CPU) | simvm / Lua | target | met |"
  echo "| --- | --- | --- | --- | --- | --- | --- |"
  printf '%s\n' "${grow[@]}"
  echo
  ab_markdown
  echo
  echo "The seed programs under the four combinations (the median per run, as in the"
  echo "first table; their traces are byte-identical in all four, as make test checks):"
  echo
  echo "| benchmark | direct, stack (default) | direct, heap | reified, stack | reified, heap (-O0) |"
  echo "| --- | --- | --- | --- | --- |"
  printf '%s\n' "${seedab[@]}"
  echo
  echo "## Schedule exploration (docs/EXPLORE.md)"
  echo
  echo "Schedules per second: the best of three sweeps of 200,000 schedules, timed from"
  echo "outside the process (the load, the default run that measures pct's steps and the"
  echo "report included), on one core."
  echo
  echo "| sweep | schedules per second | target | met |"
  echo "| --- | --- | --- | --- |"
  printf '%s\n' "${erow[@]}"
  echo
  echo "Pruning: every schedule within 2 preemptions, depth-first, with sleep sets"
  echo "(\`--strategy exhaustive\`) and without (\`dfs\`). Abandoned runs stopped early as"
  echo "equivalent to explored ones and are not schedules; the outcomes are the distinct"
  echo "results and failures, compared between the two."
  echo
  echo "| example | plain dfs | exhaustive | ratio | outcomes, the same | target | met |"
  echo "| --- | --- | --- | --- | --- | --- | --- |"
  printf '%s\n' "${prow[@]}"
  echo
  echo "| finding | first failing seed | shrunk to (deviations) | target | met |"
  echo "| --- | --- | --- | --- | --- |"
  echo "$orow"
  echo
  echo "### SCTBench"
  echo
  echo "The 16 buggy programs of SCTBench (github:mc-imperial/sctbench), translated to"
  echo ".sim in bench/explore/sctbench (each file names its C source; C variables are"
  echo "MVars that are always full, so that every access is a scheduling point and none"
  echo "yields), with SCTBench's thread counts; 10,000 schedules per program and strategy"
  echo "(bench/sctbench.sh)."
  echo
  sed '$d' "$tmp/sctbench.md"
  echo "$sct_line"
  if [ ${#brows[@]} -gt 0 ]; then
    echo
    echo "## Against the baseline"
    echo
    echo "bench/baseline.json holds the last accepted figures (µs per run, MB for the idle"
    echo "threads); \`make bench-accept\` makes this run's the baseline. Over 1.10 is flagged."
    echo
    echo "| figure | this run | baseline | ratio | |"
    echo "| --- | --- | --- | --- | --- |"
    printf '%s\n' "${brows[@]}"
  fi
} >"$out"
echo "wrote $out"
exit $failed
