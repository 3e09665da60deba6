#!/bin/bash -eu
# The OSS-Fuzz build script (an OSS-Fuzz project's build.sh can be just
# "exec $SRC/simvm/tests/fuzz/build.sh"): builds the fuzz targets with
# $CC, $CFLAGS and $LIB_FUZZING_ENGINE into $OUT, with their .options, the
# dictionary and seed corpora. The project's Dockerfile installs make, re2c,
# bison, libcmocka-dev and zip (the Makefile checks for them).
cd "$(dirname "$0")/../.."
build=${WORK:-/tmp}/simvm-build
# vm/'s layer folders, as the Makefile's VM_INCLUDE
vm_include=$(for d in vm vm/*/; do printf -- '-I%s ' "${d%/}"; done)
make -j"$(nproc)" BUILD="$build" CC="$CC" CFLAGS="$CFLAGS" LTO= "$build/libsimvm.a" "$build/simc"
for target in fuzz_source fuzz_wide fuzz_explore fuzz_bytecode; do
  extra=() source=fuzz_source mode=() kind=source
  case $target in
  fuzz_bytecode) extra=(tests/fuzz/bytecode_mutator.c) source=fuzz_bytecode kind=bytecode ;;
  fuzz_wide) mode=(-DFUZZ_WIDE) ;;
  fuzz_explore) mode=(-DFUZZ_EXPLORE) ;;
  esac
  "$CC" $CFLAGS -std=gnu11 "${mode[@]}" -I"$build/gen" -Ilang $vm_include -c tests/fuzz/$source.c -o "$build/$target.o"
  objects=("$build/$target.o")
  for src in "${extra[@]}"; do
    "$CC" $CFLAGS -std=gnu11 $vm_include -c "$src" -o "$build/$(basename "$src" .c).o"
    objects+=("$build/$(basename "$src" .c).o")
  done
  "${CXX:-$CC}" ${CXXFLAGS:-$CFLAGS} -o "$OUT/$target" "${objects[@]}" "$build/libsimvm.a" $LIB_FUZZING_ENGINE -lm
  cp tests/fuzz/fuzz_$kind.options "$OUT/$target.options"
done
sh tests/fuzz/gen_dict.sh . >"$OUT/fuzz_source.dict"
sh tests/fuzz/make_seeds.sh "$build/simc" "$build/seeds"
for kind in source bytecode; do
  rm -f "$OUT/fuzz_${kind}_seed_corpus.zip"
  (cd "$build/seeds/$kind" && zip -q -j "$OUT/fuzz_${kind}_seed_corpus.zip" ./*)
  [ -d tests/fuzz/corpus/$kind ] && (cd tests/fuzz/corpus/$kind && ls | grep -q . && zip -q -j "$OUT/fuzz_${kind}_seed_corpus.zip" ./*) || true
done
cp "$OUT/fuzz_source_seed_corpus.zip" "$OUT/fuzz_wide_seed_corpus.zip"
cp "$OUT/fuzz_source_seed_corpus.zip" "$OUT/fuzz_explore_seed_corpus.zip"
