#!/bin/sh
# Mutation check for the bytecode verifier: disable each rule of
# vm/verify.c in turn (every `if (...)` that sets `why`, `shape` or an error
# message, and the capture check) and make sure tests/unit/test_verify.c
# then fails. Not part of make test (it rebuilds the test once per rule);
# run it after changing the verifier:  sh tools/verify_mutants.sh
set -u
cd "$(dirname "$0")/.."
make -s build/tests/test_verify >/dev/null || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
objs=$(ls build/obj/lang/*.o build/obj/vm/*.o build/obj/compiler/*.o build/obj/gen/*.o build/obj/cli/options.o | grep -v -e "/verify.o$" -e "\.switch\.o$")
lines=$(grep -n -E 'why = |shape = |snprintf\(why|snprintf\(error|depth\[target\] != after|target >= n' vm/verify.c | cut -d: -f1)
survived=0
killed=0
for line in $lines; do
  perl -e '
    my ($line) = @ARGV;
    open my $f, "<", "vm/verify.c" or die; my @l = <$f>;
    my $s = $l[$line - 1];
    if ($s =~ s/else why = check_captures\(/else (void)check_captures(/) { }
    elsif ($s =~ /^(.*?\bif \()(.*)$/) {
      my ($head, $rest) = ($1, $2); my $depth = 1; my $i = 0;
      for (; $i < length $rest; $i++) {
        my $c = substr($rest, $i, 1);
        $depth++ if $c eq "("; $depth-- if $c eq ")"; last if $depth == 0;
      }
      $s = $head . "0 && (" . substr($rest, 0, $i) . ")" . substr($rest, $i);
    } else { exit 2 }
    $l[$line - 1] = $s; print @l;' "$line" >"$tmp/verify.c"
  case $? in 0) ;; *) continue ;; esac
  if ! cc -std=gnu11 -O0 -w -Ibuild/gen -Ilang -Ivm -c -o "$tmp/verify.o" -xc "$tmp/verify.c" -include vm/verify.h 2>"$tmp/err"; then
    echo "line $line: mutant does not compile"; cat "$tmp/err" | head -3; continue
  fi
  cc -std=gnu11 -Ibuild/gen -Ilang -Ivm -Itests/unit -o "$tmp/test" tests/unit/test_verify.c "$tmp/verify.o" $objs -lcmocka -lm 2>/dev/null || { echo "line $line: link failed"; continue; }
  if CMOCKA_MESSAGE_OUTPUT=stdout "$tmp/test" >/dev/null 2>&1; then
    echo "SURVIVED line $line: $(sed -n "${line}p" vm/verify.c | sed 's/^ *//')"
    survived=$((survived + 1))
  else
    killed=$((killed + 1))
  fi
done
echo "verifier rules: $killed caught by test_verify, $survived not"
[ "$survived" = 0 ]
