/* Memory allocators: predefined allocators, omp_init_allocator with traits
 * (alignment, pool_size with each fallback), calloc zeroing, realloc keeping
 * contents and allocator (within a pool, needing room for the difference
 * only), the default allocator, and the allocate clause
 * (GOMP_alloc / GOMP_free).
 * maestro-test: also-stock
 * maestro-test: also-dedicated
 */
#include <omp.h>
#include <stdint.h>
#include <string.h>
#include "check.h"

int main(void) {
  /* Predefined allocators and the default one. */
  CHECK(omp_get_default_allocator() == omp_default_mem_alloc);
  char *p = omp_alloc(100, omp_default_mem_alloc);
  CHECK(p != NULL);
  memset(p, 7, 100);
  omp_free(p, omp_default_mem_alloc);
  p = omp_alloc(100, omp_null_allocator); /* null: the default allocator */
  CHECK(p != NULL);
  omp_free(p, omp_null_allocator);
  CHECK(omp_alloc(0, omp_default_mem_alloc) == NULL);

  /* Aligned allocations and calloc. */
  double *d = omp_aligned_alloc(256, 10 * sizeof(double), omp_default_mem_alloc);
  CHECK(d != NULL && (uintptr_t)d % 256 == 0);
  omp_free(d, omp_default_mem_alloc);
  int *z = omp_calloc(1000, sizeof(int), omp_default_mem_alloc);
  CHECK(z != NULL);
  for (int i = 0; i < 1000; i++) CHECK_EQ(z[i], 0);
  z = omp_realloc(z, 2000 * sizeof(int), omp_null_allocator, omp_null_allocator);
  CHECK(z != NULL);
  for (int i = 0; i < 1000; i++) CHECK_EQ(z[i], 0);
  omp_free(z, omp_null_allocator);
  int *za = omp_aligned_calloc(64, 16, sizeof(int), omp_default_mem_alloc);
  CHECK(za != NULL && (uintptr_t)za % 64 == 0 && za[15] == 0);
  omp_free(za, omp_default_mem_alloc);

  /* An allocator with an alignment trait. */
  omp_alloctrait_t aligned[] = {{omp_atk_alignment, 128}};
  omp_allocator_handle_t a128 = omp_init_allocator(omp_default_mem_space, 1, aligned);
  CHECK(a128 != omp_null_allocator);
  for (int i = 1; i < 50; i++) {
    char *q = omp_alloc(i * 3, a128);
    CHECK(q != NULL && (uintptr_t)q % 128 == 0);
    omp_free(q, a128);
  }

  /* A pool: the second allocation does not fit; null_fb returns NULL. */
  omp_alloctrait_t pool_null[] = {{omp_atk_pool_size, 4096}, {omp_atk_fallback, omp_atv_null_fb}};
  omp_allocator_handle_t pn = omp_init_allocator(omp_default_mem_space, 2, pool_null);
  CHECK(pn != omp_null_allocator);
  char *x = omp_alloc(3000, pn);
  CHECK(x != NULL);
  CHECK(omp_alloc(3000, pn) == NULL);
  omp_free(x, pn);
  x = omp_alloc(3000, pn); /* the pool was given back */
  CHECK(x != NULL);
  /* realloc within the pool needs room only for the difference. */
  memset(x, 5, 3000);
  x = omp_realloc(x, 3500, pn, pn);
  CHECK(x != NULL && x[2999] == 5);
  x = omp_realloc(x, 3600, omp_null_allocator, pn);
  CHECK(x != NULL && x[0] == 5);
  CHECK(omp_alloc(600, pn) == NULL); /* 3600 + 600 > 4096 */

  /* default_mem_fb: served by the default allocator instead. */
  omp_alloctrait_t pool_dflt[] = {{omp_atk_pool_size, 4096}, {omp_atk_fallback, omp_atv_default_mem_fb}};
  omp_allocator_handle_t pd = omp_init_allocator(omp_default_mem_space, 2, pool_dflt);
  char *y1 = omp_alloc(3000, pd), *y2 = omp_alloc(3000, pd);
  CHECK(y1 != NULL && y2 != NULL);
  omp_free(y2, pd);
  omp_free(y1, pd);

  /* allocator_fb: served by the fb_data allocator. */
  omp_alloctrait_t pool_fb[] = {{omp_atk_pool_size, 1024},
                                {omp_atk_fallback, omp_atv_allocator_fb},
                                {omp_atk_fb_data, (omp_uintptr_t)a128}};
  omp_allocator_handle_t pf = omp_init_allocator(omp_default_mem_space, 3, pool_fb);
  CHECK(pf != omp_null_allocator);
  char *big = omp_alloc(2000, pf);
  CHECK(big != NULL && (uintptr_t)big % 128 == 0);
  omp_free(big, omp_null_allocator);

  /* realloc keeps the contents. */
  char *r = omp_alloc(16, pd);
  strcpy(r, "maestro");
  r = omp_realloc(r, 4000, pd, pd);
  CHECK(r != NULL && strcmp(r, "maestro") == 0);
  omp_free(r, pd);

  /* The default allocator (def-allocator-var, an ICV of the task). */
  omp_set_default_allocator(a128);
  CHECK(omp_get_default_allocator() == a128);
  char *dq = omp_alloc(10, omp_null_allocator);
  CHECK(dq != NULL && (uintptr_t)dq % 128 == 0);
  omp_free(dq, omp_null_allocator);
  /* Members and tasks inherit it; a member's setting ends with its region
   * (rounds, so that workers that ran members which set it run members
   * again). */
  for (int round = 0; round < 20; round++) {
    int inherited = 0, aligned = 0, tasks = 0;
    #pragma omp parallel num_threads(4) reduction(+:inherited, aligned)
    {
      inherited += omp_get_default_allocator() == a128;
      char *m = omp_alloc(24, omp_null_allocator);
      aligned += m != NULL && (uintptr_t)m % 128 == 0;
      omp_free(m, omp_null_allocator);
      #pragma omp barrier
      #pragma omp single
      for (int k = 0; k < 8; k++) {
        #pragma omp task
        {
          if (omp_get_default_allocator() == a128) {
            #pragma omp atomic
            tasks++;
          }
        }
      }
      omp_set_default_allocator(omp_large_cap_mem_alloc);
      if (omp_get_default_allocator() != omp_large_cap_mem_alloc) inherited -= 100;
    }
    CHECK_EQ(inherited, 4);
    CHECK_EQ(aligned, 4);
    CHECK_EQ(tasks, 8);
    CHECK(omp_get_default_allocator() == a128);
  }
  omp_set_default_allocator(omp_default_mem_alloc);

  /* The allocate clause on private variables (GCC 12 lowers it to
   * GOMP_alloc / GOMP_free; the `allocate` directive it does not support). */
  int priv = 5;
  int sum = 0;
  #pragma omp parallel num_threads(3) private(priv) allocate(a128: priv) reduction(+:sum)
  {
    priv = omp_get_thread_num() + 1;
    CHECK((uintptr_t)&priv % 128 == 0);
    sum += priv;
  }
  CHECK_EQ(sum, 6);

  omp_free(x, pn);
  omp_destroy_allocator(pf);
  omp_destroy_allocator(pn);
  omp_destroy_allocator(pd);
  omp_destroy_allocator(a128);
  omp_destroy_allocator(omp_null_allocator); /* no effect */
  puts("allocators: ok");
  return 0;
}
