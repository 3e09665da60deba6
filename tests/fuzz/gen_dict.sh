#!/bin/sh
# The source fuzzer's dictionary, generated from the lexer and the builtin
# tables so it follows the language: every keyword and operator the re2c
# rules of lang/lexer.re name, the duration units, every builtin of
# vm/interp/builtins.def and every function of stdlib/prelude.sim.
# usage: gen_dict.sh ROOT > source.dict
set -eu
root=$1
{
  # "fn" { return FN; }  and  "<-"  { return ARROW; }
  sed -n 's/^ *"\([^"]*\)" *{ *return [A-Z_]*; *}.*/\1/p' "$root/lang/lexer.re"
  # the single-character tokens: [-+*/%<>=!(){}[\],;.:] { return *lx->token; }
  sed -n 's/^ *\[\(.*\)\] { return \*lx->token; }.*/\1/p' "$root/lang/lexer.re" | sed 's/\\//g' | fold -w 1
  # unit   = "ns" | "us" | "ms" | "s";
  sed -n 's/^ *unit *= *\(.*\);/\1/p' "$root/lang/lexer.re" | tr '|' '\n' | tr -d ' "'
  echo "--"
  sed -n 's/^\(ACTION\|BUILTIN\)(\([A-Za-z_]*\),.*/\2/p' "$root/vm/interp/builtins.def"
  sed -n 's/^fn \([A-Za-z_]*\)(.*/\1/p' "$root/stdlib/prelude.sim"
  printf '%s\n' main 1us 5ms 2s 0ns '"x"' '#{a: 1}' '<-' '{' '}' 'fn(x) =>' 'let x = ' 'x <- '
} | awk 'length($0) > 0 && !seen[$0]++' | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' | awk '{ printf "t%d=\"%s\"\n", NR, $0 }'
