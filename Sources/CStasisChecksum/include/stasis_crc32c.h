#ifndef STASIS_CRC32C_H
#define STASIS_CRC32C_H
#include <stddef.h>
#include <stdint.h>

/// CRC32C (Castagnoli) of `length` bytes, continuing from `crc` (start with 0).
/// Uses the SSE4.2 / ARMv8 CRC instruction when the CPU has it, slicing-by-8 otherwise.
uint32_t stasis_crc32c(uint32_t crc, const void *data, size_t length);

/// 1 when the hardware instruction is in use, for benchmarks and logs.
int stasis_crc32c_is_hardware(void);

#endif
