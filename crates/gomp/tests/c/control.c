/* Maestro's controls: the priority of OpenMP work and hint-sized teams.
 * maestro-test: env MAESTRO_OMP_PRIORITY=2
 */
#include <omp.h>
#include "check.h"
#include "maestro_omp.h"

int main(void) {
  CHECK_EQ(maestro_omp_get_priority(), 2);
  maestro_omp_set_priority(0);
  CHECK_EQ(maestro_omp_get_priority(), 0);
  int n = 0;
  #pragma omp parallel num_threads(4) reduction(+:n)
  n++;
  CHECK_EQ(n, 4);
  maestro_omp_set_priority(3);

  /* Hint mode: regions without num_threads get at most the hint; explicit
   * num_threads is honoured. */
  CHECK_EQ(maestro_omp_get_hint_teams(), 0);
  maestro_omp_set_hint_teams(1);
  omp_set_num_threads(64);
  int size = 0;
  #pragma omp parallel
  {
    #pragma omp single
    size = omp_get_num_threads();
  }
  CHECK(size >= 1 && size <= maestro_omp_contexts());
  #pragma omp parallel num_threads(6)
  {
    #pragma omp single
    size = omp_get_num_threads();
  }
  CHECK_EQ(size, 6);
  maestro_omp_set_hint_teams(0);
  #pragma omp parallel
  {
    #pragma omp single
    size = omp_get_num_threads();
  }
  CHECK_EQ(size, 64);
  CHECK(maestro_omp_concurrency_hint() >= 1);
  puts("control: ok");
  return 0;
}
