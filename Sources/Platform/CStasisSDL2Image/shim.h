#ifndef STASIS_CSDL2IMAGE_SHIM_H
#define STASIS_CSDL2IMAGE_SHIM_H
// SDL2_image, for writing PNG files (IMG_SavePNG), re-exported as is.
#include <SDL2/SDL_image.h>
#endif
