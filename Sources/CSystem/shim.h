#ifndef COFFER_CSYSTEM_SHIM_H
#define COFFER_CSYSTEM_SHIM_H

/* The few C library calls Swift's Glibc and Darwin modules do not offer; coffer makes every other
   system call through them directly. */

#ifdef __linux__
/* glibc declares these two only under _GNU_SOURCE, which the Glibc module is not built with. */
int pipe2(int pipefd[2], int flags);
int posix_spawn_file_actions_addchdir_np(void *file_actions, const char *path);

/* prctl(2) is variadic, which Swift cannot call: this makes the process undumpable. */
int prctl(int option, ...);
static inline int coffer_set_undumpable(void) { return prctl(4 /* PR_SET_DUMPABLE */, 0, 0, 0, 0); }
#else
static inline int coffer_set_undumpable(void) { return 0; }
#endif

#endif
