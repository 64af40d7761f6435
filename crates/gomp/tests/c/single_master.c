/* single (once per construct, with and without nowait), single copyprivate,
 * master, and masked-by-thread-number code.
 * maestro-test: also-stock
 * maestro-test: also-dedicated
 */
#include <omp.h>
#include "check.h"

int main(void) {
  int runs[50] = {0};
  int master_runs = 0, master_tid = -1;
  #pragma omp parallel num_threads(5)
  {
    for (int i = 0; i < 50; i++) {
      if (i % 2) {
        #pragma omp single
        runs[i]++;
      } else {
        #pragma omp single nowait
        {
          #pragma omp atomic
          runs[i]++;
        }
      }
    }
    #pragma omp master
    {
      master_runs++;
      master_tid = omp_get_thread_num();
    }
  }
  for (int i = 0; i < 50; i++) CHECK_EQ(runs[i], 1);
  CHECK_EQ(master_runs, 1);
  CHECK_EQ(master_tid, 0);

  /* copyprivate broadcasts the executor's private values to every member. */
  int ok = 0;
  #pragma omp parallel num_threads(4) reduction(+:ok)
  {
    for (int r = 0; r < 20; r++) {
      int x; double y;
      #pragma omp single copyprivate(x, y)
      {
        x = 100 + r;
        y = 0.25 * r;
      }
      if (x == 100 + r && y == 0.25 * r) ok++;
    }
  }
  CHECK_EQ(ok, 4 * 20);
  puts("single_master: ok");
  return 0;
}
