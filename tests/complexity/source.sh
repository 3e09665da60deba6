#!/bin/sh
# A script of size n for the compiler and the loader: n top-level
# functions each calling the one before (main calls the last once), a
# main of n statements, a list
# of n elements and a string of 10n bytes.
n=$1
echo 'fn f0(x) = x'
i=1
while [ "$i" -le "$n" ]; do
  echo "fn f$i(x) = f$((i - 1))(x) + $i"
  i=$((i + 1))
done
echo 'main = {'
echo "  say(f$n(0))"
i=0
while [ "$i" -lt "$n" ]; do
  echo "  say($i)"
  i=$((i + 1))
done
printf '  say(length(['
i=0
while [ "$i" -lt "$n" ]; do
  printf '%s, ' "$i"
  i=$((i + 1))
done
printf '0]))\n  say(length("'
i=0
while [ "$i" -lt "$n" ]; do
  printf 'abcdefghij'
  i=$((i + 1))
done
printf '"))\n}\n'
