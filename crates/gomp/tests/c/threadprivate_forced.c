/* MAESTRO_OMP_THREADS=scheduler refuses dedicated threads even though this
 * program has thread-local storage (a threadprivate variable): its members
 * then run on scheduler workers, where threadprivate values are neither
 * private nor persistent, and the runtime must say so on stderr at the first
 * region instead of letting the program print wrong values silently (stderr
 * read back through a pipe). Maestro only.
 * maestro-test: env MAESTRO_OMP_THREADS=scheduler
 */
#include <omp.h>
#include <string.h>
#include <unistd.h>
#include "check.h"

int tp; /* external: GCC drops a write-only static */
#pragma omp threadprivate(tp)

int main(void) {
  int fds[2];
  CHECK(pipe(fds) == 0);
  fflush(stderr);
  int saved = dup(2);
  dup2(fds[1], 2);
  #pragma omp parallel num_threads(2)
  tp = omp_get_thread_num();
  fflush(stderr);
  dup2(saved, 2);
  close(fds[1]);
  char text[4096] = {0};
  ssize_t got = read(fds[0], text, sizeof text - 1);
  CHECK(got > 0);
  CHECK(strstr(text, "has thread-local storage") != NULL);
  CHECK(strstr(text, "MAESTRO_OMP_THREADS=scheduler") != NULL);
  /* Once per process. */
  CHECK(pipe(fds) == 0);
  dup2(fds[1], 2);
  #pragma omp parallel num_threads(2)
  tp = omp_get_thread_num();
  fprintf(stderr, "end\n");
  fflush(stderr);
  dup2(saved, 2);
  close(fds[1]);
  memset(text, 0, sizeof text);
  got = read(fds[0], text, sizeof text - 1);
  CHECK(got > 0);
  CHECK(strcmp(text, "end\n") == 0);
  puts("threadprivate_forced: ok");
  return 0;
}
