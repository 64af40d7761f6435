/* A task with in_reduction that no task_reduction or reduction(task, ...)
 * encloses (the function is called outside any) is a program error: the
 * runtime stops with a message naming it instead of reducing into memory of
 * its choosing (stock libgomp crashes).
 * maestro-test: expect-fail in_reduction outside any task reduction
 */
#include <omp.h>
#include "check.h"

static long x;

static void add(long v) {
#pragma omp task in_reduction(+: x)
  x += v;
}

int main(void) {
#pragma omp parallel num_threads(2)
#pragma omp single
  add(1);
  printf("ran an unmatched in_reduction: x = %ld\n", x);
  return 0;
}
