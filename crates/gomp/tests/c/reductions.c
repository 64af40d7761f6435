/* Reductions of every operator (+ * - & | ^ && || min max) on int, long, double
 * and unsigned, in parallel regions and in parallel for loops.
 * maestro-test: also-stock
 * maestro-test: also-dedicated
 */
#include <omp.h>
#include "check.h"

int main(void) {
  for (int n = 1; n <= 7; n += 2) {
    int add = 0, sub = 0, mul = 1, mn = 1000, mx = -1000, land = 1, lor = 0;
    unsigned band = ~0u, bor = 0, bxor = 0;
    long ladd = 0;
    double dadd = 0, dmul = 1, dmin = 1e9, dmax = -1e9;
    #pragma omp parallel num_threads(n) reduction(+:add, ladd, dadd) reduction(-:sub) \
        reduction(*:mul, dmul) reduction(min:mn, dmin) reduction(max:mx, dmax) \
        reduction(&&:land) reduction(||:lor) reduction(&:band) reduction(|:bor) reduction(^:bxor)
    {
      int t = omp_get_thread_num();
      add += t + 1;
      ladd += 1000000000L;
      dadd += 0.5;
      sub -= t;
      mul *= 2;
      dmul *= 1.5;
      if (t < mn) mn = t;
      if (-t < dmin) dmin = -t;
      if (t * 3 > mx) mx = t * 3;
      if (t + 0.25 > dmax) dmax = t + 0.25;
      land = land && (t < n);
      lor = lor || (t == n - 1);
      band &= ~(1u << t);
      bor |= 1u << t;
      bxor ^= 1u << (t % 3);
    }
    unsigned ebxor = 0;
    for (int t = 0; t < n; t++) ebxor ^= 1u << (t % 3);
    CHECK_EQ(add, n * (n + 1) / 2);
    CHECK_EQ(ladd, 1000000000L * n);
    CHECK(dadd == 0.5 * n);
    CHECK_EQ(sub, -(n * (n - 1) / 2));
    CHECK_EQ(mul, 1 << n);
    double e = 1;
    for (int t = 0; t < n; t++) e *= 1.5;
    CHECK(dmul == e);
    CHECK_EQ(mn, 0);
    CHECK(dmin == -(n - 1));
    CHECK_EQ(mx, 3 * (n - 1));
    CHECK(dmax == n - 1 + 0.25);
    CHECK_EQ(land, 1);
    CHECK_EQ(lor, 1);
    CHECK_EQ(band, ~((1u << n) - 1));
    CHECK_EQ(bor, (1u << n) - 1);
    CHECK_EQ(bxor, ebxor);
  }

  /* Loop reductions with dynamic scheduling. */
  long s = 0, p = 1;
  int land = 1, lor = 0, mn = 1 << 30, mx = -(1 << 30);
  unsigned x = 0;
  #pragma omp parallel for num_threads(4) schedule(dynamic, 3) reduction(+:s) reduction(*:p) \
      reduction(&&:land) reduction(||:lor) reduction(min:mn) reduction(max:mx) reduction(^:x)
  for (int i = 1; i <= 60; i++) {
    s += i;
    if (i % 20 == 0) p *= 3;
    land = land && i > 0;
    lor = lor || i == 42;
    if (i * 7 % 61 < mn) mn = i * 7 % 61;
    if (i * 7 % 61 > mx) mx = i * 7 % 61;
    x ^= (unsigned)i;
  }
  unsigned ex = 0;
  for (int i = 1; i <= 60; i++) ex ^= (unsigned)i;
  CHECK_EQ(s, 60 * 61 / 2);
  CHECK_EQ(p, 27);
  CHECK_EQ(land, 1);
  CHECK_EQ(lor, 1);
  CHECK_EQ(mn, 1);  /* 7 * 35 % 61 */
  CHECK_EQ(mx, 60); /* 7 * 26 % 61 */
  CHECK_EQ(x, ex);

  /* A reduction on long double goes through GOMP_atomic_start/end. */
  long double ld = 0;
  #pragma omp parallel for num_threads(3) reduction(+:ld)
  for (int i = 0; i < 300; i++) ld += 0.25L;
  CHECK(ld == 75.0L);
  puts("reductions: ok");
  return 0;
}
