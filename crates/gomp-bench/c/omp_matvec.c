/* The application side of `maestro bench omp` (SSDBM 2015 §6.3): a
 * matrix-vector product parallelized with one `#pragma omp parallel for
 * schedule(static)` (the schedule the paper found best), each matrix element put
 * through a chain of square roots first so the work is CPU-bound, not
 * memory-bound, as in the paper. Built as a shared object twice — against stock
 * libgomp, and with its GOMP_* references left to the `maestro` binary, which
 * exports its own runtime — and loaded into the benchmark's process, whose
 * threads call matvec_run in a loop.
 *
 * No team size is requested: regions get the runtime's default (the machine's
 * contexts for libgomp, the scheduler's contexts for ours). */
#define _GNU_SOURCE
#include <math.h>
#include <omp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  int rows, cols, sqrts;
  int *m, *v;
  double *out;
} matvec_t;

/* One result element; the same code serves the parallel run and the reference,
 * so both produce bit-identical sums (each row is summed in one order by one
 * member). */
static double row(const matvec_t *h, int i) {
  double acc = 0.0;
  const int *mi = h->m + (size_t)i * h->cols;
  for (int j = 0; j < h->cols; j++) {
    double x = (double)mi[j];
    for (int k = 0; k < h->sqrts; k++) x = sqrt(x + 1.0);
    acc += x * (double)h->v[j];
  }
  return acc;
}

static double total(const matvec_t *h) {
  double s = 0.0;
  for (int i = 0; i < h->rows; i++) s += h->out[i];
  return s;
}

/* A matrix and vector of pseudo-random integers in [0, 999] (xorshift from
 * seed); NULL when out of memory or a size is not positive. */
void *matvec_new(int rows, int cols, int sqrts, unsigned seed) {
  if (rows <= 0 || cols <= 0 || sqrts < 0) return NULL;
  matvec_t *h = calloc(1, sizeof *h);
  if (!h) return NULL;
  h->rows = rows;
  h->cols = cols;
  h->sqrts = sqrts;
  h->m = malloc(sizeof(int) * (size_t)rows * (size_t)cols);
  h->v = malloc(sizeof(int) * (size_t)cols);
  h->out = malloc(sizeof(double) * (size_t)rows);
  if (!h->m || !h->v || !h->out) {
    free(h->m);
    free(h->v);
    free(h->out);
    free(h);
    return NULL;
  }
  unsigned x = seed ? seed : 2463534242u;
  for (size_t k = 0; k < (size_t)rows * (size_t)cols; k++) {
    x ^= x << 13; x ^= x >> 17; x ^= x << 5;
    h->m[k] = (int)(x % 1000);
  }
  for (int j = 0; j < cols; j++) {
    x ^= x << 13; x ^= x >> 17; x ^= x << 5;
    h->v[j] = (int)(x % 1000);
  }
  return h;
}

void matvec_free(void *p) {
  matvec_t *h = p;
  if (!h) return;
  free(h->m);
  free(h->v);
  free(h->out);
  free(h);
}

/* One product with OpenMP; returns the sum of the result vector. */
double matvec_run(void *p) {
  matvec_t *h = p;
  #pragma omp parallel for schedule(static)
  for (int i = 0; i < h->rows; i++) h->out[i] = row(h, i);
  return total(h);
}

/* The same product on the calling thread only. */
double matvec_reference(void *p) {
  matvec_t *h = p;
  for (int i = 0; i < h->rows; i++) h->out[i] = row(h, i);
  return total(h);
}

/* The default team size, and how many of its members ran on a thread named
 * "maestro-*" (a Maestro scheduler worker): 0 under stock libgomp, all members
 * but the master under ours, all of them when masters run on the scheduler. */
void matvec_probe(int *team_size, int *on_maestro) {
  int n = 0, on = 0;
  #pragma omp parallel reduction(+:on)
  {
    #pragma omp barrier
    char name[32] = {0};
    pthread_getname_np(pthread_self(), name, sizeof name);
    on += strncmp(name, "maestro-", 8) == 0;
    #pragma omp single
    n = omp_get_num_threads();
  }
  *team_size = n;
  *on_maestro = on;
}
