/* The pre-GCC-4.9 entry points GCC 12 no longer emits but old objects call:
 * GOMP_parallel_start/end, GOMP_parallel_loop_*_start, GOMP_parallel_sections_start,
 * called here by hand the way old GCC generated code did.
 * maestro-test: also-stock
 * maestro-test: also-dedicated
 */
#include <omp.h>
#include <stdbool.h>
#include "check.h"

void GOMP_parallel_start(void (*)(void *), void *, unsigned);
void GOMP_parallel_end(void);
void GOMP_parallel_loop_dynamic_start(void (*)(void *), void *, unsigned, long, long, long, long);
void GOMP_parallel_loop_runtime_start(void (*)(void *), void *, unsigned, long, long, long);
bool GOMP_loop_dynamic_next(long *, long *);
bool GOMP_loop_runtime_next(long *, long *);
void GOMP_loop_end_nowait(void);
void GOMP_parallel_sections_start(void (*)(void *), void *, unsigned, unsigned);
unsigned GOMP_sections_next(void);
void GOMP_sections_end_nowait(void);
bool GOMP_loop_ull_dynamic_start(bool, unsigned long long, unsigned long long,
                                 unsigned long long, unsigned long long,
                                 unsigned long long *, unsigned long long *);
bool GOMP_loop_ull_dynamic_next(unsigned long long *, unsigned long long *);
void GOMP_loop_end(void);

static int seen[8];
static void region(void *data) {
  (void)data;
  #pragma omp atomic
  seen[omp_get_thread_num()]++;
}

static int hits[100];
static void loop_body(void *data) {
  long s, e;
  bool runtime = *(int *)data;
  bool more = runtime ? GOMP_loop_runtime_next(&s, &e) : GOMP_loop_dynamic_next(&s, &e);
  while (more) {
    for (long i = s; i < e; i += 2) {
      #pragma omp atomic
      hits[i]++;
    }
    more = runtime ? GOMP_loop_runtime_next(&s, &e) : GOMP_loop_dynamic_next(&s, &e);
  }
  GOMP_loop_end_nowait();
}

static int sections[4];
static void sections_body(void *data) {
  (void)data;
  for (unsigned s = GOMP_sections_next(); s != 0; s = GOMP_sections_next()) {
    #pragma omp atomic
    sections[s - 1]++;
  }
  GOMP_sections_end_nowait();
}

static int ull_hits[50];
static void ull_body(void *data) {
  (void)data;
  unsigned long long s, e;
  bool more = GOMP_loop_ull_dynamic_start(false, 49, 0, (unsigned long long)-1, 3, &s, &e);
  while (more) {
    for (unsigned long long i = s; i > e; i--) {
      #pragma omp atomic
      ull_hits[i]++;
    }
    more = GOMP_loop_ull_dynamic_next(&s, &e);
  }
  GOMP_loop_end();
}

int main(void) {
  GOMP_parallel_start(region, NULL, 3);
  region(NULL);
  GOMP_parallel_end();
  for (int t = 0; t < 3; t++) CHECK_EQ(seen[t], 1);

  int runtime = 0;
  GOMP_parallel_loop_dynamic_start(loop_body, &runtime, 4, 0, 100, 2, 3);
  loop_body(&runtime);
  GOMP_parallel_end();
  omp_set_schedule(omp_sched_guided, 2);
  runtime = 1;
  GOMP_parallel_loop_runtime_start(loop_body, &runtime, 3, 0, 100, 2);
  loop_body(&runtime);
  GOMP_parallel_end();
  for (int i = 0; i < 100; i++) CHECK_EQ(hits[i], i % 2 == 0 ? 2 : 0);

  GOMP_parallel_sections_start(sections_body, NULL, 2, 4);
  sections_body(NULL);
  GOMP_parallel_end();
  for (int s = 0; s < 4; s++) CHECK_EQ(sections[s], 1);

  GOMP_parallel_start(ull_body, NULL, 3);
  ull_body(NULL);
  GOMP_parallel_end();
  CHECK_EQ(ull_hits[0], 0);
  for (int i = 1; i < 50; i++) CHECK_EQ(ull_hits[i], 1);
  puts("legacy_abi: ok");
  return 0;
}
