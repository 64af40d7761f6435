/* critical (unnamed and named, which must not exclude each other), atomic on
 * types with hardware atomics and on long double (GOMP_atomic_start/end).
 * maestro-test: also-stock
 * maestro-test: also-dedicated
 */
#include <omp.h>
#include <unistd.h>
#include "check.h"

int main(void) {
  long plain = 0, named_a = 0, named_b = 0;
  long double ld = 0;
  long at = 0;
  int inside = 0, max_inside = 0;
  #pragma omp parallel num_threads(6)
  {
    for (int i = 0; i < 3000; i++) {
      #pragma omp critical
      {
        inside++;
        if (inside > max_inside) max_inside = inside;
        plain++;
        inside--;
      }
      #pragma omp critical(alpha)
      named_a += 2;
      #pragma omp critical(beta)
      named_b += 3;
      #pragma omp atomic
      at += 1;
      #pragma omp atomic
      ld += 0.5L;
    }
  }
  CHECK_EQ(plain, 6 * 3000);
  CHECK_EQ(max_inside, 1);
  CHECK_EQ(named_a, 2 * 6 * 3000);
  CHECK_EQ(named_b, 3 * 6 * 3000);
  CHECK_EQ(at, 6 * 3000);
  CHECK(ld == 0.5L * 6 * 3000);

  /* Two different names may be held at once: member 0 holds alpha and waits for
   * member 1 to get through beta. */
  volatile int flag = 0;
  #pragma omp parallel num_threads(2)
  {
    if (omp_get_thread_num() == 0) {
      #pragma omp critical(alpha)
      {
        int spins = 0;
        while (!flag && spins < 20000) { usleep(100); spins++; }
      }
    } else {
      #pragma omp critical(beta)
      flag = 1;
    }
  }
  CHECK_EQ(flag, 1);
  puts("critical_atomic: ok");
  return 0;
}
