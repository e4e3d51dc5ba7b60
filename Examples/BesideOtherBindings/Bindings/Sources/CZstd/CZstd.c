#include "CZstd.h"
int other_czstd(void) { return 1; }
