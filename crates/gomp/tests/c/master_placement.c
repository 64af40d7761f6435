/* Master placement (MAESTRO_OMP_MASTER / maestro_omp_set_master_on_scheduler):
 * with `scheduler`, a region entered from the main thread runs every member,
 * the master (thread 0) included, on Maestro scheduler workers while the main
 * thread sleeps; every construct still works there. Switched back to `caller`,
 * thread 0 is the main thread again.
 * maestro-test: env MAESTRO_OMP_MASTER=scheduler
 */
#define _GNU_SOURCE
#include <omp.h>
#include <pthread.h>
#include <string.h>
#include "check.h"
#include "maestro_omp.h"

static int on_worker(void) {
  char name[32];
  pthread_getname_np(pthread_self(), name, sizeof name);
  return strncmp(name, "maestro-", 8) == 0;
}

int main(void) {
  CHECK_EQ(maestro_omp_get_master_on_scheduler(), 1);
  pthread_t main_thread = pthread_self();
  omp_set_num_threads(3); /* the master's ICV travels with the team */

  for (int r = 0; r < 50; r++) {
    int size = 0, master_on_main = 0, off_worker = 0;
    #pragma omp parallel reduction(+:off_worker)
    {
      if (!on_worker()) off_worker++;
      #pragma omp barrier
      #pragma omp master
      {
        size = omp_get_num_threads();
        master_on_main = pthread_equal(pthread_self(), main_thread);
      }
    }
    CHECK_EQ(size, 3);
    CHECK_EQ(master_on_main, 0);
    CHECK_EQ(off_worker, 0);
  }

  /* parallel for (GOMP_parallel_loop_*), sections, reductions, tasks. */
  long sum = 0;
  #pragma omp parallel for schedule(dynamic, 7) reduction(+:sum)
  for (long i = 0; i < 10000; i++) sum += i;
  CHECK_EQ(sum, 10000L * 9999 / 2);
  int sec[3] = {0, 0, 0};
  #pragma omp parallel sections
  {
    #pragma omp section
    sec[0] = on_worker();
    #pragma omp section
    sec[1] = on_worker();
    #pragma omp section
    sec[2] = on_worker();
  }
  CHECK(sec[0] && sec[1] && sec[2]);
  long tasks_on_workers = 0;
  #pragma omp parallel
  #pragma omp single
  for (int t = 0; t < 500; t++) {
    #pragma omp task
    {
      int w = on_worker();
      #pragma omp atomic
      tasks_on_workers += w;
    }
  }
  CHECK_EQ(tasks_on_workers, 500);

  /* Nested regions inside an offloaded one fork from a worker, as always. */
  omp_set_max_active_levels(2);
  int inner_total = 0;
  #pragma omp parallel num_threads(2) reduction(+:inner_total)
  {
    #pragma omp parallel num_threads(2) reduction(+:inner_total)
    inner_total += omp_get_level() == 2 && on_worker();
  }
  CHECK_EQ(inner_total, 4);

  /* Back to the caller: thread 0 is the main thread. */
  maestro_omp_set_master_on_scheduler(0);
  CHECK_EQ(maestro_omp_get_master_on_scheduler(), 0);
  int master_on_main = 0;
  #pragma omp parallel
  {
    #pragma omp master
    master_on_main = pthread_equal(pthread_self(), main_thread);
  }
  CHECK_EQ(master_on_main, 1);
  puts("master_placement: ok");
  return 0;
}
