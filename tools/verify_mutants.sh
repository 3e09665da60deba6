#!/bin/sh
# Mutation check for the bytecode verifier: delete each rule of
# api/verify.c in turn and make sure tests/unit/test_verify.c then fails.
# A rule is an `if (...)` whose statement rejects (sets `why` or `shape`,
# returns a message, or writes an error), and the call that checks a
# closure's captures; deleting one makes its condition `0 && (...)` (the
# call: returns NULL). Not part of make test (it rebuilds the test once per
# rule, under a minute); run it after changing the verifier:
#   sh tools/verify_mutants.sh
# The same for the bytecode reader's rules and tests/unit/test_bytecode.c:
#   sh tools/verify_mutants.sh api/bcread.c test_bytecode
set -u
cd "$(dirname "$0")/.." || exit 2
# vm/'s layer folders, as the Makefile's VM_INCLUDE
vm_include=$(for d in vm vm/*/; do printf -- '-I%s ' "${d%/}"; done)
source=${1:-api/verify.c}
test=${2:-test_verify}
object=build/obj/${source%.c}.o
make -s "build/tests/$test" >/dev/null || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
objs=$(find build/obj -name '*.o' ! -name '*.switch.o' ! -path "$object" \
         ! -path 'build/obj/cli/simvm.o' ! -path 'build/obj/cli/simc.o' | LC_ALL=C sort)
# the rules' lines: an `if (` with a rejection in its statement (on its
# line, or the next when the statement goes on)
lines=$(awk '
  { line[NR] = $0 }
  END {
    reject = "why = \"|shape = \"|return \"|(return|why =) named\\(|snprintf\\((why|error|r(\\.|->)error)|FAIL\\(r,"
    for (i = 1; i <= NR; i++) {
      if (line[i] ~ /return check_captures\(/) print i
      else if (line[i] ~ /if \(/ && (line[i] ~ reject || (line[i] !~ /;[ \t]*$/ && line[i + 1] ~ reject))) print i
    }
  }' "$source")
survived=0
killed=0
for n in $lines; do
  perl -e '
    my ($n) = @ARGV;
    open my $f, "<", $ARGV[1] or die; my @l = <$f>;
    my $s = $l[$n - 1];
    if ($s =~ s/return check_captures\(.*\);/return NULL;/) { }
    elsif ($s =~ /^(.*?\bif \()(.*)$/s) {
      my ($head, $rest) = ($1, $2); my $depth = 1; my $i = 0;
      for (; $i < length $rest; $i++) {
        my $c = substr($rest, $i, 1);
        $depth++ if $c eq "("; $depth-- if $c eq ")"; last if $depth == 0;
      }
      $s = $head . "0 && (" . substr($rest, 0, $i) . ")" . substr($rest, $i);
    } else { exit 2 }
    $l[$n - 1] = $s; print @l;' "$n" "$source" >"$tmp/mutant.c" || { echo "line $n: not a rule the script can delete"; continue; }
  if ! cc -std=gnu11 -O0 -w -fno-pie -Ibuild/gen -Ilang $vm_include -I"$(dirname "$source")" -c -o "$tmp/mutant.o" "$tmp/mutant.c" 2>"$tmp/err"; then
    echo "line $n: the mutant does not compile"; head -3 "$tmp/err"; continue
  fi
  if ! cc -std=gnu11 -no-pie -fno-lto -Ibuild/gen -Ilang $vm_include -Itests/unit -o "$tmp/test" "tests/unit/$test.c" "$tmp/mutant.o" \
       $objs -lcmocka -lm 2>"$tmp/err"; then
    echo "line $n: link failed"; head -3 "$tmp/err"; continue
  fi
  if CMOCKA_MESSAGE_OUTPUT=stdout "$tmp/test" >/dev/null 2>&1; then
    echo "SURVIVED line $n: $(sed -n "${n}p" "$source" | sed 's/^ *//')"
    survived=$((survived + 1))
  else
    killed=$((killed + 1))
  fi
done
echo "$source rules: $killed caught by $test, $survived not"
[ "$survived" = 0 ] && [ "$killed" -gt 0 ]
