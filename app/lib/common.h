/*
 * Included by every module after its system headers: the unsafe string
 * functions are poisoned here so that no later line can use them.
 */
#ifndef COMMON_H
#define COMMON_H

#include <stddef.h>
#include <stdint.h>

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

#if defined(__GNUC__)
#pragma GCC poison strcpy strcat sprintf vsprintf strncpy gets
#endif

#endif
