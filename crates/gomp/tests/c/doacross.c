/* Doacross loops (ordered(n) with depend(sink)/depend(source)): a 2-D
 * wavefront under static (blocks and chunks), dynamic, guided and runtime
 * schedules and teams of 1-5, each iteration checking that its sinks are done
 * (and its results against a sequential run); an unsigned long long loop with
 * bounds unknown at compile time (the ull entry points); collapse(2) with
 * ordered(3); an ordered(8) nest, whose sinks pass more arguments than fit in
 * registers; slow iterations, so that waiters sleep; a doacross loop with
 * task reductions (GOMP_loop_doacross_start).
 * maestro-test: also-stock
 * maestro-test: also-dedicated */
#include <omp.h>
#include <unistd.h>
#include <string.h>
#include "check.h"

#define N 64
#define M 48
static int a[N][M], ref[N][M];
static int done2[N][M];

static int is_done(int *p) {
  int v;
  #pragma omp atomic read seq_cst
  v = *p;
  return v;
}

static void mark_done(int *p) {
  #pragma omp atomic write seq_cst
  *p = 1;
}

static void wavefront_ref(void) {
  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++)
      ref[i][j] = (i == 0 || j == 0) ? i + j + 1
                                     : (ref[i - 1][j] + 3 * ref[i][j - 1]) % 10007;
}

static void reset(void) {
  memset(a, 0, sizeof a);
  memset(done2, 0, sizeof done2);
}

/* One iteration: the sinks must be done; slow now and then. */
#define WAVE_BODY                                                      \
  {                                                                    \
    _Pragma("omp ordered depend(sink: i - 1, j) depend(sink: i, j - 1)") \
    if (i > 0 && !is_done(&done2[i - 1][j])) bad++;                    \
    if (j > 0 && !is_done(&done2[i][j - 1])) bad++;                    \
    if (j == 0 && i % 9 == 4) usleep(1000);                            \
    a[i][j] = (i == 0 || j == 0) ? i + j + 1                           \
                                 : (a[i - 1][j] + 3 * a[i][j - 1]) % 10007; \
    mark_done(&done2[i][j]);                                           \
    _Pragma("omp ordered depend(source)")                              \
  }

static int check_wave(void) {
  int wrong = 0;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++)
      if (a[i][j] != ref[i][j] || !done2[i][j]) wrong++;
  return wrong;
}

int main(void) {
  wavefront_ref();

  for (int threads = 1; threads <= 5; threads++) {
    for (int sched = 0; sched < 6; sched++) {
      reset();
      int bad = 0;
      #pragma omp parallel num_threads(threads) reduction(+: bad)
      {
        switch (sched) {
        case 0:
          #pragma omp for ordered(2) schedule(static)
          for (int i = 0; i < N; i++)
            for (int j = 0; j < M; j++) WAVE_BODY
          break;
        case 1:
          #pragma omp for ordered(2) schedule(static, 3)
          for (int i = 0; i < N; i++)
            for (int j = 0; j < M; j++) WAVE_BODY
          break;
        case 2:
          #pragma omp for ordered(2) schedule(dynamic)
          for (int i = 0; i < N; i++)
            for (int j = 0; j < M; j++) WAVE_BODY
          break;
        case 3:
          #pragma omp for ordered(2) schedule(dynamic, 5)
          for (int i = 0; i < N; i++)
            for (int j = 0; j < M; j++) WAVE_BODY
          break;
        case 4:
          #pragma omp for ordered(2) schedule(guided)
          for (int i = 0; i < N; i++)
            for (int j = 0; j < M; j++) WAVE_BODY
          break;
        default:
          #pragma omp for ordered(2) schedule(runtime)
          for (int i = 0; i < N; i++)
            for (int j = 0; j < M; j++) WAVE_BODY
          break;
        }
      }
      CHECK_EQ(bad, 0);
      CHECK_EQ(check_wave(), 0);
    }
  }

  /* unsigned long long loops with run-time bounds (GCC then calls the ull
   * entry points), upward with a stride of 3. (A sink two iterations back
   * hangs GCC 12's libgomp at the loop's start, where it lies before the
   * first iteration: measured, so not used here.) */
  {
    static unsigned long long b[1000];
    static int bdone[1000];
    volatile unsigned long long lo_v = 5, hi_v = 905;
    unsigned long long lo = lo_v, hi = hi_v;
    int bad = 0;
    #pragma omp parallel for ordered(1) schedule(dynamic, 2) num_threads(4) reduction(+: bad)
    for (unsigned long long i = lo; i < hi; i += 3) {
      #pragma omp ordered depend(sink: i - 3)
      if (i >= lo + 3 && !is_done(&bdone[i - 3])) bad++;
      if (i % 100 == 2) usleep(500);
      b[i] = (i >= lo + 3 ? b[i - 3] : 0) + i;
      mark_done(&bdone[i]);
      #pragma omp ordered depend(source)
    }
    CHECK_EQ(bad, 0);
    unsigned long long want = 0;
    for (unsigned long long i = lo; i < hi; i += 3) {
      want += i;
      CHECK_EQ(b[i], want);
    }
  }

  /* collapse(2) ordered(3): the first two loops are scheduled as one. */
  {
    enum { X = 6, Y = 5, Z = 7 };
    static int c[X][Y][Z], cdone[X][Y][Z];
    int bad = 0;
    #pragma omp parallel num_threads(3) reduction(+: bad)
    #pragma omp for collapse(2) ordered(3) schedule(dynamic)
    for (int x = 0; x < X; x++)
      for (int y = 0; y < Y; y++)
        for (int z = 0; z < Z; z++) {
          #pragma omp ordered depend(sink: x - 1, y, z) depend(sink: x, y - 1, z) depend(sink: x, y, z - 1)
          if (x > 0 && !is_done(&cdone[x - 1][y][z])) bad++;
          if (y > 0 && !is_done(&cdone[x][y - 1][z])) bad++;
          if (z > 0 && !is_done(&cdone[x][y][z - 1])) bad++;
          c[x][y][z] = 1 + (x > 0 ? c[x - 1][y][z] : 0) + (y > 0 ? c[x][y - 1][z] : 0)
                       + (z > 0 ? c[x][y][z - 1] : 0);
          mark_done(&cdone[x][y][z]);
          #pragma omp ordered depend(source)
        }
    CHECK_EQ(bad, 0);
    /* Sequential reference. */
    static int r[X][Y][Z];
    for (int x = 0; x < X; x++)
      for (int y = 0; y < Y; y++)
        for (int z = 0; z < Z; z++)
          r[x][y][z] = 1 + (x > 0 ? r[x - 1][y][z] : 0) + (y > 0 ? r[x][y - 1][z] : 0)
                       + (z > 0 ? r[x][y][z - 1] : 0);
    CHECK_EQ(memcmp(c, r, sizeof c), 0);
  }

  /* ordered(8): sinks with eight arguments (two beyond the registers). */
  {
    static int d[3][3][3][3][3][3][3][2], ddone[3][3][3][3][3][3][3][2];
    int bad = 0;
    #pragma omp parallel num_threads(4) reduction(+: bad)
    #pragma omp for ordered(8) schedule(dynamic)
    for (int i0 = 0; i0 < 3; i0++)
    for (int i1 = 0; i1 < 3; i1++)
    for (int i2 = 0; i2 < 3; i2++)
    for (int i3 = 0; i3 < 3; i3++)
    for (int i4 = 0; i4 < 3; i4++)
    for (int i5 = 0; i5 < 3; i5++)
    for (int i6 = 0; i6 < 3; i6++)
    for (int i7 = 0; i7 < 2; i7++) {
      #pragma omp ordered depend(sink: i0 - 1, i1, i2, i3, i4, i5, i6, i7) depend(sink: i0, i1, i2, i3, i4, i5, i6 - 1, i7) depend(sink: i0, i1, i2, i3, i4, i5, i6, i7 - 1)
      if (i0 > 0 && !is_done(&ddone[i0 - 1][i1][i2][i3][i4][i5][i6][i7])) bad++;
      if (i6 > 0 && !is_done(&ddone[i0][i1][i2][i3][i4][i5][i6 - 1][i7])) bad++;
      if (i7 > 0 && !is_done(&ddone[i0][i1][i2][i3][i4][i5][i6][i7 - 1])) bad++;
      if (i1 == 2 && i7 == 0 && i6 == 0) usleep(500);
      d[i0][i1][i2][i3][i4][i5][i6][i7] =
          1 + (i0 > 0 ? d[i0 - 1][i1][i2][i3][i4][i5][i6][i7] : 0)
            + (i6 > 0 ? d[i0][i1][i2][i3][i4][i5][i6 - 1][i7] : 0)
            + (i7 > 0 ? d[i0][i1][i2][i3][i4][i5][i6][i7 - 1] : 0);
      mark_done(&ddone[i0][i1][i2][i3][i4][i5][i6][i7]);
      #pragma omp ordered depend(source)
    }
    CHECK_EQ(bad, 0);
    /* d depends only on (i0, i6, i7): 1 + d(i0-1) + d(i6-1) + d(i7-1). */
    int e[3][3][2];
    for (int i0 = 0; i0 < 3; i0++)
      for (int i6 = 0; i6 < 3; i6++)
        for (int i7 = 0; i7 < 2; i7++)
          e[i0][i6][i7] = 1 + (i0 > 0 ? e[i0 - 1][i6][i7] : 0) + (i6 > 0 ? e[i0][i6 - 1][i7] : 0)
                          + (i7 > 0 ? e[i0][i6][i7 - 1] : 0);
    for (int i0 = 0; i0 < 3; i0++)
    for (int i1 = 0; i1 < 3; i1++)
    for (int i2 = 0; i2 < 3; i2++)
    for (int i3 = 0; i3 < 3; i3++)
    for (int i4 = 0; i4 < 3; i4++)
    for (int i5 = 0; i5 < 3; i5++)
    for (int i6 = 0; i6 < 3; i6++)
    for (int i7 = 0; i7 < 2; i7++)
      CHECK_EQ(d[i0][i1][i2][i3][i4][i5][i6][i7], e[i0][i6][i7]);
  }
  /* With task reductions GCC calls the generic GOMP_loop_doacross_start. */
  {
    int sum = 0, b[100] = {0};
    #pragma omp parallel num_threads(3)
    #pragma omp for ordered(1) reduction(task, +: sum) schedule(dynamic)
    for (int i = 1; i < 100; i++) {
      #pragma omp ordered depend(sink: i - 1)
      b[i] = b[i - 1] + 1;
      #pragma omp task in_reduction(+: sum)
      sum += i;
      #pragma omp ordered depend(source)
    }
    CHECK_EQ(sum, 4950);
    CHECK_EQ(b[99], 99);
  }
  puts("doacross: ok");
  return 0;
}
