/* A team of 4 x contexts meeting at barriers, started while every scheduler
 * worker is busy: first while each worker holds a member blocked on a lock the
 * master owns (blocked workers leave the active level, so the scheduler must
 * add workers), then while each worker spins on CPU work (the team must still
 * finish once they are done). A runtime with busy-waiting barriers and a fixed
 * pool of `contexts` threads would hang in the first case.
 * maestro-test: also-stock
 */
#include <omp.h>
#include <unistd.h>
#include "check.h"

#define ROUNDS 20

static int barrier_team(int size) {
  int arrived[ROUNDS] = {0};
  int errors = 0;
  #pragma omp parallel num_threads(size) reduction(+:errors)
  {
    if (omp_get_num_threads() != size) errors++;
    for (int r = 0; r < ROUNDS; r++) {
      #pragma omp atomic
      arrived[r]++;
      #pragma omp barrier
      int seen;
      #pragma omp atomic read
      seen = arrived[r];
      if (seen != size) errors++;
    }
  }
  return errors;
}

int main(void) {
  int contexts = omp_get_num_procs();
  int team = 4 * contexts;
  omp_set_max_active_levels(2);

  /* 1. Every worker blocked on a lock. */
  omp_lock_t gate;
  omp_init_lock(&gate);
  omp_set_lock(&gate);
  int errors = -1;
  #pragma omp parallel num_threads(contexts + 1)
  {
    if (omp_get_thread_num() == 0) {
      usleep(50000); /* let the other members take every worker and block */
      errors = barrier_team(team);
      omp_unset_lock(&gate);
    } else {
      omp_set_lock(&gate);
      omp_unset_lock(&gate);
    }
  }
  CHECK_EQ(errors, 0);

  /* 2. Every worker spinning for a while. */
  errors = -1;
  #pragma omp parallel num_threads(contexts + 1)
  {
    if (omp_get_thread_num() == 0) {
      usleep(20000);
      errors = barrier_team(team);
    } else {
      double until = omp_get_wtime() + 0.3;
      volatile unsigned long x = 0;
      while (omp_get_wtime() < until) x++;
    }
  }
  CHECK_EQ(errors, 0);
  omp_destroy_lock(&gate);
  puts("busy_workers: ok");
  return 0;
}
