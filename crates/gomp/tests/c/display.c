/* What the runtime says about itself: the affinity format (set, get,
 * capture with the field table's widths and long names, %a outside any
 * region and nested, %t/%T, %A), the place queries
 * with no places, omp_display_env's frame (captured from stderr through a
 * pipe), omp_pause_resource.
 * maestro-test: also-stock
 */
#include <omp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "check.h"

int main(void) {
  char buf[256];
  /* The format round-trips; a short buffer is truncated but the full length
   * is returned. */
  omp_set_affinity_format("T%n/%N L%L");
  size_t len = omp_get_affinity_format(buf, sizeof buf);
  CHECK_EQ(len, strlen("T%n/%N L%L"));
  CHECK(strcmp(buf, "T%n/%N L%L") == 0);
  char tiny[4];
  CHECK_EQ(omp_get_affinity_format(tiny, sizeof tiny), len);
  CHECK(strcmp(tiny, "T%n") == 0);

  /* Capture: per member, the fields of its own team. */
  int good = 0;
  #pragma omp parallel num_threads(3) reduction(+:good)
  {
    char line[128], want[128];
    size_t n = omp_capture_affinity(line, sizeof line, NULL);
    snprintf(want, sizeof want, "T%d/3 L1", omp_get_thread_num());
    good += n == strlen(want) && strcmp(line, want) == 0;
    n = omp_capture_affinity(line, sizeof line, "%{thread_num}|%0.3n|%{num_threads}");
    snprintf(want, sizeof want, "%d|%03d|3", omp_get_thread_num(), omp_get_thread_num());
    good += n == strlen(want) && strcmp(line, want) == 0;
  }
  CHECK_EQ(good, 6);
  /* Outside any region: no ancestor (omp_get_ancestor_thread_num(-1)),
   * team 0 of 1; %A lists the processors this thread may run on. */
  omp_capture_affinity(buf, sizeof buf, "%a %{ancestor_tnum} %t/%{num_teams} %.4L|%0.3N");
  CHECK(strcmp(buf, "-1 -1 0/1    0|001") == 0);
  CHECK(omp_capture_affinity(buf, sizeof buf, "%A") > 0);
  CHECK(buf[0] >= '0' && buf[0] <= '9');
  /* Nested: the ancestor is the outer member. */
  omp_set_max_active_levels(2);
  int nested_good = 0;
  #pragma omp parallel num_threads(2) reduction(+:nested_good)
  {
    int outer = omp_get_thread_num();
    #pragma omp parallel num_threads(2) reduction(+:nested_good)
    {
      char line[64], want[64];
      omp_capture_affinity(line, sizeof line, "%a %L");
      snprintf(want, sizeof want, "%d 2", outer);
      nested_good += strcmp(line, want) == 0;
    }
  }
  CHECK_EQ(nested_good, 4);
  omp_set_max_active_levels(1);
  /* The process id field. */
  char pid[32];
  omp_capture_affinity(buf, sizeof buf, "%P");
  snprintf(pid, sizeof pid, "%d", (int)getpid());
  CHECK(strcmp(buf, pid) == 0);

  /* Places: without OMP_PLACES, none. */
  CHECK_EQ(omp_get_num_places(), 0);
  CHECK_EQ(omp_get_place_num_procs(0), 0);
  CHECK_EQ(omp_get_place_num(), -1);
  CHECK_EQ(omp_get_partition_num_places(), 0);
  int ids[4] = {-7, -7, -7, -7};
  omp_get_place_proc_ids(0, ids);
  omp_get_partition_place_nums(ids);
  CHECK_EQ(ids[0], -7);

  /* omp_display_env writes the framed list to stderr. */
  int fds[2];
  CHECK(pipe(fds) == 0);
  fflush(stderr);
  int saved = dup(2);
  dup2(fds[1], 2);
  omp_display_env(0);
  fflush(stderr);
  dup2(saved, 2);
  close(fds[1]);
  char text[8192];
  ssize_t got = read(fds[0], text, sizeof text - 1);
  CHECK(got > 0);
  text[got] = 0;
  CHECK(strstr(text, "OPENMP DISPLAY ENVIRONMENT BEGIN") != NULL);
  CHECK(strstr(text, "_OPENMP = '") != NULL);
  CHECK(strstr(text, "OMP_NUM_THREADS = '") != NULL);
  CHECK(strstr(text, "OMP_NUM_TEAMS = '0'") != NULL);
  CHECK(strstr(text, "OMP_TEAMS_THREAD_LIMIT = '0'") != NULL);
  CHECK(strstr(text, "OMP_DISPLAY_AFFINITY = 'FALSE'") != NULL);
  CHECK(strstr(text, "OPENMP DISPLAY ENVIRONMENT END") != NULL);

  CHECK_EQ(omp_pause_resource_all(omp_pause_soft), 0);
  puts("display: ok");
  return 0;
}
