/* Explicit barriers: no member passes a barrier before every member reached it,
 * across many phases, in teams larger than the machine.
 * maestro-test: also-stock
 * maestro-test: also-dedicated
 */
#include <omp.h>
#include "check.h"

#define PHASES 200

int main(void) {
  for (int n = 2; n <= 12; n += 5) {
    int arrived[PHASES] = {0};
    #pragma omp parallel num_threads(n)
    {
      for (int p = 0; p < PHASES; p++) {
        #pragma omp atomic
        arrived[p]++;
        #pragma omp barrier
        int seen;
        #pragma omp atomic read
        seen = arrived[p];
        CHECK_EQ(seen, n);
        /* Only start the next phase once everybody has checked this one. */
        #pragma omp barrier
      }
    }
  }
  puts("barrier: ok");
  return 0;
}
