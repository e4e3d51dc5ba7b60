#include "CXXHash.h"
int other_cxxhash(void) { return 1; }
