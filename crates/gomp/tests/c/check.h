/* Shared by the C suite: a check that reports and exits non-zero. */
#ifndef MAESTRO_CHECK_H
#define MAESTRO_CHECK_H
#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)                                                          \
  do {                                                                       \
    if (!(cond)) {                                                           \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__,      \
              #cond);                                                        \
      exit(1);                                                               \
    }                                                                        \
  } while (0)

#define CHECK_EQ(a, b)                                                       \
  do {                                                                       \
    long long va_ = (long long)(a), vb_ = (long long)(b);                    \
    if (va_ != vb_) {                                                        \
      fprintf(stderr, "%s:%d: check failed: %s == %s (%lld != %lld)\n",     \
              __FILE__, __LINE__, #a, #b, va_, vb_);                         \
      exit(1);                                                               \
    }                                                                        \
  } while (0)

#endif
