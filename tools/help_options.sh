#!/bin/sh
# The options a command's --help lists, one a line: from each line of the
# form "  -x, --long ARG   description", every name before the description
# ("-x", "--long"); the man page test and the CLI tests compare them.
# usage: help_options.sh COMMAND
set -eu
"$1" --help | sed -n 's/^  \(-[^ ].*\)$/\1/p' | sed 's/   *.*//; s/  [a-z].*//' |
  tr ',' '\n' | sed 's/^ *//; s/ .*//' | grep '^-'
