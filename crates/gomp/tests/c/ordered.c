/* ordered: the ordered blocks run in iteration order under every schedule.
 * maestro-test: also-stock
 * maestro-test: also-dedicated
 */
#include <omp.h>
#include "check.h"

#define N 301

static void check_order(const int *log, int n) {
  for (int i = 0; i < n; i++) CHECK_EQ(log[i], i);
}

int main(void) {
  int log[N], pos;
  int chunks[] = {1, 3, 7, 50};
  for (int c = 0; c < 4; c++) {
    int k = chunks[c];
    pos = 0;
    #pragma omp parallel for num_threads(4) schedule(dynamic, k) ordered
    for (int i = 0; i < N; i++) {
      #pragma omp ordered
      log[pos++] = i;
    }
    check_order(log, N);
    pos = 0;
    #pragma omp parallel for num_threads(3) schedule(static, k) ordered
    for (int i = 0; i < N; i++) {
      #pragma omp ordered
      log[pos++] = i;
    }
    check_order(log, N);
    pos = 0;
    #pragma omp parallel num_threads(5)
    {
      #pragma omp for schedule(guided, k) ordered
      for (int i = 0; i < N; i++) {
        #pragma omp ordered
        log[pos++] = i;
      }
    }
    check_order(log, N);
  }
  pos = 0;
  #pragma omp parallel for num_threads(4) schedule(static) ordered
  for (int i = 0; i < N; i++) {
    #pragma omp ordered
    log[pos++] = i;
  }
  check_order(log, N);
  pos = 0;
  omp_set_schedule(omp_sched_dynamic, 2);
  #pragma omp parallel for num_threads(4) schedule(runtime) ordered
  for (unsigned long long i = 0; i < N; i++) {
    #pragma omp ordered
    log[pos++] = (int)i;
  }
  check_order(log, N);
  /* Many more members than contexts, one iteration per chunk, many rounds:
   * turns pass both between running members (the spinning path) and to
   * members that had to sleep (the condvar path); each ordered block reads
   * what the previous one wrote. */
  static long chain[2000];
  for (int round = 0; round < 20; round++) {
    #pragma omp parallel for num_threads(8) schedule(static, 1) ordered
    for (int i = 0; i < 2000; i++) {
      #pragma omp ordered
      chain[i] = (i == 0 ? round : chain[i - 1]) + 1;
    }
    CHECK_EQ(chain[1999], (long)round + 2000);
  }
  puts("ordered: ok");
  return 0;
}
