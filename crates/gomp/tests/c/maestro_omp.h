/* Maestro's own controls exported by libmaestro_gomp.so (src/abi/control.rs). */
#ifndef MAESTRO_OMP_H
#define MAESTRO_OMP_H
void maestro_omp_set_priority(int priority);
int maestro_omp_get_priority(void);
void maestro_omp_set_hint_teams(int on);
int maestro_omp_get_hint_teams(void);
int maestro_omp_contexts(void);
int maestro_omp_concurrency_hint(void);
void maestro_omp_set_master_on_scheduler(int on);
int maestro_omp_get_master_on_scheduler(void);
#endif
