/* Parallel regions: team sizes (num_threads, default, if), distinct thread
 * numbers, omp_in_parallel, levels, and many regions in a row.
 * maestro-test: also-stock
 * maestro-test: also-dedicated
 */
#include <omp.h>
#include "check.h"

int main(void) {
  CHECK_EQ(omp_in_parallel(), 0);
  CHECK_EQ(omp_get_num_threads(), 1);
  CHECK_EQ(omp_get_thread_num(), 0);
  CHECK_EQ(omp_get_level(), 0);

  for (int n = 1; n <= 9; n++) {
    int seen[16] = {0};
    int size = -1;
    #pragma omp parallel num_threads(n)
    {
      int t = omp_get_thread_num();
      #pragma omp atomic
      seen[t]++;
      if (t == 0) size = omp_get_num_threads();
      CHECK_EQ(omp_get_level(), 1);
      CHECK_EQ(omp_in_parallel(), n > 1);
      CHECK_EQ(omp_get_active_level(), n > 1);
    }
    CHECK_EQ(size, n);
    for (int t = 0; t < n; t++) CHECK_EQ(seen[t], 1);
  }

  /* Default size: nthreads-var, i.e. omp_get_max_threads(). */
  int dflt = 0;
  #pragma omp parallel
  {
    #pragma omp master
    dflt = omp_get_num_threads();
  }
  CHECK_EQ(dflt, omp_get_max_threads());

  /* if(false) serializes. */
  int cond = 0, members = 0;
  #pragma omp parallel if(cond) num_threads(4)
  {
    #pragma omp atomic
    members++;
    CHECK_EQ(omp_in_parallel(), 0);
    CHECK_EQ(omp_get_level(), 1);
  }
  CHECK_EQ(members, 1);

  /* Fork/join many times; data written by members is visible after the join. */
  long total = 0;
  for (int r = 0; r < 2000; r++) {
    int v[4] = {0};
    #pragma omp parallel num_threads(4)
    v[omp_get_thread_num()] = r + omp_get_thread_num();
    total += v[0] + v[1] + v[2] + v[3];
  }
  CHECK_EQ(total, 4L * (1999L * 2000 / 2) + 2000L * 6);

  /* omp_set_num_threads changes the next regions' default. */
  omp_set_num_threads(3);
  CHECK_EQ(omp_get_max_threads(), 3);
  int got = 0;
  #pragma omp parallel
  {
    #pragma omp single
    got = omp_get_num_threads();
  }
  CHECK_EQ(got, 3);
  puts("parallel: ok");
  return 0;
}
