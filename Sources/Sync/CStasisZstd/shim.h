#ifndef STASIS_CZSTD_SHIM_H
#define STASIS_CZSTD_SHIM_H
// Debian's libzstd, with its advanced API: ZSTD_CCtx_refPrefix (the --patch-from delta) and
// the window and long-distance-matching parameters are stable since zstd 1.4.
#include <zstd.h>
#endif
