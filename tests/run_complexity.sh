#!/bin/bash
# The complexity scan: every structure a script can grow, grown to n and
# to 4n (tests/complexity/*.sim, each taking n as its argument), must cost
# at most 5x the machine instructions at 4n that it costs at n, less the
# cost of the same script at n = 0 (start-up, the prelude, the script's
# own compilation). Instructions are counted by valgrind's cachegrind, so
# a loop in C that charges no work to the VM is counted too, and the
# count is the same on every run. A script may name its own n
# (`-- n: 2000`), its cost (`-- cost: n log n` allows 4n to cost
# 5 log 4n / log n times n, for sorting and trees) and options (`-- options: --trace`); a SCRIPT.sh instead
# writes a script of size n, for the compiler and the loader.
#
# usage: tests/run_complexity.sh BUILD [SCRIPT...]
set -u
build=${1:?usage: run_complexity.sh BUILD [SCRIPT...]}
shift
[ $# -gt 0 ] || set -- tests/complexity/*.sim tests/complexity/*.sh
if ! command -v valgrind >/dev/null 2>&1; then
  echo "run_complexity.sh: valgrind is needed (tools/deps.sh installs it)" >&2
  exit 1
fi

# machine instructions of one run: instructions SCRIPT N OPTIONS...
# (a SCRIPT.sh writes the script of size N)
instructions() {
  local script=$1 n=$2 args
  shift 2
  args=("$script" "$n")
  case $script in
  *.sh)
    sh "$script" "$n" >"$tmp/$(basename "$script").$n.sim" || return 1
    args=("$tmp/$(basename "$script").$n.sim")
    ;;
  esac
  local log
  log=$(valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
    "$build/simvm" "$@" "${args[@]}" 2>&1 >/dev/null) || {
    echo "$script $n: simvm failed:" >&2
    echo "$log" | grep -v '^==' >&2
    return 1
  }
  echo "$log" | sed -n 's/^==[0-9]*== I *refs: *//p' | tr -d ,
}

# one script: prints its line, fails when 4n costs over 5x n
scan() {
  local script=$1 n options base small large
  n=$(sed -n 's/^-- n: *//p' "$script")
  n=${n:-1000}
  options=$(sed -n 's/^-- options: *//p' "$script")
  cost=$(sed -n 's/^-- cost: *//p' "$script")
  # shellcheck disable=SC2086
  base=$(instructions "$script" 0 $options) &&
    small=$(instructions "$script" "$n" $options) &&
    large=$(instructions "$script" $((4 * n)) $options) || {
    printf 'FAIL %-28s did not run\n' "$script"
    return 1
  }
  if [ -z "$base" ] || [ -z "$small" ] || [ -z "$large" ] || [ "$small" -le "$base" ]; then
    printf 'FAIL %-28s no instruction count from valgrind\n' "$script"
    return 1
  fi
  awk -v s="$script" -v n="$n" -v b="$base" -v x="$small" -v y="$large" -v cost="${cost:-n}" 'BEGIN {
    r = (y - b) / (x - b)
    bound = cost == "n log n" ? 5 * log(4 * n) / log(n) : 5
    printf "%s %-32s n=%-5d %11.0f, 4n %11.0f: %5.2fx (at most %.1fx: cost %s)\n", (r <= bound ? "ok  " : "FAIL"), s, n, x - b, y - b, r, bound, cost
    exit r <= bound ? 0 : 1
  }'
}
export -f scan instructions
export build

# as many at a time as there are cores (each run is single-threaded); the
# lines print in the scripts' order whatever finishes first
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export tmp
count=$#
for ((j = 1; j <= count; j++)); do
  printf '%s %s\n' "$j" "${!j}"
done | xargs -P "$(nproc 2>/dev/null || echo 2)" -L 1 bash -c 'scan "$2" >"$tmp/$1" 2>&1 || touch "$tmp/$1.failed"' _
failed=0
for ((j = 1; j <= count; j++)); do
  cat "$tmp/$j"
  [ -e "$tmp/$j.failed" ] && failed=$((failed + 1))
done
echo "complexity: $((count - failed)) of $count scripts within their cost"
[ "$failed" -eq 0 ]
