#!/bin/sh
# Mutation check for the bytecode verifier: delete each rule of
# api/verify.c in turn and make sure tests/unit/test_verify.c then fails.
# A rule is an `if (...)` whose statement rejects (sets `why` or `shape`,
# returns a message, or writes `error`), and the call that checks a
# closure's captures; deleting one makes its condition `0 && (...)` (the
# call: returns NULL). Not part of make test (it rebuilds the test once per
# rule, a minute or so); run it after changing the verifier:
#   sh tools/verify_mutants.sh
set -u
cd "$(dirname "$0")/.." || exit 2
make -s build/tests/test_verify >/dev/null || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
objs=$(find build/obj -name '*.o' ! -name '*.switch.o' ! -path 'build/obj/api/verify.o' \
         ! -path 'build/obj/cli/simvm.o' ! -path 'build/obj/cli/simc.o' | LC_ALL=C sort)
# the rules' lines: an `if (` with a rejection on its line or the next
lines=$(awk '
  { line[NR] = $0 }
  END {
    reject = "why = \"|shape = \"|return \"|return named\\(|snprintf\\((why|error)"
    for (i = 1; i <= NR; i++) {
      if (line[i] ~ /return check_captures\(/) print i
      else if (line[i] ~ /if \(/ && (line[i] ~ reject || line[i + 1] ~ reject)) print i
    }
  }' api/verify.c)
survived=0
killed=0
for n in $lines; do
  perl -e '
    my ($n) = @ARGV;
    open my $f, "<", "api/verify.c" or die; my @l = <$f>;
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
    $l[$n - 1] = $s; print @l;' "$n" >"$tmp/verify.c" || { echo "line $n: not a rule the script can delete"; continue; }
  if ! cc -std=gnu11 -O0 -w -Ibuild/gen -Ilang -Ivm -Iapi -c -o "$tmp/verify.o" "$tmp/verify.c" 2>"$tmp/err"; then
    echo "line $n: the mutant does not compile"; head -3 "$tmp/err"; continue
  fi
  if ! cc -std=gnu11 -Ibuild/gen -Ilang -Ivm -Itests/unit -o "$tmp/test" tests/unit/test_verify.c "$tmp/verify.o" \
       $objs -lcmocka -lm 2>"$tmp/err"; then
    echo "line $n: link failed"; head -3 "$tmp/err"; continue
  fi
  if CMOCKA_MESSAGE_OUTPUT=stdout "$tmp/test" >/dev/null 2>&1; then
    echo "SURVIVED line $n: $(sed -n "${n}p" api/verify.c | sed 's/^ *//')"
    survived=$((survived + 1))
  else
    killed=$((killed + 1))
  fi
done
echo "verifier rules: $killed caught by test_verify, $survived not"
[ "$survived" = 0 ] && [ "$killed" -gt 0 ]
