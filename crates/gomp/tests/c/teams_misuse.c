/* A teams construct inside a parallel region (not allowed by OpenMP 5.1
 * §2.7; GCC cannot see it when the construct is in another function): the
 * runtime stops with a message instead of running a league at level 1.
 * maestro-test: expect-fail a teams construct inside a parallel or teams region
 */
#include <omp.h>
#include "check.h"

/* `atomic` may not be strictly nested in `teams` either. */
static void add(int *p, int v) { __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }

__attribute__((noinline)) static void league(int *n) {
  #pragma omp teams num_teams(2)
  {
    add(n, 1);
  }
}

int main(void) {
  int n = 0;
  #pragma omp parallel num_threads(2)
  league(&n);
  printf("ran a league inside a region: %d\n", n);
  return 0;
}
