/* OMP_DISPLAY_AFFINITY=true: a member shows its affinity line (in
 * OMP_AFFINITY_FORMAT) on stderr when it starts and the line changed for its
 * thread; every member of a team of 3 is shown at least once.
 * maestro-test: env OMP_DISPLAY_AFFINITY=true
 * maestro-test: env OMP_AFFINITY_FORMAT=aff L%L n%n N%N
 * maestro-test: also-stock
 */
#include <omp.h>
#include <string.h>
#include <unistd.h>
#include "check.h"

int main(void) {
  int fds[2];
  CHECK(pipe(fds) == 0);
  fflush(stderr);
  int saved = dup(2);
  dup2(fds[1], 2);
  int n = 0;
  #pragma omp parallel num_threads(3) reduction(+:n)
  n++;
  fflush(stderr);
  dup2(saved, 2);
  close(fds[1]);
  CHECK_EQ(n, 3);
  char text[8192];
  ssize_t got = read(fds[0], text, sizeof text - 1);
  CHECK(got > 0);
  text[got] = 0;
  for (int k = 0; k < 3; k++) {
    char want[32];
    snprintf(want, sizeof want, "aff L1 n%d N3\n", k);
    if (strstr(text, want) == NULL) {
      fprintf(stderr, "missing \"%s\" in:\n%s\n", want, text);
      return 1;
    }
  }
  puts("display_affinity: ok");
  return 0;
}
