/* threadprivate and copyin. GCC compiles threadprivate variables to __thread
 * (thread-local storage), so each OpenMP thread number must run on an OS
 * thread of its own, thread 0 on the initial thread, and — OpenMP 5.1
 * §2.21.2's persistence rule — thread k of consecutive non-nested regions
 * with the same team size (dyn-var false) on the same OS thread. Checked:
 * the master's copy is the initial thread's; members' copies are private
 * (distinct addresses, no member sees another's writes); values persist over
 * 200 regions, also through combined parallel for / parallel sections;
 * copyin of a scalar, an array and a struct (later regions keep the copied
 * values); threadprivate in nested teams; explicit tasks use the copy of the
 * member that runs them. The runtime sees the program's thread-local
 * storage and runs its teams on dedicated threads (PROTOCOL.md,
 * "threadprivate").
 * maestro-test: also-stock
 * maestro-test: also-dedicated
 */
#include <omp.h>
#include <pthread.h>
#include <string.h>
#include "check.h"

#define T 4
#define ROUNDS 200

static int tp;
static long arr[16];
static struct { int a; double b; char name[24]; } rec;
#pragma omp threadprivate(tp, arr, rec)

static int *addr[T];
static pthread_t os[T];

int main(void) {
  omp_set_dynamic(0);
  tp = 42;
  pthread_t initial = pthread_self();

  /* The master's copy is the initial thread's; the others start from the
   * static initializer. Members run at once (a barrier), each on its own
   * OS thread. */
  #pragma omp parallel num_threads(T)
  {
    int k = omp_get_thread_num();
    CHECK_EQ(omp_get_num_threads(), T);
    CHECK_EQ(tp, k == 0 ? 42 : 0);
    if (k == 0) CHECK(pthread_equal(pthread_self(), initial));
    addr[k] = &tp;
    os[k] = pthread_self();
    tp = 100 + k;
    #pragma omp barrier
    for (int j = 0; j < T; j++)
      if (j != k) {
        CHECK(addr[j] != addr[k]);
        CHECK(!pthread_equal(os[j], os[k]));
      }
    CHECK_EQ(tp, 100 + k);
  }
  CHECK_EQ(tp, 100); /* thread 0's writes are the initial thread's */

  /* Persistence: thread k finds what thread k wrote in the region before,
   * on the same OS thread. */
  for (int r = 0; r < ROUNDS; r++) {
    #pragma omp parallel num_threads(T)
    {
      int k = omp_get_thread_num();
      int want = r == 0 ? 100 + k : 1000 * r + k;
      if (tp != want) {
        fprintf(stderr, "round %d thread %d: tp %d, want %d\n", r, k, tp, want);
        exit(1);
      }
      CHECK(pthread_equal(pthread_self(), os[k]));
      CHECK(&tp == addr[k]);
      tp = 1000 * (r + 1) + k;
    }
    CHECK_EQ(tp, 1000 * (r + 1));
  }

  /* Combined constructs are regions too. */
  int last = 1000 * ROUNDS;
  #pragma omp parallel for num_threads(T) schedule(static, 1)
  for (int i = 0; i < T; i++) {
    int k = omp_get_thread_num();
    CHECK_EQ(tp, last + k);
    tp = 7000 + k;
  }
  #pragma omp parallel sections num_threads(T)
  {
    #pragma omp section
    CHECK_EQ(tp, 7000 + omp_get_thread_num());
    #pragma omp section
    CHECK_EQ(tp, 7000 + omp_get_thread_num());
    #pragma omp section
    CHECK_EQ(tp, 7000 + omp_get_thread_num());
  }

  /* copyin: every member starts from the master's values, of a scalar, an
   * array and a struct; a later region keeps them. */
  tp = -5;
  for (int i = 0; i < 16; i++) arr[i] = i * i;
  rec.a = 9;
  rec.b = 2.5;
  strcpy(rec.name, "copied in");
  #pragma omp parallel num_threads(T) copyin(tp, arr, rec)
  {
    int k = omp_get_thread_num();
    CHECK_EQ(tp, -5);
    for (int i = 0; i < 16; i++) CHECK_EQ(arr[i], i * i);
    CHECK_EQ(rec.a, 9);
    CHECK(rec.b == 2.5);
    CHECK(strcmp(rec.name, "copied in") == 0);
    #pragma omp barrier
    tp = -5 - k;
    arr[3] = k;
  }
  #pragma omp parallel num_threads(T)
  {
    int k = omp_get_thread_num();
    CHECK_EQ(tp, -5 - k);
    CHECK_EQ(arr[3], k);
    CHECK_EQ(arr[4], 16);
    CHECK_EQ(rec.a, 9);
  }
  /* copyin again after the values diverged. */
  tp = 77;
  #pragma omp parallel num_threads(T) copyin(tp)
  CHECK_EQ(tp, 77);

  /* Explicit tasks use the copy of the member that runs them. */
  #pragma omp parallel num_threads(T)
  {
    addr[omp_get_thread_num()] = &tp;
    #pragma omp barrier
    #pragma omp single
    for (int i = 0; i < 200; i++) {
      #pragma omp task
      {
        int k = omp_get_thread_num();
        CHECK(&tp == addr[k]);
        CHECK(pthread_equal(pthread_self(), os[k]));
      }
    }
  }

  /* Nested teams: every member of every inner team has a private copy. */
  omp_set_max_active_levels(2);
  static int *inner[2][2];
  #pragma omp parallel num_threads(2)
  {
    int o = omp_get_thread_num();
    #pragma omp parallel num_threads(2)
    {
      int i = omp_get_thread_num();
      tp = 10 * o + i;
      inner[o][i] = &tp;
      #pragma omp barrier
      CHECK_EQ(tp, 10 * o + i);
      CHECK(inner[o][0] != inner[o][1]);
    }
  }
  CHECK_EQ(tp, 0); /* the master of both levels is the initial thread */

  puts("threadprivate: ok");
  return 0;
}
