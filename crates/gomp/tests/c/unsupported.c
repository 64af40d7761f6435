/* OMP_STACKSIZE cannot be honoured (the scheduler owns the stacks): the runtime
 * must refuse to run, with a message, at the first OpenMP call.
 * maestro-test: env OMP_STACKSIZE=64M
 * maestro-test: expect-fail OMP_STACKSIZE is not supported
 */
#include <omp.h>
#include "check.h"

int main(void) {
  int n = 0;
  #pragma omp parallel num_threads(2)
  {
    #pragma omp atomic
    n++;
  }
  printf("ran with OMP_STACKSIZE set: %d\n", n);
  return 0;
}
