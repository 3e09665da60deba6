/* Where trace events go besides the text trace: JSON lines (--trace-json)
 * and a timeline in the Chrome trace-event format (--timeline), on
 * simulated time: a track per thread, with its delayed and blocked periods
 * as slices and every event as an instant. */
#ifndef SIMVM_EVENTS_H
#define SIMVM_EVENTS_H

#include <stdio.h>

#include "buffer.h"

#include <stdbool.h>

typedef struct VM VM;
typedef struct ObjThread ObjThread;
typedef struct Timeline Timeline;

/* What a thread's track shows between two changes. */
typedef enum { TRACK_RUNNABLE, TRACK_DELAYED, TRACK_BLOCKED, TRACK_DONE } TrackState;

/* One event: `text` is the event as the text trace shows it ("say \"hi\"",
 * "fork 1" ...); its first word is the event's name. */
void events_record(VM *vm, ObjThread *thread, const char *text);

/* Timeline hooks: a thread started, changed state, or was labelled. */
void timeline_thread_start(VM *vm, ObjThread *thread);
void timeline_state(VM *vm, ObjThread *thread, TrackState state);
void timeline_label(VM *vm, ObjThread *thread);

/* Write the timeline ({"traceEvents": [...]}); open slices end at the
 * current simulated time. False on a write error. */
bool timeline_write(VM *vm, FILE *out);

/* Free the timeline's storage. */
void timeline_free(VM *vm);

#endif
