/* The profiler's view of threads (--profile): when each starts, blocks,
 * wakes, ends and is labelled, for its per-thread figures (vm/profile.h;
 * the instruction counts come from the profiled dispatch loop). */
#include "state.h"
#include "show.h"
#include "events.h"

static void *start(VM *vm) { return vm->profile; }

static void event(VM *vm, void *state, const Event *e) {
  (void)state;
  switch (e->kind) {
    case EV_THREAD_START:
      profile_thread_start(vm, e->thread);
      break;
    case EV_THREAD_STATE:
      if (e->thread->profile_index < 0) break;
      if (e->mode == TRACK_RUNNABLE) profile_thread_wake(vm, e->thread);
      else if (e->mode == TRACK_DONE) profile_thread_end(vm, e->thread);
      else profile_thread_block(vm, e->thread);
      break;
    case EV_LABEL:
      profile_thread_label(vm, e->other);
      break;
    default:
      break;
  }
}

const EventSink sink_profile = {"profile", start, event, NULL};
