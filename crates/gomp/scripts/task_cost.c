/* The task paths of omp_overhead.c (crates/gomp-bench/c) alone, for
 * instruction counts (task_cost.sh): `nested` makes REPS tasks from a single,
 * each making one child (2*REPS tasks); `tree` makes REPS binary trees of
 * depth 10 (2046 tasks each) with taskwait.
 * Usage: task_cost nested|tree THREADS REPS */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define ITERS 1024
static double sink[ITERS];
static long tree(int depth) {
  if (depth == 0) return 0;
  long a = 0, b = 0;
  #pragma omp task shared(a)
  a = tree(depth - 1);
  #pragma omp task shared(b)
  b = tree(depth - 1);
  #pragma omp taskwait
  return a + b + 2;
}
int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s nested|tree THREADS REPS\n", argv[0]);
    return 2;
  }
  const char *which = argv[1];
  int threads = atoi(argv[2]);
  int reps = atoi(argv[3]);
  for (int r = 0; r < 50; r++) {
    #pragma omp parallel num_threads(threads)
    sink[omp_get_thread_num()] += 1;
  }
  double t = omp_get_wtime();
  long tasks = 0;
  if (!strcmp(which, "nested")) {
    #pragma omp parallel num_threads(threads)
    {
      #pragma omp single
      for (int r = 0; r < reps; r++) {
        #pragma omp task
        {
          #pragma omp task
          sink[r % ITERS] += 1;
        }
      }
    }
    tasks = 2L * reps;
  } else {
    for (int r = 0; r < reps; r++) {
      #pragma omp parallel num_threads(threads)
      #pragma omp single
      tasks += tree(10);
    }
  }
  printf("%s %.4f us/task (%ld tasks)\n", which, (omp_get_wtime() - t) * 1e6 / tasks, tasks);
  return 0;
}
