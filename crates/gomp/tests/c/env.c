/* The OMP_* environment, set by the harness:
 * maestro-test: env OMP_NUM_THREADS=3,2
 * maestro-test: env OMP_SCHEDULE=guided,5
 * maestro-test: env OMP_DYNAMIC=false
 * maestro-test: env OMP_NESTED=true
 * maestro-test: env OMP_THREAD_LIMIT=40
 * maestro-test: also-stock
 * maestro-test: also-dedicated
 */
#include <omp.h>
#include "check.h"

int main(void) {
  CHECK_EQ(omp_get_max_threads(), 3);
  CHECK_EQ(omp_get_nested(), 1);
  CHECK_EQ(omp_get_dynamic(), 0);
  CHECK_EQ(omp_get_thread_limit(), 40);
  omp_sched_t kind;
  int chunk;
  omp_get_schedule(&kind, &chunk);
  CHECK_EQ(kind, omp_sched_guided);
  CHECK_EQ(chunk, 5);
  int outer = 0, inner = 0;
  #pragma omp parallel
  {
    #pragma omp single
    outer = omp_get_num_threads();
    /* OMP_NUM_THREADS' second entry is the nested default. */
    #pragma omp parallel
    {
      #pragma omp single
      inner = omp_get_num_threads();
    }
  }
  CHECK_EQ(outer, 3);
  CHECK_EQ(inner, 2);
  puts("env: ok");
  return 0;
}
