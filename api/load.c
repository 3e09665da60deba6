/* Making a VM, and loading scripts into it: files, imports and the
 * embedded prelude. `import "net"`, a bare name, is the standard library's
 * module of that name, compiled into the binary like the prelude; any
 * other import is a path, resolved relative to the importing file. Each
 * module is loaded once, and an import cycle is an error. Only .sim files
 * are imported; with config.sandbox only those under the main script's
 * directory, by relative paths (and the standard library's modules). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../compiler/compiler.h"
#include "../lang/parse.h"
#include "api.h"
#include "bytecode.h"
#include "../base/outfile.h"

extern const char prelude_source[];
extern const unsigned long prelude_length;
/* the standard library's modules (tools/embed.c --modules), NULL ended */
extern const char *const stdlib_module_names[];
extern const char *const stdlib_module_files[];
extern const char *const stdlib_module_sources[];
extern const unsigned long stdlib_module_lengths[];

#define MAX_IMPORT_DEPTH 64

static void write_diag(void *user, const char *text, size_t length) {
  VM *vm = user;
  if (vm->config.write_error) vm->config.write_error(vm->config.user, text, length);
}

/* A canonical name for a file, for "already loaded" checks. */
static char *canonical(const char *path) {
  char resolved[PATH_MAX];
  const char *name = realpath(path, resolved) ? resolved : path;
  char *copy = xrealloc(NULL, strlen(name) + 1);
  strcpy(copy, name);
  return copy;
}

static int module_index(VM *vm, const char *key) {
  for (int i = 0; i < vm->module_inits.count; i++)
    if (strcmp(vm->loader->module_keys[i], key) == 0) return i;
  return -1;
}

/* The path of `import "name"` written in `from`: relative to its directory. */
static char *import_path(const char *from, const char *name) {
  const char *slash = strrchr(from, '/');
  size_t dir = (name[0] == '/' || !slash) ? 0 : (size_t)(slash - from) + 1;
  char *path = xrealloc(NULL, dir + strlen(name) + 1);
  memcpy(path, from, dir);
  strcpy(path + dir, name);
  return path;
}

typedef struct Loading {
  const char *key;
  const struct Loading *outer;
  size_t source_bytes;     /* of this file and those importing it        */
  size_t ast_bytes;        /* their syntax trees, alive while it loads    */
} Loading;

/* The syntax trees of a file and of those importing it (alive meanwhile)
 * may take twice their sources plus this: every script of ordinary
 * density compiles, and a dense one cannot take memory out of proportion. */
#define AST_SLACK ((size_t)16 << 20)

static SimStatus load_source(VM *vm, Source *source, char *key, const Loading *outer, int depth, Diag *diag);

static bool ends_with(const char *text, const char *suffix) {
  size_t n = strlen(text), m = strlen(suffix);
  return n >= m && strcmp(text + n - m, suffix) == 0;
}

/* Whether `path` (resolved) lies in the directory tree at `root`. */
static bool inside(const char *root, const char *path) {
  size_t n = strlen(root);
  if (strncmp(root, path, n) != 0) return false;
  return path[n] == '/' || path[n] == '\0' || (n > 0 && root[n - 1] == '/');
}

/* Why `import "name"` from `from` is refused before anything is read, or
 * NULL: only .sim scripts are imported (so no other file is ever parsed, or
 * a line of it shown in an error), and under --sandbox only those in the
 * main script's directory tree, named by a relative path. */
static const char *refuse_import(VM *vm, const char *name, const char *path, char *why, size_t size) {
  if (ends_with(name, ".simc"))
    snprintf(why, size, "cannot import '%s': it is a compiled program; import the .sim file it was compiled from", name);
  else if (!ends_with(name, ".sim"))
    snprintf(why, size, "cannot import '%s': only .sim files can be imported", name);
  else if (vm->config.sandbox && name[0] == '/')
    snprintf(why, size, "cannot import '%s': --sandbox allows only relative paths", name);
  else if (vm->config.sandbox) {
    /* the file as resolved (symbolic links followed), or, if it does not
     * exist, its directory */
    char resolved[PATH_MAX];
    bool found = realpath(path, resolved) != NULL;
    if (!found) {
      char *dir = xrealloc(NULL, strlen(path) + 3);
      strcpy(dir, path);
      char *slash = strrchr(dir, '/');
      if (slash) *slash = '\0';
      else strcpy(dir, ".");
      found = realpath(dir, resolved) != NULL;
      free(dir);
      if (!found) return NULL; /* reading it fails, and says so */
    }
    const char *root = vm->loader->sandbox_root;
    if (!root || !inside(root, resolved))
      snprintf(why, size, "cannot import '%s': --sandbox allows only files under the script's directory", name);
    else
      return NULL;
  } else {
    return NULL;
  }
  return why;
}

/* Whether `import "name"` names a module of the standard library: a bare
 * name (a lowercase letter, then letters, digits and _), never a path. */
static bool is_module_name(const char *name) {
  if (!(name[0] >= 'a' && name[0] <= 'z')) return false;
  for (const char *c = name; *c; c++)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_')) return false;
  return true;
}

/* The index of the standard module `name`, or -1 (then `why` says so, with
 * the modules there are). */
static int find_module(const char *name, char *why, size_t size) {
  for (int i = 0; stdlib_module_names[i]; i++)
    if (strcmp(stdlib_module_names[i], name) == 0) return i;
  int n = snprintf(why, size, "cannot import '%s': the standard library has no such module (it has", name);
  for (int i = 0; stdlib_module_names[i] && n > 0 && (size_t)n < size; i++)
    n += snprintf(why + n, size - (size_t)n, "%s \"%s\"", i ? "," : "", stdlib_module_names[i]);
  if (n > 0 && (size_t)n < size) snprintf(why + n, size - (size_t)n, "); a file is imported by its path: \"%s.sim\"", name);
  return -1;
}

static SimStatus load_import(VM *vm, const Source *from, const Decl *decl, const Loading *loading, int depth,
                             Diag *diag) {
  char why[768];
  char *path, *key;
  if (is_module_name(decl->name)) {
    int module = find_module(decl->name, why, sizeof why);
    if (module < 0) {
      diag_error(diag, from, decl->loc.line, decl->loc.col, "%s", why);
      return SIM_COMPILE_ERROR;
    }
    path = xrealloc(NULL, strlen(stdlib_module_files[module]) + 1);
    strcpy(path, stdlib_module_files[module]);
    key = xrealloc(NULL, strlen(path) + 3);
    sprintf(key, "<%s>", path); /* no file's canonical path starts with '<' */
  } else {
    path = import_path(from->path, decl->name);
    if (refuse_import(vm, decl->name, path, why, sizeof why)) {
      diag_error(diag, from, decl->loc.line, decl->loc.col, "%s", why);
      free(path);
      return SIM_COMPILE_ERROR;
    }
    key = canonical(path);
  }
  for (const Loading *l = loading; l; l = l->outer) {
    if (strcmp(l->key, key) == 0) {
      diag_error(diag, from, decl->loc.line, decl->loc.col, "import cycle: '%s' is already being loaded", path);
      free(path);
      free(key);
      return SIM_COMPILE_ERROR;
    }
  }
  if (module_index(vm, key) >= 0) {
    free(path);
    free(key);
    return SIM_OK;
  }
  if (depth >= MAX_IMPORT_DEPTH) {
    diag_error(diag, from, decl->loc.line, decl->loc.col, "imports nested more than %d deep", MAX_IMPORT_DEPTH);
    free(path);
    free(key);
    return SIM_COMPILE_ERROR;
  }
  char err[512];
  int module = key[0] == '<' ? find_module(decl->name, why, sizeof why) : -1;
  Source *source = module >= 0 ? source_from_memory(path, stdlib_module_sources[module], stdlib_module_lengths[module])
                               : source_read(path, err, sizeof err);
  if (!source && module >= 0) snprintf(err, sizeof err, "out of memory");
  if (!source) {
    diag_error(diag, from, decl->loc.line, decl->loc.col, "cannot import: %s", err);
    free(path);
    free(key);
    return SIM_COMPILE_ERROR;
  }
  if (bytecode_is((const uint8_t *)source->text, source->length)) {
    diag_error(diag, from, decl->loc.line, decl->loc.col,
               "cannot import '%s': it is a compiled program, not a script", decl->name);
    source_free(source);
    free(path);
    free(key);
    return SIM_COMPILE_ERROR;
  }
  free(path);
  return load_source(vm, source, key, loading, depth + 1, diag);
}

/* Length of the valid UTF-8 sequence at s (1-4), or 0 if it is not valid. */
static int utf8_length(const unsigned char *s, const unsigned char *end) {
  int n = s[0] < 0x80 ? 1 : (s[0] >> 5) == 0x6 ? 2 : (s[0] >> 4) == 0xe ? 3 : (s[0] >> 3) == 0x1e ? 4 : 0;
  if (n == 0 || s + n > end) return 0;
  for (int i = 1; i < n; i++)
    if ((s[i] & 0xc0) != 0x80) return 0;
  return n;
}

/* Scripts are UTF-8 text: a NUL byte or a malformed sequence means the file
 * is not a script (random bytes, a binary), reported once. */
static bool check_text(const Source *source, Diag *diag) {
  const unsigned char *start = (const unsigned char *)source->text, *end = start + source->length;
  int line = 1, col = 1;
  for (const unsigned char *s = start; s < end;) {
    int n = *s ? utf8_length(s, end) : 0;
    if (n == 0) {
      if (*s == 0) diag_error(diag, source, line, col, "this is not a text file: it contains a NUL byte");
      else diag_error(diag, source, line, col, "this is not a text file: byte 0x%02x is not valid UTF-8 text", *s);
      return false;
    }
    if (*s == '\n') {
      line++;
      col = 1;
    } else {
      col += n; /* columns count bytes, as the lexer's do */
    }
    s += n;
  }
  return true;
}

/* Parse, load imports, compile. Takes ownership of source and key. */
static SimStatus load_source(VM *vm, Source *source, char *key, const Loading *outer, int depth, Diag *diag) {
  source->next = vm->loader->sources;
  vm->loader->sources = source;
  size_t outer_sources = outer ? outer->source_bytes : 0, outer_ast = outer ? outer->ast_bytes : 0;
  Loading loading = {key, outer, outer_sources + source->length, outer_ast};
  size_t limit = 2 * loading.source_bytes + AST_SLACK;
  Module module;
  module.arena = NULL;
  bool parsed = check_text(source, diag) && parse_source_within(source, diag, &module, limit > outer_ast ? limit - outer_ast : 1);
  loading.ast_bytes += arena_size(module.arena);
  SimStatus status = parsed ? SIM_OK : SIM_COMPILE_ERROR;
  for (int i = 0; parsed && i < module.decls.count; i++) {
    const Decl *decl = module.decls.items[i];
    if (decl->kind != DECL_IMPORT) continue;
    if (load_import(vm, source, decl, &loading, depth, diag) != SIM_OK) status = SIM_COMPILE_ERROR;
  }
  if (status == SIM_OK) {
    vm->gc_paused++;
    ObjClosure *init = compile_module(vm, source, &module, diag);
    vm->gc_paused--;
    if (init) api_add_module(vm, key, init);
    else status = SIM_COMPILE_ERROR;
  }
  if (status != SIM_OK) free(key);
  ast_free(&module);
  return status;
}

static SimStatus load_top(VM *vm, Source *source, char *key) {
  vm_begin_load(vm);
  Diag diag = {write_diag, vm, 0};
  SimStatus status = load_source(vm, source, key, NULL, 0, &diag);
  if (diag.errors > DIAG_MAX_ERRORS) vm_report(vm, "%d errors in all; only the first %d are shown\n", diag.errors, DIAG_MAX_ERRORS);
  return status;
}

static SimStatus load_prelude(VM *vm) {
  Source *source = source_from_memory(PRELUDE_FILE, prelude_source, prelude_length);
  if (!source) return SIM_USAGE;
  char *key = xrealloc(NULL, sizeof PRELUDE_KEY);
  strcpy(key, PRELUDE_KEY);
  return load_top(vm, source, key);
}

/* --sandbox: imports stay in the tree of the directory holding `path`. */
static void set_sandbox_root(VM *vm, const char *path) {
  Loader *loader = vm->loader;
  if (!vm->config.sandbox || loader->sandbox_root) return;
  char *dir = xrealloc(NULL, strlen(path) + 3);
  strcpy(dir, path);
  char *slash = strrchr(dir, '/');
  if (slash) slash[slash == dir ? 1 : 0] = '\0';
  else strcpy(dir, ".");
  char resolved[PATH_MAX];
  if (realpath(dir, resolved)) {
    loader->sandbox_root = xrealloc(NULL, strlen(resolved) + 1);
    strcpy(loader->sandbox_root, resolved);
  }
  free(dir);
}

/* A file named NAME.simc is read as bytecode whatever it holds, so that a
 * truncated or damaged one is reported as bad bytecode, not as a script. */
static bool named_bytecode(const char *path) {
  size_t n = strlen(path);
  return n >= 5 && strcmp(path + n - 5, ".simc") == 0;
}

SimStatus vm_load_file(VM *vm, const char *path) {
  set_sandbox_root(vm, path);
  char err[512];
  Source *source = source_read(path, err, sizeof err);
  if (!source) {
    vm_report(vm, "%s: %s\n", vm->config.program, err);
    return SIM_USAGE;
  }
  if (bytecode_is((const uint8_t *)source->text, source->length) || named_bytecode(path)) {
    vm_begin_load(vm);
    SimStatus status = vm->config.no_prelude
                           ? bytecode_load(vm, path, (const uint8_t *)source->text, source->length)
                           : (vm_report(vm, "%s: a bytecode file cannot be imported or loaded after a script\n", path),
                              SIM_COMPILE_ERROR);
    source_free(source);
    return status;
  }
  return load_top(vm, source, canonical(path));
}

bool vm_is_bytecode_file(const char *path) {
  if (named_bytecode(path)) return true;
  uint8_t head[8];
  FILE *file = fopen(path, "rb");
  if (!file) return false;
  size_t n = fread(head, 1, sizeof head, file);
  fclose(file);
  return bytecode_is(head, n);
}

bool vm_read_file(VM *vm, const char *path) {
  for (Source *source = vm->loader->sources; source; source = source->next)
    if (same_file(source->path, path)) return true;
  return false;
}

SimStatus vm_load_source(VM *vm, const char *name, const char *text, size_t length) {
  set_sandbox_root(vm, name);
  Source *source = source_from_memory(name, text, length);
  if (!source) return SIM_USAGE;
  char *key = xrealloc(NULL, strlen(name) + 1);
  strcpy(key, name);
  return load_top(vm, source, key);
}

VM *vm_new(const VMConfig *config) {
  VM *vm = vm_create(config);
  api_loader_new(vm);
  if (!config->no_prelude && load_prelude(vm) != SIM_OK) {
    vm_free(vm);
    return NULL;
  }
  return vm;
}

void vm_free(VM *vm) {
  if (!vm) return;
  api_loader_free(vm);
  vm_destroy(vm);
}

void loader_mark(VM *vm, LoaderMark *mark) {
  mark->globals = vm->globals.count;
  mark->modules = vm->module_inits.count;
  mark->sources = vm->loader->sources;
  mark->global_index = vm->global_index;
  size_t bytes = (size_t)vm->global_index.capacity * sizeof(Entry);
  mark->global_index.entries = bytes ? xrealloc(NULL, bytes) : NULL;
  if (bytes) memcpy(mark->global_index.entries, vm->global_index.entries, bytes);
}

void loader_rollback(VM *vm, const LoaderMark *mark) {
  vm_discard_run(vm); /* the run's threads and young heap: the program too, when kept young */
  for (int i = mark->modules; i < vm->module_inits.count; i++) free(vm->loader->module_keys[i]);
  vm->module_inits.count = mark->modules;
  if (vm->modules_run > mark->modules) vm->modules_run = mark->modules;
  vm->globals.count = mark->globals;
  size_t bytes = (size_t)mark->global_index.capacity * sizeof(Entry);
  table_free(&vm->global_index);
  vm->global_index = mark->global_index;
  vm->global_index.entries = bytes ? xrealloc(NULL, bytes) : NULL;
  if (bytes) memcpy(vm->global_index.entries, mark->global_index.entries, bytes);
  vm->main_action = UNDEFINED_VAL;
  /* what is left of the program is garbage the next collection takes; it
   * never reads the names of the sources freed here */
  Loader *loader = vm->loader;
  while (loader->sources != mark->sources) {
    Source *next = loader->sources->next;
    source_free(loader->sources);
    loader->sources = next;
  }
}

void loader_mark_free(LoaderMark *mark) { table_free(&mark->global_index); }
