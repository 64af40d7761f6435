/* Host teams under MAESTRO_OMP_MASTER=scheduler: every team's initial task
 * (team 0 included) runs on a Maestro scheduler thread, and leagues whose
 * teams fork nested regions with barriers complete, round after round.
 * maestro-test: env MAESTRO_OMP_MASTER=scheduler
 */
#define _GNU_SOURCE
#include <omp.h>
#include <pthread.h>
#include <string.h>
#include "check.h"

static void add(int *p, int v) { __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }

__attribute__((noinline)) static int on_scheduler(void) {
  char name[32];
  pthread_getname_np(pthread_self(), name, sizeof name);
  return strncmp(name, "maestro-", 8) == 0;
}

int main(void) {
  for (int r = 0; r < 50; r++) {
    int off = 0, teams = 0, phases = 0;
    #pragma omp teams num_teams(4) thread_limit(2)
    {
      add(&teams, 1);
      if (!on_scheduler()) add(&off, 1);
      int t = omp_get_team_num();
      #pragma omp parallel num_threads(2)
      {
        for (int p = 0; p < 5; p++) {
          #pragma omp barrier
        }
        if (omp_get_team_num() == t) add(&phases, 1);
      }
    }
    CHECK_EQ(teams, 4);
    CHECK_EQ(off, 0);
    CHECK_EQ(phases, 4 * 2);
  }
  puts("teams_on_scheduler: ok");
  return 0;
}
