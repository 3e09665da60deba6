/* The timeline (--timeline): the Chrome trace-event format on simulated
 * time, kept in memory until the run ends and written by vm_write_timeline:
 * a track per thread (named "id (label)"), its delayed and blocked periods
 * as slices ("ph": "X"), every traced event as an instant ("ph": "i") with
 * its detail. The run's own events (thread NULL) are not drawn. */
#include <stdlib.h>
#include <string.h>

#include "state.h"
#include "show.h"
#include "events.h"

/* A track: a thread's name and its current state since when. */
typedef struct {
  char *name;
  TrackState state;
  int64_t since;
} Track;

typedef struct Timeline {
  Track *tracks;           /* by thread serial */
  int count, capacity;
  Buffer events;           /* ",\n{...}" fragments */
  uint64_t seq;            /* events so far: each instant's "seq" */
  int64_t instant_at;      /* the simulated time of the last instant ... */
  int in_instant;          /* ... and how many came at that time        */
} Timeline;

static double micros(int64_t ns) { return (double)ns / 1000.0; }

static Timeline *timeline_of(VM *vm) {
  if (!vm->timeline) {
    vm->timeline = xrealloc(NULL, sizeof(Timeline));
    memset(vm->timeline, 0, sizeof(Timeline));
  }
  return vm->timeline;
}

/* The timeline is kept in memory until the run ends: an event that would
 * take it past --max-trace-size is taken back, and the run stops. */
static void keep_within_cap(VM *vm, Timeline *t, size_t before) {
  vm_work(vm, t->events.length - before);
  if (vm_trace_room(vm, 2, t->events.length - before)) return;
  buf_truncate(&t->events, before);
}

/* A traced event as an instant on its thread's track. Many events share
 * one simulated instant, and a viewer draws them at one point in any
 * order: "seq" numbers every event of the run and "order" its place in its
 * instant (1, 2 ...), so the order is there to read. An explored run's
 * mark (a deviation, or a choice off its default) is an instant named
 * "<- deviation" or "<- choice" on the track of the thread it concerns. */
static void instant(VM *vm, Timeline *t, const Event *e) {
  if (!e->thread || vm->trace_capped) return;
  if (vm->now != t->instant_at || !t->seq) {
    t->instant_at = vm->now;
    t->in_instant = 0;
  }
  t->seq++;
  t->in_instant++;
  size_t before = t->events.length;
  buf_printf(&t->events, ",\n{\"ph\": \"i\", \"s\": \"t\", \"pid\": 1, \"tid\": %d, \"ts\": %.3f, \"name\": ",
             e->thread->serial, micros(vm->now));
  if (e->kind == EV_MARK)
    buf_append_json(&t->events, strstr(e->text, " runs here instead of ") ? "<- deviation" : "<- choice");
  else buf_append_json(&t->events, event_name(e));
  buf_printf(&t->events, ", \"args\": {\"seq\": %llu, \"order\": %d, \"detail\": ", (unsigned long long)t->seq,
             t->in_instant);
  if (e->kind == EV_MARK) {
    buf_append_json(&t->events, e->text);
  } else {
    Buffer detail;
    buf_init(&detail);
    event_detail(vm, e, &detail);
    buf_append_json(&t->events, buf_text(&detail));
    buf_free(&detail);
  }
  buf_append(&t->events, "}}", 2);
  keep_within_cap(vm, t, before);
}

static const char *const state_names[] = {"runnable", "delayed", "blocked", "done"};

/* End the track's current slice now; slices of no simulated time are left out. */
static void close_slice(VM *vm, Track *track, int serial) {
  if (track->state == TRACK_DONE || vm->now <= track->since || vm->trace_capped) return;
  Timeline *t = vm->timeline;
  size_t before = t->events.length;
  buf_printf(&t->events,
             ",\n{\"ph\": \"X\", \"pid\": 1, \"tid\": %d, \"ts\": %.3f, \"dur\": %.3f, \"name\": \"%s\"}", serial,
             micros(track->since), micros(vm->now - track->since), state_names[track->state]);
  keep_within_cap(vm, t, before);
}

/* A thread's id is as long as it is deep in the fork tree: its cost is
 * charged to the work budget, wherever a sink copies or formats it. */
static void set_name(VM *vm, Track *track, ObjThread *thread) {
  Buffer name;
  buf_init(&name);
  thread_name(&name, thread);
  vm_work(vm, name.length);
  free(track->name);
  track->name = xrealloc(NULL, name.length + 1);
  memcpy(track->name, buf_text(&name), name.length + 1);
  buf_free(&name);
}

static void thread_start(VM *vm, ObjThread *thread) {
  Timeline *t = timeline_of(vm);
  while (t->count <= thread->serial) {
    if (t->count == t->capacity) {
      t->capacity = t->capacity ? t->capacity * 2 : 64;
      t->tracks = xrealloc(t->tracks, (size_t)t->capacity * sizeof(Track));
    }
    t->tracks[t->count++] = (Track){NULL, TRACK_DONE, 0};
  }
  Track *track = &t->tracks[thread->serial];
  set_name(vm, track, thread);
  track->state = TRACK_RUNNABLE;
  track->since = vm->now;
}

static void thread_state(VM *vm, ObjThread *thread, TrackState state) {
  Timeline *t = vm->timeline;
  if (!t || thread->serial >= t->count) return;
  Track *track = &t->tracks[thread->serial];
  if (track->state == state) return;
  close_slice(vm, track, thread->serial);
  track->state = state;
  track->since = vm->now;
}

static void relabel(VM *vm, ObjThread *thread) {
  Timeline *t = vm->timeline;
  if (t && thread->serial < t->count) set_name(vm, &t->tracks[thread->serial], thread);
}

bool timeline_write(VM *vm, FILE *out) {
  Timeline *t = timeline_of(vm);
  fprintf(out, "{\"displayTimeUnit\": \"ns\",\n\"otherData\": {\"clock\": \"simulated time, in microseconds\"},\n"
               "\"traceEvents\": [\n{\"ph\": \"M\", \"pid\": 1, \"name\": \"process_name\", \"args\": {\"name\": \"simvm\"}}");
  for (int i = 0; i < t->count; i++) {
    if (!t->tracks[i].name) continue;
    close_slice(vm, &t->tracks[i], i);
    t->tracks[i].state = TRACK_DONE;
    Buffer name;
    buf_init(&name);
    buf_append_json(&name, t->tracks[i].name);
    fprintf(out, ",\n{\"ph\": \"M\", \"pid\": 1, \"tid\": %d, \"name\": \"thread_name\", \"args\": {\"name\": %s}}", i,
            buf_text(&name));
    fprintf(out, ",\n{\"ph\": \"M\", \"pid\": 1, \"tid\": %d, \"name\": \"thread_sort_index\", \"args\": {\"sort_index\": %d}}",
            i, i);
    buf_free(&name);
  }
  fputs(buf_text(&t->events), out);
  fputs("\n]}\n", out);
  return !ferror(out);
}

void timeline_free(VM *vm) {
  Timeline *t = vm->timeline;
  if (!t) return;
  for (int i = 0; i < t->count; i++) free(t->tracks[i].name);
  free(t->tracks);
  buf_free(&t->events);
  free(t);
  vm->timeline = NULL;
}

static void *start(VM *vm) {
  timeline_free(vm);
  return vm->config.timeline ? timeline_of(vm) : NULL;
}

static void event(VM *vm, void *state, const Event *e) {
  switch (e->kind) {
    case EV_THREAD_START: thread_start(vm, e->thread); return;
    case EV_THREAD_STATE: thread_state(vm, e->thread, (TrackState)e->mode); return;
    case EV_LABEL: relabel(vm, e->other); break;
    default: break;
  }
  instant(vm, state, e);
}

const EventSink sink_timeline = {"timeline", start, event, NULL};
