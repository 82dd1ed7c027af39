#ifndef COFFER_CGPGME_SHIM_H
#define COFFER_CGPGME_SHIM_H

#include <gpgme.h>

/* gpg-error's error-code helpers are inline functions; these wrappers give Swift a stable name. */
static inline unsigned int coffer_gpgme_err_code(gpgme_error_t err) { return gpgme_err_code(err); }
static inline unsigned int coffer_gpgme_err_source(gpgme_error_t err) { return gpgme_err_source(err); }


#endif
