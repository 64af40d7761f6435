/* Nested parallelism: disabled by default (inner regions serialized), enabled by
 * omp_set_max_active_levels / omp_set_nested; levels, active levels, ancestor
 * thread numbers and team sizes; three levels deep; barriers in inner teams.
 * maestro-test: also-stock
 * maestro-test: also-dedicated
 */
#include <omp.h>
#include "check.h"

int main(void) {
  CHECK_EQ(omp_get_max_active_levels(), 1);
  int inner_size = -1;
  #pragma omp parallel num_threads(3)
  {
    #pragma omp parallel num_threads(4)
    {
      #pragma omp single
      inner_size = omp_get_num_threads();
      CHECK_EQ(omp_get_level(), 2);
      CHECK_EQ(omp_get_active_level(), 1);
    }
  }
  CHECK_EQ(inner_size, 1);

  omp_set_max_active_levels(3);
  CHECK_EQ(omp_get_nested(), 1);
  int hits[3][4][2] = {{{0}}};
  #pragma omp parallel num_threads(3)
  {
    int a = omp_get_thread_num();
    #pragma omp parallel num_threads(4)
    {
      int b = omp_get_thread_num();
      CHECK_EQ(omp_get_level(), 2);
      CHECK_EQ(omp_get_active_level(), 2);
      CHECK_EQ(omp_get_ancestor_thread_num(1), a);
      CHECK_EQ(omp_get_ancestor_thread_num(2), b);
      CHECK_EQ(omp_get_ancestor_thread_num(0), 0);
      CHECK_EQ(omp_get_ancestor_thread_num(3), -1);
      CHECK_EQ(omp_get_team_size(1), 3);
      CHECK_EQ(omp_get_team_size(2), 4);
      #pragma omp barrier
      #pragma omp parallel num_threads(2)
      {
        CHECK_EQ(omp_get_level(), 3);
        CHECK_EQ(omp_get_ancestor_thread_num(2), b);
        #pragma omp atomic
        hits[a][b][omp_get_thread_num()]++;
        #pragma omp barrier
      }
    }
  }
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 4; b++)
      for (int c = 0; c < 2; c++) CHECK_EQ(hits[a][b][c], 1);

  /* A fourth level beyond max-active-levels is serialized. */
  int deep = -1;
  #pragma omp parallel num_threads(2)
  #pragma omp parallel num_threads(2)
  #pragma omp parallel num_threads(2)
  #pragma omp parallel num_threads(2)
  {
    if (omp_get_ancestor_thread_num(1) == 0 && omp_get_ancestor_thread_num(2) == 0 &&
        omp_get_ancestor_thread_num(3) == 0)
      deep = omp_get_num_threads();
  }
  CHECK_EQ(deep, 1);

  omp_set_nested(0);
  CHECK_EQ(omp_get_max_active_levels(), 1);
  puts("nested: ok");
  return 0;
}
