/* What taskwait and taskgroup wait for, under load: every child's writes are
 * visible after its parent's taskwait (a child's completion is counted without
 * the wait set's mutex), the last child to finish wakes a sleeping waiter (no
 * wake-up lost), and tasks past the team's throttle (run at once in their
 * creator) and queued ones mix within one parent. Repeated so that waiters
 * often sleep while the last child finishes on another member. Firstprivate
 * blocks around the size kept inside a task's record (64 bytes, 16-aligned)
 * arrive intact and aligned.
 * maestro-test: also-stock
 * maestro-test: also-dedicated
 */
#include <omp.h>
#include <stdint.h>
#include "check.h"

/* With the task's other firstprivates (an int, a pointer) within 64 bytes. */
struct block_small { _Alignas(16) unsigned char b[32]; };
struct block80 { _Alignas(16) unsigned char b[80]; };

#define ROUNDS 2000
#define OUTER 24
#define CHILDREN 6

static void spin_a_little(int k) {
  volatile int x = 0;
  for (int i = 0; i < 50 * (k % 7); i++) x += i;
}

int main(void) {
  /* Nested tasks each waiting for their own children. */
  for (int round = 0; round < ROUNDS; round++) {
    long sums[OUTER] = {0};
    #pragma omp parallel num_threads(4)
    #pragma omp single
    {
      for (int o = 0; o < OUTER; o++) {
        #pragma omp task firstprivate(o) shared(sums)
        {
          long vals[CHILDREN] = {0};
          for (int c = 0; c < CHILDREN; c++) {
            #pragma omp task firstprivate(c, o) shared(vals)
            {
              spin_a_little(c + o);
              vals[c] = (long)o * 100 + c + 1;
            }
          }
          #pragma omp taskwait
          long s = 0;
          for (int c = 0; c < CHILDREN; c++) s += vals[c];
          sums[o] = s;
        }
      }
      #pragma omp taskwait
      for (int o = 0; o < OUTER; o++)
        CHECK_EQ(sums[o], (long)o * 100 * CHILDREN + CHILDREN * (CHILDREN + 1) / 2);
    }
  }

  /* A taskgroup waits for grandchildren that no one waits for otherwise, with
   * a producer far past the throttle (64 unfinished tasks per member). */
  for (int round = 0; round < 100; round++) {
    static long cells[4096];
    for (int i = 0; i < 4096; i++) cells[i] = 0;
    #pragma omp parallel num_threads(3)
    #pragma omp single
    {
      #pragma omp taskgroup
      {
        for (int i = 0; i < 1024; i++) {
          #pragma omp task firstprivate(i)
          {
            for (int k = 0; k < 4; k++) {
              #pragma omp task firstprivate(i, k)
              {
                spin_a_little(i + k);
                cells[i * 4 + k] = i * 4 + k + 1;
              }
            }
          }
        }
      }
      for (int i = 0; i < 4096; i++) CHECK_EQ(cells[i], i + 1);
    }
  }
  /* Blocks just under and over the inline size, checked inside the task. */
  int errors = 0;
  #pragma omp parallel num_threads(2) reduction(+:errors)
  #pragma omp single
  for (int r = 0; r < 500; r++) {
    struct block_small small;
    struct block80 big;
    for (unsigned i = 0; i < sizeof small.b; i++) small.b[i] = (unsigned char)(r + i);
    for (unsigned i = 0; i < sizeof big.b; i++) big.b[i] = (unsigned char)(r * 3 + i);
    #pragma omp task firstprivate(small, r) shared(errors)
    {
      int e = ((uintptr_t)&small) % 16 != 0;
      for (unsigned i = 0; i < sizeof small.b; i++) if (small.b[i] != (unsigned char)(r + i)) e++;
      #pragma omp atomic
      errors += e;
    }
    #pragma omp task firstprivate(big, r) shared(errors)
    {
      int e = ((uintptr_t)&big) % 16 != 0;
      for (unsigned i = 0; i < sizeof big.b; i++) if (big.b[i] != (unsigned char)(r * 3 + i)) e++;
      #pragma omp atomic
      errors += e;
    }
  }
  CHECK_EQ(errors, 0);
  return 0;
}
