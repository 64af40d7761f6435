/* OMP_NUM_TEAMS and OMP_TEAMS_THREAD_LIMIT: the initial nteams-var and
 * teams-thread-limit-var, used by a teams construct without clauses.
 * maestro-test: env OMP_NUM_TEAMS=5
 * maestro-test: env OMP_TEAMS_THREAD_LIMIT=2
 * maestro-test: also-stock
 * maestro-test: also-dedicated
 */
#include <omp.h>
#include "check.h"

/* `atomic` may not be strictly nested in `teams` either. */
static void add(int *p, int v) { __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }

__attribute__((noinline)) static int thread_limit(void) { return omp_get_thread_limit(); }

int main(void) {
  CHECK_EQ(omp_get_max_teams(), 5);
  CHECK_EQ(omp_get_teams_thread_limit(), 2);
  int teams = 0, members = 0, bad = 0;
  #pragma omp teams
  {
    add(&teams, 1);
    if (omp_get_num_teams() != 5 || thread_limit() != 2) {
      add(&bad, 1);
    }
    #pragma omp parallel num_threads(3)
    {
      add(&members, 1);
    }
  }
  CHECK_EQ(bad, 0);
  CHECK_EQ(teams, 5);
  CHECK_EQ(members, 5 * 2);
  puts("teams_env: ok");
  return 0;
}
