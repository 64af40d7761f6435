/* The omp_* API outside and inside regions: wtime, schedules, dynamic, limits,
 * num_procs, and ICV inheritance by members.
 * maestro-test: also-stock
 * maestro-test: also-dedicated
 */
#include <omp.h>
#include <unistd.h>
#include "check.h"

int main(void) {
  double t0 = omp_get_wtime();
  usleep(20000);
  double t1 = omp_get_wtime();
  CHECK(t1 - t0 >= 0.015 && t1 - t0 < 5.0);
  CHECK(omp_get_wtick() > 0 && omp_get_wtick() < 0.01);

  CHECK(omp_get_num_procs() >= 1);
  CHECK(omp_get_thread_limit() >= omp_get_num_procs());
  CHECK(omp_get_max_threads() >= 1);

  omp_sched_t kind;
  int chunk;
  omp_set_schedule(omp_sched_guided, 9);
  omp_get_schedule(&kind, &chunk);
  CHECK_EQ(kind, omp_sched_guided);
  CHECK_EQ(chunk, 9);

  CHECK_EQ(omp_get_dynamic(), 0);
  omp_set_dynamic(1);
  CHECK_EQ(omp_get_dynamic(), 1);
  omp_set_dynamic(0);

  /* Members inherit the ICVs; their changes stay theirs. */
  omp_set_num_threads(4);
  int bad = 0;
  #pragma omp parallel reduction(+:bad)
  {
    omp_sched_t k;
    int c;
    omp_get_schedule(&k, &c);
    if (k != omp_sched_guided || c != 9) bad++;
    omp_set_num_threads(7 + omp_get_thread_num());
    if (omp_get_max_threads() != 7 + omp_get_thread_num()) bad++;
    if (omp_get_num_threads() != 4) bad++;
  }
  CHECK_EQ(bad, 0);
  CHECK_EQ(omp_get_max_threads(), 4);

  CHECK_EQ(omp_get_cancellation(), 0);
  CHECK_EQ(omp_is_initial_device(), 1);
  CHECK_EQ(omp_get_num_teams(), 1);
  CHECK_EQ(omp_get_team_num(), 0);
  CHECK_EQ(omp_in_final(), 0);

  /* Cancellation compiles and is ignored (OMP_CANCELLATION is false). */
  int iters = 0;
  #pragma omp parallel num_threads(2) reduction(+:iters)
  {
    #pragma omp for
    for (int i = 0; i < 10; i++) {
      iters++;
      #pragma omp cancel for if(i == 3)
    }
    #pragma omp cancellation point parallel
  }
  CHECK_EQ(iters, 10);
  puts("api: ok");
  return 0;
}
