/* What the team-thread modes cost (crates/gomp/PROTOCOL.md, "threadprivate"):
 * µs per empty parallel region, per region with one barrier, and per region
 * whose members each update a threadprivate counter (built with -DTP, which
 * gives the program thread-local storage), team of 2, best of 15 batches of
 * 2000. Run by threads_cost.sh against stock libgomp and each of our modes. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef TP
static long counter;
#pragma omp threadprivate(counter)
#endif

#define BATCH 2000
#define BATCHES 15

static double best(int kind) {
  double b = 1e30;
  for (int r = 0; r < BATCHES; r++) {
    double t = omp_get_wtime();
    for (int i = 0; i < BATCH; i++) {
      if (kind == 0) {
        #pragma omp parallel num_threads(2)
        { __asm__ volatile("" ::: "memory"); }
      } else if (kind == 1) {
        #pragma omp parallel num_threads(2)
        {
          #pragma omp barrier
        }
      } else {
#ifdef TP
        #pragma omp parallel num_threads(2)
        counter++;
#endif
      }
    }
    t = (omp_get_wtime() - t) / BATCH * 1e6;
    if (t < b) b = t;
  }
  return b;
}

int main(void) {
  omp_set_dynamic(0);
  double e = best(0), bar = best(1);
#ifdef TP
  double tp = best(2);
  long sum = 0;
  #pragma omp parallel num_threads(2) reduction(+ : sum)
  sum += counter;
  /* Every region bumped each thread's counter once. */
  if (sum != 2L * BATCH * BATCHES) {
    fprintf(stderr, "threadprivate counters sum to %ld, want %ld\n", sum, 2L * BATCH * BATCHES);
    return 1;
  }
  printf("{\"empty_us\": %.3f, \"barrier_us\": %.3f, \"threadprivate_us\": %.3f}\n", e, bar, tp);
#else
  printf("{\"empty_us\": %.3f, \"barrier_us\": %.3f}\n", e, bar);
#endif
  return 0;
}
