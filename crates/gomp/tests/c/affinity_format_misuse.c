/* A malformed affinity format (a leading zero without a dot) stops the
 * program with a message, as libgomp does.
 * maestro-test: expect-fail leading zero not followed by dot in affinity format
 * maestro-test: also-stock
 */
#include <omp.h>
#include "check.h"

int main(void) {
  char buf[64];
  omp_capture_affinity(buf, sizeof buf, "%04n");
  printf("formatted a malformed affinity format: %s\n", buf);
  return 0;
}
