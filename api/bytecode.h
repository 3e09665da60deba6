/* Bytecode files (simc -o): a compiled program, loaded back by simvm.
 *
 * Layout, little-endian; every string is a u32 length and its bytes:
 *
 *   "SIMVMBC\0"  u32 version  u8 actions (1: compiled with direct actions,
 *                                        0: reified, --actions=reified or -O0)
 *   u32 n, n x (string name, u8 arity)          the builtins, in table order
 *   u32 n, n x (string name, i32 arity, string file, i32 line)   the globals
 *   u32 n, n x (string key, proto)               the modules, in load order
 *   proto: u8 kind, i32 arity, i32 max_slots, i32 upvalues, 2 x upvalues
 *          capture bytes, i32 handler, i32 handler_depth, string name,
 *          string file, i32 line, u32 length, code bytes, length x i32
 *          lines, u32 n, n x constant
 *   constant: u8 tag (0 int, 1 float, 2 duration, 3 string, 4 proto) and
 *          its payload (i64, f64 bits, i64, string, proto)
 *
 * The loader checks every byte: a truncated or malformed file, or one whose
 * code would not run safely (unknown or VM-only opcodes, operands out of
 * range, jumps off the code, a stack that could underflow or outgrow its
 * frame, a path that runs off the end), is rejected with a message. */
#ifndef SIMVM_BYTECODE_H
#define SIMVM_BYTECODE_H

#include <stdio.h>

#include "../vm/runtime/state.h"

#define BYTECODE_MAGIC "SIMVMBC"   /* 8 bytes with its NUL */

/* The revision of the layout above, to change with what bcread.c and
 * bcwrite.c read and write; part of the version. */
#define BYTECODE_LAYOUT 2

/* The format version: a hash (FNV-1a) of BYTECODE_LAYOUT and of the two
 * tables the code depends on, in order: every opcode's name, operand kind,
 * pops, pushes and flags (vm/value/opcodes.def), every builtin's name, arity and
 * opcode (vm/interp/builtins.def). Adding, removing, moving or reshaping any of
 * them changes it, so a file compiled by another simvm is refused
 * ("recompile it with simc") without anyone bumping a number. */
uint32_t bytecode_version(void);

/* Write the loaded program (prelude, imports, script) to `out`; false on a
 * write error. */
bool bytecode_write(VM *vm, FILE *out);

/* Load a program written by bytecode_write into `vm`, which must have been
 * created with config.no_prelude. Problems are reported as
 * "NAME: bad bytecode: reason"; returns SIM_OK or SIM_COMPILE_ERROR. */
SimStatus bytecode_load(VM *vm, const char *name, const uint8_t *data, size_t size);

/* Whether `data` starts like a bytecode file. */
bool bytecode_is(const uint8_t *data, size_t size);

#endif
