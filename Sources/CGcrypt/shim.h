#ifndef COFFER_CGCRYPT_SHIM_H
#define COFFER_CGCRYPT_SHIM_H

#include <gcrypt.h>

/* gcry_control is variadic, which Swift cannot call: this sets libgcrypt up once and returns 0 when
   the library is usable. Secure memory is on, so libgcrypt keeps what it derives from secrets (RSA
   session-key frames, S-expressions built from secure buffers, hash and cipher contexts opened as
   secure) in a pool that is locked into memory when the system allows it and wiped when freed.
   The pool grows on demand instead of failing; libgcrypt prints no warning when the pages cannot be
   locked, and never changes the process's privileges or capabilities. */
static inline int coffer_gcrypt_initialise(void) {
    if (!gcry_check_version(NULL)) return -1;
    /* Another library of the process set libgcrypt up already: its settings stay. */
    if (gcry_control(GCRYCTL_INITIALIZATION_FINISHED_P)) return 0;
    gcry_control(GCRYCTL_DISABLE_SECMEM_WARN, 0);
    gcry_control(GCRYCTL_DISABLE_PRIV_DROP, 0);
    /* This reports an error when the pages could not be locked; the pool is still used and wiped. */
    (void)gcry_control(GCRYCTL_INIT_SECMEM, 65536, 0);
    gcry_control(GCRYCTL_AUTO_EXPAND_SECMEM, 65536, 0);
    gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);
    return 0;
}

#endif
