/* Task reductions (OpenMP 5.1 as GCC 12 lowers them): taskgroup
 * task_reduction with task in_reduction, nested taskgroups, tasks nested in
 * in_reduction tasks, parallel reduction(task, ...), for / sections
 * reduction(task, ...) (static, dynamic, runtime, ordered, unsigned long long),
 * scope reduction(...), taskloop reduction / in_reduction, orphaned taskgroups,
 * array sections; +, *, max, & on several types. Every result is checked
 * against the sequential one computed here. Also passes on stock libgomp.
 * maestro-test: also-stock
 * maestro-test: also-dedicated */
#include <omp.h>
#include <stdint.h>
#include "check.h"

#define N 1000

static long seq_sum(long n) { return n * (n - 1) / 2; }

/* taskgroup task_reduction from a single producer, with the team's other
 * members running the tasks; several operators at once. */
static void taskgroup_from_single(int threads) {
  long sum = 0;
  double prod = 1.0;
  int mx = -1000;
  unsigned bits = ~0u;
#pragma omp parallel num_threads(threads)
#pragma omp single
  {
#pragma omp taskgroup task_reduction(+: sum) task_reduction(*: prod) \
    task_reduction(max: mx) task_reduction(&: bits)
    {
      for (int i = 0; i < N; i++) {
#pragma omp task in_reduction(+: sum) in_reduction(*: prod) \
    in_reduction(max: mx) in_reduction(&: bits) firstprivate(i)
        {
          sum += i;
          if (i % 100 == 0)
            prod *= 2.0;
          if ((i * 37) % 1001 > mx)
            mx = (i * 37) % 1001;
          bits &= ~(1u << (i % 20));
        }
      }
    }
  }
  int want_mx = -1000;
  for (int i = 0; i < N; i++)
    if ((i * 37) % 1001 > want_mx)
      want_mx = (i * 37) % 1001;
  CHECK_EQ(sum, seq_sum(N));
  CHECK(prod == 1024.0);
  CHECK_EQ(mx, want_mx);
  CHECK_EQ(bits, ~0u & ~((1u << 20) - 1));
}

/* Every member opens its own taskgroup and creates tasks. */
static void taskgroup_per_member(int threads) {
  long total = 0;
#pragma omp parallel num_threads(threads) reduction(+: total)
  {
    long mine = 0;
#pragma omp taskgroup task_reduction(+: mine)
    {
      for (int i = 0; i < 200; i++) {
#pragma omp task in_reduction(+: mine) firstprivate(i)
        mine += i;
      }
    }
    CHECK_EQ(mine, seq_sum(200));
    total += mine;
  }
  CHECK_EQ(total, seq_sum(200) * threads);
}

/* Nested taskgroups: the inner one registers another variable; tasks reduce
 * into both; a task in_reduction creates child tasks in_reduction. */
static void nested(int threads) {
  long outer = 0, inner = 0;
#pragma omp parallel num_threads(threads)
#pragma omp single
  {
#pragma omp taskgroup task_reduction(+: outer)
    {
      for (int i = 0; i < 50; i++) {
#pragma omp task in_reduction(+: outer) firstprivate(i)
        {
          outer += i;
          for (int j = 0; j < 4; j++) {
#pragma omp task in_reduction(+: outer) firstprivate(j)
            outer += j;
          }
        }
      }
#pragma omp taskgroup task_reduction(+: inner)
      {
        for (int i = 0; i < 50; i++) {
#pragma omp task in_reduction(+: outer, inner) firstprivate(i)
          {
            outer += 1;
            inner += i;
          }
        }
      }
      CHECK_EQ(inner, seq_sum(50));
    }
  }
  CHECK_EQ(outer, seq_sum(50) + 50 * seq_sum(4) + 50);
}

/* parallel reduction(task, ...): the implicit tasks and explicit tasks. */
static void parallel_task_modifier(int threads) {
  long sum = 5;
  double prod = 1.0;
  int team = 0;
#pragma omp parallel num_threads(threads) reduction(task, +: sum) \
    reduction(task, *: prod)
  {
#pragma omp single
    team = omp_get_num_threads();
    sum += omp_get_thread_num();
    prod *= 2.0;
    for (int i = 0; i < 30; i++) {
#pragma omp task in_reduction(+: sum) in_reduction(*: prod) firstprivate(i)
      {
        sum += i;
        if (i == 0)
          prod *= 3.0;
      }
    }
  }
  CHECK_EQ(sum, 5 + seq_sum(team) + team * seq_sum(30));
  double want = 1.0;
  for (int t = 0; t < team; t++)
    want *= 6.0;
  CHECK(prod == want);
}

/* for reduction(task, ...) under several schedules. */
static void loops(int threads) {
  long s_static = 0, s_dyn = 0, s_rt = 0, s_ord = 0;
  unsigned long long s_ull = 0;
  unsigned long long lo = 3, hi = 3 + N;
  long order_next = 0;
  int order_ok = 1;
#pragma omp parallel num_threads(threads)
  {
#pragma omp for reduction(task, +: s_static)
    for (int i = 0; i < N; i++) {
      s_static += 1;
#pragma omp task in_reduction(+: s_static) firstprivate(i)
      s_static += i;
    }
#pragma omp for reduction(task, +: s_dyn) schedule(dynamic, 7)
    for (int i = 0; i < N; i++) {
#pragma omp task in_reduction(+: s_dyn) firstprivate(i)
      s_dyn += i;
    }
#pragma omp for reduction(task, +: s_rt) schedule(runtime)
    for (int i = 0; i < N; i++) {
#pragma omp task in_reduction(+: s_rt) firstprivate(i)
      s_rt += i;
    }
#pragma omp for reduction(task, +: s_ull) schedule(guided)
    for (unsigned long long i = lo; i < hi; i++) {
#pragma omp task in_reduction(+: s_ull) firstprivate(i)
      s_ull += i;
    }
#pragma omp for ordered reduction(task, +: s_ord) schedule(dynamic, 3)
    for (int i = 0; i < 200; i++) {
#pragma omp task in_reduction(+: s_ord) firstprivate(i)
      s_ord += i;
#pragma omp ordered
      {
        if (order_next != i)
          order_ok = 0;
        order_next++;
      }
    }
  }
  CHECK_EQ(s_static, N + seq_sum(N));
  CHECK_EQ(s_dyn, seq_sum(N));
  CHECK_EQ(s_rt, seq_sum(N));
  CHECK_EQ(s_ull, seq_sum(N) + 3ULL * N);
  CHECK_EQ(s_ord, seq_sum(200));
  CHECK(order_ok);
}

/* sections reduction(task, ...) and scope reduction(...). */
static void sections_and_scope(int threads) {
  long sec = 0, sc = 0, plain = 0;
  double scp = 1.0;
  int team = 0;
#pragma omp parallel num_threads(threads)
  {
#pragma omp single
    team = omp_get_num_threads();
#pragma omp sections reduction(task, +: sec)
    {
#pragma omp section
      {
        for (int i = 0; i < 100; i++) {
#pragma omp task in_reduction(+: sec) firstprivate(i)
          sec += i;
        }
      }
#pragma omp section
      sec += 1000;
#pragma omp section
      {
#pragma omp task in_reduction(+: sec)
        sec += 7;
      }
    }
#pragma omp scope reduction(task, +: sc) reduction(task, *: scp)
    {
      sc += 1;
      for (int i = 0; i < 10; i++) {
#pragma omp task in_reduction(+: sc) in_reduction(*: scp) firstprivate(i)
        {
          sc += i;
          if (i == 9)
            scp *= 2.0;
        }
      }
    }
#pragma omp scope reduction(+: plain)
    plain += 2;
  }
  CHECK_EQ(sec, seq_sum(100) + 1007);
  CHECK_EQ(sc, team * (1 + seq_sum(10)));
  double want = 1.0;
  for (int t = 0; t < team; t++)
    want *= 2.0;
  CHECK(scp == want);
  CHECK_EQ(plain, 2 * team);
}

/* taskloop reduction, taskloop in_reduction, and an empty taskloop. */
static void taskloops(int threads) {
  long tl = 0, tin = 0, empty = 0;
  int n0 = 0;
#pragma omp parallel num_threads(threads)
#pragma omp single
  {
#pragma omp taskloop reduction(+: tl) grainsize(16)
    for (int i = 0; i < N; i++)
      tl += i;
#pragma omp taskloop reduction(+: empty)
    for (int i = 0; i < n0; i++)
      empty += 1;
#pragma omp taskgroup task_reduction(+: tin)
    {
#pragma omp taskloop in_reduction(+: tin) num_tasks(13)
      for (int i = 0; i < N; i++)
        tin += 2 * i;
#pragma omp task in_reduction(+: tin)
      tin += 1;
    }
  }
  CHECK_EQ(tl, seq_sum(N));
  CHECK_EQ(empty, 0);
  CHECK_EQ(tin, 2 * seq_sum(N) + 1);
}

/* A user-defined reduction whose initializer takes omp_orig (GCC then asks
 * GOMP_task_reduction_remap for the original list item too), also from a
 * task nested in an in_reduction task (remapping another member's copy). */
struct pair {
  long v, n;
};
static void pair_comb(struct pair *o, const struct pair *i) {
  o->v += i->v;
  o->n += i->n;
}
static void pair_init(struct pair *p, const struct pair *orig) {
  CHECK(orig != 0 && orig->v >= 5);
  p->v = 0;
  p->n = 0;
}
#pragma omp declare reduction(pplus: struct pair: pair_comb(&omp_out, &omp_in)) \
    initializer(pair_init(&omp_priv, &omp_orig))

static void user_defined(int threads) {
  struct pair p = {5, 0};
#pragma omp parallel num_threads(threads)
#pragma omp single
  {
#pragma omp taskgroup task_reduction(pplus: p)
    {
      for (int i = 0; i < 100; i++) {
#pragma omp task in_reduction(pplus: p) firstprivate(i)
        {
          p.v += i;
          p.n++;
          if (i % 10 == 0) {
#pragma omp task in_reduction(pplus: p)
            p.n += 1000;
          }
        }
      }
    }
  }
  CHECK_EQ(p.v, 5 + seq_sum(100));
  CHECK_EQ(p.n, 100 + 10 * 1000);
}

/* The combined parallel for with reduction(task, ...). */
static void parallel_for(int threads) {
  long s = 0;
#pragma omp parallel for num_threads(threads) reduction(task, +: s) schedule(dynamic, 5)
  for (int i = 0; i < N; i++) {
#pragma omp task in_reduction(+: s) firstprivate(i)
    s += i;
  }
  CHECK_EQ(s, seq_sum(N));
}

/* Orphaned for / scope with reduction(task, ...) (outside any region: a team
 * of one), and parallel reduction(task, ...) nested in a member and in the
 * iterations of a for reduction(task, ...), whose inner team's copies are
 * combined into the outer member's copy. */
static long orphan_for_sum, orphan_scope_sum, nested_sum;

static void orphaned_and_nested(void) {
#pragma omp for reduction(task, +: orphan_for_sum)
  for (int i = 0; i < 100; i++) {
#pragma omp task in_reduction(+: orphan_for_sum) firstprivate(i)
    orphan_for_sum += i;
  }
  CHECK_EQ(orphan_for_sum, seq_sum(100));
#pragma omp scope reduction(task, +: orphan_scope_sum)
  {
#pragma omp task in_reduction(+: orphan_scope_sum)
    orphan_scope_sum += 3;
  }
  CHECK_EQ(orphan_scope_sum, 3);

  int levels = omp_get_max_active_levels();
  omp_set_max_active_levels(2);
  long total = 0;
#pragma omp parallel num_threads(2) reduction(+: total)
  {
    long s = 0;
#pragma omp parallel num_threads(3) reduction(task, +: s)
    {
      s += 1;
#pragma omp task in_reduction(+: s)
      s += 10;
    }
    CHECK_EQ(s, 33);
    total += s;
#pragma omp for reduction(task, +: nested_sum) schedule(static, 1)
    for (int i = 0; i < 10; i++) {
#pragma omp parallel num_threads(2) reduction(task, +: nested_sum)
      {
#pragma omp task in_reduction(+: nested_sum)
        nested_sum += 1;
      }
    }
  }
  CHECK_EQ(total, 66);
  CHECK_EQ(nested_sum, 20);
  omp_set_max_active_levels(levels);
}

/* Combined parallel sections reduction(task, ...); reductions on taskloops
 * whose tasks run at once (if(0), inside a final task) and on taskloop simd;
 * in_reduction tasks that are undeferred (if(0)) or final with a child. */
static void undeferred_and_combined(int threads) {
  long a = 0, b = 0, c = 0, d = 0, e = 0;
#pragma omp parallel sections reduction(task, +: a) num_threads(threads)
  {
#pragma omp section
    {
#pragma omp task in_reduction(+: a)
      a += 1;
    }
#pragma omp section
    a += 2;
  }
#pragma omp parallel num_threads(threads)
#pragma omp single
  {
#pragma omp taskloop reduction(+: b) if(0)
    for (int i = 0; i < 100; i++)
      b += i;
#pragma omp taskloop simd reduction(+: c)
    for (int i = 0; i < 100; i++)
      c += i;
#pragma omp task final(1)
    {
#pragma omp taskloop reduction(+: d)
      for (int i = 0; i < 100; i++)
        d += i;
    }
#pragma omp taskgroup task_reduction(+: e)
    {
#pragma omp task in_reduction(+: e) if(0)
      e += 5;
#pragma omp task in_reduction(+: e) final(1)
      {
        e += 1;
#pragma omp task in_reduction(+: e)
        e += 1;
      }
    }
  }
  CHECK_EQ(a, 3);
  CHECK_EQ(b, seq_sum(100));
  CHECK_EQ(c, seq_sum(100));
  CHECK_EQ(d, seq_sum(100));
  CHECK_EQ(e, 7);
}

/* An array section and an orphaned taskgroup (outside any region). */
static void array_and_orphaned(void) {
  long a[4] = {1, 2, 3, 4};
  long want[4] = {1, 2, 3, 4};
  for (int i = 0; i < 64; i++)
    want[i % 4] += i;
#pragma omp parallel num_threads(3)
#pragma omp single
  {
#pragma omp taskgroup task_reduction(+: a[0:4])
    {
      for (int i = 0; i < 64; i++) {
#pragma omp task in_reduction(+: a[0:4]) firstprivate(i)
        a[i % 4] += i;
      }
    }
  }
  for (int k = 0; k < 4; k++)
    CHECK_EQ(a[k], want[k]);

  long o = 0;
#pragma omp taskgroup task_reduction(+: o)
  {
    for (int i = 0; i < 10; i++) {
#pragma omp task in_reduction(+: o) firstprivate(i)
      o += i;
    }
  }
  CHECK_EQ(o, seq_sum(10));
}

int main(void) {
  int sizes[] = {1, 2, 3, 5, 8};
  for (unsigned k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    int t = sizes[k];
    for (int rep = 0; rep < 3; rep++) {
      taskgroup_from_single(t);
      taskgroup_per_member(t);
      nested(t);
      parallel_task_modifier(t);
      loops(t);
      sections_and_scope(t);
      taskloops(t);
      user_defined(t);
      parallel_for(t);
      undeferred_and_combined(t);
    }
  }
  array_and_orphaned();
  orphaned_and_nested();
  return 0;
}
