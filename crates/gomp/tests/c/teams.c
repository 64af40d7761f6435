/* Host teams (GOMP_teams_reg): league sizes from num_teams, nteams-var and
 * the default; omp_get_num_teams / omp_get_team_num in each team's initial
 * task, in parallel regions nested in a team and in their tasks; teams are
 * level 0 and not in parallel; thread_limit and teams-thread-limit-var cap
 * nested teams and are restored after the construct; distribute (which GCC
 * lowers inline from the team queries), `teams distribute parallel for` with
 * a reduction, a num_teams(lower:upper) range, the %t / %T affinity fields.
 * maestro-test: also-stock
 * maestro-test: also-dedicated
 */
#include <omp.h>
#include <string.h>
#include "check.h"

/* `atomic` may not be strictly nested in `teams` either. */
static void add(int *p, int v) { __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }

/* API calls other than the team queries may not be strictly nested in a
 * teams region: GCC checks that lexically, so these go through functions. */
__attribute__((noinline)) static int level(void) { return omp_get_level(); }
__attribute__((noinline)) static int in_parallel(void) { return omp_in_parallel(); }
__attribute__((noinline)) static int num_threads(void) { return omp_get_num_threads(); }
__attribute__((noinline)) static int thread_limit(void) { return omp_get_thread_limit(); }
__attribute__((noinline)) static int max_teams(void) { return omp_get_max_teams(); }
__attribute__((noinline)) static void capture(char *buf, size_t n) {
  omp_capture_affinity(buf, n, "%t/%T");
}

#define N 1000
static int owner[N], hits[N];

int main(void) {
  CHECK_EQ(omp_get_num_teams(), 1);
  CHECK_EQ(omp_get_team_num(), 0);
  CHECK_EQ(omp_get_max_teams(), 0);
  CHECK_EQ(omp_get_teams_thread_limit(), 0);
  int outer_limit = omp_get_thread_limit();

  /* num_teams(4) thread_limit(3): every team once, with nested regions of 3. */
  int seen[4] = {0}, bad = 0, inner[4] = {0}, task_ok[4] = {0};
  #pragma omp teams num_teams(4) thread_limit(3)
  {
    int t = omp_get_team_num();
    add(&seen[t], 1);
    if (omp_get_num_teams() != 4 || level() != 0 || in_parallel() || num_threads() != 1 ||
        thread_limit() != 3) {
      add(&bad, 1);
    }
    #pragma omp parallel num_threads(5)
    {
      if (omp_get_team_num() != t || omp_get_num_teams() != 4 || omp_get_level() != 1 ||
          omp_get_num_threads() != 3 || omp_get_thread_limit() != 3) {
        add(&bad, 1);
      }
      add(&inner[t], omp_get_thread_num() + 1);
      #pragma omp single
      for (int k = 0; k < 10; k++) {
        #pragma omp task
        {
          if (omp_get_team_num() == t) {
            add(&task_ok[t], 1);
          }
        }
      }
    }
  }
  CHECK_EQ(bad, 0);
  for (int t = 0; t < 4; t++) {
    CHECK_EQ(seen[t], 1);
    CHECK_EQ(inner[t], 1 + 2 + 3);
    CHECK_EQ(task_ok[t], 10);
  }
  CHECK_EQ(omp_get_thread_limit(), outer_limit);
  CHECK_EQ(omp_get_num_teams(), 1);

  /* distribute: every iteration once, in blocks owned by the teams. */
  #pragma omp teams num_teams(3)
  {
    #pragma omp distribute
    for (int i = 0; i < N; i++) {
      owner[i] = omp_get_team_num();
      hits[i]++;
    }
  }
  int teams_used = 0;
  for (int i = 0; i < N; i++) {
    CHECK_EQ(hits[i], 1);
    if (i == 0 || owner[i] != owner[i - 1]) {
      teams_used++;
      CHECK(i == 0 || owner[i] == owner[i - 1] + 1);
    }
  }
  CHECK_EQ(teams_used, 3);

  /* teams distribute parallel for with a reduction. */
  long sum = 0;
  #pragma omp teams distribute parallel for num_teams(4) reduction(+:sum)
  for (long i = 0; i < 100000; i++) sum += i;
  CHECK_EQ(sum, 100000L * 99999 / 2);

  /* No num_teams and nteams-var unset: some teams, numbered 0.. */
  int count = 0, numbered = 0;
  #pragma omp teams
  {
    add(&count, 1);
    add(&numbered, omp_get_team_num());
  }
  CHECK(count >= 1);
  CHECK_EQ(numbered, count * (count - 1) / 2);

  /* num_teams(2:5): between the bounds. */
  int ranged = 0;
  #pragma omp teams num_teams(2 : 5)
  {
    if (omp_get_team_num() == 0) ranged = omp_get_num_teams();
  }
  CHECK(ranged >= 2 && ranged <= 5);

  /* nteams-var and teams-thread-limit-var. */
  omp_set_num_teams(6);
  omp_set_teams_thread_limit(2);
  CHECK_EQ(omp_get_max_teams(), 6);
  CHECK_EQ(omp_get_teams_thread_limit(), 2);
  int six = 0, limited = 0;
  #pragma omp teams
  {
    add(&six, 1);
    if (thread_limit() != 2 || max_teams() != 6) {
      add(&bad, 1);
    }
    #pragma omp parallel num_threads(4)
    {
      add(&limited, 1);
    }
  }
  CHECK_EQ(bad, 0);
  CHECK_EQ(six, 6);
  CHECK_EQ(limited, 6 * 2);
  /* The clause wins over the ICVs. */
  int two = 0;
  #pragma omp teams num_teams(2) thread_limit(1)
  {
    add(&two, 1);
    if (thread_limit() != 1) {
      add(&bad, 1);
    }
  }
  CHECK_EQ(two, 2);
  CHECK_EQ(bad, 0);
  omp_set_num_teams(-1); /* ignored */
  CHECK_EQ(omp_get_max_teams(), 6);
  omp_set_num_teams(0);
  omp_set_teams_thread_limit(0);
  CHECK_EQ(omp_get_max_teams(), 0);
  CHECK_EQ(omp_get_teams_thread_limit(), 0);
  CHECK_EQ(omp_get_thread_limit(), outer_limit);

  /* The affinity fields of the team. */
  char got[3][32];
  #pragma omp teams num_teams(3)
  capture(got[omp_get_team_num()], sizeof got[0]);
  for (int t = 0; t < 3; t++) {
    char want[32];
    snprintf(want, sizeof want, "%d/3", t);
    CHECK(strcmp(got[t], want) == 0);
  }

  puts("teams: ok");
  return 0;
}
