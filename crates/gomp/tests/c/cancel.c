/* Cancellation with OMP_CANCELLATION=true: omp_get_cancellation; cancel
 * parallel (members waiting at a barrier leave, nothing after them runs;
 * queued tasks of the region: the region still ends; the cancellable ends of
 * loops, sections and single); cancel for under dynamic and static schedules
 * (iterations stop early, the team goes on, the next loop in the region runs
 * in full: the cancellation ends with its construct); cancel sections; cancel
 * taskgroup (no task is created in a cancelled group, the group's end
 * returns, an outer group is unaffected); cancel ... if(false) is a
 * cancellation point. (No member waits for another by spinning: that may hang
 * when members share workers, see PROTOCOL.md.)
 * maestro-test: env OMP_CANCELLATION=true
 * maestro-test: also-stock
 * maestro-test: also-dedicated */
#include <omp.h>
#include <unistd.h>
#include "check.h"

int main(void) {
  CHECK_EQ(omp_get_cancellation(), 1);

  /* cancel parallel: member 0 cancels; the others wait at a barrier that only
   * a cancellation can end (member 0 never arrives). */
  for (int threads = 1; threads <= 5; threads++) {
    int after = 0, before = 0;
    #pragma omp parallel num_threads(threads)
    {
      #pragma omp atomic
      before++;
      if (omp_get_thread_num() == 0) {
        #pragma omp cancel parallel
      }
      #pragma omp barrier
      #pragma omp atomic
      after++;
    }
    CHECK_EQ(before, threads);
    CHECK_EQ(after, 0);
  }

  /* Tasks queued when the region is cancelled: the region still ends. */
  {
    int ran = 0;
    #pragma omp parallel num_threads(3)
    {
      if (omp_get_thread_num() == 0) {
        for (int i = 0; i < 50; i++) {
          #pragma omp task shared(ran)
          {
            #pragma omp atomic
            ran++;
          }
        }
        #pragma omp cancel parallel
      }
      #pragma omp barrier
    }
    CHECK(ran >= 0 && ran <= 50);
  }

  /* In a region with cancel parallel, GCC ends loops, sections and single
   * with cancellable barriers (GOMP_loop_end_cancel, GOMP_sections_end_cancel,
   * GOMP_barrier_cancel). Not cancelled, they are plain barriers; cancelled
   * while members wait there (member 0 cancels instead of arriving), the
   * members leave and nothing after them runs. */
  for (int cancel = 0; cancel < 2; cancel++) {
    int iters = 0, sections = 0, singles = 0, after = 0;
    #pragma omp parallel num_threads(3)
    {
      if (cancel && omp_get_thread_num() == 0) {
        #pragma omp cancel parallel
      }
      #pragma omp for schedule(dynamic, 2)
      for (int i = 0; i < 100; i++) {
        #pragma omp atomic
        iters++;
      }
      #pragma omp sections
      {
        #pragma omp section
        {
          #pragma omp atomic
          sections++;
        }
        #pragma omp section
        {
          #pragma omp atomic
          sections++;
        }
      }
      #pragma omp single
      {
        #pragma omp atomic
        singles++;
      }
      #pragma omp atomic
      after++;
    }
    if (cancel) {
      CHECK_EQ(iters, 100);
      CHECK_EQ(sections, 0);
      CHECK_EQ(singles, 0);
      CHECK_EQ(after, 0);
    } else {
      CHECK_EQ(iters, 100);
      CHECK_EQ(sections, 2);
      CHECK_EQ(singles, 1);
      CHECK_EQ(after, 3);
    }
  }

  /* cancel for: dynamic and static schedules; then a full loop. */
  for (int sched = 0; sched < 2; sched++) {
    int count = 0, after_loop = 0, count2 = 0;
    #pragma omp parallel num_threads(4)
    {
      if (sched == 0) {
        #pragma omp for schedule(dynamic, 1)
        for (int i = 0; i < 100000; i++) {
          if (i == 10) {
            #pragma omp cancel for
          }
          #pragma omp cancellation point for
          #pragma omp atomic
          count++;
          usleep(1);
        }
      } else {
        #pragma omp for schedule(static)
        for (int i = 0; i < 100000; i++) {
          if (i == 10) {
            #pragma omp cancel for
          }
          #pragma omp cancellation point for
          #pragma omp atomic
          count++;
          usleep(1);
        }
      }
      #pragma omp atomic
      after_loop++;
      #pragma omp for schedule(dynamic, 3)
      for (int i = 0; i < 1000; i++) {
        #pragma omp cancellation point for
        #pragma omp atomic
        count2++;
      }
    }
    CHECK(count >= 10);
    CHECK(count < 100000);
    CHECK_EQ(after_loop, 4);
    CHECK_EQ(count2, 1000);
  }

  /* cancel for with a false condition is a cancellation point only. */
  {
    int count = 0;
    #pragma omp parallel num_threads(3)
    #pragma omp for schedule(dynamic, 7)
    for (int i = 0; i < 500; i++) {
      #pragma omp cancel for if(i < 0)
      #pragma omp atomic
      count++;
    }
    CHECK_EQ(count, 500);
  }

  /* cancel sections: what follows the cancel in its section is skipped. */
  {
    int s1 = 0, s1_before = 0, others = 0;
    #pragma omp parallel num_threads(2)
    #pragma omp sections
    {
      #pragma omp section
      {
        s1_before = 1;
        #pragma omp cancel sections
        s1 = 1;
      }
      #pragma omp section
      {
        #pragma omp atomic
        others++;
      }
    }
    CHECK_EQ(s1_before, 1);
    CHECK_EQ(s1, 0);
    CHECK(others <= 1);
  }

  /* cancel taskgroup: after a task cancelled its group, no new task of the
   * group is created; the group's end returns; an outer group goes on. */
  for (int threads = 1; threads <= 4; threads++) {
    int after = 0, outer_ran = 0, seen_cancel = 0;
    #pragma omp parallel num_threads(threads)
    #pragma omp single
    {
      #pragma omp taskgroup
      {
        #pragma omp task shared(outer_ran)
        {
          #pragma omp atomic
          outer_ran++;
        }
        #pragma omp taskgroup
        {
          #pragma omp task
          {
            #pragma omp cancel taskgroup
          }
          #pragma omp taskwait
          for (int i = 0; i < 100; i++) {
            #pragma omp task shared(after)
            {
              #pragma omp atomic
              after++;
            }
          }
          #pragma omp task shared(seen_cancel)
          {
            /* Not created at all, so this never runs either. */
            #pragma omp cancellation point taskgroup
            seen_cancel = -1;
          }
        }
        #pragma omp task shared(outer_ran)
        {
          #pragma omp cancellation point taskgroup
          #pragma omp atomic
          outer_ran++;
        }
      }
    }
    CHECK_EQ(after, 0);
    CHECK_EQ(seen_cancel, 0);
    CHECK_EQ(outer_ran, 2);
  }
  puts("cancel: ok");
  return 0;
}
