/* OpenMP overhead microbenchmark (EPCC-style), compiled twice by
 * maestro_gomp::bench: once against stock libgomp, once against
 * libmaestro_gomp.so. Prints one line per measurement:
 *   <metric> <microseconds per operation>
 * Usage: omp_overhead THREADS REPS [tree|nested]
 * With a third argument only that task part runs (after the warm-up), on
 * REPS trees or REPS producer tasks: crates/gomp/scripts/task_cost.sh counts
 * its instructions with callgrind. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ITERS 1024
static double sink[ITERS];

static double per_op_us(double seconds, int reps) { return seconds * 1e6 / reps; }

/* Depth of the task tree (2^(TREE_DEPTH+1) - 1 tasks) and iterations of the
 * measured taskloops. */
#define TREE_DEPTH 10
#define TASKLOOP_ITERS 4096

/* A binary tree of tasks below `depth`; returns how many tasks it made. */
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

/* `trees` binary trees of depth TREE_DEPTH, each from a `single`; returns
 * the tasks made. */
static long task_trees(int threads, int trees) {
  long tasks = 0;
  for (int r = 0; r < trees; r++) {
    #pragma omp parallel num_threads(threads)
    #pragma omp single
    tasks += tree(TREE_DEPTH);
  }
  return tasks;
}

/* A `single` producer makes `producers` tasks, each making one child;
 * returns the tasks made. */
static long nested_tasks(int threads, int producers) {
  #pragma omp parallel num_threads(threads)
  {
    #pragma omp single
    for (int r = 0; r < producers; r++) {
      #pragma omp task
      {
        #pragma omp task
        sink[r % ITERS] += 1;
      }
    }
  }
  return 2L * producers;
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : omp_get_num_procs();
  int reps = argc > 2 ? atoi(argv[2]) : 2000;
  const char *only = argc > 3 ? argv[3] : NULL;
  if (threads < 1 || reps < 1 || argc > 4
      || (only && strcmp(only, "tree") && strcmp(only, "nested"))) {
    fprintf(stderr, "usage: %s THREADS REPS [tree|nested]\n", argv[0]);
    return 2;
  }
  /* Warm up: start the runtime (and its workers) outside the measurements. */
  for (int r = 0; r < 50; r++) {
    #pragma omp parallel num_threads(threads)
    sink[omp_get_thread_num()] += 1;
  }
  if (only) {
    double t0 = omp_get_wtime();
    long tasks = strcmp(only, "tree") ? nested_tasks(threads, reps) : task_trees(threads, reps);
    printf("%s %.4f us/task (%ld tasks)\n", only, (omp_get_wtime() - t0) * 1e6 / tasks, tasks);
    return 0;
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

  /* Constructs inside a running team, per operation (EPCC's syncbench). */
  t = omp_get_wtime();
  #pragma omp parallel num_threads(threads)
  for (int r = 0; r < reps; r++) {
    #pragma omp critical
    sink[0] += 1;
  }
  printf("critical %.4f\n", per_op_us(omp_get_wtime() - t, reps));

  t = omp_get_wtime();
  #pragma omp parallel num_threads(threads)
  for (int r = 0; r < reps; r++) {
    #pragma omp single
    sink[1] += 1;
  }
  printf("single %.4f\n", per_op_us(omp_get_wtime() - t, reps));

  /* Whole regions, per region. */
  t = omp_get_wtime();
  double total = 0.0;
  for (int r = 0; r < reps; r++) {
    double s = 0.0;
    #pragma omp parallel for num_threads(threads) schedule(static) reduction(+:s)
    for (int i = 0; i < ITERS; i++) s += sink[i];
    total += s;
  }
  printf("reduction %.4f\n", per_op_us(omp_get_wtime() - t, reps));

  t = omp_get_wtime();
  for (int r = 0; r < reps; r++) {
    #pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
    for (int i = 0; i < ITERS; i++) sink[i] += i;
  }
  printf("parallel_for_dynamic_1 %.4f\n", per_op_us(omp_get_wtime() - t, reps));

  t = omp_get_wtime();
  for (int r = 0; r < reps; r++) {
    #pragma omp parallel for num_threads(threads) schedule(dynamic, 2)
    for (int i = 0; i < ITERS; i++) sink[i] += i;
  }
  printf("parallel_for_dynamic_2 %.4f\n", per_op_us(omp_get_wtime() - t, reps));

  t = omp_get_wtime();
  for (int r = 0; r < reps; r++) {
    #pragma omp parallel for num_threads(threads) schedule(guided)
    for (int i = 0; i < ITERS; i++) sink[i] += i;
  }
  printf("parallel_for_guided %.4f\n", per_op_us(omp_get_wtime() - t, reps));

  /* `ordered`, per ordered iteration (a region of ITERS of them). */
  int ordered_reps = reps / 16 > 0 ? reps / 16 : 1;
  t = omp_get_wtime();
  for (int r = 0; r < ordered_reps; r++) {
    #pragma omp parallel for num_threads(threads) schedule(static, 1) ordered
    for (int i = 0; i < ITERS; i++) {
      #pragma omp ordered
      sink[i] += 1;
    }
  }
  printf("ordered %.4f\n", per_op_us(omp_get_wtime() - t, ordered_reps * ITERS));

  /* Task trees, per task: fib-style recursion with taskwait. */
  t = omp_get_wtime();
  long tree_tasks = task_trees(threads, reps / 64 > 0 ? reps / 64 : 1);
  printf("task_tree %.4f\n", per_op_us(omp_get_wtime() - t, (int)tree_tasks));

  /* Nested tasks, per task: each task a producer creates makes one child. */
  t = omp_get_wtime();
  nested_tasks(threads, reps);
  printf("nested_task %.4f\n", per_op_us(omp_get_wtime() - t, 2 * reps));

  /* taskloop at three grains over TASKLOOP_ITERS iterations, per taskloop. */
  static const int grains[3] = {1, 16, 1024};
  static const char *names[3] = {"taskloop_g1", "taskloop_g16", "taskloop_g1024"};
  for (int g = 0; g < 3; g++) {
    int grain = grains[g];
    int loops = reps / 16 > 0 ? reps / 16 : 1;
    t = omp_get_wtime();
    #pragma omp parallel num_threads(threads)
    #pragma omp single
    for (int r = 0; r < loops; r++) {
      #pragma omp taskloop grainsize(grain)
      for (int i = 0; i < TASKLOOP_ITERS; i++) sink[i % ITERS] += 1;
    }
    printf("%s %.4f\n", names[g], per_op_us(omp_get_wtime() - t, loops));
  }
  /* Keep the reductions' result alive. */
  if (total < 0) printf("impossible %f\n", total);
  return 0;
}
