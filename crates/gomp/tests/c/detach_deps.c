/* Waiting for dependences on a pending detached task: `taskwait depend` and
 * an `if(0)` task with dependences must wait until the detached sibling's event
 * is fulfilled, not just until its body returned; the fulfilling task is queued
 * behind them, so the waiter has to run it (team of 1) or let another member.
 * Not run against stock libgomp: GCC 12's libgomp lets both go on as soon as
 * the detached task's body has returned (measured: the checks below fail,
 * then the late omp_fulfill_event aborts, "event is invalid or has already
 * been fulfilled"), which OpenMP 5.1 (2.12.5.2, 2.19.11) does not allow. */
#include <omp.h>
#include <unistd.h>
#include "check.h"

static int fulfilled_flag(int *f) {
  int v;
  #pragma omp atomic read seq_cst
  v = *f;
  return v;
}

static void set_flag(int *f) {
  #pragma omp atomic write seq_cst
  *f = 1;
}

int main(void) {
  for (int threads = 1; threads <= 4; threads++) {
    int x = 0, flag = 0, ok1 = 0, ok2 = 0;
    #pragma omp parallel num_threads(threads)
    #pragma omp single
    {
      omp_event_handle_t ev;
      #pragma omp task depend(out: x) detach(ev) shared(x)
      x = 1;
      #pragma omp task firstprivate(ev) shared(flag)
      {
        usleep(10000);
        set_flag(&flag);
        omp_fulfill_event(ev);
      }
      #pragma omp taskwait depend(in: x)
      ok1 = fulfilled_flag(&flag) && x == 1;
      omp_event_handle_t ev2;
      int flag2 = 0;
      #pragma omp task depend(out: x) detach(ev2) shared(x)
      x = 2;
      #pragma omp task firstprivate(ev2) shared(flag2)
      {
        usleep(10000);
        set_flag(&flag2);
        omp_fulfill_event(ev2);
      }
      #pragma omp task if(0) depend(in: x) shared(x, flag2, ok2)
      ok2 = fulfilled_flag(&flag2) && x == 2;
    }
    CHECK_EQ(ok1, 1);
    CHECK_EQ(ok2, 1);
  }

  return 0;
}
