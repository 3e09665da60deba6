#!/bin/bash
# make install into a temporary prefix puts exactly simvm, simc, the man
# pages and the editor files there; the installed simvm runs an example and
# man finds the installed page; make uninstall removes exactly those files
# (another file in bin/ stays), and then, without it, leaves the prefix empty.
# usage: run_install.sh MAKE BUILD_DIR
set -u
make=$1
build=$2
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
passed=0
failed=0

check() { # check NAME COMMAND...: passes when COMMAND succeeds
  local name=$1
  shift
  if "$@"; then passed=$((passed + 1)); else echo "FAIL install: $name"; failed=$((failed + 1)); fi
}
mk() { (cd "$root" && $make --no-print-directory "$@" BUILD="$build" INSTALL_FROM="$build" PREFIX="$prefix") >"$tmp/make.log" 2>&1; }

# what must be installed: the two programs, the man pages and every file of editors/
{
  printf '%s\n' bin/simc bin/simvm share/man/man1/simc.1 share/man/man1/simvm.1
  (cd "$root/editors" && find . \( -type f -o -type l \) | sed 's|^\./|share/simvm/editors/|')
} | LC_ALL=C sort >"$tmp/expected"
listing() { (cd "$prefix" && find . -mindepth 1 \( -type f -o -type l \) | sed 's|^\./||' | LC_ALL=C sort); }

mkdir -p "$prefix/bin" && echo keep >"$prefix/bin/other"
check "make install" mk install || cat "$tmp/make.log"
listing | grep -vx bin/other >"$tmp/installed"
check "installed files" cmp -s "$tmp/expected" "$tmp/installed" ||
  diff "$tmp/expected" "$tmp/installed" | head -10 | sed 's/^/    /'
check "no links installed" test -z "$(find "$prefix" -type l)"
check "the grammar copied whole" cmp -s "$root/editors/simvm.tmLanguage.json" "$prefix/share/simvm/editors/vscode/syntaxes/simvm.tmLanguage.json"
check "installed simvm runs an example" test "$("$prefix/bin/simvm" "$root/examples/race.sim" | tr '\n' '|')" = "1ms: fast finished|3ms: slow timed out|done|"
check "installed simc lists" test "$("$prefix/bin/simc" --version)" = "simc $("$build/simc" --version | cut -d' ' -f2)"
if command -v man >/dev/null 2>&1; then
  check "man finds the installed page" test "$(MANPATH="$prefix/share/man" MANPAGER=cat MANWIDTH=80 man simvm 2>&1 | head -n 1 | tr -s ' ')" = "SIMVM(1) User Commands SIMVM(1)"
fi
check "make uninstall" mk uninstall || cat "$tmp/make.log"
check "uninstall keeps what it did not install" test "$(listing | tr '\n' ' ')" = "bin/other "
rm "$prefix/bin/other"
check "install again" mk install
check "uninstall again" mk uninstall
check "the prefix is empty" test -z "$(ls -A "$prefix")"

echo "install: $passed passed, $failed failed"
[ "$failed" = 0 ]
