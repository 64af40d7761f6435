/* Team members are scheduler tasks: every thread of the process other than the
 * main thread is a Maestro scheduler thread ("maestro-..."), the runtime starts
 * none of its own, and members other than the master run on those workers.
 * Also run preloaded into a binary linked against stock libgomp.
 * maestro-test: also-preload
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <omp.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>
#include "check.h"

static int foreign_threads(void) {
  int foreign = 0;
  DIR *d = opendir("/proc/self/task");
  CHECK(d != NULL);
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    if (atoi(e->d_name) == getpid()) continue;
    char path[300], name[32] = {0};
    snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
    FILE *f = fopen(path, "r");
    if (!f) continue; /* exited meanwhile */
    if (fgets(name, sizeof name, f) && strncmp(name, "maestro-", 8) != 0) {
      fprintf(stderr, "foreign thread %s: %s", e->d_name, name);
      foreign++;
    }
    fclose(f);
  }
  closedir(d);
  return foreign;
}

int main(void) {
  int off_scheduler = 0;
  for (int r = 0; r < 20; r++) {
    #pragma omp parallel num_threads(4) reduction(+:off_scheduler)
    {
      /* After a barrier every member has started, so none ran on the master. */
      #pragma omp barrier
      char name[32];
      pthread_getname_np(pthread_self(), name, sizeof name);
      if (omp_get_thread_num() != 0 && strncmp(name, "maestro-", 8) != 0) off_scheduler++;
      #pragma omp task
      {
        volatile int x = 0;
        x++;
      }
    }
  }
  CHECK_EQ(off_scheduler, 0);
  /* A thread the scheduler has just started (the watchdog may add a worker at
   * any time) carries its creator's name until its first instruction renames it
   * "maestro-...": look again for up to a second before calling it foreign. */
  int foreign = foreign_threads();
  for (int tries = 0; foreign != 0 && tries < 100; tries++) {
    usleep(10000);
    foreign = foreign_threads();
  }
  CHECK_EQ(foreign, 0);
  puts("on_scheduler: ok");
  return 0;
}
