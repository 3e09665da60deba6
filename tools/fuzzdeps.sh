#!/bin/sh
# make fuzz needs clang with libFuzzer and the sanitizer runtimes: install
# them with apt-get when running as root, or print the command to run.
cc=${FUZZ_CC:-clang}
probe() {
  printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' |
    "$cc" -x c - -fsanitize=fuzzer,address,undefined -o /dev/null >/dev/null 2>&1
}
probe && exit 0
missing="clang libclang-rt-dev"
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing: $missing"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null && apt-get install -y -qq $missing >/dev/null && probe && exit 0
  echo "error: apt-get could not install a clang with libFuzzer ($missing)" >&2
  exit 1
fi
echo "error: make fuzz needs clang with libFuzzer" >&2
echo "install it with:  sudo apt-get install -y $missing" >&2
exit 1
