#ifndef COFFER_CSDBUS_SHIM_H
#define COFFER_CSDBUS_SHIM_H

/* sd-bus, systemd's D-Bus library (libsystemd-dev), for the Secret Service provider. Swift calls only
   its non-variadic functions (peek, read and append one value or container at a time); the vtable
   macros are not used: one fallback handler takes every call under the provider's object paths. */
#include <systemd/sd-bus.h>

/* The provider reads SIGTERM, SIGINT and SIGHUP from a signalfd. */
#include <sys/signalfd.h>

#endif
