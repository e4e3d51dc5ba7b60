#ifndef STASIS_CXXHASH_SHIM_H
#define STASIS_CXXHASH_SHIM_H
// Debian's libxxhash (0.8): XXH3-64, streaming. Its output is specified byte for byte, the same
// on every platform and endianness, and it runs near memory speed.
#include <xxhash.h>
#endif
