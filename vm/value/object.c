/* Object constructors. */
#include "object.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "builtins.h"
#include "explorer.h"
#include "state.h"

#define ALLOCATE(vm, type, extra, tag) ((type *)gc_alloc((vm), sizeof(type) + (extra), (tag)))

ObjString *obj_string(VM *vm, const char *chars, int length) {
  vm_work(vm, (uint64_t)length);
  uint32_t hash = hash_bytes(chars, length);
  ObjString *interned = table_find_string(&vm->strings, chars, length, hash);
  if (interned) return interned;
  ObjString *string = ALLOCATE(vm, ObjString, (size_t)length + 1, OBJ_STRING);
  string->interned = true;
  string->hash = hash;
  string->length = string->capacity = string->used = length;
  string->owner = NULL;
  string->chars = (char *)(string + 1);
  memcpy(string->chars, chars, (size_t)length);
  string->chars[length] = '\0';
  table_set(&vm->strings, string, UNIT_VAL); /* allocates no object: no collection */
  return string;
}

ObjString *obj_string_with_room(VM *vm, int length, int capacity) {
  ObjString *string = ALLOCATE(vm, ObjString, (size_t)capacity + 1, OBJ_STRING);
  string->interned = false;
  string->hash = 0;
  string->length = string->used = length;
  string->capacity = capacity;
  string->owner = NULL;
  string->chars = (char *)(string + 1);
  string->chars[length] = '\0';
  return string;
}

ObjString *obj_string_new(VM *vm, int length) { return obj_string_with_room(vm, length, length); }

ObjString *obj_string_append(VM *vm, ObjString *s, const char *chars, int length) {
  ObjString *storage = s->owner ? s->owner : s;
  /* an old storage is immutable (vm/memory.h); another string may have
   * been written past this one already */
  if (length == 0 || storage->obj.marked || storage->used != s->length || storage->capacity - s->length < length)
    return NULL;
  ObjString *longer = ALLOCATE(vm, ObjString, 0, OBJ_STRING); /* s (rooted) keeps storage */
  memcpy(storage->chars + storage->used, chars, (size_t)length);
  storage->used += length;
  storage->chars[storage->used] = '\0';
  longer->interned = false;
  longer->hash = 0;
  longer->length = storage->used;
  longer->capacity = longer->used = 0;
  longer->owner = storage;
  longer->chars = storage->chars;
  return longer;
}

ObjString *obj_find_interned(VM *vm, ObjString *s) {
  if (s->interned) return s;
  vm_work(vm, (uint64_t)s->length);
  return table_find_string(&vm->strings, s->chars, s->length, hash_bytes(s->chars, s->length));
}

const char *obj_string_cstring(VM *vm, Value *slot) {
  if (!string_shared(AS_STRING(*slot))) return AS_STRING(*slot)->chars;
  ObjString *copy = obj_string_new(vm, AS_STRING(*slot)->length);
  memcpy(copy->chars, AS_STRING(*slot)->chars, (size_t)copy->length);
  *slot = OBJ_VAL(copy);
  return copy->chars;
}

ObjString *obj_intern(VM *vm, ObjString *s) {
  if (s->interned) return s;
  /* an interned string is a name, used as a C string: one that shares
   * storage is interned as a copy of its own */
  if (string_shared(s)) return obj_string(vm, s->chars, s->length);
  vm_work(vm, (uint64_t)s->length);
  uint32_t hash = hash_bytes(s->chars, s->length);
  ObjString *interned = table_find_string(&vm->strings, s->chars, s->length, hash);
  if (interned) return interned;
  s->interned = true;
  s->hash = hash;
  table_set(&vm->strings, s, UNIT_VAL);
  return s;
}

ObjString *obj_cstring(VM *vm, const char *chars) { return obj_string(vm, chars, (int)strlen(chars)); }

ObjString *obj_stringf(VM *vm, const char *fmt, ...) {
  char text[4096];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  if (n < 0) n = 0;
  if (n >= (int)sizeof text) n = (int)sizeof text - 1;
  return obj_string(vm, text, n);
}

ObjCons *obj_cons(VM *vm, Value head, Value tail) { return cons_new(vm, head, tail); }

ObjRecord *obj_record_with_room(VM *vm, int count, int capacity) {
  int slots = record_index_slots(capacity);
  ObjRecord *record =
      ALLOCATE(vm, ObjRecord, (size_t)capacity * sizeof(Field) + (size_t)slots * sizeof(int32_t), OBJ_RECORD);
  record->count = record->used = count;
  record->capacity = capacity;
  record->owner = NULL;
  record->fields = (Field *)(record + 1);
  record->index = slots ? (int32_t *)(record->fields + capacity) : NULL;
  record->indexed = false;
  for (int i = 0; i < count; i++) {
    record->fields[i].name = NULL;
    record->fields[i].value = UNIT_VAL;
  }
  return record;
}

ObjRecord *obj_record(VM *vm, int count) { return obj_record_with_room(vm, count, count); }

/* Field names are interned, so their hash is set. */
static void index_insert(ObjRecord *storage, int field) {
  int mask = record_index_slots(storage->capacity) - 1;
  const ObjString *name = storage->fields[field].name;
  for (uint32_t h = name->hash;; h++) {
    int32_t *slot = &storage->index[h & (uint32_t)mask];
    if (*slot == 0) {
      *slot = field + 1;
      return;
    }
    if (storage->fields[*slot - 1].name == name) return; /* the first of a name stands */
  }
}

int record_index_find(ObjRecord *storage, const ObjString *name) {
  if (!storage->indexed) {
    memset(storage->index, 0, (size_t)record_index_slots(storage->capacity) * sizeof(int32_t));
    for (int i = 0; i < storage->used; i++) index_insert(storage, i);
    storage->indexed = true;
  }
  int mask = record_index_slots(storage->capacity) - 1;
  for (uint32_t h = name->hash;; h++) {
    int32_t field = storage->index[h & (uint32_t)mask];
    if (field == 0) return -1;
    if (storage->fields[field - 1].name == name) return field - 1;
  }
}

ObjRecord *obj_record_extend(VM *vm, ObjRecord *record, ObjString *name, Value value) {
  ObjRecord *storage = record_storage(record);
  /* an old storage is immutable (vm/memory.h); another record may have
   * written past this one's fields already */
  if (storage->obj.marked || storage->used != record->count || storage->used == storage->capacity) return NULL;
  ObjRecord *longer = ALLOCATE(vm, ObjRecord, 0, OBJ_RECORD); /* record (rooted) keeps storage */
  storage->fields[storage->used] = (Field){name, value};
  if (storage->indexed) index_insert(storage, storage->used);
  storage->used++;
  longer->count = record->count + 1;
  longer->fields = storage->fields;
  longer->owner = storage;
  longer->capacity = longer->used = 0;
  longer->index = NULL;
  longer->indexed = false;
  return longer;
}

ObjSome *obj_some(VM *vm, Value value) {
  ObjSome *some = ALLOCATE(vm, ObjSome, 0, OBJ_SOME);
  some->value = value;
  return some;
}

/* the standard library's modules (tools/embed.c --modules), NULL ended */
extern const char *const stdlib_module_files[];

bool vm_is_library_file(const char *file) {
  if (strncmp(file, "stdlib/", 7) != 0) return false;
  if (strcmp(file, PRELUDE_FILE) == 0) return true;
  for (int i = 0; stdlib_module_files[i]; i++)
    if (strcmp(file, stdlib_module_files[i]) == 0) return true;
  return false;
}

ObjProto *obj_proto(VM *vm, ProtoKind kind, const char *file, int line) {
  ObjProto *proto = ALLOCATE(vm, ObjProto, 0, OBJ_PROTO);
  proto->kind = kind;
  proto->arity = 0;
  proto->max_slots = 1;
  proto->upvalue_count = 0;
  proto->captures = NULL;
  proto->handler = -1;
  proto->handler_depth = 0;
  chunk_init(&proto->chunk);
  proto->name = NULL;
  proto->file = file;
  proto->line = line;
  proto->prelude = vm_is_library_file(file);
  return proto;
}

ObjClosure *obj_closure(VM *vm, ObjProto *proto, int count) {
  ObjClosure *closure = ALLOCATE(vm, ObjClosure, (size_t)count * sizeof(Value), OBJ_CLOSURE);
  closure->proto = proto;
  closure->upvalue_count = count;
  for (int i = 0; i < count; i++) closure->upvalues[i] = UNIT_VAL;
  return closure;
}

ObjBuiltin *obj_builtin(VM *vm, const Builtin *builtin) {
  ObjBuiltin *value = ALLOCATE(vm, ObjBuiltin, 0, OBJ_BUILTIN);
  value->builtin = builtin;
  return value;
}

ObjAction *obj_action(VM *vm, uint8_t builtin, int argc, const Value *args) {
  ObjAction *action = ALLOCATE(vm, ObjAction, (size_t)argc * sizeof(Value), OBJ_ACTION);
  action->builtin = builtin;
  action->argc = (uint8_t)argc;
  action->prelude = false;
  for (int i = 0; i < argc; i++) action->args[i] = args[i];
  return action;
}

ObjTimeout *obj_timeout(VM *vm, ObjThread *thread) {
  ObjTimeout *timeout = ALLOCATE(vm, ObjTimeout, 0, OBJ_TIMEOUT);
  timeout->timer.set = false;
  timeout->timer.kind = TIMER_TIMEOUT;
  timeout->timer.when = 0;
  timeout->timer.seq = 0;
  timeout->state = TIMEOUT_DISARMED;
  timeout->thread = thread;
  return timeout;
}

ObjException *obj_exception(VM *vm, ExceptionKind kind, ObjString *message) {
  ObjException *exc = ALLOCATE(vm, ObjException, 0, OBJ_EXCEPTION);
  exc->kind = kind;
  exc->message = message;
  exc->where = NULL;
  exc->trace = NULL;
  return exc;
}

ObjMVar *obj_mvar(VM *vm, bool full, Value value) {
  ObjMVar *mvar = ALLOCATE(vm, ObjMVar, 0, OBJ_MVAR);
  mvar->full = full;
  mvar->value = full ? value : UNIT_VAL;
  mvar->label = NULL;
  mvar->takers_head = mvar->takers_tail = NULL;
  mvar->readers_head = mvar->readers_tail = NULL;
  mvar->putters_head = mvar->putters_tail = NULL;
  mvar->last_taker = mvar->last_putter = NULL;
  mvar->explore_id = vm->explore ? explore_object_id(vm) : 0;
  return mvar;
}

ObjTVar *obj_tvar(VM *vm, Value value) {
  ObjTVar *tvar = ALLOCATE(vm, ObjTVar, 0, OBJ_TVAR);
  tvar->value = value;
  tvar->label = NULL;
  tvar->async_thread = NULL;
  tvar->read_stamp = tvar->write_stamp = 0;
  tvar->waiters = tvar->waiter_one;
  tvar->waiter_count = 0;
  tvar->waiter_capacity = 1;
  tvar->timer.set = false;
  tvar->timer.kind = TIMER_TVAR;
  tvar->timer.when = 0;
  tvar->timer.seq = 0;
  tvar->trace_fn = UNIT_VAL;
  tvar->last_writer = NULL;
  tvar->explore_id = vm->explore ? explore_object_id(vm) : 0;
  return tvar;
}

ObjContinuation *obj_continuation(VM *vm, ObjClosure *closure, uint8_t *ip, int count, const Value *values) {
  ObjContinuation *cont = ALLOCATE(vm, ObjContinuation, (size_t)count * sizeof(Value), OBJ_CONTINUATION);
  cont->closure = closure;
  cont->ip = ip;
  cont->count = count;
  for (int i = 0; i < count; i++) cont->values[i] = values[i];
  return cont;
}

const char *obj_callable_name(Value v) {
  if (IS_CLOSURE(v)) {
    ObjString *name = AS_CLOSURE(v)->proto->name;
    return name ? name->chars : "<fn>";
  }
  if (IS_BUILTIN(v)) return AS_BUILTIN(v)->builtin->name;
  return "?";
}
