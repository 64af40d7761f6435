/* OpenMP overhead microbenchmark (EPCC-style), compiled twice by
 * maestro_gomp::bench: once against stock libgomp, once against
 * libmaestro_gomp.so. Prints one line per measurement:
 *   <metric> <microseconds per operation>
 * Usage: omp_overhead THREADS REPS */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define ITERS 1024
static double sink[ITERS];

static double per_op_us(double seconds, int reps) { return seconds * 1e6 / reps; }

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : omp_get_num_procs();
  int reps = argc > 2 ? atoi(argv[2]) : 2000;
  if (threads < 1 || reps < 1) {
    fprintf(stderr, "usage: %s THREADS REPS\n", argv[0]);
    return 2;
  }
  /* Warm up: start the runtime (and its workers) outside the measurements. */
  for (int r = 0; r < 50; r++) {
    #pragma omp parallel num_threads(threads)
    sink[omp_get_thread_num()] += 1;
  }

  double t = omp_get_wtime();
  for (int r = 0; r < reps; r++) {
    #pragma omp parallel num_threads(threads)
    sink[omp_get_thread_num()] += 1;
  }
  printf("fork_join %.4f\n", per_op_us(omp_get_wtime() - t, reps));

  /* With a barrier every member must really run at the same time (an empty
   * region lets our master run members nobody started yet). */
  t = omp_get_wtime();
  for (int r = 0; r < reps; r++) {
    #pragma omp parallel num_threads(threads)
    {
      #pragma omp barrier
    }
  }
  printf("fork_join_barrier %.4f\n", per_op_us(omp_get_wtime() - t, reps));

  t = omp_get_wtime();
  for (int r = 0; r < reps; r++) {
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (int i = 0; i < ITERS; i++) sink[i] += i;
  }
  printf("parallel_for_static %.4f\n", per_op_us(omp_get_wtime() - t, reps));

  t = omp_get_wtime();
  for (int r = 0; r < reps; r++) {
    #pragma omp parallel for num_threads(threads) schedule(dynamic, 16)
    for (int i = 0; i < ITERS; i++) sink[i] += i;
  }
  printf("parallel_for_dynamic %.4f\n", per_op_us(omp_get_wtime() - t, reps));

  t = omp_get_wtime();
  #pragma omp parallel num_threads(threads)
  for (int r = 0; r < reps; r++) {
    #pragma omp barrier
  }
  printf("barrier %.4f\n", per_op_us(omp_get_wtime() - t, reps));

  t = omp_get_wtime();
  #pragma omp parallel num_threads(threads)
  {
    #pragma omp single
    for (int r = 0; r < reps; r++) {
      #pragma omp task
      sink[r % ITERS] += 1;
    }
  }
  printf("task %.4f\n", per_op_us(omp_get_wtime() - t, reps));
  return 0;
}
