/* taskloop: every iteration once with default, num_tasks, grainsize and
 * strict grainsize partitions, long and unsigned long long variables, negative steps, nogroup,
 * if(0), and the implicit taskgroup (done when the construct ends).
 * maestro-test: also-stock
 * maestro-test: also-dedicated
 */
#include <omp.h>
#include "check.h"

#define N 997
static int hits[N];

static void all_once(void) {
  for (int i = 0; i < N; i++) CHECK_EQ(hits[i], 1);
  for (int i = 0; i < N; i++) hits[i] = 0;
}

int main(void) {
  #pragma omp parallel num_threads(4)
  {
    #pragma omp single
    {
      #pragma omp taskloop
      for (int i = 0; i < N; i++) hits[i]++;
      all_once(); /* implicit taskgroup: all done here */

      #pragma omp taskloop num_tasks(13)
      for (long i = N - 1; i >= 0; i -= 1) hits[i]++;
      all_once();

      #pragma omp taskloop grainsize(50)
      for (unsigned long long i = 0; i < N; i++) hits[i]++;
      all_once();

      #pragma omp taskloop grainsize(7) nogroup
      for (int i = 0; i < N; i += 2) {
        #pragma omp atomic
        hits[i]++;
      }
      #pragma omp taskwait
      for (int i = 0; i < N; i++) CHECK_EQ(hits[i], i % 2 == 0);
      for (int i = 0; i < N; i++) hits[i] = 0;

      int cond = 0;
      #pragma omp taskloop if(cond) num_tasks(5)
      for (int i = 0; i < N; i++) hits[i]++;
      all_once();

      #pragma omp taskloop num_tasks(3)
      for (unsigned long long i = N; i > 0; i--) hits[i - 1]++;
      all_once();
    }
  }
  /* Outside any region: tasks run at once. */
  #pragma omp taskloop num_tasks(4)
  for (int i = 0; i < N; i++) hits[i]++;
  all_once();
  /* grainsize(strict: 7): every task but the last runs exactly 7 iterations
   * (each iteration records the first iteration of its task, through a
   * firstprivate copy per task). */
  static int first_of[30];
  #pragma omp parallel num_threads(2)
  #pragma omp single
  {
    int first = -1;
    #pragma omp taskloop grainsize(strict: 7) firstprivate(first)
    for (int i = 0; i < 30; i++) {
      if (first < 0) first = i;
      first_of[i] = first;
    }
  }
  for (int i = 0; i < 30; i++) CHECK_EQ(first_of[i], i - i % 7);
  puts("taskloop: ok");
  return 0;
}
