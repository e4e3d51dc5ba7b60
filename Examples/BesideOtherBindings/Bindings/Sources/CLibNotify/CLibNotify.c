#include "CLibNotify.h"
int other_clibnotify(void) { return 1; }
