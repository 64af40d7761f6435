/* The detach clause and omp_fulfill_event: a detached task completes only when
 * its body has returned and its event has been fulfilled — taskwait, taskgroup
 * end and barriers wait for both, and tasks that depend on it start only after
 * both. Events fulfilled by other tasks (before and after the body ended), by
 * the task itself, by the creator after creating the dependent tasks, by a
 * thread outside OpenMP, in reverse order over many tasks. (taskwait depend and
 * undeferred tasks behind a pending detached sibling: detach_deps.c.)
 * maestro-test: also-stock
 * maestro-test: also-dedicated */
#include <omp.h>
#include <pthread.h>
#include <stdint.h>
#include <unistd.h>
#include "check.h"

/* Set just before a fulfilment, read by whoever must run after it. */
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

/* Set by the thread below just before it fulfils the event it was given. */
static int async_flag;

static void *fulfil_later(void *event) {
  usleep(20000);
  set_flag(&async_flag);
  omp_fulfill_event((omp_event_handle_t)(uintptr_t)event);
  return NULL;
}

int main(void) {
  /* 1. Fulfilled by later sibling tasks; the region's end waits. */
  {
    omp_event_handle_t ev1, ev2;
    int x = 0, y = 0, z = 0;
    #pragma omp parallel num_threads(4)
    #pragma omp single
    {
      #pragma omp task detach(ev1) shared(x)
      x++;
      #pragma omp task detach(ev2) shared(y) firstprivate(ev1)
      {
        y++;
        omp_fulfill_event(ev1);
      }
      #pragma omp task shared(z) firstprivate(ev2)
      {
        z++;
        omp_fulfill_event(ev2);
      }
    }
    CHECK_EQ(x, 1);
    CHECK_EQ(y, 1);
    CHECK_EQ(z, 1);
  }

  /* 2. taskwait waits for the event, not just the body: the fulfilling task
   * sleeps first, and sets the flag before it fulfils. */
  for (int threads = 1; threads <= 4; threads++) {
    int flag = 0, body = 0;
    #pragma omp parallel num_threads(threads)
    #pragma omp single
    {
      omp_event_handle_t ev;
      #pragma omp task detach(ev) shared(body)
      body = 1;
      #pragma omp task firstprivate(ev) shared(flag)
      {
        usleep(20000);
        set_flag(&flag);
        omp_fulfill_event(ev);
      }
      #pragma omp taskwait
      CHECK_EQ(fulfilled_flag(&flag), 1);
      CHECK_EQ(body, 1);
    }
  }

  /* 3. A task fulfilling its own event completes when its body returns. */
  {
    int n = 0;
    #pragma omp parallel num_threads(3)
    {
      #pragma omp for
      for (int i = 0; i < 30; i++) {
        omp_event_handle_t ev;
        #pragma omp task detach(ev) shared(n)
        {
          #pragma omp atomic
          n++;
          omp_fulfill_event(ev);
        }
      }
      #pragma omp taskwait
    }
    CHECK_EQ(n, 30);
  }

  /* 4. Dependences: the dependent tasks start only after the event. The creator
   * itself fulfils, after creating them (so a runtime that ran them at once, or
   * waited for the event before creating them, would fail or hang). */
  for (int threads = 1; threads <= 4; threads++) {
    int x = 0, y = 0, w = 0, flag = 0, seen = 0, seen2 = 0;
    #pragma omp parallel num_threads(threads)
    #pragma omp single
    {
      omp_event_handle_t ev;
      #pragma omp task depend(out: x) detach(ev) shared(x)
      x = 1;
      #pragma omp task depend(in: x) shared(x, y, flag, seen)
      {
        seen = fulfilled_flag(&flag);
        y = x + 1;
      }
      #pragma omp task depend(inout: x) shared(x, y, flag, seen2)
      {
        /* After the in task too (inout after in). */
        seen2 = fulfilled_flag(&flag) && y == 2;
        x = 10;
      }
      /* Unrelated dependences run while the detached task is pending. */
      #pragma omp task depend(out: w) shared(w)
      w = 5;
      #pragma omp taskwait depend(in: w)
      CHECK_EQ(w, 5);
      usleep(10000);
      set_flag(&flag);
      omp_fulfill_event(ev);
      #pragma omp taskwait
    }
    CHECK_EQ(seen, 1);
    CHECK_EQ(seen2, 1);
    CHECK_EQ(y, 2);
    CHECK_EQ(x, 10);
  }

  /* 4b. Other dependence kinds behind a detached task: mutexinoutset and a
   * depobj (GCC's second depend layout; GCC 12 has no omp_all_memory). */
  for (int threads = 1; threads <= 3; threads++) {
    int x = 0, flag = 0, seen_m = 0, seen_o = 0;
    #pragma omp parallel num_threads(threads)
    #pragma omp single
    {
      omp_event_handle_t ev;
      omp_depend_t obj;
      #pragma omp depobj(obj) depend(in: x)
      #pragma omp task depend(out: x) detach(ev) shared(x)
      x = 1;
      #pragma omp task depend(mutexinoutset: x) shared(flag, seen_m)
      seen_m = fulfilled_flag(&flag);
      #pragma omp task depend(depobj: obj) shared(flag, seen_o)
      seen_o = fulfilled_flag(&flag);
      usleep(10000);
      set_flag(&flag);
      omp_fulfill_event(ev);
      #pragma omp taskwait
      #pragma omp depobj(obj) destroy
    }
    CHECK_EQ(seen_m, 1);
    CHECK_EQ(seen_o, 1);
    CHECK_EQ(x, 1);
  }

  /* 5. A chain behind a detached task, logged in order; the fulfilling task has
   * no dependence and sleeps first. */
  for (int threads = 1; threads <= 4; threads++) {
    int log[4], pos = 0, a = 0;
    (void)a;
    #pragma omp parallel num_threads(threads)
    #pragma omp single
    {
      omp_event_handle_t ev;
      #pragma omp task depend(out: a) detach(ev) shared(log, pos)
      {
        int p;
        #pragma omp atomic capture
        p = pos++;
        log[p] = 1;
      }
      #pragma omp task firstprivate(ev) shared(log, pos)
      {
        usleep(10000);
        int p;
        #pragma omp atomic capture
        p = pos++;
        log[p] = 2;
        omp_fulfill_event(ev);
      }
      #pragma omp task depend(inout: a) shared(log, pos)
      {
        int p;
        #pragma omp atomic capture
        p = pos++;
        log[p] = 3;
      }
      #pragma omp task depend(in: a) shared(log, pos)
      {
        int p;
        #pragma omp atomic capture
        p = pos++;
        log[p] = 4;
      }
    }
    CHECK_EQ(pos, 4);
    int one = -1, two = -1, three = -1, four = -1;
    for (int i = 0; i < 4; i++) {
      if (log[i] == 1) one = i;
      if (log[i] == 2) two = i;
      if (log[i] == 3) three = i;
      if (log[i] == 4) four = i;
    }
    CHECK(one >= 0 && two >= 0);
    CHECK_EQ(three, 2);
    CHECK_EQ(four, 3);
  }

  /* 6. A taskgroup waits for an event fulfilled by a thread outside OpenMP
   * (an asynchronous completion, the clause's purpose), started by the task's
   * body, which returns at once; the barrier waits for an event fulfilled by
   * the detached task's child after the body returned. (No member waits for
   * another by spinning: that may hang when members share workers, see
   * PROTOCOL.md.) */
  {
    int group_ok = 0;
    pthread_t th;
    #pragma omp parallel num_threads(2) shared(th, group_ok)
    #pragma omp single
    {
      #pragma omp taskgroup
      {
        omp_event_handle_t ev;
        #pragma omp task detach(ev) shared(th)
        CHECK_EQ(pthread_create(&th, NULL, fulfil_later, (void *)(uintptr_t)ev), 0);
      }
      group_ok = fulfilled_flag(&async_flag);
    }
    CHECK_EQ(pthread_join(th, NULL), 0);
    CHECK_EQ(group_ok, 1);

    int flag2 = 0, after = 0;
    #pragma omp parallel num_threads(3) shared(flag2, after)
    {
      #pragma omp single nowait
      {
        omp_event_handle_t ev;
        /* Fulfilled by the detached task's child, after the body returned. */
        #pragma omp task detach(ev)
        {
          #pragma omp task firstprivate(ev)
          {
            usleep(10000);
            set_flag(&flag2);
            omp_fulfill_event(ev);
          }
        }
      }
      #pragma omp barrier
      if (!fulfilled_flag(&flag2)) {
        #pragma omp atomic
        after++;
      }
    }
    CHECK_EQ(after, 0);
  }

  /* 7. Many events, fulfilled in reverse order by one task. */
  {
    /* Fewer than libgomp's throttle (64 per member): past it libgomp runs a
     * detached task at once and blocks its creator until the event. */
    enum { N = 200 };
    omp_event_handle_t evs[N];
    int ran = 0, fulfilled = 0;
    #pragma omp parallel num_threads(4)
    #pragma omp single
    {
      #pragma omp taskgroup
      {
        for (int i = 0; i < N; i++) {
          omp_event_handle_t ev;
          #pragma omp task detach(ev) shared(ran)
          {
            #pragma omp atomic
            ran++;
          }
          evs[i] = ev;
        }
        #pragma omp task shared(evs, fulfilled)
        for (int i = N - 1; i >= 0; i--) {
          #pragma omp atomic
          fulfilled++;
          omp_fulfill_event(evs[i]);
        }
      }
      CHECK_EQ(ran, N);
      CHECK_EQ(fulfilled, N);
    }
  }

  /* 8. Undeferred detached tasks (if(0), and outside any region) fulfilled in
   * their own bodies. */
  {
    int x = 0;
    omp_event_handle_t ev;
    #pragma omp task detach(ev) if(0) shared(x)
    {
      x = 1;
      omp_fulfill_event(ev);
    }
    #pragma omp taskwait
    CHECK_EQ(x, 1);
    #pragma omp task detach(ev) shared(x)
    {
      x = 2;
      omp_fulfill_event(ev);
    }
    #pragma omp taskwait
    CHECK_EQ(x, 2);
  }
  return 0;
}
