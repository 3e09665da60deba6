/* simvm's public interface: make a VM, load a program, run the simulation.
 *
 *   VMConfig config;
 *   vm_config_init(&config);
 *   VM *vm = vm_new(&config);
 *   if (vm_load_file(vm, "prog.sim") == SIM_OK) status = vm_run(vm);
 *   vm_free(vm);
 *
 * This header adds to vm/vm.h (configuration, values, running, results)
 * what the api layer does: turning text or bytes into a runnable program.
 * The commands in cli/ include nothing else. */
#ifndef SIMVM_SIMVM_H
#define SIMVM_SIMVM_H

#include "../vm/vm.h"

/* A new VM with the standard library compiled in (unless config.no_prelude).
 * NULL only if the embedded library fails to compile (a build defect,
 * reported on write_error). */
VM *vm_new(const VMConfig *config);

/* Free the VM and all it owns (not config.user). vm_free(NULL) does nothing. */
void vm_free(VM *vm);

/* Compile a script file (and what it imports), or load a bytecode file
 * written by simc -o (the VM must then have been made with no_prelude).
 * Errors are reported through write_error as `file:line:col: error:
 * message` plus the source line and a caret, or `file: bad bytecode: ...`.
 * Returns SIM_OK, SIM_USAGE (unreadable file) or SIM_COMPILE_ERROR. */
SimStatus vm_load_file(VM *vm, const char *path);

/* Same, from memory; `name` is used in diagnostics and for relative imports. */
SimStatus vm_load_source(VM *vm, const char *name, const char *text, size_t length);

/* Whether the file at `path` is a bytecode file: named *.simc, or starting
 * with the bytecode signature (false if unreadable). */
bool vm_is_bytecode_file(const char *path);

/* Whether `path` names (by device and inode) a file the loaded program was
 * read from: the script or a file it imports. An output must not be one. */
bool vm_read_file(VM *vm, const char *path);

/* Write the loaded program as a bytecode file; false on a write error. */
bool vm_write_bytecode(VM *vm, FILE *out);

/* Write the bytecode listing of the loaded program (simc -l): every
 * module's top level and the functions and blocks in it, in load order,
 * the standard library's only with `prelude`. False on a write error. */
bool vm_write_listing(VM *vm, FILE *out, bool prelude);

#endif
