#ifndef STASIS_CRC32C_H
#define STASIS_CRC32C_H
#include <stddef.h>
#include <stdint.h>

/// CRC32C (Castagnoli) of `length` bytes, continuing from `crc` (start with 0).
/// Uses the SSE4.2 / ARMv8 CRC instruction when the CPU has it, slicing-by-8 otherwise.
uint32_t stasis_crc32c(uint32_t crc, const void *data, size_t length);

/// Copies `length` bytes from `source` to `destination` (which must not overlap) and returns
/// their CRC32C continuing from `crc`: in one pass where the CPU folds (VPCLMULQDQ), else a
/// copy then a checksum.
uint32_t stasis_crc32c_copy(uint32_t crc, void *destination, const void *source, size_t length);

/// 1 when the hardware instruction is in use, for benchmarks and logs.
int stasis_crc32c_is_hardware(void);

/// 1 when the carry-less-multiplication path (VPCLMULQDQ) is in use for 256 bytes and more.
int stasis_crc32c_is_folding(void);

/// Turns the carry-less-multiplication path off (0) or back on where the CPU has it (1): for
/// tests, which check both paths against the definition on the same machine.
void stasis_crc32c_use_folding(int enabled);

#endif
