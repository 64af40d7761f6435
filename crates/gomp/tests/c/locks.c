/* omp locks and nested locks: mutual exclusion, test_lock, nesting counts and
 * ownership by task.
 * maestro-test: also-stock
 * maestro-test: also-dedicated
 */
#include <omp.h>
#include "check.h"

int main(void) {
  omp_lock_t lock;
  omp_nest_lock_t nest;
  omp_init_lock(&lock);
  omp_init_nest_lock(&nest);
  long counter = 0, ncounter = 0;
  int inside = 0, max_inside = 0;
  #pragma omp parallel num_threads(5)
  {
    for (int i = 0; i < 2000; i++) {
      omp_set_lock(&lock);
      inside++;
      if (inside > max_inside) max_inside = inside;
      counter++;
      inside--;
      omp_unset_lock(&lock);

      omp_set_nest_lock(&nest);
      CHECK_EQ(omp_test_nest_lock(&nest), 2);
      omp_set_nest_lock(&nest);
      ncounter++;
      omp_unset_nest_lock(&nest);
      omp_unset_nest_lock(&nest);
      omp_unset_nest_lock(&nest);
    }
  }
  CHECK_EQ(counter, 5 * 2000);
  CHECK_EQ(ncounter, 5 * 2000);
  CHECK_EQ(max_inside, 1);

  /* test_lock fails while another member holds the lock. */
  omp_set_lock(&lock);
  int got = -1, ngot = -1;
  omp_set_nest_lock(&nest);
  #pragma omp parallel num_threads(2)
  {
    if (omp_get_thread_num() == 1) {
      got = omp_test_lock(&lock);
      ngot = omp_test_nest_lock(&nest);
    }
  }
  CHECK_EQ(got, 0);
  CHECK_EQ(ngot, 0);
  omp_unset_nest_lock(&nest);
  omp_unset_lock(&lock);
  CHECK_EQ(omp_test_lock(&lock), 1);
  omp_unset_lock(&lock);

  /* A lock held across a region by one member blocks the others until released. */
  long order = 0;
  #pragma omp parallel num_threads(4)
  {
    #pragma omp master
    omp_set_lock(&lock);
    #pragma omp barrier
    if (omp_get_thread_num() == 0) {
      order = 1;
      omp_unset_lock(&lock);
    } else {
      omp_set_lock(&lock);
      CHECK_EQ(order, 1);
      omp_unset_lock(&lock);
    }
  }
  omp_destroy_lock(&lock);
  omp_destroy_nest_lock(&nest);
  puts("locks: ok");
  return 0;
}
