#!/bin/sh
# Check the build's tools and libraries (re2c, bison, cmocka, jq, which
# the exploration tests merge sharded outputs with: tools/merge.jq, and
# valgrind, which the complexity scan counts instructions with, groff,
# which the man page test renders docs/man/ with, and python3, which
# checks the editor files: tests/check_editors.py); install
# the missing ones with apt-get when running as root, or print the command
# to run.
missing=""
command -v re2c >/dev/null 2>&1 || missing="$missing re2c"
command -v jq >/dev/null 2>&1 || missing="$missing jq"
command -v bison >/dev/null 2>&1 || missing="$missing bison"
command -v valgrind >/dev/null 2>&1 || missing="$missing valgrind"
command -v groff >/dev/null 2>&1 || missing="$missing groff-base"
command -v python3 >/dev/null 2>&1 || missing="$missing python3"
if ! printf '#include <stdarg.h>\n#include <stddef.h>\n#include <stdint.h>\n#include <setjmp.h>\n#include <cmocka.h>\nint main(void){return 0;}\n' \
     | ${CC:-cc} -x c - -o /dev/null -lcmocka >/dev/null 2>&1; then
  missing="$missing libcmocka-dev"
fi
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing:$missing"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null && apt-get install -y -qq $missing >/dev/null && exit 0
  echo "error: apt-get could not install:$missing" >&2
  exit 1
fi
echo "error: missing build dependencies:$missing" >&2
echo "install them with:  sudo apt-get install -y$missing" >&2
exit 1
