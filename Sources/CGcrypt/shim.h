#ifndef COFFER_CGCRYPT_SHIM_H
#define COFFER_CGCRYPT_SHIM_H

#include <gcrypt.h>

/* gcry_control is variadic, which Swift cannot call: this sets libgcrypt up once, without secure
   memory (coffer keeps its own wiped buffers), and returns 0 when the library is usable. */
static inline int coffer_gcrypt_initialise(void) {
    if (!gcry_check_version(NULL)) return -1;
    gcry_control(GCRYCTL_DISABLE_SECMEM, 0);
    gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);
    return 0;
}

#endif
