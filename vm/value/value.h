/* Values: the tagged union every slot, constant and global holds.
 *
 * Always go through the IS_* / AS_* / *_VAL macros, so the representation
 * can change (NaN boxing, say) without touching the rest of the VM. */
#ifndef SIMVM_VALUE_H
#define SIMVM_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct Obj Obj;
typedef struct VM VM;

typedef enum {
  VAL_UNIT,      /* ()                                   */
  VAL_BOOL,
  VAL_INT,       /* 64-bit signed                        */
  VAL_FLOAT,     /* IEEE double                          */
  VAL_DURATION,  /* signed 64-bit count of nanoseconds   */
  VAL_NIL,       /* the empty list []                    */
  VAL_NONE,      /* `none`: "no value", e.g. timed out   */
  VAL_OBJ,       /* pointer to a heap object (vm/object.h) */
  VAL_UNDEFINED  /* internal: a global not yet defined; never seen by programs */
} ValueType;

typedef struct {
  ValueType type;
  union {
    bool boolean;
    int64_t integer;   /* VAL_INT and VAL_DURATION */
    double number;
    Obj *obj;
  } as;
} Value;

#define IS_UNIT(v)     ((v).type == VAL_UNIT)
#define IS_BOOL(v)     ((v).type == VAL_BOOL)
#define IS_INT(v)      ((v).type == VAL_INT)
#define IS_FLOAT(v)    ((v).type == VAL_FLOAT)
#define IS_DURATION(v) ((v).type == VAL_DURATION)
#define IS_NIL(v)      ((v).type == VAL_NIL)
#define IS_NONE(v)     ((v).type == VAL_NONE)
#define IS_OBJ(v)      ((v).type == VAL_OBJ)
#define IS_UNDEFINED(v) ((v).type == VAL_UNDEFINED)

#define AS_BOOL(v)     ((v).as.boolean)
#define AS_INT(v)      ((v).as.integer)
#define AS_FLOAT(v)    ((v).as.number)
#define AS_DURATION(v) ((v).as.integer)
#define AS_OBJ(v)      ((v).as.obj)

#define UNIT_VAL          ((Value){VAL_UNIT, {.integer = 0}})
#define BOOL_VAL(b)       ((Value){VAL_BOOL, {.boolean = (b)}})
#define INT_VAL(i)        ((Value){VAL_INT, {.integer = (i)}})
#define FLOAT_VAL(f)      ((Value){VAL_FLOAT, {.number = (f)}})
#define DURATION_VAL(ns)  ((Value){VAL_DURATION, {.integer = (ns)}})
#define NIL_VAL           ((Value){VAL_NIL, {.integer = 0}})
#define NONE_VAL          ((Value){VAL_NONE, {.integer = 0}})
#define UNDEFINED_VAL     ((Value){VAL_UNDEFINED, {.integer = 0}})
#define OBJ_VAL(o)        ((Value){VAL_OBJ, {.obj = (Obj *)(o)}})

/* A growable array of values (constant pools, globals). */
typedef struct {
  int count;
  int capacity;
  Value *values;
} ValueArray;

/* Initialise an empty array. */
void value_array_init(ValueArray *array);
/* Append; grows with plain realloc (arrays are owned by their holder, not the GC). */
void value_array_push(ValueArray *array, Value value);
/* Release the storage (not the objects it points at). */
void value_array_free(ValueArray *array);

/* Structural equality: numbers by value (1 == 1.0, as with <=), strings by
 * content, lists element-wise, records by their set of fields, other objects
 * by identity. */
bool value_equal(Value a, Value b);
/* The same, counting the work done in *visited: the pairs of values
 * compared, plus the bytes of the strings among them. With a VM (not NULL)
 * it charges that work to it as it goes (vm_work_halts), and gives up when
 * the run must stop (a signal, --max-work passed: a value sharing its parts
 * can be 2^30 pairs): false then, with vm->halted set. */
bool value_equal_counted(VM *vm, Value a, Value b, uint64_t *visited);

/* Order two values: ints, floats (mixed with ints, compared exactly),
 * durations, strings (bytewise). *order is -1, 0 or 1, or 2 when a NaN makes
 * them unordered; false when the two types cannot be ordered at all. */
bool value_compare(Value a, Value b, int *order);

/* The user-facing type name: "int", "duration", "string", "list", "action" ... */
const char *value_type_name(Value v);

#endif
