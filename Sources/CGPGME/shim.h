#ifndef COFFER_CGPGME_SHIM_H
#define COFFER_CGPGME_SHIM_H

#include <gpgme.h>

/* gpg-error's error-code helpers are inline functions; these wrappers give Swift a stable name. */
static inline unsigned int coffer_gpgme_err_code(gpgme_error_t err) { return gpgme_err_code(err); }
static inline unsigned int coffer_gpgme_err_source(gpgme_error_t err) { return gpgme_err_source(err); }

/* prctl(2) is variadic, which Swift cannot call: this wrapper makes the process undumpable. */
#ifdef __linux__
#include <sys/prctl.h>
static inline int coffer_set_undumpable(void) { return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); }
#else
static inline int coffer_set_undumpable(void) { return 0; }
#endif

#endif
