/* OpenMP 5.0 constructs GCC lowers to GOMP_loop_start / GOMP_sections2_start with
 * shared scratch memory: inscan reductions and lastprivate(conditional:).
 * maestro-test: also-stock
 * maestro-test: also-dedicated
 */
#include <omp.h>
#include "check.h"

#define N 1000
int a[N], b[N];

int main(void) {
  for (int i = 0; i < N; i++) a[i] = i % 7;
  int x = 0;
  #pragma omp parallel for num_threads(4) reduction(inscan, +:x)
  for (int i = 0; i < N; i++) {
    x += a[i];
    #pragma omp scan inclusive(x)
    b[i] = x;
  }
  int run = 0;
  for (int i = 0; i < N; i++) {
    run += a[i];
    CHECK_EQ(b[i], run);
  }
  CHECK_EQ(x, run);

  int last = -1;
  #pragma omp parallel for num_threads(3) schedule(dynamic, 7) lastprivate(conditional: last)
  for (int i = 0; i < N; i++)
    if (a[i] == 3) last = i;
  int expect = -1;
  for (int i = 0; i < N; i++) if (a[i] == 3) expect = i;
  CHECK_EQ(last, expect);

  int y = -1;
  #pragma omp parallel num_threads(3)
  {
    #pragma omp sections lastprivate(conditional: y)
    {
      #pragma omp section
      y = 1;
      #pragma omp section
      y = 2;
      #pragma omp section
      ;
    }
  }
  CHECK_EQ(y, 2);
  puts("scan: ok");
  return 0;
}
