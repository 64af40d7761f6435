/* Work-sharing loops: every iteration exactly once under static, dynamic, guided,
 * runtime and auto schedules with odd chunk sizes, negative and non-unit steps,
 * unsigned long long ranges beyond long, nowait loops, collapse, lastprivate,
 * and combined parallel for.
 * maestro-test: also-stock
 * maestro-test: also-dedicated
 */
#include <omp.h>
#include <string.h>
#include "check.h"

#define N 1003
static int hits[N];

static void reset(void) { memset(hits, 0, sizeof hits); }
static void all_once(const char *what) {
  for (int i = 0; i < N; i++)
    if (hits[i] != 1) {
      fprintf(stderr, "%s: iteration %d ran %d times\n", what, i, hits[i]);
      exit(1);
    }
}

int main(void) {
  int chunks[] = {1, 2, 3, 7, 13, 64, 997, 5000};
  for (int c = 0; c < 8; c++) {
    int k = chunks[c];
    reset();
    #pragma omp parallel num_threads(4)
    {
      #pragma omp for schedule(dynamic, k)
      for (int i = 0; i < N; i++) hits[i]++;
    }
    all_once("dynamic");
    reset();
    #pragma omp parallel num_threads(3)
    {
      #pragma omp for schedule(guided, k)
      for (int i = 0; i < N; i++) hits[i]++;
    }
    all_once("guided");
    reset();
    #pragma omp parallel for num_threads(5) schedule(static, k)
    for (int i = 0; i < N; i++) hits[i]++;
    all_once("static chunked");
    reset();
    #pragma omp parallel for num_threads(6) schedule(dynamic, k)
    for (int i = 0; i < N; i++) hits[i]++;
    all_once("parallel for dynamic");
    reset();
    #pragma omp parallel for num_threads(2) schedule(monotonic: dynamic, k)
    for (int i = 0; i < N; i++) hits[i]++;
    all_once("parallel for monotonic dynamic");
  }

  /* Static without chunk: contiguous blocks, in thread order. */
  int owner[N];
  #pragma omp parallel for num_threads(4) schedule(static)
  for (int i = 0; i < N; i++) owner[i] = omp_get_thread_num();
  for (int i = 1; i < N; i++) CHECK(owner[i] >= owner[i - 1]);
  CHECK_EQ(owner[0], 0);
  CHECK_EQ(owner[N - 1], 3);

  /* runtime schedules read run-sched-var. */
  omp_sched_t kinds[] = {omp_sched_static, omp_sched_dynamic, omp_sched_guided, omp_sched_auto};
  for (int s = 0; s < 4; s++) {
    omp_set_schedule(kinds[s], 3);
    reset();
    #pragma omp parallel for num_threads(4) schedule(runtime)
    for (int i = 0; i < N; i++) hits[i]++;
    all_once("runtime");
    reset();
    #pragma omp parallel num_threads(3)
    {
      #pragma omp for schedule(runtime) nowait
      for (int i = 0; i < N; i++) hits[i]++;
    }
    all_once("runtime nowait");
  }

  /* Negative and non-unit steps. */
  long sum = 0;
  #pragma omp parallel for num_threads(4) schedule(dynamic, 5) reduction(+:sum)
  for (long i = 1000; i > -1000; i -= 3) sum += i;
  long expect = 0;
  for (long i = 1000; i > -1000; i -= 3) expect += i;
  CHECK_EQ(sum, expect);

  /* unsigned long long with a range no long can hold. */
  unsigned long long base = 0xF000000000000000ULL, cnt = 0;
  #pragma omp parallel for num_threads(3) schedule(guided, 7) reduction(+:cnt)
  for (unsigned long long u = base; u < base + 0x0800000000000000ULL; u += 0x0000100000000000ULL) cnt++;
  CHECK_EQ(cnt, 0x8000);
  cnt = 0;
  #pragma omp parallel num_threads(3)
  {
    #pragma omp for schedule(dynamic, 3) reduction(+:cnt)
    for (unsigned long long u = 0xFFFFFFFFFFFFFFF0ULL; u > 0x1000000000000ULL; u -= 0x1000000000000ULL) cnt++;
  }
  unsigned long long ecnt = 0;
  for (unsigned long long u = 0xFFFFFFFFFFFFFFF0ULL; u > 0x1000000000000ULL; u -= 0x1000000000000ULL) ecnt++;
  CHECK_EQ(cnt, ecnt);

  /* Several nowait loops in a row: members may be loops apart. */
  static int m[4][N];
  #pragma omp parallel num_threads(4)
  {
    for (int r = 0; r < 4; r++) {
      #pragma omp for schedule(dynamic, 11) nowait
      for (int i = 0; i < N; i++) m[r][i]++;
    }
  }
  for (int r = 0; r < 4; r++)
    for (int i = 0; i < N; i++) CHECK_EQ(m[r][i], 1);

  /* collapse(2) and lastprivate. */
  static int grid[37][29];
  int last = -1;
  #pragma omp parallel for num_threads(4) collapse(2) schedule(dynamic, 5) lastprivate(last)
  for (int i = 0; i < 37; i++)
    for (int j = 0; j < 29; j++) { grid[i][j]++; last = i * 100 + j; }
  for (int i = 0; i < 37; i++)
    for (int j = 0; j < 29; j++) CHECK_EQ(grid[i][j], 1);
  CHECK_EQ(last, 36 * 100 + 28);

  /* Empty loops. */
  int none = 0;
  #pragma omp parallel for num_threads(3) schedule(dynamic)
  for (int i = 5; i < 5; i++) none++;
  CHECK_EQ(none, 0);
  puts("loops: ok");
  return 0;
}
