#!/bin/bash
# The man pages (docs/man/simvm.1, simc.1) against the commands: each
# renders without a warning (groff -ww, and man -l when man is there), its
# OPTIONS name exactly the options --help lists, and its header the
# version --version prints; and docs/CLI.md names every option too.
# usage: run_man.sh BUILD_DIR
set -u
build=$(cd "$1" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0

fail() {
  echo "FAIL $1: $2"
  failed=$((failed + 1))
}

# check COMMAND EXTRA-OPTIONS...: EXTRA the options the man page lists
# that --help names only in passing (--trace=user)
check() {
  local name=$1 page=$root/docs/man/$1.1
  shift
  # renders without a warning
  if ! groff -man -Tascii -P-cbou -ww "$page" >"$tmp/page" 2>"$tmp/warnings" || [ -s "$tmp/warnings" ]; then
    fail "$name.1" "groff warns: $(head -n 3 "$tmp/warnings")"
  else passed=$((passed + 1)); fi
  if command -v man >/dev/null 2>&1; then
    if ! MANPAGER=cat MANWIDTH=80 man --warnings -l "$page" >/dev/null 2>"$tmp/warnings" || [ -s "$tmp/warnings" ]; then
      fail "$name.1" "man -l warns: $(head -n 3 "$tmp/warnings")"
    else passed=$((passed + 1)); fi
  fi
  # the options: --help's, and the man page's OPTIONS tags (a line indented
  # by 7 spaces that starts with '-': "-q, --quiet", "--max-steps N")
  { sh "$root/tools/help_options.sh" "$build/$name"; [ $# = 0 ] || printf '%s\n' "$@"; } | LC_ALL=C sort -u >"$tmp/help"
  awk '/^[A-Z][A-Z ]*$/ { in_options = ($0 == "OPTIONS") } in_options && /^       -/' "$tmp/page" |
    sed 's/^ *//' | tr ',' '\n' | sed 's/^ *//; s/ .*//' | LC_ALL=C sort -u >"$tmp/man"
  if [ ! -s "$tmp/man" ] || ! cmp -s "$tmp/help" "$tmp/man"; then
    fail "$name.1" "its options differ from $name --help's (< --help, > man page):"
    diff "$tmp/help" "$tmp/man" | grep '^[<>]' | head -10 | sed 's/^/    /'
  else passed=$((passed + 1)); fi
  # the version in the header (.TH NAME 1 DATE "simvm 0.1.0")
  local version
  version=$(sed -n 's/^\.TH [A-Z]* 1 [^ ]* "\([^"]*\)".*/\1/p' "$page")
  if [ "$version" != "$("$build/$name" --version)" ]; then
    fail "$name.1" "its header says '$version', $name --version '$("$build/$name" --version)'"
  else passed=$((passed + 1)); fi
  # docs/CLI.md writes each option in code: `--max-steps N`, `-q`
  local opt missing=""
  while read -r opt; do
    grep -qF "\`$opt" "$root/docs/CLI.md" || missing="$missing $opt"
  done <"$tmp/help"
  if [ -n "$missing" ]; then fail "docs/CLI.md" "does not name$missing ($name)"
  else passed=$((passed + 1)); fi
}

check simvm --trace=user
check simc

echo "man: $passed passed, $failed failed"
[ "$failed" = 0 ]
