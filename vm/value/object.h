/* Heap objects. Every object starts with an Obj header and is allocated
 * through the one funnel in vm/memory.c, which links it into the GC's list.
 *
 * Closures are flat: variables are immutable, so a closure copies the values
 * it captures when it is created; there are no open upvalues to close. */
#ifndef SIMVM_OBJECT_H
#define SIMVM_OBJECT_H

#include "chunk.h"
#include "opcodes.h"
#include "timer.h"
#include "value.h"

typedef enum {
  OBJ_STRING,
  OBJ_CONS,      /* a non-empty list cell                                */
  OBJ_RECORD,
  OBJ_SOME,      /* `some(x)`                                            */
  OBJ_PROTO,     /* compiled function or block: bytecode + constants     */
  OBJ_CLOSURE,   /* prototype + captured values; a block closure is an action */
  OBJ_BUILTIN,   /* a builtin function as a first-class value            */
  OBJ_ACTION,    /* a primitive action value: an opcode with its arguments */
  OBJ_THREAD,    /* a simulated thread (vm/thread.h); its value is a thread id */
  OBJ_TIMEOUT,   /* an armed `timeout`: its timer, and the exception it throws */
  OBJ_EXCEPTION, /* ThreadKilled, runtime errors                         */
  OBJ_MVAR,      /* a synchronising box, full or empty (vm/mvar.c)       */
  OBJ_TVAR,      /* a transactional variable (vm/stm.c)                  */
  OBJ_CONTINUATION, /* -O0: the rest of a block, copied to the heap by a bind */
  OBJ_MAP,       /* a node of import "map"'s persistent AVL tree (vm/map.h) */
  OBJ_FREE         /* internal: a dead slot of the heap (vm/heap.h), never a value */
} ObjType;

/* Every object's header. Objects never move; the heap finds them by
 * walking its blocks, so the header holds no list link. */
struct Obj {
  ObjType type;
  bool marked;        /* reached by the current collection, or old (vm/memory.h) */
};

/* Strings the compiler and the loader make (names, literals) are interned:
 * equal ones are one object, so names compare by pointer. Strings built at
 * run time (++, show, join) are not: hashing a long result would cost as
 * much again as making it, and only a string used as a record field name
 * needs it (obj_intern). */
/* A string made by `++` shares its left operand's storage when that
 * operand ends the storage's written part (`used`) and the storage has
 * room: the right operand is written after it, so a string grown by
 * appends in a loop costs amortised linear time, not a copy each time.
 * Its bytes are chars[0, length) of the storage its owner (itself, or
 * `owner`) holds after its header. Only the string that ends a storage is
 * NUL-terminated: use `length` (or "%.*s"), never the terminator, for a
 * string made at run time. Names and literals (interned) have storage of
 * their own, exactly their size, and are always terminated. */
typedef struct ObjString ObjString;
struct ObjString {
  Obj obj;
  bool interned;      /* in the VM's intern set, and `hash` is its hash */
  uint32_t hash;
  int length;         /* bytes, not counting a terminating NUL */
  int capacity;       /* bytes its own storage has room for (0: shares)  */
  int used;           /* of its own storage: bytes written               */
  ObjString *owner;   /* whose storage `chars` is in; NULL: its own       */
  char *chars;
};

/* Whether a string's storage may yet be written past its length (by ++),
 * so that its terminator cannot be relied on. */
static inline bool string_shared(const ObjString *s) { return s->owner || s->capacity != s->length; }

/* The tail is a pointer, not a Value: a list is only ever NIL_VAL or a
 * cons, and a cell is 32 bytes instead of 40. */
typedef struct ObjCons ObjCons;
struct ObjCons {
  Obj obj;
  Value head;
  ObjCons *tail;      /* the next cell, or NULL at the end of the list */
};

typedef struct {
  ObjString *name;
  Value value;
} Field;

/* A record is immutable, but records made by setField adding a field share
 * storage: a record's fields are fields[0, count) of a storage that its
 * owner (the record itself, or `owner`) holds after its header, with room
 * for `capacity`. setField adding a field to the record whose fields end
 * the storage's written part (`used`) writes the field there and makes a
 * header-only record one longer, so building a record field by field is
 * amortised linear, not a copy of the whole record each time; any other
 * setField copies. A storage of RECORD_INDEX_MIN fields or more also holds
 * an index of its names (open addressing, built at the first lookup), so
 * finding a field, or that there is none, is O(1) there. */
#define RECORD_INDEX_MIN 16

typedef struct ObjRecord ObjRecord;
struct ObjRecord {
  Obj obj;
  int count;
  Field *fields;      /* in source order; names are interned            */
  ObjRecord *owner;   /* whose storage `fields` is in; NULL: its own     */
  int capacity;       /* fields its own storage has room for (0: shares) */
  int used;           /* of its own storage: fields written, by it or by
                         records sharing it                               */
  int32_t *index;     /* of its own storage: field + 1 by name, or NULL   */
  bool indexed;       /* the index holds fields[0, used)                  */
};

/* The storage a record's fields are in. */
static inline ObjRecord *record_storage(ObjRecord *record) { return record->owner ? record->owner : record; }

/* Slots of the index of a storage of `capacity` fields: a power of two at
 * least twice it, or 0 below RECORD_INDEX_MIN. */
static inline int record_index_slots(int capacity) {
  if (capacity < RECORD_INDEX_MIN) return 0;
  int slots = 32;
  while (slots < 2 * capacity) slots *= 2;
  return slots;
}

/* The field named `name` in a storage's index, or -1; builds the index
 * first if need be (vm/object.c). */
int record_index_find(ObjRecord *storage, const ObjString *name);

/* The index of the field named `name` (interned, as every field name is),
 * or -1 when the record has none. */
static inline int record_field_index(const ObjRecord *record, const ObjString *name) {
  ObjRecord *storage = record_storage((ObjRecord *)record);
  if (storage->index) {
    int i = record_index_find(storage, name);
    return i < record->count ? i : -1;
  }
  for (int i = 0; i < record->count; i++)
    if (record->fields[i].name == name) return i;
  return -1;
}

/* The value of the field named `name` in *value; false (and *value left
 * alone) when the record has none. */
static inline bool record_field_value(const ObjRecord *record, const ObjString *name, Value *value) {
  int i = record_field_index(record, name);
  if (i >= 0) *value = record->fields[i].value;
  return i >= 0;
}

typedef struct {
  Obj obj;
  Value value;
} ObjSome;

/* What kind of code a prototype holds. */
typedef enum {
  PROTO_FUNCTION,     /* fn (params) = expr: calling it computes a value   */
  PROTO_ACTION_FN,    /* fn (params) { stmts }: calling it builds an action
                         (a suspended call); binding that runs the body with
                         the arguments as its locals                        */
  PROTO_BLOCK,        /* { stmts }: a closure of it is an action           */
  PROTO_SCRIPT,       /* a module's top level, run once at load            */
  PROTO_INTERNAL      /* the VM's own code (thread entry, timeout)         */
} ProtoKind;

typedef struct {
  Obj obj;
  ProtoKind kind;
  int arity;          /* parameters; 0 for blocks                          */
  int max_slots;      /* deepest stack use, in values, including slot 0    */
  int upvalue_count;
  uint8_t *captures;  /* 2 bytes per upvalue: from_local (0/1), index      */
  int handler;        /* bytecode offset of the exception handler, or -1  */
  int handler_depth;  /* stack depth (from slot 0) when the handler starts */
  Chunk chunk;
  ObjString *name;    /* "fib", "<block>", "<lambda>"                      */
  const char *file;   /* owned by the VM's source list                     */
  int line;
  bool prelude;       /* the prelude's code: the catch, mask and atomically it
                         calls make internal trace events (--trace=user)    */
} ObjProto;

typedef struct {
  Obj obj;
  ObjProto *proto;
  int upvalue_count;
  Value upvalues[];
} ObjClosure;

typedef struct Builtin Builtin;

typedef struct {
  Obj obj;
  const Builtin *builtin;
} ObjBuiltin;

typedef struct {
  Obj obj;
  uint8_t builtin;    /* the action builtin it runs (builtin_table index), or
                         ACTION_CALL: a suspended call of args[0]          */
  uint8_t argc;
  bool prelude;       /* built by the prelude's code (ObjProto.prelude)    */
  Value args[];
} ObjAction;

#define ACTION_CALL 0xff

typedef enum {
  TIMEOUT_ARMED,      /* timer queued                                      */
  TIMEOUT_FIRED,      /* timer expired; the interrupt waits in the run queue */
  TIMEOUT_THROWN,     /* the exception was delivered to the thread         */
  TIMEOUT_DISARMED    /* the action finished or unwound first              */
} TimeoutState;

typedef struct ObjThread ObjThread;

typedef struct {
  Obj obj;
  Timer timer;
  TimeoutState state;
  ObjThread *thread;
} ObjTimeout;

typedef enum {
  EXC_KILLED,         /* ThreadKilled, thrown by kill()                    */
  EXC_ERROR,          /* a runtime error; message and stack trace inside  */
  EXC_RETRY,          /* retry(): unwinds to orElse or atomically          */
  EXC_ASSERT          /* assert(cond, message) failed: "AssertionFailed",
                         with its message, place and stack trace         */
} ExceptionKind;

typedef struct {
  Obj obj;
  ExceptionKind kind;
  ObjString *message;  /* NULL for ThreadKilled                            */
  ObjString *where;    /* "file:line" of the raise, or NULL                */
  ObjString *trace;    /* formatted stack trace, or NULL                   */
} ObjException;

/* An MVar: a box that is full or empty, with FIFO queues of the threads
 * blocked on it (linked through ObjThread.wait_prev/wait_next). */
typedef struct {
  Obj obj;
  bool full;
  Value value;
  ObjString *label;    /* labelMVar, or NULL */
  ObjThread *takers_head, *takers_tail;   /* takeMVar, in order               */
  ObjThread *readers_head, *readers_tail; /* readMVar, in order: a queue of
                                              their own, so a put serves them
                                              without walking the takers   */
  ObjThread *putters_head, *putters_tail; /* putMVar, in order               */
  ObjThread *last_taker;   /* who last took its value, or NULL: the deadlock */
  ObjThread *last_putter;  /* report's wait-for edges                        */
  uint64_t explore_id;     /* the same in every run (vm/explore.h); 0 unexplored */
} ObjMVar;

/* A thread blocked in retry on a TVar, as of its block_seq when it blocked:
 * the entry is stale once the thread no longer waits so (vm/stm.c). */
typedef struct {
  ObjThread *thread;
  uint64_t seq;
} Waiter;

/* A TVar: a variable read and written only by transactions (vm/stm.h). */
typedef struct {
  Obj obj;
  Value value;
  ObjString *label;      /* labelTVar, or NULL                              */
  ObjThread *async_thread; /* an async's TVar, unlabelled: shown "async T" by
                              its thread T (made only when shown) */
  uint64_t read_stamp;   /* the last transaction that put it in its read set */
  uint64_t write_stamp;  /* the last commit that counted it as written      */
  Waiter *waiters;       /* threads blocked in retry on it, in block order, and stale entries */
  int waiter_count;
  int waiter_capacity;
  Waiter waiter_one[1];  /* the first waiter's place (waiters until a second one) */
  Timer timer;           /* registerDelay's timer (kind TIMER_TVAR)         */
  Value trace_fn;        /* traceTVar's f(old, new), or UNIT_VAL: none      */
  ObjThread *last_writer; /* whose commit last wrote it (NULL: none, or a timer) */
  uint64_t explore_id;   /* the same in every run (vm/explore.h); 0 unexplored */
} ObjTVar;

/* A heap continuation (-O0, io-sim's strategy): the frame a bind left,
 * copied out so the bound action can return into it: the closure, where to
 * go on, and the frame's values. */
typedef struct {
  Obj obj;
  ObjClosure *closure;
  uint8_t *ip;
  int count;
  Value values[];
} ObjContinuation;

/* A node of an ordered map (import "map", vm/map.h): a persistent AVL
 * tree, never changed once made. The empty map is `none`, an empty
 * subtree NULL. It shows, compares and equals as the record
 * #{key, value, left, right, height, size} that stdlib/map.sim's tree of
 * records was, so outputs stay as they were. */
typedef struct ObjMap ObjMap;
struct ObjMap {
  Obj obj;
  int16_t height;     /* 1 for a leaf                                     */
  int8_t tilt;        /* left's height less right's: an insertion knows the
                         untouched side's height without reading it       */
  int32_t size;       /* keys in this subtree                             */
  Value key;          /* key, left and right together: what a search reads */
  ObjMap *left, *right; /* smaller / larger keys, or NULL                */
  Value value;
};

#define OBJ_TYPE(v)      (AS_OBJ(v)->type)
#define IS_OBJ_TYPE(v, t) (IS_OBJ(v) && OBJ_TYPE(v) == (t))
#define IS_STRING(v)     IS_OBJ_TYPE(v, OBJ_STRING)
#define IS_CONS(v)       IS_OBJ_TYPE(v, OBJ_CONS)
#define IS_LIST(v)       (IS_NIL(v) || IS_CONS(v))
#define IS_RECORD(v)     IS_OBJ_TYPE(v, OBJ_RECORD)
#define IS_SOME(v)       IS_OBJ_TYPE(v, OBJ_SOME)
#define IS_PROTO(v)      IS_OBJ_TYPE(v, OBJ_PROTO)
#define IS_CLOSURE(v)    IS_OBJ_TYPE(v, OBJ_CLOSURE)
#define IS_BUILTIN(v)    IS_OBJ_TYPE(v, OBJ_BUILTIN)
#define IS_ACTION(v)     IS_OBJ_TYPE(v, OBJ_ACTION)
#define IS_THREAD(v)     IS_OBJ_TYPE(v, OBJ_THREAD)
#define IS_TIMEOUT(v)    IS_OBJ_TYPE(v, OBJ_TIMEOUT)
#define IS_EXCEPTION(v)  IS_OBJ_TYPE(v, OBJ_EXCEPTION)
#define IS_MVAR(v)       IS_OBJ_TYPE(v, OBJ_MVAR)
#define IS_TVAR(v)       IS_OBJ_TYPE(v, OBJ_TVAR)
#define IS_MAP(v)        IS_OBJ_TYPE(v, OBJ_MAP)

#define AS_STRING(v)     ((ObjString *)AS_OBJ(v))
#define AS_CSTRING(v)    (((ObjString *)AS_OBJ(v))->chars)
#define AS_CONS(v)       ((ObjCons *)AS_OBJ(v))
#define AS_RECORD(v)     ((ObjRecord *)AS_OBJ(v))
#define AS_SOME(v)       ((ObjSome *)AS_OBJ(v))
#define AS_PROTO(v)      ((ObjProto *)AS_OBJ(v))
#define AS_CLOSURE(v)    ((ObjClosure *)AS_OBJ(v))
#define AS_BUILTIN(v)    ((ObjBuiltin *)AS_OBJ(v))
#define AS_ACTION(v)     ((ObjAction *)AS_OBJ(v))
#define AS_THREAD(v)     ((ObjThread *)AS_OBJ(v))
#define AS_TIMEOUT(v)    ((ObjTimeout *)AS_OBJ(v))
#define AS_EXCEPTION(v)  ((ObjException *)AS_OBJ(v))
#define AS_MVAR(v)       ((ObjMVar *)AS_OBJ(v))
#define AS_TVAR(v)       ((ObjTVar *)AS_OBJ(v))
#define AS_CONTINUATION(v) ((ObjContinuation *)AS_OBJ(v))
#define AS_MAP(v)        ((ObjMap *)AS_OBJ(v))

/* The first cell of `v` when it is a non-empty list, else NULL: walk a
 * list with `for (ObjCons *c = list_cell(v); c; c = c->tail)`. */
static inline ObjCons *list_cell(Value v) { return IS_CONS(v) ? AS_CONS(v) : NULL; }

/* The rest of the list after `cons`, as a value. */
static inline Value cons_tail(const ObjCons *cons) { return cons->tail ? OBJ_VAL(cons->tail) : NIL_VAL; }

/* A block closure is an action; so is a primitive action value. */
#define IS_BLOCK_CLOSURE(v) (IS_CLOSURE(v) && AS_CLOSURE(v)->proto->kind == PROTO_BLOCK)
/* Closures that can be called. */
#define IS_FUNCTION_CLOSURE(v) \
  (IS_CLOSURE(v) && (AS_CLOSURE(v)->proto->kind == PROTO_FUNCTION || AS_CLOSURE(v)->proto->kind == PROTO_ACTION_FN))
/* A suspended call of an action function: args[0] is the closure. */
#define IS_SUSPENDED_CALL(v) (IS_ACTION(v) && AS_ACTION(v)->builtin == ACTION_CALL)

/* Constructors. Each allocates through the GC funnel and may collect, so
 * every Value argument must already be reachable from a root (the stack). */

/* Copy `length` bytes into an interned string; equal strings are one object. */
ObjString *obj_string(VM *vm, const char *chars, int length);
/* A string of `length` bytes that is not interned; the caller fills
 * chars[0 .. length - 1] (the NUL after them is set). */
ObjString *obj_string_new(VM *vm, int length);

/* The same with room for `capacity` (>= length) bytes, for ++ to append to. */
ObjString *obj_string_with_room(VM *vm, int length, int capacity);

/* s ++ chars[0, length) written after s in its storage, when s ends the
 * storage's written part and there is room: the longer string, sharing it;
 * NULL when it cannot (then copy). */
ObjString *obj_string_append(VM *vm, ObjString *s, const char *chars, int length);

/* The chars of the string in *slot as a C string: its own when they cannot
 * lose their terminator, else those of a copy put in *slot (a rooted
 * place, such as a builtin's argument). May collect. */
const char *obj_string_cstring(VM *vm, Value *slot);
/* The interned string equal to `s`: s itself once interned (it then joins
 * the intern set), or the one already there; a copy of its own when s
 * shares storage (string_shared), which may collect. */
ObjString *obj_intern(VM *vm, ObjString *s);
/* The interned string equal to `s`, or NULL if there is none (then no
 * record has a field of that name). */
ObjString *obj_find_interned(VM *vm, ObjString *s);
/* Intern a NUL-terminated C string. */
ObjString *obj_cstring(VM *vm, const char *chars);
/* printf into a new interned string (truncated at 4 KiB). */
ObjString *obj_stringf(VM *vm, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A cell in front of `tail`, which is a list: NIL_VAL or a cons. */
ObjCons *obj_cons(VM *vm, Value head, Value tail);
/* A record with `count` fields, all unit; the caller fills names and values. */
ObjRecord *obj_record(VM *vm, int count);

/* A record of `count` fields with room for `capacity` (>= count) in its
 * storage, for setField to add to. */
ObjRecord *obj_record_with_room(VM *vm, int count, int capacity);

/* setField(record, name, value) for a name the record lacks, when its
 * storage has room after its fields: the record one field longer, sharing
 * the storage; NULL when it cannot (then copy). */
ObjRecord *obj_record_extend(VM *vm, ObjRecord *record, ObjString *name, Value value);
ObjSome *obj_some(VM *vm, Value value);
/* An empty prototype; `file` must outlive it (the VM keeps source names). */
ObjProto *obj_proto(VM *vm, ProtoKind kind, const char *file, int line);
/* A closure with `count` captured values, all unit until the caller fills them. */
ObjClosure *obj_closure(VM *vm, ObjProto *proto, int count);
ObjBuiltin *obj_builtin(VM *vm, const Builtin *builtin);
/* A primitive action: opcode `op` with `argc` arguments copied from `args`. */
ObjAction *obj_action(VM *vm, uint8_t builtin, int argc, const Value *args);
ObjTimeout *obj_timeout(VM *vm, ObjThread *thread);
ObjException *obj_exception(VM *vm, ExceptionKind kind, ObjString *message);
/* An MVar, full of `value` or (full false) empty. */
ObjMVar *obj_mvar(VM *vm, bool full, Value value);
/* A TVar holding `value`. */
ObjTVar *obj_tvar(VM *vm, Value value);
/* A continuation of `closure` at `ip` with `count` values copied from `values`. */
ObjContinuation *obj_continuation(VM *vm, ObjClosure *closure, uint8_t *ip, int count, const Value *values);

/* The name shown for a callable: "fib", "<lambda>", "delay". */
const char *obj_callable_name(Value v);

#endif
