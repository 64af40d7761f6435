/* Explicit tasks: taskwait (recursive fib), a single producer with thousands of
 * tasks (throttling), firstprivate captured at creation, VLA and over-aligned
 * firstprivate blocks (GCC's copy function and arg_align), if(0), final and
 * omp_in_final, taskgroup waiting for descendants, depend chains, tasks outside
 * any region, and per-thread slots indexed by omp_get_thread_num in tasks.
 * maestro-test: also-stock
 * maestro-test: also-dedicated
 */
#include <omp.h>
#include <stdint.h>
#include "check.h"

static long fib(int n) {
  if (n < 2) return n;
  long a, b;
  #pragma omp task shared(a)
  a = fib(n - 1);
  #pragma omp task shared(b)
  b = fib(n - 2);
  #pragma omp taskwait
  return a + b;
}

struct aligned_block { _Alignas(64) double v[8]; };

int main(void) {
  long f = 0;
  #pragma omp parallel num_threads(4)
  {
    #pragma omp single
    f = fib(20);
  }
  CHECK_EQ(f, 6765);

  /* Many tasks from one producer; per-member slots must never be shared by two
   * running tasks. */
  long slots[64] = {0};
  long done = 0;
  #pragma omp parallel num_threads(4)
  {
    #pragma omp single
    for (int i = 0; i < 20000; i++) {
      #pragma omp task firstprivate(i)
      {
        int t = omp_get_thread_num();
        CHECK(t >= 0 && t < omp_get_num_threads());
        slots[t] += i;            /* unsynchronized on purpose */
        #pragma omp atomic
        done++;
      }
    }
  }
  long total = 0;
  for (int t = 0; t < 64; t++) total += slots[t];
  CHECK_EQ(done, 20000);
  CHECK_EQ(total, 20000L * 19999 / 2);

  /* firstprivate is captured when the task is created; VLAs go through GCC's
   * copy function, _Alignas(64) blocks through arg_align. */
  int errors = 0;
  #pragma omp parallel num_threads(3) reduction(+:errors)
  {
    #pragma omp single
    {
      int n = 37;
      int vla[n];
      struct aligned_block blk;
      for (int r = 0; r < 50; r++) {
        for (int i = 0; i < n; i++) vla[i] = r * 1000 + i;
        for (int i = 0; i < 8; i++) blk.v[i] = r + i * 0.5;
        #pragma omp task firstprivate(vla, blk, r)
        {
          if (((uintptr_t)&blk) % 64 != 0) errors++;
          for (int i = 0; i < 37; i++) if (vla[i] != r * 1000 + i) errors++;
          for (int i = 0; i < 8; i++) if (blk.v[i] != r + i * 0.5) errors++;
        }
      }
      #pragma omp taskwait
    }
  }
  CHECK_EQ(errors, 0);

  /* if(0): the task has finished when the construct returns. */
  #pragma omp parallel num_threads(2)
  {
    #pragma omp single
    {
      int flag = 0;
      #pragma omp task if(0) shared(flag)
      flag = 1;
      CHECK_EQ(flag, 1);
    }
  }

  /* final: the task and everything it creates are final and included. */
  int finals = 0;
  #pragma omp parallel num_threads(3)
  {
    #pragma omp single
    {
      #pragma omp task final(1) shared(finals)
      {
        CHECK_EQ(omp_in_final(), 1);
        int inner = 0;
        #pragma omp task shared(inner)
        {
          CHECK_EQ(omp_in_final(), 1);
          inner = 1;
        }
        CHECK_EQ(inner, 1); /* included: already done */
        finals = 1;
      }
      CHECK_EQ(omp_in_final(), 0);
    }
  }
  CHECK_EQ(finals, 1);

  /* taskgroup waits for children and grandchildren; taskwait only for children. */
  #pragma omp parallel num_threads(4)
  {
    #pragma omp single
    {
      int leaves = 0;
      #pragma omp taskgroup
      {
        for (int i = 0; i < 10; i++) {
          #pragma omp task shared(leaves)
          for (int j = 0; j < 10; j++) {
            #pragma omp task shared(leaves)
            {
              #pragma omp atomic
              leaves++;
            }
          }
        }
      }
      CHECK_EQ(leaves, 100);
    }
  }

  /* depend: out -> inout -> in chains see each other's writes in order. */
  #pragma omp parallel num_threads(4)
  {
    #pragma omp single
    {
      int x = 0, y = 0;
      for (int r = 0; r < 100; r++) {
        #pragma omp task depend(out: x) shared(x)
        x = r;
        #pragma omp task depend(inout: x) shared(x)
        x = x * 2;
        #pragma omp task depend(in: x) depend(out: y) shared(x, y)
        y = x + 1;
        #pragma omp taskwait depend(in: y)
        CHECK_EQ(y, 2 * r + 1);
      }
    }
  }

  /* Tasks outside any parallel region run at once. */
  int outside = 0;
  #pragma omp task shared(outside)
  outside = 5;
  #pragma omp taskwait
  CHECK_EQ(outside, 5);

  /* Tasks created by every member, finished by the end of the region. */
  int created = 0;
  #pragma omp parallel num_threads(5)
  {
    for (int i = 0; i < 100; i++) {
      #pragma omp task
      {
        #pragma omp atomic
        created++;
      }
    }
    #pragma omp taskyield
  }
  CHECK_EQ(created, 500);
  puts("tasks: ok");
  return 0;
}
