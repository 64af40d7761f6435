/* sections and parallel sections: every section exactly once, with more and
 * fewer members than sections, with nowait, and lastprivate.
 * maestro-test: also-stock
 * maestro-test: also-dedicated
 */
#include <omp.h>
#include "check.h"

int main(void) {
  for (int n = 1; n <= 7; n += 3) {
    int hits[5] = {0};
    int last = -1;
    #pragma omp parallel num_threads(n)
    {
      #pragma omp sections lastprivate(last)
      {
        #pragma omp section
        { hits[0]++; last = 0; }
        #pragma omp section
        { hits[1]++; last = 1; }
        #pragma omp section
        { hits[2]++; last = 2; }
        #pragma omp section
        { hits[3]++; last = 3; }
        #pragma omp section
        { hits[4]++; last = 4; }
      }
      #pragma omp sections nowait
      {
        #pragma omp section
        {
          #pragma omp atomic
          hits[0] += 10;
        }
        #pragma omp section
        {
          #pragma omp atomic
          hits[1] += 10;
        }
      }
    }
    CHECK_EQ(hits[0], 11);
    CHECK_EQ(hits[1], 11);
    for (int s = 2; s < 5; s++) CHECK_EQ(hits[s], 1);
    CHECK_EQ(last, 4);
  }

  int a = 0, b = 0, c = 0;
  #pragma omp parallel sections num_threads(3)
  {
    #pragma omp section
    a = omp_get_num_threads();
    #pragma omp section
    b = 2;
    #pragma omp section
    c = 3;
  }
  CHECK_EQ(a, 3);
  CHECK_EQ(b + c, 5);
  puts("sections: ok");
  return 0;
}
