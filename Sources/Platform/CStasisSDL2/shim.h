#ifndef STASIS_CSDL2_SHIM_H
#define STASIS_CSDL2_SHIM_H
// The whole SDL2 API, re-exported as is. SDL_MAIN_HANDLED: Stasis owns main().
#define SDL_MAIN_HANDLED 1
#include <SDL2/SDL.h>
#endif
