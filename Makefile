# simvm build.  make | make test | make demo | make asan | make faultinject | make fuzz | make fuzz-smoke
#               | make install PREFIX=...
# All outputs go under build/ (generated lexer, parser and prelude included).

CC      ?= cc
# make V=1 shows every command; by default a short line per step
V       ?= 0
ifeq ($(V),0)
Q       := @
SAY     = @printf '  %-7s %s\n'
else
Q       :=
SAY     = @true
endif
PREFIX  ?= /usr/local
BUILD   ?= build
CFLAGS  ?= -O2 -g
WARN    := -Wall -Wextra -Werror=implicit-function-declaration
ALL_CFLAGS := -std=gnu11 $(WARN) $(CFLAGS) -I$(BUILD)/gen -Ilang -Ivm $(EXTRA_CFLAGS)
LDLIBS  := -lm

LANG_SRC     := lang/alloc.c lang/ast.c lang/diag.c lang/parse.c lang/source.c
VM_SRC       := $(wildcard vm/*.c)
COMPILER_SRC := $(wildcard compiler/*.c)
GEN_SRC      := $(BUILD)/gen/lexer.c $(BUILD)/gen/parser.c $(BUILD)/gen/prelude.c
CORE_SRC     := $(LANG_SRC) $(VM_SRC) $(COMPILER_SRC) cli/options.c
CORE_OBJ     := $(patsubst %.c,$(BUILD)/obj/%.o,$(CORE_SRC)) \
                $(patsubst $(BUILD)/gen/%.c,$(BUILD)/obj/gen/%.o,$(GEN_SRC))
SWITCH_OBJ   := $(patsubst %.o,%.switch.o,$(CORE_OBJ))
UNIT_TESTS   := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(wildcard tests/unit/test_*.c))
DEPS_OK      := $(BUILD)/.deps-ok

.PHONY: all test unit-test script-test demo asan test-asan faultinject fuzz fuzz-smoke fuzz-replay libfuzzer-targets install clean deps bench bench-accept
.DELETE_ON_ERROR:

all: $(BUILD)/simvm $(BUILD)/simc $(BUILD)/simvm-switch

deps: $(DEPS_OK)
$(DEPS_OK):
	@mkdir -p $(BUILD)
	@sh tools/deps.sh
	@touch $@

# ---- generated sources ----

$(BUILD)/gen/parser.c $(BUILD)/gen/parser.h: lang/parser.y | $(DEPS_OK)
	@mkdir -p $(BUILD)/gen
	$(SAY) BISON $<
	$(Q)bison -Wall -Werror -o $(BUILD)/gen/parser.c --header=$(BUILD)/gen/parser.h $<

$(BUILD)/gen/lexer.c: lang/lexer.re $(BUILD)/gen/parser.h | $(DEPS_OK)
	@mkdir -p $(BUILD)/gen
	$(SAY) RE2C $<
	$(Q)re2c -W -Werror --no-generation-date -o $@ $<

$(BUILD)/embed: tools/embed.c
	@mkdir -p $(BUILD)
	$(SAY) CC $<
	$(Q)$(CC) -O1 -o $@ $<

$(BUILD)/gen/prelude.c: stdlib/prelude.sim $(BUILD)/embed
	@mkdir -p $(BUILD)/gen
	$(SAY) EMBED $<
	$(Q)$(BUILD)/embed prelude $< $@

# ---- objects: every core object also depends on the generated parser header ----

$(BUILD)/obj/%.o: %.c $(BUILD)/gen/parser.h
	@mkdir -p $(dir $@)
	$(SAY) CC $<
	$(Q)$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/obj/gen/%.o: $(BUILD)/gen/%.c $(BUILD)/gen/parser.h
	@mkdir -p $(dir $@)
	$(SAY) CC $<
	$(Q)$(CC) $(ALL_CFLAGS) -Wno-unused-function -MMD -MP -c -o $@ $<

$(BUILD)/obj/%.switch.o: %.c $(BUILD)/gen/parser.h
	@mkdir -p $(dir $@)
	$(SAY) CC '$< (switch)'
	$(Q)$(CC) $(ALL_CFLAGS) -DSIMVM_SWITCH_DISPATCH -MMD -MP -c -o $@ $<

$(BUILD)/obj/gen/%.switch.o: $(BUILD)/gen/%.c $(BUILD)/gen/parser.h
	@mkdir -p $(dir $@)
	$(SAY) CC '$< (switch)'
	$(Q)$(CC) $(ALL_CFLAGS) -Wno-unused-function -DSIMVM_SWITCH_DISPATCH -MMD -MP -c -o $@ $<

$(BUILD)/simvm: $(CORE_OBJ) $(BUILD)/obj/cli/simvm.o
	$(SAY) LINK $@
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/simvm-switch: $(SWITCH_OBJ) $(BUILD)/obj/cli/simvm.switch.o
	$(SAY) LINK $@
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/simc: $(CORE_OBJ) $(BUILD)/obj/cli/simc.o
	$(SAY) LINK $@
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDLIBS)

# ---- tests ----

$(BUILD)/tests/%: tests/unit/%.c $(CORE_OBJ) tests/unit/unit.h
	@mkdir -p $(dir $@)
	$(SAY) CC $<
	$(Q)$(CC) $(ALL_CFLAGS) -Itests/unit -o $@ $< $(CORE_OBJ) -lcmocka $(LDLIBS)

unit-test: $(UNIT_TESTS)
	@sh tests/run_unit.sh $(UNIT_TESTS)

script-test: all
	@bash tests/run_scripts.sh $(BUILD)/simvm $(BUILD)/simvm-switch
	@bash tests/run_cli.sh $(BUILD)

# ---- fuzzing (tests/fuzz/README.md) ----
# The targets built with gcc and replay.c's main() replay the seeds and
# every past finding in make test (and under ASan in make asan); make fuzz
# builds them with clang's libFuzzer, make fuzz-smoke runs each for a minute.

FUZZ_TARGETS := fuzz_source fuzz_bytecode
FUZZ_SEEDS   := $(BUILD)/fuzz/seeds/.made

$(BUILD)/fuzz/replay_%: tests/fuzz/%.c tests/fuzz/replay.c tests/fuzz/fuzz.h $(CORE_OBJ)
	@mkdir -p $(dir $@)
	$(SAY) CC '$< (replay)'
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< tests/fuzz/replay.c $(CORE_OBJ) $(LDLIBS)

$(FUZZ_SEEDS): $(BUILD)/simc tests/fuzz/make_seeds.sh $(shell find tests/lang examples bench -name '*.sim' 2>/dev/null)
	$(SAY) SEEDS $(BUILD)/fuzz/seeds
	$(Q)sh tests/fuzz/make_seeds.sh $(BUILD)/simc $(BUILD)/fuzz/seeds >/dev/null
	@touch $@

$(BUILD)/fuzz/fuzz_source.dict: tests/fuzz/gen_dict.sh lang/lexer.re vm/builtins.def stdlib/prelude.sim
	@mkdir -p $(dir $@)
	$(Q)sh tests/fuzz/gen_dict.sh . >$@

fuzz-replay: $(patsubst %,$(BUILD)/fuzz/replay_%,$(FUZZ_TARGETS)) $(FUZZ_SEEDS)
	@$(BUILD)/fuzz/replay_fuzz_source tests/fuzz/corpus/source $(BUILD)/fuzz/seeds/source
	@$(BUILD)/fuzz/replay_fuzz_bytecode tests/fuzz/corpus/bytecode $(BUILD)/fuzz/seeds/bytecode

# libFuzzer targets, in their own build tree (make fuzz)
$(BUILD)/fuzz/fuzz_source: tests/fuzz/fuzz_source.c tests/fuzz/fuzz.h $(CORE_OBJ)
	$(SAY) LINK $@
	$(Q)$(CC) $(ALL_CFLAGS) -fsanitize=fuzzer -o $@ $< $(CORE_OBJ) $(LDLIBS)

$(BUILD)/fuzz/fuzz_bytecode: tests/fuzz/fuzz_bytecode.c tests/fuzz/bytecode_mutator.c tests/fuzz/fuzz.h $(CORE_OBJ)
	$(SAY) LINK $@
	$(Q)$(CC) $(ALL_CFLAGS) -fsanitize=fuzzer -o $@ $< tests/fuzz/bytecode_mutator.c $(CORE_OBJ) $(LDLIBS)

# the core as a library, for OSS-Fuzz's build (tests/fuzz/build.sh)
$(BUILD)/libsimvm.a: $(CORE_OBJ)
	$(SAY) AR $@
	$(Q)rm -f $@ && ar rcs $@ $^

libfuzzer-targets: $(patsubst %,$(BUILD)/fuzz/%,$(FUZZ_TARGETS)) $(BUILD)/fuzz/fuzz_source.dict $(FUZZ_SEEDS)

FUZZ_BUILD  := build/libfuzzer
FUZZ_CFLAGS := -O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
FUZZ_CC     ?= clang

fuzz:
	@sh tools/fuzzdeps.sh
	@$(MAKE) --no-print-directory BUILD=$(FUZZ_BUILD) CC=$(FUZZ_CC) CFLAGS="$(FUZZ_CFLAGS)" libfuzzer-targets

# Each target for FUZZ_SECONDS (60) on the seeds and the committed corpus;
# any finding fails it (tests/fuzz/run.sh).
FUZZ_SECONDS ?= 60
fuzz-smoke: fuzz
	@bash tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) fuzz_source fuzz_bytecode

test: all unit-test script-test fuzz-replay

# The same tests under AddressSanitizer and UndefinedBehaviorSanitizer, in
# their own build tree, with the collector running at every allocation for
# the unit tests' GC checks.
asan test-asan:
	$(MAKE) --no-print-directory BUILD=build/asan CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" test

# Fault injection (tests/run_faults.sh): an ASan build whose allocation
# funnel fails the Nth allocation; every N of several runs must end with the
# out-of-memory message and exit status 70, with no sanitizer report.
faultinject:
	$(MAKE) --no-print-directory BUILD=build/fault CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" EXTRA_CFLAGS=-DSIMVM_FAULT_INJECTION build/fault/simvm build/fault/simc
	@bash tests/run_faults.sh build/fault

# Times every benchmark program (never part of the tests): bench/RESULTS.md.
# bench-accept makes the last run's figures the baseline the next run is compared with.
bench: $(BUILD)/simvm $(BUILD)/peakrss
	@bash bench/run.sh $(BUILD)/simvm bench/RESULTS.md

bench-accept:
	@test -f $(BUILD)/bench-latest.json || { echo "run make bench first" >&2; exit 1; }
	cp $(BUILD)/bench-latest.json bench/baseline.json

$(BUILD)/peakrss: tools/peakrss.c
	@mkdir -p $(BUILD)
	$(SAY) CC $<
	$(Q)$(CC) -O1 -Wall -o $@ $<

demo: $(BUILD)/simvm
	@echo '$$ $(BUILD)/simvm examples/retry.sim'
	@$(BUILD)/simvm examples/retry.sim
	@echo
	@echo 'Every event with its simulated time and thread: $(BUILD)/simvm --trace examples/retry.sim'

install: $(BUILD)/simvm $(BUILD)/simc
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 755 $(BUILD)/simvm $(BUILD)/simc $(DESTDIR)$(PREFIX)/bin/

clean:
	rm -rf build

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
