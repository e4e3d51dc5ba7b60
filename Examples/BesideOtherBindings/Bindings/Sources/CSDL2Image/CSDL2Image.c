#include "CSDL2Image.h"
int other_csdl2image(void) { return 1; }
